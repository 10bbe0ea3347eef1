package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A lead keeps the Attention view open while a gate waits behind a paused
// session; the gate's mission gives gates 20 minutes; when the sweep
// records it expired, the push moves it to the first line, marked
// EXPIRED, without a reload, and the lead still resolves it in place.
func TestBrowserAnExpiredGateRisesToTheTop(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	paused := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	if _, err := app.Kit.Gov.Sessions.Pause(bg, lead, paused, "Wait for the review"); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Kit.Gov.Missions.Create(bg, lead, governance.MissionInput{Slug: "expiring", Title: "Expiring gates", GateTTL: "20m"}); err != nil {
		t.Fatal(err)
	}
	session := app.Kit.Session(agent, "expiring")
	d, err := app.Kit.Gov.Decisions.Open(bg, agent, session, governance.DecisionInput{Title: "Legacy table",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
	if err != nil {
		t.Fatal(err)
	}

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	first := `[data-testid=attention-item] [data-testid=open-item]` // the first line's title
	if got := webtest.TextOf(t, ctx, first); got != "Session paused" {
		t.Fatalf("the first line is %q, want the paused session", got)
	}
	noPoll(t, ctx)

	app.Kit.Clock.Advance(20 * time.Minute)
	if n, err := app.Kit.Gov.Decisions.ExpireDue(bg); err != nil || n != 1 {
		t.Fatalf("the sweep recorded %d (%v), want 1", n, err)
	}
	webtest.WaitText(t, ctx, first, d.Ref+": Legacy table")
	notReloaded(t, ctx)
	line := `[data-testid=attention-item][data-ref="` + d.Ref + `"]`
	if got := webtest.TextOf(t, ctx, line+` [data-testid=expired-badge]`); got != "EXPIRED" {
		t.Fatalf("the expired gate's badge says %q", got)
	}
	webtest.Screenshot(t, ctx, "attention-expired")
	webtest.CheckA11y(t, ctx, "the Attention view with an expired gate")

	webtest.OpenItem(t, ctx, line)
	if got := webtest.TextOf(t, ctx, line+` [data-testid=expired-note]`); !strings.HasPrefix(got, "Expired unanswered at ") {
		t.Fatalf("the open item says %q", got)
	}
	webtest.Do(t, ctx, "resolve the expired gate",
		webtest.Fill(line+` textarea[name=instruction]`, "Archive the table instead."),
		webtest.Fill(line+` input[name=resolution]`, "Keep it"),
		webtest.Click(line+` [data-testid=resolve-form] button[type=submit]`),
		chromedp.WaitNotPresent(chromedp.CSS(line)))
	if got := webtest.TextOf(t, ctx, first); got != "Session paused" {
		t.Fatalf("after resolving, the first line is %q", got)
	}
}
