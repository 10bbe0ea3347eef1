package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/ledger"
)

// A run parked on a question shows in the Attention view with one button
// per option; a lead picks one; the item leaves the queue and the run
// resumes from the outcome it parked from.
func TestBrowserLeadAnswersAParkedAsk(t *testing.T) {
	app := startBrowserApp(t)
	ctx := newBrowser(t)
	bg := context.Background()
	lead, _ := app.kit.Lead()
	agent, _ := app.kit.Agent()
	session := app.kit.Session(agent, app.kit.Mission(lead, false))
	run, err := app.kit.Ledger.StartRun(bg, agent, session, "graph-ask-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	ask, err := app.kit.Ledger.RecordAsk(bg, agent, run.ID, ledger.AskInput{Prompt: "save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}})
	if err != nil {
		t.Fatal(err)
	}

	signIn(t, ctx, app.url, lead.Email)
	item := `[data-testid=attention-item][data-ref="` + ask.ID + `"]`
	do(t, ctx, "the parked ask shows", chromedp.WaitVisible(chromedp.CSS(item+` [data-testid=answer-option]`)))
	if got := textOf(t, ctx, item+` [data-testid=question]`); got != "save this reading?" {
		t.Errorf("question = %q", got)
	}
	screenshot(t, ctx, "attention-ask")
	do(t, ctx, "answer Yes",
		chromedp.Click(chromedp.CSS(item+` button[value="1"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(item)))

	// The run is running again: it may finish now.
	if _, err := app.kit.Ledger.FinishRun(bg, agent, run.ID, ledger.Complete); err != nil {
		t.Fatalf("finishing the answered run: %v", err)
	}
}
