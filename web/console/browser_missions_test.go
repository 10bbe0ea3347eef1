package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

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
