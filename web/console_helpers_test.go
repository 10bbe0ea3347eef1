package web_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// browserClient is an HTTP client that behaves like a browser on the
// console: it keeps cookies, does not follow redirects, and sends the
// fetch metadata a browser sends for a same-origin request.
type browserClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func newBrowserClient(t *testing.T, base string) *browserClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browserClient{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// consoleAs signs in with the testkit password and returns the client.
func consoleAs(t *testing.T, base, email string) *browserClient {
	t.Helper()
	b := newBrowserClient(t, base)
	res, _ := b.post("/login", url.Values{"email": {email}, "password": {"password-123"}}, "same-origin")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("sign in as %s: status %d, Location %q", email, res.StatusCode, res.Header.Get("Location"))
	}
	b.get("/") // reads the CSRF token
	return b
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"|"X-CSRF-Token": "([^"]+)"`)

// get fetches a page and remembers the CSRF token it carries.
func (b *browserClient) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// post submits a form; site is the Sec-Fetch-Site a browser would send
// ("same-origin", "cross-site", or "" for a client that sends none).
func (b *browserClient) post(path string, form url.Values, site string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	if site != "" {
		req.Header.Set("Sec-Fetch-Site", site)
	}
	return b.do(req)
}

// postForm submits a form with the session's CSRF token, same-origin.
func (b *browserClient) postForm(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf)
	return b.post(path, form, "same-origin")
}

func (b *browserClient) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if m := csrfInput.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1] + m[2]
	}
	return res, string(body)
}
