package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/web/webtest"
)

// A page on another origin that posts a form to Madebook, in the lead's
// signed-in browser, is refused: 403, and the session is not paused.
func TestBrowserForgedCrossSitePostIsRefused(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/sessions/%s/pause">
<input name="reason" value="forged"><input name="csrf" value="guessed"></form>
<script>document.forms[0].submit()</script>`, app.URL, session)
	}))
	t.Cleanup(evil.Close)

	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "visit the other site", chromedp.Navigate(evil.URL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-page]`)))
	if got := webtest.TextOf(t, ctx, `[data-testid=error-page]`); !strings.Contains(got, "came from another site") {
		t.Errorf("the refusal says %q", got)
	}
	d, err := app.Kit.Gov.Sessions.Get(context.Background(), lead, session)
	if err != nil {
		t.Fatal(err)
	}
	if d.Paused {
		t.Fatal("the forged post paused the session")
	}
}
