package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// edge is a server on a fresh kit whose log the test reads, behind the
// given trusted proxies ("" for none).
func edge(t *testing.T, proxies string) (*testkit.Kit, http.Handler, *webtest.Log) {
	t.Helper()
	kit := testkit.New(t)
	log := &webtest.Log{}
	d := webtest.Deps(kit)
	d.Logger = slog.New(slog.NewJSONHandler(log, nil))
	nets, err := web.ParseProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	d.TrustedProxies = nets
	return kit, web.NewServer(d), log
}

// signIn posts the sign-in form from the TCP peer peer, with the extra
// headers, and returns the status.
func signIn(h http.Handler, peer, email, password string, header map[string]string) int {
	form := url.Values{"email": {email}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	req.RemoteAddr = peer
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// spray fails 20 sign-ins from peer, each on another account (so that no
// account's own limit is reached), which is the per-address limit.
func spray(t *testing.T, h http.Handler, peer string, header map[string]string) {
	t.Helper()
	for i := range 20 {
		email := "nobody" + string(rune('a'+i)) + "@example.com"
		if got := signIn(h, peer, email, "wrong-password", header); got != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, got)
		}
	}
}

// Without a trusted proxy the client is the TCP peer: after 20 failures
// from one address, a forged X-Forwarded-For or X-Real-IP neither lifts
// the limit nor changes the address the request log records.
func TestAForgedForwardingHeaderChangesNeitherTheLimitNorTheLog(t *testing.T) {
	kit, h, log := edge(t, "")
	lead, _ := kit.Lead()
	spray(t, h, "203.0.113.9:40000", nil)
	for _, forged := range []map[string]string{
		{"X-Forwarded-For": "198.51.100.7"},
		{"X-Real-IP": "198.51.100.8"},
		{"X-Forwarded-For": "198.51.100.9, 10.0.0.1", "X-Real-IP": "198.51.100.10"},
	} {
		if got := signIn(h, "203.0.113.9:40001", lead.Email, "password-123", forged); got != http.StatusTooManyRequests {
			t.Errorf("the right password with %v: status %d, want 429 (still limited)", forged, got)
		}
	}
	if strings.Contains(log.String(), "198.51.100.") {
		t.Errorf("the request log records a forged address:\n%s", log)
	}
	if !strings.Contains(log.String(), `"remote":"203.0.113.9"`) {
		t.Errorf("the request log does not record the TCP peer:\n%s", log)
	}
	// Another address is not limited.
	if got := signIn(h, "203.0.113.10:40000", lead.Email, "password-123", nil); got != http.StatusSeeOther {
		t.Errorf("the right password from another address: status %d, want 303", got)
	}
}

