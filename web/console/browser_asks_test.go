package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/webtest"
)

// A run parked on a question shows in the Attention view with one button
// per option; a lead picks one; the item leaves the queue and the run
// resumes from the outcome it parked from.
func TestBrowserLeadAnswersAParkedAsk(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	run, err := app.Kit.Ledger.StartRun(bg, agent, session, "graph-ask-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	ask, err := app.Kit.Ledger.RecordAsk(bg, agent, run.ID, ledger.AskInput{Prompt: "save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}})
	if err != nil {
		t.Fatal(err)
	}

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	item := `[data-testid=attention-item][data-ref="` + ask.ID + `"]`
	webtest.OpenItem(t, ctx, item)
	webtest.Do(t, ctx, "the parked ask shows", chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=answer-option]`)))
	if got := webtest.TextOf(t, ctx, item+` [data-testid=question]`); got != "save this reading?" {
		t.Errorf("question = %q", got)
	}
	webtest.Screenshot(t, ctx, "attention-ask")
	webtest.Do(t, ctx, "answer Yes",
		webtest.Click(item+` button[value="1"]`),
		chromedp.WaitNotPresent(chromedp.CSS(item)))
	if got := webtest.TextOf(t, ctx, `[data-testid=announce]`); !strings.HasPrefix(got, `Answered "Yes" — the run resumes from where it parked`) {
		t.Errorf("the live region says %q", got)
	}

	// The run is running again: it may finish now.
	if _, err := app.Kit.Ledger.FinishRun(bg, agent, run.ID, ledger.Complete); err != nil {
		t.Fatalf("finishing the answered run: %v", err)
	}
}
