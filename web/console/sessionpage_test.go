package console_test

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// The session page puts what waits on a person first, each with its
// action, and the plan readable before it is approved: its steps, side
// effects marked, and each stopping point's options with their steps.
func TestTheSessionPageShowsWhatWaitsFirst(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, true))
	readOnly(t, kit, "db", "list_readers")
	no, yes := false, true
	if _, err := kit.Gov.Plans.Propose(ctx, agent, id, governance.PlanInput{Summary: "Read, then ask before dropping",
		Plan: plan.Plan{
			InitialSteps: []plan.Step{{ID: "readers", Server: "db", Tool: "list_readers", SideEffecting: &no},
				{ID: "schema", Server: "claude-code", Tool: "Read", DependsOn: []string{"readers"}, ParallelGroup: "reads"}},
			StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Drop the tables now?", Options: map[string]plan.Option{
				"1": {Label: "Yes, drop them", Steps: []plan.Step{{ID: "drop", Server: "db", Tool: "run_migration", SideEffecting: &yes}}},
				"2": {Label: "No, keep them"}}}}}}); err != nil {
		t.Fatal(err)
	}
	d, err := kit.Gov.Decisions.Open(ctx, agent, id, governance.DecisionInput{Title: "Schema", Question: "Drop the legacy table?"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := kit.Ledger.StartRun(ctx, agent, id, "load-test", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Ledger.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "claude-code", Tool: "Read"}); err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Ledger.RecordAsk(ctx, agent, run.ID, ledger.AskInput{Prompt: "Run it against staging?",
		Options: map[string]string{"1": "Yes", "2": "No"}}); err != nil {
		t.Fatal(err)
	}

	c := webtest.ConsoleAs(t, base, lead.Email)
	page := c.Open("/sessions/" + id)
	body := page.Body
	needs, brief, runs := strings.Index(body, `data-testid="session-needs"`), strings.Index(body, `data-testid="brief-preview"`),
		strings.Index(body, `data-testid="run"`)
	if needs < 0 || brief < 0 || runs < 0 || !(needs < brief && brief < runs) {
		t.Fatalf("order: needs at %d, brief at %d, runs at %d; want needs, then brief, then runs", needs, brief, runs)
	}
	for id, want := range map[string]int{"need-plan": 1, "need-decision": 1, "need-ask": 1, "session-plan-form": 1,
		"session-resolve-form": 1, "session-ask-form": 1, "plan-view": 1, "plan-step": 3, "plan-stopping-point": 1,
		"plan-option": 2, "tool-call": 1, "run-ask": 1} {
		if got := webtest.CountTestID(body, id); got != want {
			t.Errorf("%s: %d on the page, want %d", id, got, want)
		}
	}
	text := page.Text()
	for _, s := range []string{"db/list_readers", "after readers", "in parallel: reads", "Stopping point 1: Drop the tables now?",
		"1. Yes, drop them", "db/run_migration", "2. No, keep them", "runs nothing more", "Run it against staging?"} {
		if !strings.Contains(text, s) {
			t.Errorf("the page does not say %q", s)
		}
	}
	if strings.Count(body, `data-effect="writes"`) != 1 || strings.Count(body, `data-effect="read-only"`) != 2 {
		t.Errorf("side effects are not marked step by step")
	}

	// A gate resolved from the page without a resolution comes back with the message, nothing written.
	back := "/sessions/" + id
	bad := c.Submit("/decisions/"+d.Ref+"/resolve", url.Values{"resolution": {""}, "instruction": {"x"}, "back": {back}})
	if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.Text(), "resolution") ||
		webtest.CountTestID(bad.Body, "session-needs") != 1 {
		t.Fatalf("an empty resolution: %d %s", bad.Status, webtest.Short([]byte(bad.Body)))
	}
	ok := c.Submit("/decisions/"+d.Ref+"/resolve", url.Values{"resolution": {"Keep it"}, "instruction": {"Archive instead."}, "back": {back}})
	if ok.Status != http.StatusSeeOther || ok.Location() != back {
		t.Fatalf("resolve: %d to %q", ok.Status, ok.Location())
	}
	ok = c.Submit("/sessions/"+id+"/plan/approve", url.Values{"note": {""}, "back": {back}})
	if ok.Status != http.StatusSeeOther {
		t.Fatalf("approve: %d", ok.Status)
	}
	page = c.Open(back)
	if webtest.CountTestID(page.Body, "need-decision") != 0 || webtest.CountTestID(page.Body, "need-plan") != 0 ||
		webtest.CountTestID(page.Body, "need-ask") != 1 {
		t.Fatalf("after resolving and approving, the page still shows them waiting")
	}
}

