package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A lead keeps the Attention view open; an agent opens a gate over the API;
// it appears without a reload; the lead resolves it in place; it leaves the
// queue; the agent's next brief delivers the instruction, once.
func TestBrowserLeadResolvesAGateAnAgentOpened(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	if got := webtest.TextOf(t, ctx, `[data-testid=queue-empty]`); !strings.Contains(got, "Nothing needs a person") {
		t.Fatalf("empty queue says %q", got)
	}

	// Only the push may bring the gate: the fallback poll is switched off,
	// and a marker on the window shows the page was never reloaded.
	noPoll(t, ctx)
	d, err := app.Kit.Gov.Decisions.Open(bg, agent, session, governance.DecisionInput{Title: "Legacy table",
		Question: "Drop the legacy billing table?", Proposal: "Drop it in one migration.",
		BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}})
	if err != nil {
		t.Fatal(err)
	}
	item := `[data-testid=attention-item][data-ref="` + d.Ref + `"]`
	start := time.Now()
	webtest.Do(t, ctx, "the gate appears without a reload", chromedp.WaitVisible(chromedp.CSS(item)))
	waited := time.Since(start)
	t.Logf("the gate appeared %s after it was opened", waited)
	if waited > time.Second {
		t.Errorf("the gate took %s to appear, want within a second", waited)
	}
	notReloaded(t, ctx)
	webtest.WaitText(t, ctx, `#nav-count`, "1")
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || !strings.HasPrefix(title, "(1) ") {
		t.Errorf("title = %q (%v), want the count first", title, err)
	}
	webtest.OpenItem(t, ctx, item)
	webtest.Screenshot(t, ctx, "attention-gate")

	// Both fields are required: an empty instruction is refused in place.
	webtest.Do(t, ctx, "resolve without an instruction",
		webtest.Fill(item+` input[name=resolution]`, "Drop it"),
		webtest.Click(item+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=error-instruction]`)),
	)
	if got := webtest.TextOf(t, ctx, item+` [data-testid=error-instruction]`); !strings.Contains(got, "instruction is required") {
		t.Errorf("error = %q", got)
	}
	webtest.Do(t, ctx, "resolve",
		webtest.Fill(item+` textarea[name=instruction]`, "Write a reversible migration."),
		webtest.Click(item+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-empty]`)),
	)
	if got, want := webtest.TextOf(t, ctx, `[data-testid=announce]`), d.Ref+" resolved — the agent gets the resolution and instruction on its next brief."; got != want {
		t.Errorf("the live region says %q, want %q", got, want)
	}
	webtest.WaitText(t, ctx, `#nav-count`, "0")

	b, err := app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Resolutions) != 1 || b.Resolutions[0].Instruction != "Write a reversible migration." || b.Resolutions[0].ResolvedBy != lead.Email {
		t.Fatalf("first brief resolutions = %+v", b.Resolutions)
	}
	if b, err = app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session}); err != nil || len(b.Resolutions) != 0 {
		t.Fatalf("second brief delivered again: %+v (%v)", b.Resolutions, err)
	}
}

// A viewer sees the queue but no action: no forms, no buttons.
func TestBrowserViewerSeesNoActions(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	viewer, _ := app.Kit.Person(auth.Viewer)
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, true))
	if _, err := app.Kit.Gov.Decisions.Open(context.Background(), agent, session, governance.DecisionInput{Title: "T", Question: "Q?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Kit.Gov.Plans.Propose(context.Background(), agent, session, governance.PlanInput{Summary: "Plan"}); err != nil {
		t.Fatal(err)
	}
	webtest.SignIn(t, ctx, app.URL, viewer.Email)
	plan := `[data-testid=attention-item][data-kind=plan]`
	webtest.Do(t, ctx, "the items show", chromedp.WaitVisible(chromedp.CSS(plan)))
	webtest.OpenItem(t, ctx, plan)
	webtest.OpenItem(t, ctx, `[data-testid=attention-item][data-kind=decision]`)
	// The filters are the only form: a GET form that changes nothing.
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`[data-testid=queue] form:not([data-testid=filters]), [data-testid=queue] [data-testid=attention-item] button, [data-testid=queue] input[name=refs], #bulk`), chromedp.AtLeast(0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 0 {
		t.Fatalf("a viewer sees %d forms, buttons or selection boxes in the queue", len(nodes))
	}
	if got := webtest.TextOf(t, ctx, plan+` [data-testid=item-body]`); !strings.Contains(got, "Plan") {
		t.Errorf("the open plan shows %q", got)
	}
	webtest.Screenshot(t, ctx, "attention-viewer")
}

// noPoll switches off the pages' fallback poll, so that only the push
// stream can change the page, and marks the window to show it is never
// reloaded.
func noPoll(t *testing.T, ctx context.Context) {
	t.Helper()
	webtest.Do(t, ctx, "switch off the poll",
		chromedp.Evaluate[chromedp.Void](`window.madebookStreamDown = function () { return false; }; window.madebookMark = 1;`))
}

// notReloaded fails the test if the page was reloaded since noPoll.
func notReloaded(t *testing.T, ctx context.Context) {
	t.Helper()
	if mark, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.madebookMark || 0`)); err != nil || mark != 1 {
		t.Errorf("the page was reloaded (mark %d, %v)", mark, err)
	}
}

// With the push stream unreachable (a proxy that drops long requests, say),
// the page falls back to polling: a gate an agent opens still appears, and
// the count in the navigation follows, without a reload.
func TestBrowserQueuePollsWhileTheStreamIsDown(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))

	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{
		URLPatterns: []*network.BlockPattern{{URLPattern: app.URL + "/attention/stream*", Block: true}}}); err != nil {
		t.Fatal(err)
	}
	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "the queue shows", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-empty]`)))
	webtest.Do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.madebookMark = 1`))
	if down, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`madebookStreamDown()`)); err != nil || !down {
		t.Fatalf("the page thinks its stream is up (%v): the block did not take", err)
	}

	d, err := app.Kit.Gov.Decisions.Open(context.Background(), agent, session, governance.DecisionInput{Title: "Legacy table", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	webtest.Do(t, ctx, "the poll brings the gate",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=attention-item][data-ref="`+d.Ref+`"]`)))
	t.Logf("the gate appeared %s after it was opened, by the poll", time.Since(start))
	notReloaded(t, ctx)
	webtest.WaitText(t, ctx, `#nav-count`, "1")
}
