package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/web/webtest"
)

// A lead opens Missions, creates a high-risk mission through the form
// (after one mistake, shown under its field with what was typed kept), and
// sees it listed with its flag, evidence and contract.
func TestBrowserLeadCreatesAHighRiskMission(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	app.Kit.Mission(lead, false) // something already in the list

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "open the new-mission form",
		chromedp.Navigate(app.URL+"/missions"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-row]`)),
		webtest.Click(`[data-testid=new-mission]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-new-form]`)),
		webtest.Fill(`#mission-slug`, "payments-cutover"),
		webtest.Fill(`#mission-title`, "Cut payments over to the new provider"),
		webtest.Fill(`#mission-text`, "Move every payment path; keep the old one readable for a month."),
		webtest.Click(`[data-testid=mission-high-risk]`),
		webtest.Fill(`#mission-evidence`, "tests, review"),
		webtest.Fill(`#mission-contract`, "forbid_path vendor/**\nmax_files_changed twenty"),
		webtest.Click(`[data-testid=mission-new-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-contract]`)),
	)
	if got := webtest.TextOf(t, ctx, `[data-testid=error-contract]`); !strings.Contains(got, "max_files_changed needs a positive whole number") {
		t.Errorf("the contract error says %q", got)
	}
	if got, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#mission-title`))); err != nil || got != "Cut payments over to the new provider" {
		t.Errorf("the title after the mistake is %q (%v)", got, err)
	}
	webtest.Screenshot(t, ctx, "missions-form-error")

	webtest.Do(t, ctx, "fix the contract and create",
		webtest.Fill(`#mission-contract`, "forbid_path vendor/**\nmax_files_changed 20"),
		webtest.Click(`[data-testid=mission-new-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-row][data-slug=payments-cutover]`)),
	)
	row := `[data-testid=mission-row][data-slug=payments-cutover]`
	if got := webtest.TextOf(t, ctx, `.notice`); got != "Mission payments-cutover created." {
		t.Errorf("notice %q", got)
	}
	for sel, want := range map[string]string{
		row + ` [data-testid=mission-risk]`:     "high-risk",
		row + ` [data-testid=mission-evidence]`: "tests",
		row + ` [data-testid=mission-contract]`: "max_files_changed 20",
		row + ` [data-testid=mission-sessions]`: "0\u00a0sessions",
	} {
		if got := webtest.TextOf(t, ctx, sel); !strings.Contains(got, want) {
			t.Errorf("%s says %q, want %q", sel, got, want)
		}
	}
	m, err := app.Kit.Gov.Missions.Get(context.Background(), "payments-cutover")
	if err != nil {
		t.Fatal(err)
	}
	if !m.HighRisk || len(m.Contract) != 2 || m.Contract[1].Kind != protocol.MaxFilesChanged {
		t.Fatalf("stored %+v", m)
	}
	webtest.Screenshot(t, ctx, "missions")

	webtest.Do(t, ctx, "open the edit form", webtest.Click(row+` [data-testid=edit-mission]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-edit-form]`)))
	webtest.Screenshot(t, ctx, "missions-edit")
}

// Alice unticks "Two people approve" on a two-person mission: the page
// says her change waits for a second lead, and the mission still takes
// two people. Bob, in his own browser, finds it on Missions and approves
// it: the mission no longer does, and the Activity page shows both.
func TestBrowserASecondLeadApprovesLoweringAProtection(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	alice, _ := app.Kit.Lead()
	bob, _ := app.Kit.Lead()
	if _, err := app.Kit.Gov.Missions.Create(context.Background(), alice, governance.MissionInput{Slug: "billing",
		Title: "Billing", TwoPerson: true}); err != nil {
		t.Fatal(err)
	}
	actx := webtest.NewBrowser(t)
	webtest.SignIn(t, actx, app.URL, alice.Email)
	webtest.Do(t, actx, "untick two people and save",
		chromedp.Navigate(app.URL+"/missions/billing/edit"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-edit-form]`)),
		webtest.Click(`[data-testid=mission-two-person]`),
		webtest.Click(`[data-testid=mission-edit-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-change]`)),
	)
	if got := webtest.TextOf(t, actx, `.notice`); !strings.Contains(got, "waits for a second lead's approval") {
		t.Errorf("Alice is told %q", got)
	}
	if got := webtest.TextOf(t, actx, `[data-testid=mission-change]`); !strings.Contains(got, "You asked for it") {
		t.Errorf("Alice's own change offers her to approve it: %q", got)
	}
	if m, _ := app.Kit.Gov.Missions.Get(context.Background(), "billing"); !m.TwoPerson {
		t.Fatal("one lead's untick took effect")
	}
	webtest.Screenshot(t, actx, "missions-change-waiting")

	bctx := webtest.NewBrowser(t)
	webtest.SignIn(t, bctx, app.URL, bob.Email)
	webtest.Do(t, bctx, "approve Alice's change",
		chromedp.Navigate(app.URL+"/missions"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=mission-change-approve]`)),
		webtest.Fill(`[data-testid=mission-change] input[name=note]`, "Agreed at standup."),
		webtest.Click(`[data-testid=mission-change-approve]`),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
	)
	if got := webtest.TextOf(t, bctx, `.notice`); !strings.Contains(got, "approved and applied") {
		t.Errorf("Bob is told %q", got)
	}
	if m, _ := app.Kit.Gov.Missions.Get(context.Background(), "billing"); m.TwoPerson {
		t.Fatal("the approved change did not take effect")
	}
	webtest.Do(t, bctx, "open the Activity page",
		webtest.Click(`header.top [data-testid=nav-activity]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=activity-row][data-action="mission.change.approve"]`)),
	)
	if got := webtest.TextOf(t, bctx, `[data-testid=activity-row][data-action="mission.change.request"] [data-testid=activity-actor]`); got != alice.Email {
		t.Errorf("the request's actor is %q, want %s", got, alice.Email)
	}
	webtest.Screenshot(t, bctx, "activity-mission-change")
}
