package web_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
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
	return &browserClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
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

// signInWith signs in through POST /login and reads the session's CSRF
// token from the page it lands on.
func signInWith(t *testing.T, base, email, password string) *browserClient {
	t.Helper()
	b := newBrowserClient(t, base)
	r := b.send(http.MethodPost, "/login", url.Values{"email": {email}, "password": {password}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("sign in %s: status %d: %s", email, r.Status, short([]byte(r.Body)))
	}
	b.csrf = ""
	page := b.open("/")
	if page.Status != http.StatusOK {
		t.Fatalf("after sign-in GET /: %d", page.Status)
	}
	if b.csrf == "" {
		t.Fatalf("no csrf input on the page: %s", short([]byte(page.Body)))
	}
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

// page is an answer with its body read.
type page struct {
	Status int
	Header http.Header
	Body   string
}

// text is the body with HTML escapes undone, for matching messages.
func (p page) text() string { return html.UnescapeString(p.Body) }

// location is where a redirect leads.
func (p page) location() string { return p.Header.Get("Location") }

// open fetches a page, from this site, and remembers its CSRF token.
func (b *browserClient) open(path string) page {
	b.t.Helper()
	return b.send(http.MethodGet, path, nil)
}

// submit sends a form as the page would: with the session's CSRF token
// (unless the form carries its own), from this site. form is not changed.
func (b *browserClient) submit(path string, form url.Values) page {
	b.t.Helper()
	f := url.Values{"csrf": {b.csrf}}
	for k, v := range form {
		f[k] = v
	}
	return b.send(http.MethodPost, path, f)
}

// send sends a request from this site with form, if not nil, as its body,
// and no CSRF token but the form's own.
func (b *browserClient) send(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader = http.NoBody
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, text := b.do(req)
	return page{Status: res.StatusCode, Header: res.Header, Body: text}
}

func countTestID(body, id string) int { return strings.Count(body, `data-testid="`+id+`"`) }
