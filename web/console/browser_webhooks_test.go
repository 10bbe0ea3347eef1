package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// An admin sends an endpoint a test in the browser and reads what it
// answered (its status, never its words), then removes the endpoint with
// the other button of the same form.
func TestBrowserAdminSendsAWebhookATest(t *testing.T) {
	app := webtest.StartBrowserApp(t, testkit.WithLoopbackWebhooks) // the endpoint is on 127.0.0.1
	ctx := webtest.NewBrowser(t)
	admin, _ := app.Kit.Person(auth.Admin)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "db password is hunter2", http.StatusBadGateway)
	}))
	t.Cleanup(rcv.Close)
	if _, err := app.Kit.Gov.Webhooks.Create(context.Background(), admin, governance.WebhookInput{
		URL: rcv.URL + "/services/T0/B0/slackSECRETtoken1a2b", Secret: "browser-signing-secret", Events: []string{"hard_stop"}}); err != nil {
		t.Fatal(err)
	}

	webtest.SignIn(t, ctx, app.URL, admin.Email)
	webtest.Do(t, ctx, "send a test",
		chromedp.Navigate(app.URL+"/admin/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=webhook-test]`)),
		webtest.Click(`[data-testid=webhook-test]`),
		chromedp.WaitVisible(chromedp.CSS(`main .notice`)),
	)
	want := "Sent a test notification to " + rcv.URL + "/services/T0/B0/••••1a2b: it failed, HTTP 502 from the endpoint."
	if got := webtest.TextOf(t, ctx, `main .notice`); !strings.Contains(got, want) {
		t.Errorf("notice = %q, want %q", got, want)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(`html`)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, "hunter2") || strings.Contains(html, "slackSECRET") {
		t.Error("the page shows the endpoint's words or the URL's secret")
	}
	webtest.Screenshot(t, ctx, "webhooks-tested")
	webtest.Do(t, ctx, "remove the endpoint",
		webtest.Click(`[data-testid=webhook] button.secondary`),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=webhook]`)),
	)
	if got := webtest.TextOf(t, ctx, `main .notice`); !strings.Contains(got, "Removed the endpoint") {
		t.Errorf("notice = %q", got)
	}
}
