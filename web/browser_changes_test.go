package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/protocol"
)

// A change with a secret in it is a HARD_STOP item in the Attention view; a
// lead clears it in place; the session page shows the change's risk and
// what it tripped; the agent's next brief is no longer a HARD_STOP.
func TestBrowserLeadClearsACriticalViolation(t *testing.T) {
	app := startBrowserApp(t)
	ctx := newBrowser(t)
	bg := context.Background()
	lead, _ := app.kit.Lead()
	agent, _ := app.kit.Agent()
	session := app.kit.Session(agent, app.kit.Mission(lead, false))
	res, err := app.kit.Gov.ReportChange(bg, agent, session, change.Change{
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
	if b, _ := app.kit.Gov.Brief(bg, agent, session); b.NextAction != protocol.HardStop {
		t.Fatalf("brief = %s", b.NextAction)
	}

	signIn(t, ctx, app.url, lead.Email)
	item := `[data-testid=attention-item][data-kind=violation]`
	do(t, ctx, "the violation is in the queue", chromedp.WaitVisible(chromedp.CSS(item)))
	screenshot(t, ctx, "attention-violation")
	do(t, ctx, "open the session", chromedp.Navigate(app.url+"/sessions/"+session),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=risk-score]`)))
	screenshot(t, ctx, "session-change")
	if got := textOf(t, ctx, `[data-testid=next-action]`); got != "HARD_STOP" {
		t.Errorf("session page next action = %q", got)
	}
	do(t, ctx, "back to the queue and clear it in place",
		chromedp.Navigate(app.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(item)),
		chromedp.SendKeys(chromedp.CSS(item+` input[name=note]`), "Key rotated; removed from the script."),
		chromedp.Click(chromedp.CSS(item+` [data-testid=violation-clear-form] button[type=submit]`)),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if b, _ := app.kit.Gov.Brief(bg, agent, session); b.NextAction == protocol.HardStop {
		t.Fatalf("still a HARD_STOP after the lead cleared it: %q", b.Reason)
	}
	d, err := app.kit.Gov.GetSession(bg, lead, session)
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
