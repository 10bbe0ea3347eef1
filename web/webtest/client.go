package webtest

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

// Client is an HTTP client that behaves like a browser on the
// console: it keeps cookies, does not follow redirects, and sends the
// fetch metadata a browser sends for a same-origin request.
type Client struct {
	T    testing.TB
	Base string
	HTTP *http.Client
	CSRF string
}

// NewClient returns a browser-like client of the console at base.
func NewClient(t testing.TB, base string) *Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{T: t, Base: base, HTTP: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// ConsoleAs signs in with the testkit password and returns the client.
func ConsoleAs(t testing.TB, base, email string) *Client {
	t.Helper()
	b := NewClient(t, base)
	res, _ := b.Post("/login", url.Values{"email": {email}, "password": {"password-123"}}, "same-origin")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("sign in as %s: status %d, Location %q", email, res.StatusCode, res.Header.Get("Location"))
	}
	b.Get("/") // reads the CSRF token
	return b
}

// SignInWith signs in through POST /login and reads the session's CSRF
// token from the page it lands on.
func SignInWith(t testing.TB, base, email, password string) *Client {
	t.Helper()
	b := NewClient(t, base)
	r := b.Send(http.MethodPost, "/login", url.Values{"email": {email}, "password": {password}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("sign in %s: status %d: %s", email, r.Status, Short([]byte(r.Body)))
	}
	b.CSRF = ""
	page := b.Open("/")
	if page.Status != http.StatusOK {
		t.Fatalf("after sign-in GET /: %d", page.Status)
	}
	if b.CSRF == "" {
		t.Fatalf("no csrf input on the page: %s", Short([]byte(page.Body)))
	}
	return b
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"|"X-CSRF-Token": "([^"]+)"`)

// Get fetches a page and remembers the CSRF token it carries.
func (b *Client) Get(path string) (*http.Response, string) {
	b.T.Helper()
	req, err := http.NewRequest(http.MethodGet, b.Base+path, nil)
	if err != nil {
		b.T.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.Do(req)
}

// Post submits a form; site is the Sec-Fetch-Site a browser would send
// ("same-origin", "cross-site", or "" for a client that sends none).
func (b *Client) Post(path string, form url.Values, site string) (*http.Response, string) {
	b.T.Helper()
	req, err := http.NewRequest(http.MethodPost, b.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	if site != "" {
		req.Header.Set("Sec-Fetch-Site", site)
	}
	return b.Do(req)
}

// PostForm submits a form with the session's CSRF token, same-origin.
func (b *Client) PostForm(path string, form url.Values) (*http.Response, string) {
	b.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.CSRF)
	return b.Post(path, form, "same-origin")
}

// Do sends a request and remembers the CSRF token the answer carries.
func (b *Client) Do(req *http.Request) (*http.Response, string) {
	b.T.Helper()
	res, err := b.HTTP.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.T.Fatal(err)
	}
	if m := csrfInput.FindStringSubmatch(string(body)); m != nil {
		b.CSRF = m[1] + m[2]
	}
	return res, string(body)
}

// Page is an answer with its body read.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

// Text is the body with HTML escapes undone, for matching messages.
func (p Page) Text() string { return html.UnescapeString(p.Body) }

// Location is where a redirect leads.
func (p Page) Location() string { return p.Header.Get("Location") }

// Open fetches a Page, from this site, and remembers its CSRF token.
func (b *Client) Open(path string) Page {
	b.T.Helper()
	return b.Send(http.MethodGet, path, nil)
}

// Submit sends a form as the page would: with the session's CSRF token
// (unless the form carries its own), from this site. form is not changed.
func (b *Client) Submit(path string, form url.Values) Page {
	b.T.Helper()
	f := url.Values{"csrf": {b.CSRF}}
	for k, v := range form {
		f[k] = v
	}
	return b.Send(http.MethodPost, path, f)
}

// Send sends a request from this site with form, if not nil, as its body,
// and no CSRF token but the form's own.
func (b *Client) Send(method, path string, form url.Values) Page {
	b.T.Helper()
	var body io.Reader = http.NoBody
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.Base+path, body)
	if err != nil {
		b.T.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, text := b.Do(req)
	return Page{Status: res.StatusCode, Header: res.Header, Body: text}
}

// CountTestID counts the elements of a page with data-testid id.
func CountTestID(body, id string) int { return strings.Count(body, `data-testid="`+id+`"`) }

// HTMXPost posts a form as htmx does from the Attention page.
func (b *Client) HTMXPost(path string, form url.Values) (*http.Response, string) {
	b.T.Helper()
	form.Set("csrf", b.CSRF)
	req, err := http.NewRequest(http.MethodPost, b.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", b.Base+"/")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.Do(req)
}