// The session page tells "sent" from "told": a delivered resolution reads
// "delivered …, not acknowledged" until the agent acknowledges its brief.
func TestTheSessionPageTellsDeliveredFromAcknowledged(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, false))
	d, err := kit.Gov.Decisions.Open(ctx, agent, id, governance.DecisionInput{Title: "Schema", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Gov.Decisions.Resolve(ctx, lead, d.Ref, "Keep it", "Archive instead."); err != nil {
		t.Fatal(err)
	}
	c := webtest.ConsoleAs(t, base, lead.Email)
	state := func() string {
		page := c.Open("/sessions/" + id)
		i := strings.Index(page.Body, `data-testid="decision-state"`)
		if i < 0 {
			t.Fatal("no decision state on the page")
		}
		return page.Body[i : i+120]
	}
	if s := state(); !strings.Contains(s, "decided, not yet delivered") {
		t.Fatalf("before the brief: %q", s)
	}
	b, err := kit.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if s := state(); !strings.Contains(s, "not acknowledged") {
		t.Fatalf("after the brief: %q", s)
	}
	if _, err := kit.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: id, Ack: b.BriefID}); err != nil {
		t.Fatal(err)
	}
	if s := state(); !strings.Contains(s, "acknowledged at") || strings.Contains(s, "not acknowledged") {
		t.Fatalf("after the ack: %q", s)
	}
}

