package console_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

func lineOfRef(ref string) string { return `[data-testid=attention-item][data-ref="` + ref + `"]` }

// focused waits for the element of id to have the focus.
func focused(id string) chromedp.Action[chromedp.Void] {
	poll := chromedp.PollFunction[bool](`(id) => document.activeElement && document.activeElement.id === id`,
		chromedp.WithPollingArgs(id), chromedp.WithPollingTimeout(10*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, t)
		return chromedp.Void{}, err
	}
}

// holds waits for the script's function js to return true.
func holds(js string) chromedp.Action[chromedp.Void] {
	poll := chromedp.PollFunction[bool](js, chromedp.WithPollingTimeout(10*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, t)
		return chromedp.Void{}, err
	}
}

func activeID(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Keyboard-first triage: ? lists the keys, a accepts a proposal and the
// focus goes on to the next line, r goes to the resolution, a form's
// mistakes come at once and are tied to their fields, b goes to the bulk
// bar, and Select all alike selects the gates of the selected kind.
func TestBrowserKeyboardTriage(t *testing.T) {
	in := seedInbox(t, 12)
	ctx := context.Background()
	proposed, err := in.app.Kit.Gov.Decisions.Open(ctx, in.agents[1], in.sessions[1], governance.DecisionInput{
		Title: "Index", Question: "Add an index on invoices.customer_id?", Proposal: "Add it concurrently",
		BlockedScope: []string{"db/migrations"}})
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.NewBrowser(t)
	webtest.SignIn(t, b, in.app.URL, in.lead.Email)

	webtest.Do(t, b, "? lists the keys", chromedp.KeyEvent("?"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=keys-help]`)))
	if got := webtest.TextOf(t, b, `[data-testid=keys-help]`); !strings.Contains(got, "accept the agent's proposal") {
		t.Errorf("the key list says %q", got)
	}
	webtest.Screenshot(t, b, "attention-keys")
	webtest.Do(t, b, "Esc closes the list", chromedp.KeyEvent("\x1b"), chromedp.WaitNotVisible(chromedp.CSS(`[data-testid=keys-help]`)))

	if got := webtest.TextOf(t, b, lineOfRef(proposed.Ref)+` [data-testid=line-question]`); got != "Add an index on invoices.customer_id?" {
		t.Errorf("the line shows the question %q", got)
	}
	webtest.Do(t, b, "a accepts the proposal", webtest.Focus(lineOfRef(proposed.Ref)), chromedp.KeyEvent("a"),
		chromedp.WaitNotPresent(chromedp.CSS(lineOfRef(proposed.Ref))))
	webtest.WaitText(t, b, `[data-testid=announce]`, proposed.Ref+" resolved — the agent gets the resolution and instruction on its next brief.")
	if d := decisionIn(t, in, proposed.Ref); d.Resolution != "Add it concurrently" || d.Instruction != "Go ahead as you proposed." {
		t.Errorf("accepted as %q / %q", d.Resolution, d.Instruction)
	}
	if ref := activeRef(t, b); ref == "" {
		t.Errorf("after the action the focus is on %q, want the next line", activeID(t, b))
	}

	gate := in.gates[0]
	webtest.Do(t, b, "r goes to the resolution", webtest.Focus(lineOfRef(gate)), chromedp.KeyEvent("r"),
		chromedp.WaitVisible(chromedp.CSS(lineOfRef(gate)+` [data-testid=resolve-form]`)))
	webtest.Do(t, b, "the focus is in the resolution", focused(gate+"-resolution"))
	// With the form already open the focus moves at once: the r is not
	// typed into the field it lands in.
	webtest.Do(t, b, "r again, the form open", webtest.Focus(lineOfRef(gate)), chromedp.KeyEvent("r"), focused(gate+"-resolution"))
	if v, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`#`+gate+`-resolution`))); err != nil || v != "" {
		t.Errorf("after r the resolution holds %q (%v), want it empty", v, err)
	}
	webtest.Do(t, b, "an empty resolve",
		webtest.Click(lineOfRef(gate)+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(lineOfRef(gate)+` [data-testid=error-instruction]`)))
	if n := countOf(t, b, lineOfRef(gate)+` [aria-invalid=true][aria-describedby]`); n != 2 {
		t.Errorf("%d fields marked invalid and tied to their message, want both", n)
	}
	webtest.Screenshot(t, b, "attention-form-errors")
	webtest.Do(t, b, "Esc closes the form", webtest.Focus(lineOfRef(gate)+` input[name=resolution]`), chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(chromedp.CSS(lineOfRef(gate)+` [data-testid=item-body]`)))

	webtest.Do(t, b, "x selects, b goes to the bulk bar", webtest.Focus(lineOfRef(gate)), chromedp.KeyEvent("x"), chromedp.KeyEvent("b"),
		focused("bulk-resolution"))
	webtest.Do(t, b, "select all alike", webtest.Click(`[data-testid=select-all]`))
	alike := 0
	for i := range in.gates {
		if i%3/2 == 0 {
			alike++
		}
	}
	if got, want := webtest.TextOf(t, b, `[data-testid=bulk-count]`), strconv.Itoa(alike)+" gates: Schema change"; got != want {
		t.Errorf("the bar counts %q, want %q", got, want)
	}
	if n := countOf(t, b, `input[name=refs]:checked`); n != alike {
		t.Errorf("%d selected, want the %d Schema change gates", n, alike)
	}
}

// Two leads on one gate: when another lead resolves a gate open here, its
// line and form stay, with who resolved it and how, the typed text kept
// until dismissed; sending then says so. On the item's own page the same
// note arrives by itself.
func TestBrowserAnotherLeadActsFirst(t *testing.T) {
	in := seedInbox(t, 6)
	ctx := context.Background()
	other, _ := in.app.Kit.Lead()
	b := webtest.NewBrowser(t)
	webtest.SignIn(t, b, in.app.URL, in.lead.Email)

	gate := in.gates[0]
	webtest.OpenItem(t, b, lineOfRef(gate))
	webtest.Do(t, b, "type a resolution", webtest.Fill(lineOfRef(gate)+` input[name=resolution]`, "Mine, half typed"))
	if _, err := in.app.Kit.Gov.Decisions.Resolve(ctx, other, gate, "Keep the table", "Archive it instead."); err != nil {
		t.Fatal(err)
	}
	said := gate + " was resolved by " + other.Email + " just now: Keep the table."
	webtest.WaitText(t, b, lineOfRef(gate)+` [data-testid=outcome] strong`, said)
	if got := webtest.ValueOf(t, b, lineOfRef(gate)+` input[name=resolution]`); got != "Mine, half typed" {
		t.Errorf("the typed resolution is now %q", got)
	}
	webtest.Screenshot(t, b, "attention-acted-first")
	webtest.Do(t, b, "send anyway",
		webtest.Fill(lineOfRef(gate)+` textarea[name=instruction]`, "Do mine."),
		webtest.Click(lineOfRef(gate)+` [data-testid=resolve-form] button[type=submit]`))
	webtest.WaitText(t, b, `[data-testid=announce]`, said)
	if d := decisionIn(t, in, gate); d.Resolution != "Keep the table" {
		t.Errorf("the late send changed the resolution to %q", d.Resolution)
	}
	webtest.Do(t, b, "dismiss", webtest.Click(lineOfRef(gate)+` [data-testid=dismiss]`), chromedp.WaitNotPresent(chromedp.CSS(lineOfRef(gate))))

	next := in.gates[1]
	webtest.Do(t, b, "the item's own page", chromedp.Navigate(in.app.URL+"/attention/items/decision/"+sessionOfGate(t, in, next)+"/"+next),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=resolve-form]`)))
	if _, err := in.app.Kit.Gov.Decisions.Resolve(ctx, other, next, "Rename it", "Use a view."); err != nil {
		t.Fatal(err)
	}
	webtest.WaitText(t, b, `[data-testid=item-gone] [data-testid=outcome] strong`, next+" was resolved by "+other.Email+" just now: Rename it.")
}

// sessionOfGate is the session a gate of in waits on.
func sessionOfGate(t *testing.T, in *inbox, ref string) string {
	t.Helper()
	s, _ := gateIn(t, in, ref)
	return s
}

// Claim and snooze in the browser: "I'm on it" puts the lead's name on
// the line for everyone (another lead's claim arrives without a reload),
// and a snooze takes the line out of this lead's queue, announced, while
// the count still counts it.
func TestBrowserClaimAndSnooze(t *testing.T) {
	in := seedInbox(t, 6)
	ctx := context.Background()
	other, _ := in.app.Kit.Lead()
	b := webtest.NewBrowser(t)
	webtest.SignIn(t, b, in.app.URL, in.lead.Email)

	gate := in.gates[0]
	webtest.OpenItem(t, b, lineOfRef(gate))
	webtest.Do(t, b, "I'm on it", webtest.Click(lineOfRef(gate)+` [data-testid=claim]`),
		chromedp.WaitVisible(chromedp.CSS(lineOfRef(gate)+` [data-testid=unclaim]`)))
	webtest.WaitText(t, b, `[data-testid=announce]`, "You are on it: everyone sees your name on it until it is answered or you unclaim it.")
	webtest.WaitText(t, b, lineOfRef(gate)+` [data-testid=claimed]`, in.lead.Email+" is on it")

	next := in.gates[1]
	s := sessionOfGate(t, in, next)
	if _, err := in.app.Kit.Gov.Attention.Claim(ctx, other, governance.ItemKey{Kind: governance.ItemDecision, Session: s, Ref: next}, false); err != nil {
		t.Fatal(err)
	}
	webtest.WaitText(t, b, lineOfRef(next)+` [data-testid=claimed]`, other.Email+" is on it")
	webtest.Screenshot(t, b, "attention-claimed")

	before := webtest.TextOf(t, b, `[data-testid=attention-count]`)
	webtest.OpenItem(t, b, lineOfRef(next))
	webtest.Do(t, b, "snooze for four hours",
		chromedp.SetValue(chromedp.CSS(lineOfRef(next)+` [data-testid=snooze-for]`), "4h"),
		webtest.Click(lineOfRef(next)+` [data-testid=snooze]`),
		chromedp.WaitNotPresent(chromedp.CSS(lineOfRef(next))))
	webtest.Do(t, b, "the snooze is announced", holds(
		`() => document.querySelector("[data-testid=announce]").innerText.startsWith("Snoozed for 4h: it is hidden from your queue until")`))
	if got := webtest.TextOf(t, b, `[data-testid=attention-count]`); got != before {
		t.Errorf("the count went from %q to %q: a snoozed gate still blocks", before, got)
	}
	webtest.Do(t, b, "Snoozed by you", webtest.Click(`[data-testid=show-snoozed]`),
		chromedp.WaitVisible(chromedp.CSS(lineOfRef(next))))
	webtest.Do(t, b, "marked snoozed", chromedp.WaitVisible(chromedp.CSS(lineOfRef(next)+` [data-testid=snoozed]`)))
	webtest.Screenshot(t, b, "attention-snoozed")
}
