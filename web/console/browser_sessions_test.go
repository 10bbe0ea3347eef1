package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/webtest"
)

// The session page shows a gate's three states apart — open, decided but
// not yet delivered, delivered at T — and a lead can request a remediation
// and pull the brake from it; the agent's next brief says so.
func TestBrowserSessionPageShowsGateStatesAndActs(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	gov := app.Kit.Gov
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	open := func(q string) string {
		d, err := gov.Decisions.Open(bg, agent, session, governance.DecisionInput{Title: q, Question: q + "?"})
		if err != nil {
			t.Fatal(err)
		}
		return d.Ref
	}
	delivered, decided, stillOpen := open("First"), open("Second"), open("Third")
	if _, err := gov.Decisions.Resolve(bg, lead, delivered, "Yes", "Go on."); err != nil {
		t.Fatal(err)
	}
	if _, err := gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session}); err != nil {
		t.Fatal(err)
	}
	if _, err := gov.Decisions.Resolve(bg, lead, decided, "No", "Leave it."); err != nil {
		t.Fatal(err)
	}

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "open the sessions list", chromedp.Navigate(app.URL+"/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-row][data-session="`+session+`"]`)))
	if got := webtest.TextOf(t, ctx, `[data-session="`+session+`"] .badge`); got != "DECISION_REQUIRED" {
		t.Errorf("sessions list badge = %q", got)
	}
	webtest.Screenshot(t, ctx, "sessions")
	webtest.Do(t, ctx, "open the session", chromedp.Navigate(app.URL+"/sessions/"+session),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=brief-preview]`)))
	state := func(ref string) string {
		return webtest.TextOf(t, ctx, `[data-testid=decision-row][data-ref="`+ref+`"] [data-testid=decision-state]`)
	}
	if got := state(delivered); !strings.HasPrefix(got, "delivered at ") {
		t.Errorf("%s state = %q", delivered, got)
	}
	if got := state(decided); got != "decided, not yet delivered" {
		t.Errorf("%s state = %q", decided, got)
	}
	if got := state(stillOpen); got != "open" {
		t.Errorf("%s state = %q", stillOpen, got)
	}
	webtest.Screenshot(t, ctx, "session")

	// Viewing the page delivered nothing: the agent still gets the decision.
	b, err := gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session})
	if err != nil || len(b.Resolutions) != 1 || b.Resolutions[0].Ref != decided {
		t.Fatalf("brief after viewing = %+v (%v)", b.Resolutions, err)
	}

	webtest.Do(t, ctx, "request a remediation",
		webtest.Fill(`#rem-severity`, "required"),
		webtest.Fill(`#rem-instruction`, "Add tests for the migration."),
		webtest.Fill(`#rem-files`, "db/migrations/00003.sql"),
		webtest.Click(`[data-testid=remediation-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=remediation-row]`)),
	)
	webtest.Do(t, ctx, "pull the brake",
		webtest.Fill(`#pause-reason`, "Hold: release freeze"),
		webtest.ClickTwice(`[data-testid=pause-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/resume"]`)),
	)
	if got := webtest.TextOf(t, ctx, `.notice[role=status]`); !strings.Contains(got, "paused — the agent is told to stop on its next brief") {
		t.Errorf("after the brake the page says %q", got)
	}
	b, err = gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if b.NextAction != protocol.Blocked || !strings.Contains(b.Reason, `"Hold: release freeze"`) {
		t.Errorf("brief = %s %q", b.NextAction, b.Reason)
	}
	if len(b.Remediations) != 1 || b.Remediations[0].Instruction != "Add tests for the migration." || b.Remediations[0].DeliveredAt == nil {
		t.Errorf("remediations = %+v", b.Remediations)
	}
	timeline := webtest.TextOf(t, ctx, `[data-testid=timeline]`)
	for _, want := range []string{"session.paused", "remediation.requested", "person:" + lead.Email} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
}

// A lead resolves a gate from the session page (a plain form, no htmx):
// the page comes back saying what happened and what happens next, in its
// status region, and the gate no longer waits.
func TestBrowserResolveFromTheSessionPageSaysWhatHappensNext(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	d, err := app.Kit.Gov.Decisions.Open(context.Background(), agent, session, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy table?", BlockedScope: []string{"db/migrations"}})
	if err != nil {
		t.Fatal(err)
	}
	webtest.SignIn(t, ctx, app.URL, lead.Email)
	need := `[data-testid=need-decision][data-ref="` + d.Ref + `"]`
	webtest.Do(t, ctx, "open the session", chromedp.Navigate(app.URL+"/sessions/"+session), chromedp.WaitVisible(chromedp.CSS(need)))
	if got := webtest.TextOf(t, ctx, need+` .hint`); got != views.HintResolve {
		t.Errorf("the resolve form's hint says %q", got)
	}
	webtest.Do(t, ctx, "resolve the gate",
		webtest.Fill(need+` input[name=resolution]`, "Keep it"),
		webtest.Fill(need+` textarea[name=instruction]`, "Archive the table instead."),
		webtest.Click(need+` button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`.notice[role=status]`)))
	webtest.WaitText(t, ctx, `.notice[role=status]`, d.Ref+" resolved — the agent gets the resolution and instruction on its next brief.")
	webtest.Do(t, ctx, "the gate waits no more", chromedp.WaitNotPresent(chromedp.CSS(need)))
	webtest.Screenshot(t, ctx, "session-resolved-notice")
	webtest.CheckA11y(t, ctx, "the session page with a notice")
	if got := webtest.TextOf(t, ctx, `[data-testid=decision-row][data-ref="`+d.Ref+`"] [data-testid=decision-state]`); got != "decided, not yet delivered" {
		t.Errorf("the gate's state reads %q", got)
	}
}

// Sessions that coding agents' hooks opened show which executor runs
// each, on the list and on the session's page.
func TestBrowserSessionsNameTheirExecutor(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	mission := app.Kit.Mission(lead, false)
	ids := map[string]string{}
	for _, e := range []string{"claude-code", "codex", "gemini", "copilot"} {
		s, err := app.Kit.Gov.Sessions.Create(bg, agent, governance.SessionInput{Mission: mission, Agent: e, Title: e + " session 019a", ExternalID: "ext-" + e})
		if err != nil {
			t.Fatal(err)
		}
		ids[e] = s.ID
	}
	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "open the sessions list", chromedp.Navigate(app.URL+"/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-row][data-session="`+ids["codex"]+`"]`)))
	for e, id := range ids {
		if got := webtest.TextOf(t, ctx, `[data-session="`+id+`"] [data-testid=session-agent-label]`); got != "("+e+")" {
			t.Errorf("the %s session's row names its executor %q", e, got)
		}
	}
	webtest.Screenshot(t, ctx, "sessions-executors")
	webtest.Do(t, ctx, "open the Gemini session", chromedp.Navigate(app.URL+"/sessions/"+ids["gemini"]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-agent-label]`)))
	if got := webtest.TextOf(t, ctx, `[data-testid=session-agent-label]`); got != "(gemini)" {
		t.Errorf("the session page names its executor %q", got)
	}
}
