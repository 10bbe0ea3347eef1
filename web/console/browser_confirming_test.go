package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// toConfirming walks a fresh session on a high-risk mission to CONFIRMING
// through the agent's events.
func toConfirming(t *testing.T, kit *testkit.Kit, agent auth.Actor, mission string) string {
	t.Helper()
	id := kit.Session(agent, mission)
	for _, e := range []governance.EventInput{
		{Name: "user.message.created"},
		{Name: "IntentClassified", Payload: json.RawMessage(`{"intent":"task"}`)},
		{Name: "architecture.impact.completed", Payload: json.RawMessage(`{"level":"architecture"}`)},
		{Name: "architecture.plan.updated", Payload: json.RawMessage(`{"summary":"Split billing in two","initial_steps":[],"stopping_points":[]}`)},
	} {
		if _, err := kit.Gov.Lifecycle.Report(context.Background(), agent, id, e); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// A lead confirms one plan waiting in CONFIRMING and asks for changes to
// another from the Attention view; each session moves on, and each answer
// reaches its agent once, on its next brief.
func TestBrowserLeadConfirmsAndModifiesPlans(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	mission := app.Kit.Mission(lead, true)
	confirmed := toConfirming(t, app.Kit, agent, mission)
	modified := toConfirming(t, app.Kit, agent, mission)

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := func(id string) string { return `[data-testid=attention-item][data-kind=plan][data-ref="` + id + `"]` }
	webtest.OpenItem(t, ctx, item(confirmed))
	webtest.OpenItem(t, ctx, item(modified))
	webtest.Do(t, ctx, "both plans wait", chromedp.WaitVisible(chromedp.CSS(item(confirmed)+` [data-testid=plan-approve]`)),
		chromedp.WaitVisible(chromedp.CSS(item(modified)+` [data-testid=plan-modify]`)))
	webtest.Screenshot(t, ctx, "attention-confirming")

	webtest.Do(t, ctx, "confirm the first",
		webtest.Click(item(confirmed)+` [data-testid=plan-approve]`),
		chromedp.WaitNotPresent(chromedp.CSS(item(confirmed))))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.HasPrefix(got, "Plan of ") || !strings.HasSuffix(got, " approved — the agent may proceed; it is told on its next brief.") {
		t.Errorf("the live region says %q", got)
	}

	// Asking for changes without an instruction is refused in place.
	webtest.Do(t, ctx, "ask for changes without an instruction",
		webtest.Click(item(modified)+` [data-testid=plan-modify]`),
		chromedp.WaitVisible(chromedp.CSS(item(modified)+` [data-testid=error-note]`)))
	webtest.Do(t, ctx, "ask for changes with one",
		webtest.Fill(item(modified)+` textarea[name=note]`, "Put the migration behind a stopping point."),
		webtest.Click(item(modified)+` [data-testid=plan-modify]`),
		chromedp.WaitNotPresent(chromedp.CSS(item(modified))))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.HasPrefix(got, "Changes asked of ") || !strings.Contains(got, "the agent revises its plan") {
		t.Errorf("the live region says %q", got)
	}

	for _, c := range []struct {
		id, state, resolution, instruction string
		next                               protocol.State
	}{
		{confirmed, "EXECUTING", governance.PlanApproved, "", protocol.Continue},
		{modified, "ARCHITECTURE_REVISING", governance.PlanChangesRequested, "Put the migration behind a stopping point.", protocol.Blocked},
	} {
		d, err := app.Kit.Gov.Sessions.Get(context.Background(), lead, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Lifecycle != c.state {
			t.Errorf("session %s is %s, want %s", c.id, d.Lifecycle, c.state)
		}
		b, err := app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: c.id})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("PLAN-%d", d.Plan.ID)
		if b.NextAction != c.next || len(b.Resolutions) != 1 || b.Resolutions[0].Ref != want ||
			b.Resolutions[0].Resolution != c.resolution || b.Resolutions[0].Instruction != c.instruction {
			t.Errorf("brief of %s: %s delivering %+v", c.id, b.NextAction, b.Resolutions)
		}
		if b, err = app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: c.id}); err != nil || len(b.Resolutions) != 0 {
			t.Errorf("the answer to %s was delivered again: %+v %v", c.id, b.Resolutions, err)
		}
	}
}

