package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// On a two-person mission one lead's resolution shows as 1 of 2 and the
// gate stays; a second lead finds the form filled with what the first
// approved, approves it, and the gate leaves the queue resolved.
func TestBrowserTwoLeadsResolveAGate(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	bg := context.Background()
	first, _ := app.Kit.Lead()
	second, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	if _, err := app.Kit.Gov.Missions.Create(bg, first, governance.MissionInput{Slug: "billing", Title: "Billing", TwoPerson: true}); err != nil {
		t.Fatal(err)
	}
	session := app.Kit.Session(agent, "billing")
	d, err := app.Kit.Gov.Decisions.Open(bg, agent, session, governance.DecisionInput{Title: "Legacy table", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	item := `[data-testid=attention-item][data-ref="` + d.Ref + `"]`

	ctx := webtest.NewBrowser(t)
	webtest.SignIn(t, ctx, app.URL, first.Email)
	webtest.OpenItem(t, ctx, item)
	webtest.Do(t, ctx, "the first lead resolves",
		webtest.Fill(item+` input[name=resolution]`, "Keep it"),
		webtest.Fill(item+` textarea[name=instruction]`, "Archive the table instead."),
		webtest.Click(item+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=approvals]`)))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.Contains(got, "1 of 2") {
		t.Errorf("the live region says %q", got)
	}
	if got := webtest.TextOf(t, ctx, item+` [data-testid=approvals]`); !strings.Contains(got, first.Email) || !strings.Contains(got, "Keep it") {
		t.Errorf("the item says %q", got)
	}
	webtest.WaitText(t, ctx, item+` [data-testid=line-approvals]`, "1 of 2")
	// The first lead cannot approve again: no form, a word instead.
	webtest.WaitText(t, ctx, item+` [data-testid=you-approved]`, "You approved this: it waits for a second, different lead.")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+item+` [data-testid=resolve-form]').length`)); err != nil || n != 0 {
		t.Errorf("the first lead still sees %d resolve forms (%v)", n, err)
	}
	webtest.Screenshot(t, ctx, "attention-one-of-two")

	ctx2 := webtest.NewBrowser(t)
	webtest.SignIn(t, ctx2, app.URL, second.Email)
	webtest.OpenItem(t, ctx2, item)
	if typed := webtest.ValueOf(t, ctx2, item+` input[name=resolution]`); typed != "Keep it" {
		t.Fatalf("the second lead's form holds %q, want the first lead's resolution", typed)
	}
	if got := webtest.TextOf(t, ctx2, item+` [data-testid=resolve-form] button[type=submit]`); got != "Resolve "+d.Ref+" (2 of 2)" {
		t.Errorf("the button says %q", got)
	}
	webtest.Do(t, ctx2, "the second lead approves",
		webtest.Click(item+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	b, err := app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session})
	if err != nil || len(b.Resolutions) != 1 || b.Resolutions[0].Instruction != "Archive the table instead." {
		t.Fatalf("brief resolutions = %+v (%v)", b.Resolutions, err)
	}
}