// A plan waiting in the Attention view opens with its steps and stopping
// points drawn, so a lead reads it before approving.
func TestAPlanItemShowsThePlan(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, true))
	readOnly(t, kit, "db", "list_readers")
	no := false
	if _, err := kit.Gov.Plans.Propose(ctx, agent, id, governance.PlanInput{Summary: "Read, then ask", Plan: plan.Plan{
		InitialSteps: []plan.Step{{ID: "readers", Server: "db", Tool: "list_readers", SideEffecting: &no}},
		StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Drop the tables now?", Options: map[string]plan.Option{
			"1": {Label: "Yes, drop them", Steps: []plan.Step{{ID: "drop", Server: "db", Tool: "run_migration"}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	page := webtest.ConsoleAs(t, base, lead.Email).Open("/attention/items/plan/" + id + "/" + id)
	if page.Status != http.StatusOK || webtest.CountTestID(page.Body, "plan-view") != 1 || webtest.CountTestID(page.Body, "plan-step") != 2 ||
		!strings.Contains(page.Text(), "Stopping point 1: Drop the tables now?") || !strings.Contains(page.Text(), "1. Yes, drop them") {
		t.Fatalf("the plan item: %d %s", page.Status, webtest.Short([]byte(page.Body)))
	}
}

// readOnly has an admin classify server.tool as read-only in the tool
// registry: a plan step's own side_effecting false lowers nothing.
func readOnly(t *testing.T, kit *testkit.Kit, server, tool string) {
	t.Helper()
	admin, _ := kit.Person(auth.Admin)
	if _, err := kit.Ledger.SetTool(context.Background(), admin, server, tool, ledger.ToolInput{SideEffecting: false}); err != nil {
		t.Fatal(err)
	}
}

// A lead reads a plan as the plan check counts it: a step marked
// side_effecting false on a tool the registry marks side-effecting, or on
// one it does not know (Bash), is drawn as writing, on the session page
// and on the plan's Attention item alike; the registry's read-only tool
// is drawn read-only.
func TestAPlanStepMarkedReadOnlyIsDrawnAsTheRegistrySaysIt(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	admin, _ := kit.Person(auth.Admin)
	id := kit.Session(agent, kit.Mission(lead, true))
	readOnly(t, kit, "db", "list_readers")
	if _, err := kit.Ledger.SetTool(ctx, admin, "db", "run_migration", ledger.ToolInput{SideEffecting: true}); err != nil {
		t.Fatal(err)
	}
	no := false
	// The options of the last stopping point may write, so the plan passes
	// the check; what the lead must see is which of them write.
	if _, err := kit.Gov.Plans.Propose(ctx, agent, id, governance.PlanInput{Summary: "Read, then ask", Plan: plan.Plan{
		InitialSteps: []plan.Step{{ID: "readers", Server: "db", Tool: "list_readers", SideEffecting: &no}},
		StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Clean up now?", Options: map[string]plan.Option{
			"1": {Label: "Run the script", Steps: []plan.Step{{ID: "sh", Server: "claude-code", Tool: "Bash", SideEffecting: &no}}},
			"2": {Label: "Drop them", Steps: []plan.Step{{ID: "drop", Server: "db", Tool: "run_migration", SideEffecting: &no}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile(`data-testid="plan-step" data-effect="([a-z-]+)"><code>([a-z]+)</code>`)
	want := map[string]string{"readers": "read-only", "sh": "writes", "drop": "writes"}
	c := webtest.ConsoleAs(t, base, lead.Email)
	for _, path := range []string{"/sessions/" + id, "/attention/items/plan/" + id + "/" + id} {
		page := c.Open(path)
		got := map[string]string{}
		for _, m := range step.FindAllStringSubmatch(page.Body, -1) {
			got[m[2]] = m[1]
		}
		if page.Status != http.StatusOK || !maps.Equal(got, want) {
			t.Errorf("%s draws the steps %v, want %v", path, got, want)
		}
		if !strings.Contains(page.Body, "The step says it only reads, but the tool registry") {
			t.Errorf("%s does not say why a step marked read-only writes", path)
		}
	}
}

// A lead's answer to a plan shows its delivery on the session page as a
// gate's resolution does: not yet delivered, delivered and not
// acknowledged, acknowledged.
func TestTheSessionPageShowsThePlanAnswersDelivery(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, true))
	if _, err := kit.Gov.Plans.Propose(ctx, agent, id, governance.PlanInput{Summary: "Migrate in two steps"}); err != nil {
		t.Fatal(err)
	}
	c := webtest.ConsoleAs(t, base, lead.Email)
	state := func() string {
		page := c.Open("/sessions/" + id)
		i := strings.Index(page.Body, `data-testid="plan-delivery"`)
		if i < 0 {
			return ""
		}
		return page.Body[i : i+140]
	}
	if s := state(); s != "" {
		t.Fatalf("a plan nobody answered shows a delivery: %q", s)
	}
	if _, err := kit.Gov.Plans.Reject(ctx, lead, id, "Too broad"); err != nil {
		t.Fatal(err)
	}
	if s := state(); !strings.Contains(s, "decided, not yet delivered") {
		t.Fatalf("before the brief: %q", s)
	}
	b, err := kit.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if s := state(); !strings.Contains(s, "not acknowledged") {
		t.Fatalf("after the brief: %q", s)
	}
	if _, err := kit.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: id, Ack: b.BriefID}); err != nil {
		t.Fatal(err)
	}
	if s := state(); !strings.Contains(s, "acknowledged at") || strings.Contains(s, "not acknowledged") {
		t.Fatalf("after the ack: %q", s)
	}
}