// A lead rejects a plan waiting in CONFIRMING from the Attention view,
// with a note: the session goes back to IDLE, and the note reaches the
// agent once, on its next brief.
func TestBrowserLeadRejectsAPlan(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	id := toConfirming(t, app.Kit, agent, app.Kit.Mission(lead, true))

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := `[data-testid=attention-item][data-kind=plan][data-ref="` + id + `"]`
	webtest.OpenItem(t, ctx, item)
	webtest.Do(t, ctx, "reject it with a note",
		webtest.Fill(item+` textarea[name=note]`, "Billing stays one service this quarter."),
		webtest.ClickTwice(item+` [data-testid=plan-reject]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.HasSuffix(got, " rejected — the agent is told on its next brief and goes back to idle.") {
		t.Errorf("the live region says %q", got)
	}

	d, err := app.Kit.Gov.Sessions.Get(context.Background(), lead, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Lifecycle != "IDLE" || d.Plan == nil || d.Plan.Status != governance.PlanRejected {
		t.Fatalf("after the rejection: lifecycle %s, plan %+v", d.Lifecycle, d.Plan)
	}
	path, err := d.LifecyclePath()
	if err != nil {
		t.Fatal(err)
	}
	if last := path[len(path)-1]; last.From != "CONFIRMING" || last.To != "IDLE" || last.Event != "lead.reject" {
		t.Errorf("the last transition is %+v, want CONFIRMING → IDLE on lead.reject", last)
	}
	b, err := app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("PLAN-%d", d.Plan.ID)
	if len(b.Resolutions) != 1 || b.Resolutions[0].Ref != want || b.Resolutions[0].Resolution != governance.PlanRejected ||
		b.Resolutions[0].Instruction != "Billing stays one service this quarter." {
		t.Errorf("the brief delivers %+v", b.Resolutions)
	}
	if b, err = app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: id}); err != nil || len(b.Resolutions) != 0 {
		t.Errorf("the rejection was delivered again: %+v %v", b.Resolutions, err)
	}
}

// A permission prompt shows with one button per option; the lead's answer
// reaches the agent once.
func TestBrowserLeadAnswersAPermissionPrompt(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	id := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	r, err := app.Kit.Gov.Lifecycle.Report(context.Background(), agent, id, governance.EventInput{Name: "permission.prompt.requested",
		Payload: json.RawMessage(`{"prompt":"Run rm -rf build/?","options":{"1":"Allow","2":"Deny"},"tool":"Bash","paths":["build/"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprint(r.Permission.ID)

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := `[data-testid=attention-item][data-kind=permission][data-ref="` + ref + `"]`
	webtest.OpenItem(t, ctx, item)
	webtest.Do(t, ctx, "the prompt shows", chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=permission-option]`)))
	if got := webtest.TextOf(t, ctx, item+` [data-testid=question]`); got != "Run rm -rf build/?" {
		t.Errorf("question = %q", got)
	}
	webtest.Screenshot(t, ctx, "attention-permission")
	webtest.Do(t, ctx, "answer Deny",
		webtest.Click(item+` button[value="2"]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if got, want := webtest.TextOf(t, ctx, `[data-testid=announce]`), "PRM-"+ref+" answered Deny — delivered on the agent's next brief."; got != want {
		t.Errorf("the live region says %q, want %q", got, want)
	}

	b, err := app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if b.NextAction != protocol.Continue || len(b.Permissions) != 1 || b.Permissions[0].Option != "2" || b.Permissions[0].Label != "Deny" ||
		b.Permissions[0].AnsweredBy != lead.Email {
		t.Fatalf("brief %s delivers %+v", b.NextAction, b.Permissions)
	}
	if b, err = app.Kit.Gov.Briefs.Brief(context.Background(), agent, governance.BriefRequest{Session: id}); err != nil || len(b.Permissions) != 0 {
		t.Fatalf("delivered again: %+v %v", b.Permissions, err)
	}
}

// A lead opens a plan waiting for approval in the Attention view, reads
// its steps — a parallel group, a side effect marked — and its stopping
// point with each option's steps, drawn in the browser, then rejects it:
// the item leaves, the live region says what happens next, and the
// agent's next brief carries the answer.
func TestBrowserLeadReadsAPlanAndRejectsIt(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	id := app.Kit.Session(agent, app.Kit.Mission(lead, true))
	readOnly(t, app.Kit, "db", "list_readers")
	readOnly(t, app.Kit, "cache", "stats")
	no, yes := false, true
	p, err := app.Kit.Gov.Plans.Propose(bg, agent, id, governance.PlanInput{Summary: "Probe both stores, then ask before dropping",
		Plan: plan.Plan{
			InitialSteps: []plan.Step{
				{ID: "probe-db", Server: "db", Tool: "list_readers", SideEffecting: &no, ParallelGroup: "probes"},
				{ID: "probe-cache", Server: "cache", Tool: "stats", SideEffecting: &no, ParallelGroup: "probes"}},
			StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Drop the legacy tables now?", Options: map[string]plan.Option{
				"1": {Label: "Yes, drop them", Steps: []plan.Step{{ID: "drop", Server: "db", Tool: "run_migration", SideEffecting: &yes}}},
				"2": {Label: "No, keep them"}}}}}})
	if err != nil {
		t.Fatal(err)
	}

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := `[data-testid=attention-item][data-kind=plan][data-ref="` + id + `"]`
	webtest.OpenItem(t, ctx, item)
	webtest.Do(t, ctx, "the plan is drawn", chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=plan-view]`)))
	drawn := webtest.TextOf(t, ctx, item+` [data-testid=plan-view]`)
	for _, want := range []string{"probe-db", "db/list_readers", "probe-cache", "cache/stats", "in parallel: probes",
		"Stopping point 1: Drop the legacy tables now?", "1. Yes, drop them", "db/run_migration", "2. No, keep them", "runs nothing more"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the drawn plan lacks %q:\n%s", want, drawn)
		}
	}
	if got := webtest.TextOf(t, ctx, item+` [data-testid=plan-option] [data-effect=writes] .effect`); got != "writes" {
		t.Errorf("the option's side-effecting step is marked %q", got)
	}
	webtest.Screenshot(t, ctx, "attention-plan-open")
	webtest.CheckA11y(t, ctx, "attention with a plan open")

	webtest.Do(t, ctx, "reject the plan",
		webtest.Fill(item+` textarea[name=note]`, "Too broad: split the drop into its own plan."),
		webtest.ClickTwice(item+` [data-testid=plan-reject]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.HasSuffix(got, " rejected — the agent is told on its next brief and goes back to idle.") {
		t.Errorf("the live region says %q", got)
	}
	b, err := app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("PLAN-%d", p.ID)
	if len(b.Resolutions) != 1 || b.Resolutions[0].Ref != want || b.Resolutions[0].Resolution != governance.PlanRejected ||
		b.Resolutions[0].Instruction != "Too broad: split the drop into its own plan." {
		t.Fatalf("the brief after rejecting carries %+v, want %s rejected with the note", b.Resolutions, want)
	}
}
