package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/web/webtest"
)

// A change with a secret in it is a HARD_STOP item in the Attention view; a
// lead clears it in place; the session page shows the change's risk and
// what it tripped; the agent's next brief is no longer a HARD_STOP.
func TestBrowserLeadClearsACriticalViolation(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	res, err := app.Kit.Gov.Changes.Report(bg, agent, session, change.Change{
		Files: []change.File{
			{Path: "config/deploy.sh", Content: "#!/bin/sh\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"},
			{Path: "db/migrations/0042_drop_legacy.sql", Content: strings.Repeat("ALTER TABLE billing DROP COLUMN x;\n", 40)},
		},
		Dependencies: []string{"left-pad"},
	})
	if err != nil || len(res.Violations) != 1 {
		t.Fatalf("report: %+v %v", res, err)
	}
	id := res.Violations[0].ID
	if b, _ := app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session}); b.NextAction != protocol.HardStop {
		t.Fatalf("brief = %s", b.NextAction)
	}

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := `[data-testid=attention-item][data-kind=violation]`
	webtest.Do(t, ctx, "the violation is in the queue", chromedp.WaitVisible(chromedp.CSS(item)))
	webtest.Screenshot(t, ctx, "attention-violation")
	webtest.Do(t, ctx, "open the session", chromedp.Navigate(app.URL+"/sessions/"+session),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=risk-score]`)))
	webtest.Screenshot(t, ctx, "session-change")
	if got := webtest.TextOf(t, ctx, `[data-testid=next-action]`); got != "HARD_STOP" {
		t.Errorf("session page next action = %q", got)
	}
	webtest.Do(t, ctx, "back to the queue and clear it in place",
		chromedp.Navigate(app.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(item)))
	webtest.OpenItem(t, ctx, item)
	// Nothing is chosen for the lead: the form will not go without a choice.
	if chosen := webtest.ValueOf(t, ctx, item+` [data-testid=cleared-as]`); chosen != "" {
		t.Errorf("cleared as %q before the lead chose", chosen)
	}
	webtest.Do(t, ctx, "clear it in place",
		webtest.Fill(item+` [data-testid=cleared-as]`, "fixed"),
		webtest.Fill(item+` input[name=note]`, "Key rotated; removed from the script."),
		webtest.Click(item+` [data-testid=violation-clear]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); got != "Violation cleared as fixed — the HARD_STOP lifts on the agent's next brief." {
		t.Errorf("the live region says %q", got)
	}
	if b, _ := app.Kit.Gov.Briefs.Brief(bg, agent, governance.BriefRequest{Session: session}); b.NextAction == protocol.HardStop {
		t.Fatalf("still a HARD_STOP after the lead cleared it: %q", b.Reason)
	}
	d, err := app.Kit.Gov.Sessions.Get(bg, lead, session)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range d.Timeline {
		if e.Kind == "violation.cleared" && e.Actor == "person:"+lead.Email {
			found = true
		}
	}
	if !found {
		t.Errorf("the clearing of violation %d is not in the timeline", id)
	}
}
