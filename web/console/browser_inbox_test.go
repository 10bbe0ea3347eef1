package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// inbox is a workspace with a lead and open items for the inbox tests.
type inbox struct {
	app            *webtest.BrowserApp
	lead           auth.Actor
	agents         []auth.Actor
	plain, risky   string
	sessions       []string
	gates          []string
	violationRefID string
}

// gateTitles are the two kinds of gate seedInbox opens, two of the first
// kind for one of the second: bulk resolve takes one kind at a time.
var gateTitles = []string{"Schema change", "Rename a column"}

// seedInbox opens n items: a critical violation, a paused session, a plan
// waiting on a high-risk mission, and gates for the rest, spread over
// sessions of two agents on two missions.
func seedInbox(t *testing.T, n int) *inbox {
	t.Helper()
	app := webtest.StartBrowserApp(t)
	ctx := context.Background()
	in := &inbox{app: app}
	in.lead, _ = app.Kit.Lead()
	a1, _ := app.Kit.Agent()
	a2, _ := app.Kit.Agent()
	in.agents = []auth.Actor{a1, a2}
	in.plain, in.risky = app.Kit.Mission(in.lead, false), app.Kit.Mission(in.lead, true)
	for i := range 10 {
		mission := in.plain
		if i%5 == 4 {
			mission = in.risky
		}
		s, err := app.Kit.Gov.Sessions.Create(ctx, in.agents[i%2], governance.SessionInput{Mission: mission, Title: fmt.Sprintf("Billing split, part %d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		in.sessions = append(in.sessions, s.ID)
	}
	res, err := app.Kit.Gov.Changes.Report(ctx, in.agents[0], in.sessions[2], change.Change{Files: []change.File{{Path: "config/deploy.sh",
		Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
	if err != nil || len(res.Violations) != 1 {
		t.Fatalf("violation: %+v %v", res, err)
	}
	in.violationRefID = fmt.Sprint(res.Violations[0].ID)
	if _, err := app.Kit.Gov.Sessions.Pause(ctx, in.lead, in.sessions[6], "Release freeze"); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Kit.Gov.Plans.Propose(ctx, in.agents[0], in.sessions[4], governance.PlanInput{Summary: "Split billing in two"}); err != nil {
		t.Fatal(err)
	}
	for i := range n - 3 {
		s := i % len(in.sessions)
		d, err := app.Kit.Gov.Decisions.Open(ctx, in.agents[s%2], in.sessions[s], governance.DecisionInput{
			Title: gateTitles[i%3/2], Question: fmt.Sprintf("Drop legacy billing table %d?", i+1),
			BlockedScope: []string{"db/migrations", "internal/billing", "web/api", "views/"}})
		if err != nil {
			t.Fatal(err)
		}
		in.gates = append(in.gates, d.Ref)
	}
	return in
}

func countOf(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func activeRef(t *testing.T, ctx context.Context) string {
	t.Helper()
	ref, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.activeElement.closest("[data-testid=attention-item]") || {dataset: {}}).dataset.ref || ""`))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// With fifty open items the Attention view is a list that fits a lead's
// screen: the HARD_STOP first, one line per item, no bulk form in the way;
// the keys move, open and select; the bar that appears on selection
// resolves the selected gates.
func TestBrowserFiftyItemsFitAsAList(t *testing.T) {
	in := seedInbox(t, 50)
	ctx := webtest.NewBrowser(t)
	webtest.SignIn(t, ctx, in.app.URL, in.lead.Email)
	if n := countOf(t, ctx, `[data-testid=attention-item]`); n != 50 {
		t.Fatalf("%d lines, want 50", n)
	}
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.body.scrollHeight`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fifty items: the page is %d px tall at 1280×900", height)
	if height > 2*900 {
		t.Errorf("the page is %d px tall, want under two screens (1800 px)", height)
	}
	webtest.Screenshot(t, ctx, "attention-inbox")
	if got := webtest.TextOf(t, ctx, `[data-testid=attention-item]`); !strings.Contains(got, "HARD_STOP") {
		t.Errorf("the first line is %q, want the HARD_STOP", got)
	}
	if got := webtest.TextOf(t, ctx, `[data-testid=session-group] h2`); !strings.Contains(got, "Billing split, part 3") {
		t.Errorf("the first group is %q, want the violated session by its title", got)
	}
	if got := strings.Join(strings.Fields(webtest.TextOf(t, ctx, `[data-testid=kind-chip][data-kind=decision]`)), " "); got != "gates 47" {
		t.Errorf("the gates chip says %q", got)
	}
	visible := func(sel string) bool {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var e=document.querySelector("`+sel+`");return !!e && getComputedStyle(e).display !== "none";})()`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if visible("#bulk") {
		t.Error("the bulk bar shows with nothing selected")
	}

	// j and k move from line to line.
	webtest.Do(t, ctx, "j, j, k", chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("k"))
	if got := activeRef(t, ctx); got != in.violationRefID {
		t.Errorf("after j j k the focus is on %q, want the first line %s", got, in.violationRefID)
	}
	// Enter opens the focused line's form in place; Esc closes it.
	first := `[data-testid=attention-item][data-ref="` + in.violationRefID + `"]`
	webtest.Do(t, ctx, "Enter opens", webtest.PressEnter(), chromedp.WaitVisible(chromedp.CSS(first+` [data-testid=violation-clear-form]`)))
	webtest.Do(t, ctx, "Esc closes", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.CSS(first+` [data-testid=item-body]`)))

	// x selects a gate; the sticky bar appears and resolves the selection.
	g1, g2 := in.gates[0], in.gates[1]
	line := func(ref string) string { return `[data-testid=attention-item][data-ref="` + ref + `"]` }
	for _, ref := range []string{g1, g2} {
		webtest.Do(t, ctx, "select "+ref, webtest.Focus(line(ref)), chromedp.KeyEvent("x"))
	}
	webtest.Do(t, ctx, "the bar appears", chromedp.WaitVisible(chromedp.CSS(`#bulk [data-testid=bulk-submit]`)))
	if got := webtest.TextOf(t, ctx, `[data-testid=bulk-count]`); got != "2 gates: Schema change" {
		t.Errorf("the bar counts %q", got)
	}
	// A gate of another kind cannot join the selection: one answer fits
	// only questions alike.
	if n := countOf(t, ctx, line(in.gates[2])+` input[name=refs]:disabled`); n != 1 {
		t.Errorf("the %s gate %s can be selected beside Schema change gates", gateTitles[1], in.gates[2])
	}
	webtest.Screenshot(t, ctx, "attention-bulk")
	webtest.Do(t, ctx, "bulk resolve",
		webtest.Fill(`#bulk-resolution`, "Keep the table"),
		webtest.Fill(`#bulk-instruction`, "Archive it instead."),
		webtest.Click(`[data-testid=bulk-submit]`),
		chromedp.WaitNotPresent(chromedp.CSS(line(g1))),
		chromedp.WaitNotPresent(chromedp.CSS(line(g2))))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.Contains(got, g1) || !strings.Contains(got, g2) || !strings.Contains(got, " resolved — each agent gets the resolution and instruction on its next brief.") {
		t.Errorf("the live region says %q", got)
	}
	if visible("#bulk") {
		t.Error("the bulk bar still shows after resolving the selection")
	}
	for _, ref := range []string{g1, g2} {
		d := decisionIn(t, in, ref)
		if d.Status != governance.DecisionResolved || d.Instruction != "Archive it instead." {
			t.Errorf("%s is %s %q", ref, d.Status, d.Instruction)
		}
	}
}

// decisionIn finds a gate through its session.
func decisionIn(t *testing.T, in *inbox, ref string) governance.Decision {
	t.Helper()
	_, d := gateIn(t, in, ref)
	return d
}

// gateIn finds a gate of in and the session it waits on.
func gateIn(t *testing.T, in *inbox, ref string) (string, governance.Decision) {
	t.Helper()
	for _, s := range in.sessions {
		d, err := in.app.Kit.Gov.Sessions.Get(context.Background(), in.lead, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, dec := range d.Decisions {
			if dec.Ref == ref {
				return s, dec
			}
		}
	}
	t.Fatalf("no gate %s", ref)
	return "", governance.Decision{}
}

// Filters narrow the list by kind, agent, mission and session, each a
// link or a plain form, so that a filtered view is an address.
func TestBrowserFiltersNarrowTheList(t *testing.T) {
	in := seedInbox(t, 30)
	ctx := webtest.NewBrowser(t)
	webtest.SignIn(t, ctx, in.app.URL, in.lead.Email)
	kinds := func() map[string]int {
		m, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](`Array.from(document.querySelectorAll("[data-testid=attention-item]")).reduce(function(m, e){m[e.dataset.kind]=(m[e.dataset.kind]||0)+1;return m;}, {})`))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	location := func() string {
		u, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	webtest.Do(t, ctx, "the gates chip", webtest.Click(`[data-testid=kind-chip][data-kind=decision]`),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=attention-item][data-kind=violation]`)))
	// The filtered list may still be swapping in when the violations are
	// gone (a loaded machine): wait for it whole, a few seconds at most.
	got := kinds()
	for deadline := time.Now().Add(5 * time.Second); got[governance.ItemDecision] != 27 && time.Now().Before(deadline); got = kinds() {
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 1 || got[governance.ItemDecision] != 27 || location() != "?kind=decision" {
		t.Errorf("gates only: %v at %s", got, location())
	}
	webtest.Screenshot(t, ctx, "attention-filtered")

	agent := in.agents[1].KeyName
	webtest.Do(t, ctx, "an agent's name", webtest.Click(`[data-testid=attention-item][data-session="`+in.sessions[1]+`"] .line-meta a`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=drop-agent]`)))
	groups, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("[data-testid=session-group]")).map(function(g){return g.dataset.session;})`))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if i := indexOf(in.sessions, g); i%2 != 1 {
			t.Errorf("session %s of the other agent shows under agent %s", g, agent)
		}
	}
	if !strings.Contains(location(), "agent="+agent) || !strings.Contains(location(), "kind=decision") {
		t.Errorf("the address %s does not hold both filters", location())
	}

	webtest.Do(t, ctx, "everything, then one mission", webtest.Click(`[data-testid=clear-filters]`),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=clear-filters]`)),
		// Choosing a mission submits the filters (data-autosubmit): the
		// page reloads with the filter set.
		webtest.Fill(`[data-testid=filter-mission]`, in.risky),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=clear-filters]`)))
	// Two sessions of ten are on the high-risk mission (the 5th and the
	// 10th): 3 and 2 of the 27 gates, and the plan.
	if got := kinds(); got[governance.ItemPlan] != 1 || got[governance.ItemViolation] != 0 || got[governance.ItemDecision] != 5 {
		t.Errorf("the high-risk mission shows %v", got)
	}
	webtest.Do(t, ctx, "only one session", webtest.Click(`[data-testid=session-group] [data-testid=only-session]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=drop-session]`)))
	if n := countOf(t, ctx, `[data-testid=session-group]`); n != 1 {
		t.Errorf("%d session groups under a session filter", n)
	}
	webtest.Do(t, ctx, "a kind with nothing in it", chromedp.Navigate(in.app.URL+"/?kind=task"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-empty]`)))
	if got := webtest.TextOf(t, ctx, `[data-testid=queue-empty]`); !strings.Contains(got, "A task an agent reports blocked appears here") {
		t.Errorf("the empty state says %q", got)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// A long queue loads its first page at once and the rest on demand; a
// push brings a new item without disturbing the form being typed in.
func TestBrowserPushKeepsTheFormBeingTyped(t *testing.T) {
	in := seedInbox(t, 120)
	ctx := webtest.NewBrowser(t)
	webtest.SignIn(t, ctx, in.app.URL, in.lead.Email)
	noPoll(t, ctx)
	if n := countOf(t, ctx, `[data-testid=attention-item]`); n != 50 {
		t.Fatalf("%d lines on the first page, want 50", n)
	}
	webtest.Do(t, ctx, "load more", webtest.Click(`[data-testid=load-more]`))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("[data-testid=attention-item]").length === 100`)); err != nil {
		t.Fatalf("the second page did not load: %v", err)
	}
	notReloaded(t, ctx)

	// A gate among the loaded lines: gates opened in the same instant are
	// ordered by their sessions' random ids, so which ones load varies.
	ref, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=attention-item][data-kind=decision]").dataset.ref`))
	if err != nil {
		t.Fatalf("no gate among the loaded lines: %v", err)
	}
	gate := `[data-testid=attention-item][data-ref="` + ref + `"]`
	webtest.OpenItem(t, ctx, gate)
	webtest.Do(t, ctx, "type a resolution", chromedp.SendKeys(chromedp.CSS(gate+` input[name=resolution]`), "Keep the ta"))

	// Another lead pauses a session: it joins the top of the queue.
	ctxb := context.Background()
	other, _ := in.app.Kit.Lead()
	if _, err := in.app.Kit.Gov.Sessions.Pause(ctxb, other, in.sessions[9], "Stop the rollout"); err != nil {
		t.Fatal(err)
	}
	paused := `[data-testid=attention-item][data-kind=paused][data-ref="` + in.sessions[9] + `"]`
	webtest.Do(t, ctx, "the pushed item appears", chromedp.WaitVisible(chromedp.CSS(paused)))
	if typed := webtest.ValueOf(t, ctx, gate+` input[name=resolution]`); typed != "Keep the ta" {
		t.Errorf("the field being typed in holds %q after the push", typed)
	}
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.name || ""`))
	if err != nil || focused != "resolution" {
		t.Errorf("the focus moved to %q (%v) after the push", focused, err)
	}
	webtest.Do(t, ctx, "keep typing", chromedp.SendKeys(chromedp.CSS(gate+` input[name=resolution]`), "ble"))
	if typed, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(gate+` input[name=resolution]`))); typed != "Keep the table" {
		t.Errorf("the field holds %q", typed)
	}
	if n := countOf(t, ctx, `[data-testid=attention-item]`); n < 100 {
		t.Errorf("the refresh dropped the loaded lines: %d left", n)
	}
	webtest.Screenshot(t, ctx, "attention-push")
}