// Behind a trusted proxy its X-Forwarded-For names the client: the limit
// counts per forwarded client, and the log records it; the same header
// from a peer outside the trusted range still counts for nothing.
func TestATrustedProxysForwardingHeaderNamesTheClient(t *testing.T) {
	kit, h, log := edge(t, "10.1.0.0/16, 192.0.2.5")
	lead, _ := kit.Lead()
	const proxy = "10.1.2.3:5000"
	spray(t, h, proxy, map[string]string{"X-Forwarded-For": "198.51.100.7"})
	if got := signIn(h, proxy, lead.Email, "password-123", map[string]string{"X-Forwarded-For": "198.51.100.7"}); got != http.StatusTooManyRequests {
		t.Errorf("the limited client through the proxy: status %d, want 429", got)
	}
	if got := signIn(h, proxy, lead.Email, "password-123", map[string]string{"X-Forwarded-For": "198.51.100.8"}); got != http.StatusSeeOther {
		t.Errorf("another client through the same proxy: status %d, want 303", got)
	}
	// A client that prepends its own address to the chain gets the
	// address the proxy saw, the nearest one it does not trust.
	if got := signIn(h, proxy, lead.Email, "password-123", map[string]string{"X-Forwarded-For": "198.51.100.99, 198.51.100.7"}); got != http.StatusTooManyRequests {
		t.Errorf("a forged address before the proxy's: status %d, want 429", got)
	}
	// X-Real-IP from a trusted single address counts too.
	if got := signIn(h, "192.0.2.5:1", lead.Email, "password-123", map[string]string{"X-Real-IP": "198.51.100.7"}); got != http.StatusTooManyRequests {
		t.Errorf("X-Real-IP of the limited client from a trusted proxy: status %d, want 429", got)
	}
	// An untrusted peer's header is ignored: it is limited by its own
	// address only, and it is not the limited client.
	if got := signIn(h, "203.0.113.9:1", lead.Email, "password-123", map[string]string{"X-Forwarded-For": "198.51.100.7"}); got != http.StatusSeeOther {
		t.Errorf("an untrusted peer naming the limited client: status %d, want 303", got)
	}
	logged := log.String()
	for _, want := range []string{`"remote":"198.51.100.7"`, `"remote":"198.51.100.8"`, `"remote":"203.0.113.9"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("the request log lacks %s:\n%s", want, logged)
		}
	}
	if strings.Contains(logged, `"remote":"10.1.2.3"`) || strings.Contains(logged, "198.51.100.99") {
		t.Errorf("the request log records the proxy or a forged address:\n%s", logged)
	}
}

func TestParseProxies(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "", want: ""},
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: " 10.0.0.7 , ::1,fd00::/8", want: "10.0.0.7/32 ::1/128 fd00::/8"},
		{in: "10.0.0.0/33", bad: true},
		{in: "proxy.example.com", bad: true},
		{in: "10.0.0.1,nope", bad: true},
	} {
		nets, err := web.ParseProxies(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("ParseProxies(%q): error %v, want bad=%v", tc.in, err, tc.bad)
			continue
		}
		var got []string
		for _, n := range nets {
			got = append(got, n.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ParseProxies(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Every answer but an asset's carries the security headers: pages a CSP
// with no inline script or style and no framing, same-origin referrers,
// nosniff and no-store; JSON answers a CSP that loads nothing and forbids
// framing, nosniff and no-store, and no page's headers. Assets carry
// nosniff and may be cached.
func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	kit, h, _ := edge(t, "")
	_, token := kit.Lead()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	lead, _ := kit.Lead()
	b := webtest.ConsoleAs(t, srv.URL, lead.Email)
	page := func(path string) *http.Response { res, _ := b.Get(path); return res }
	api := func(path string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for name, res := range map[string]*http.Response{
		"the Attention page": page("/"),
		"the sign-in page":   func() *http.Response { res, _ := webtest.NewClient(t, srv.URL).Get("/login"); return res }(),
		"a page not found":   page("/no/such/page"),
		"the missions page":  page("/missions"),
	} {
		for header, want := range map[string]string{
			"Content-Security-Policy": web.ContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "same-origin",
			"X-Frame-Options":         "DENY",
			"Cache-Control":           "no-store",
		} {
			if got := res.Header.Get(header); got != want {
				t.Errorf("%s (%d): %s = %q, want %q", name, res.StatusCode, header, got, want)
			}
		}
	}
	for name, res := range map[string]*http.Response{
		"the JSON API": api("/api/v1/missions"),
		"a JSON 404":   api("/api/v1/nothing"),
		"health":       api("/healthz"),
		"/brief":       api("/brief"),
	} {
		for header, want := range map[string]string{
			"Content-Security-Policy": web.APIContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Cache-Control":           "no-store",
			"Referrer-Policy":         "",
			"X-Frame-Options":         "",
		} {
			if got := res.Header.Get(header); got != want {
				t.Errorf("%s (%d): %s = %q, want %q", name, res.StatusCode, header, got, want)
			}
		}
	}
	for _, must := range []string{"default-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(web.APIContentSecurityPolicy, must) {
			t.Errorf("the JSON answers' CSP lacks %s", must)
		}
	}
	for _, must := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(web.ContentSecurityPolicy, must) {
			t.Errorf("the CSP lacks %s", must)
		}
	}
	if strings.Contains(web.ContentSecurityPolicy, "unsafe") {
		t.Errorf("the CSP allows something unsafe: %s", web.ContentSecurityPolicy)
	}
	asset := page("/static/madebook.css")
	if asset.StatusCode != http.StatusOK || asset.Header.Get("X-Content-Type-Options") != "nosniff" ||
		asset.Header.Get("Cache-Control") == "no-store" {
		t.Errorf("an asset: %d, nosniff %q, Cache-Control %q", asset.StatusCode,
			asset.Header.Get("X-Content-Type-Options"), asset.Header.Get("Cache-Control"))
	}
}

// /static/ serves its assets, never a listing: the folder, and anything
// that is not an asset, is a 404.
func TestStaticListsNothing(t *testing.T) {
	_, h, _ := edge(t, "")
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/static/", http.StatusNotFound},
		{"/static/.", http.StatusNotFound},
		{"/static//", http.StatusNotFound},
		{"/static/nothing.js", http.StatusNotFound},
		{"/static/static.go", http.StatusNotFound},
		{"/static/htmx.min.js", http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, rec.Code, tc.want)
		}
		if rec.Code != http.StatusOK && (strings.Contains(rec.Body.String(), "htmx.min.js") || strings.Contains(rec.Body.String(), "<pre>")) {
			t.Errorf("GET %s lists the folder: %s", tc.path, rec.Body)
		}
	}
}

// A client that hangs up before its answer is no server fault: the log
// says "client gone" with status 499 at info, and no error is logged.
func TestAClientThatHangsUpIsNotA500(t *testing.T) {
	kit, h, log := edge(t, "")
	_, token := kit.Lead()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/missions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	logged := log.String()
	if !strings.Contains(logged, `"msg":"client gone"`) || !strings.Contains(logged, `"status":499`) {
		t.Errorf("the log does not say the client is gone (status 499):\n%s", logged)
	}
	if strings.Contains(logged, `"level":"ERROR"`) || strings.Contains(logged, `"status":500`) {
		t.Errorf("a client that hung up is logged as a fault:\n%s", logged)
	}
}
