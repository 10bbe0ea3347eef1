package webtest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// The CSP check is real: under the console's policy a page's inline
// script does not run, its inline style is refused, and the browser's
// report of both reaches the watch that NewBrowser fails a test on.
func TestTheBrowserReportsWhatTheCSPRefuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Security-Policy", web.ContentSecurityPolicy)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>before</title>` +
			`<script>document.title = "ran"</script><p style="color: red">styled</p></html>`))
	}))
	t.Cleanup(srv.Close)
	ctx := webtest.OpenBrowser(t)
	violations := webtest.WatchCSP(t, ctx)
	webtest.Do(t, ctx, "open a page with inline script and style", chromedp.Navigate(srv.URL))
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title != "before" {
		t.Errorf("the inline script ran under the CSP: the title is %q", title)
	}
	// The reports arrive as the page loads; wait for them on the page's
	// own clock (the test's deadline bounds the wait).
	for len(violations()) < 2 {
		webtest.Do(t, ctx, "let the browser report", chromedp.Sleep(50*time.Millisecond))
	}
	t.Logf("reported: %q", violations())
}
