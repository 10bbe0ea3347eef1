package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

func consoleServer(t *testing.T, secure bool, opts ...testkit.Option) (*testkit.Kit, string) {
	t.Helper()
	kit := testkit.New(t, opts...)
	d := webtest.Deps(kit)
	d.SecureCookies = secure
	srv := httptest.NewServer(web.NewServer(d))
	t.Cleanup(srv.Close)
	return kit, srv.URL
}

func TestTheSignInPageSaysHowToMakeTheFirstUser(t *testing.T) {
	kit, base := consoleServer(t, false)
	page := webtest.NewClient(t, base).Open("/login")
	if webtest.CountTestID(page.Body, "no-users") != 1 || !strings.Contains(page.Text(), "madebook user add --email you@example.com --role admin") {
		t.Fatalf("with no users the sign-in page does not say how to make one: %s", webtest.Short([]byte(page.Body)))
	}
	failed := webtest.NewClient(t, base).Send(http.MethodPost, "/login", url.Values{"email": {"ada@example.com"}, "password": {"whatever-it-is"}})
	if failed.Status != http.StatusUnauthorized || webtest.CountTestID(failed.Body, "no-users") != 1 {
		t.Fatalf("a failed sign-in with no users: %d, hint shown %d times", failed.Status, webtest.CountTestID(failed.Body, "no-users"))
	}
	kit.Lead()
	if page := webtest.NewClient(t, base).Open("/login"); webtest.CountTestID(page.Body, "no-users") != 0 {
		t.Fatal("the hint stays once a user exists")
	}
}

func TestConsoleSignIn(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()

	t.Run("signed out, the console sends a person to sign in", func(t *testing.T) {
		res, _ := webtest.NewClient(t, base).Get("/sessions")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next=%2Fsessions" {
			t.Fatalf("status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
	})
	t.Run("a wrong password shows the form again with a message", func(t *testing.T) {
		res, body := webtest.NewClient(t, base).Post("/login", url.Values{"email": {lead.Email}, "password": {"nope-nope"}}, "same-origin")
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "The email or password is wrong.") {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
	t.Run("the session cookie is HttpOnly and SameSite, and rotates at sign-in", func(t *testing.T) {
		b := webtest.NewClient(t, base)
		first, _ := b.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}}, "same-origin")
		second, _ := b.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}}, "same-origin")
		c1, c2 := sessionCookie(t, first), sessionCookie(t, second)
		if !c1.HttpOnly || c1.SameSite != http.SameSiteLaxMode || c1.Secure || c1.Name != "madebook_session" {
			t.Errorf("cookie = %+v", c1)
		}
		if c1.Value == c2.Value {
			t.Fatal("signing in again kept the session id")
		}
		// The first session ended when the second began.
		old := webtest.NewClient(t, base)
		old.HTTP.Jar.SetCookies(mustURL(t, base), []*http.Cookie{{Name: c1.Name, Value: c1.Value}})
		if res, _ := old.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("the old session still works: %d", res.StatusCode)
		}
	})
	t.Run("signing out ends the session on the server, not just the cookie", func(t *testing.T) {
		b := webtest.ConsoleAs(t, base, lead.Email)
		token := sessionCookieFromJar(t, b, base)
		if res, _ := b.PostForm("/logout", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: %d", res.StatusCode)
		}
		replay := webtest.NewClient(t, base)
		replay.HTTP.Jar.SetCookies(mustURL(t, base), []*http.Cookie{{Name: "madebook_session", Value: token}})
		if res, _ := replay.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("a replayed cookie still works after logout: %d", res.StatusCode)
		}
	})
	t.Run("every page has a sign-out-everywhere button, with the CSRF token", func(t *testing.T) {
		b := webtest.ConsoleAs(t, base, lead.Email)
		_, body := b.Get("/sessions")
		form := regexp.MustCompile(`(?s)<form method="post" action="/logout/everywhere">.*?</form>`).FindString(body)
		if !strings.Contains(form, `name="csrf" value="`+b.CSRF+`"`) || webtest.CountTestID(form, "sign-out-everywhere") != 1 {
			t.Fatalf("no sign-out-everywhere form with the CSRF token on /sessions: %q", form)
		}
	})
	t.Run("signing out everywhere ends every session of that person", func(t *testing.T) {
		a, b := webtest.ConsoleAs(t, base, lead.Email), webtest.ConsoleAs(t, base, lead.Email)
		if res, _ := a.PostForm("/logout/everywhere", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout everywhere: %d", res.StatusCode)
		}
		if res, _ := b.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("the other device is still signed in: %d", res.StatusCode)
		}
	})
	t.Run("the count's poll keeps the title of the page it came from", func(t *testing.T) {
		b := webtest.ConsoleAs(t, base, lead.Email)
		_, body := b.Get("/sessions")
		if !strings.Contains(body, `hx-get="/attention/count?page=Sessions"`) {
			t.Fatalf("the Sessions page does not poll with its title")
		}
		for page, want := range map[string]string{"Sessions": "<title>Sessions — Madebook</title>", "": "<title>Attention — Madebook</title>",
			strings.Repeat("x", 81): "<title>Attention — Madebook</title>", "<b>": "<title>&lt;b&gt; — Madebook</title>"} {
			if _, got := b.Get("/attention/count?page=" + url.QueryEscape(page)); !strings.Contains(got, want) {
				t.Errorf("page %q: the poll answers %q, want %s", page, got, want)
			}
		}
	})
	t.Run("an idle session expires after 30 minutes", func(t *testing.T) {
		b := webtest.ConsoleAs(t, base, lead.Email)
		kit.Clock.Advance(29 * time.Minute)
		if res, _ := b.Get("/"); res.StatusCode != http.StatusOK {
			t.Fatalf("after 29 idle minutes: %d", res.StatusCode)
		}
		kit.Clock.Advance(31 * time.Minute)
		if res, _ := b.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after 31 idle minutes: %d", res.StatusCode)
		}
	})
	t.Run("a session in use still ends 8 hours after sign-in", func(t *testing.T) {
		b := webtest.ConsoleAs(t, base, lead.Email)
		for i := 0; i < 16; i++ {
			kit.Clock.Advance(29 * time.Minute)
			if res, _ := b.Get("/"); res.StatusCode != http.StatusOK {
				t.Fatalf("after %d half-hours in use: %d", i+1, res.StatusCode)
			}
		}
		kit.Clock.Advance(29 * time.Minute)
		if res, _ := b.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after 8.2 hours: %d", res.StatusCode)
		}
	})
}

func TestConsoleSecureCookies(t *testing.T) {
	kit, base := consoleServer(t, true)
	lead, _ := kit.Lead()
	res, _ := webtest.NewClient(t, base).Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}}, "same-origin")
	c := sessionCookie(t, res)
	if c.Name != "__Host-madebook_session" || !c.Secure || c.Path != "/" || c.Domain != "" {
		t.Fatalf("cookie over TLS = %+v", c)
	}
}

func TestConsoleSignInIsRateLimited(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	b := webtest.NewClient(t, base)
	for i := 0; i < 5; i++ {
		res, _ := b.Post("/login", url.Values{"email": {lead.Email}, "password": {"wrong-password"}}, "same-origin")
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, res.StatusCode)
		}
	}
	t.Run("per account: even the right password waits", func(t *testing.T) {
		res, body := b.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}}, "same-origin")
		if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins to this account") {
			t.Fatalf("status %d", res.StatusCode)
		}
		if got := res.Header.Get("Retry-After"); got != "900" {
			t.Errorf("Retry-After %q, want 900 (the window)", got)
		}
		kit.Clock.Advance(16 * time.Minute)
		if res, _ := b.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}}, "same-origin"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after the window: %d", res.StatusCode)
		}
	})
	t.Run("per address: many accounts from one address", func(t *testing.T) {
		for i := 0; i < 20; i++ {
			b.Post("/login", url.Values{"email": {"nobody" + string(rune('a'+i)) + "@example.com"}, "password": {"x-x-x-x-x"}}, "same-origin")
		}
		other, _ := kit.Lead()
		res, body := b.Post("/login", url.Values{"email": {other.Email}, "password": {"password-123"}}, "same-origin")
		if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins from your address") {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

// A state-changing request is refused unless it comes from Madebook's own
// pages: cross-site (fetch metadata or Origin) or without the session's
// CSRF token, it is a 403 and changes nothing. A GET changes nothing.
func TestConsoleRefusesForgedRequests(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, false))
	b := webtest.ConsoleAs(t, base, lead.Email)
	paused := func() bool {
		d, err := kit.Gov.Sessions.Get(context.Background(), lead, session)
		if err != nil {
			t.Fatal(err)
		}
		return d.Paused
	}
	form := url.Values{"reason": {"forged"}, "csrf": {b.CSRF}}
	cases := []struct {
		name string
		req  func() *http.Request
	}{
		{"a cross-site form post, even with the token", func() *http.Request {
			r := formRequest(t, base+"/sessions/"+session+"/pause", form)
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}},
		{"an old browser's post from another origin", func() *http.Request {
			r := formRequest(t, base+"/sessions/"+session+"/pause", form)
			r.Header.Set("Origin", "https://evil.example")
			return r
		}},
		{"a same-origin post without the token", func() *http.Request {
			r := formRequest(t, base+"/sessions/"+session+"/pause", url.Values{"reason": {"forged"}})
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			return r
		}},
		{"a same-origin post with another session's token", func() *http.Request {
			other := webtest.ConsoleAs(t, base, lead.Email)
			r := formRequest(t, base+"/sessions/"+session+"/pause", url.Values{"reason": {"forged"}, "csrf": {other.CSRF}})
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			return r
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := b.Do(tc.req())
			if res.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403", res.StatusCode)
			}
			if paused() {
				t.Fatal("the forged request paused the session")
			}
		})
	}
	t.Run("a GET to an action's address changes nothing", func(t *testing.T) {
		res, _ := b.Get("/sessions/" + session + "/pause")
		if res.StatusCode != http.StatusMethodNotAllowed && res.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", res.StatusCode)
		}
		if paused() {
			t.Fatal("a GET paused the session")
		}
	})
	t.Run("the real form works", func(t *testing.T) {
		if res, _ := b.PostForm("/sessions/"+session+"/pause", url.Values{"reason": {"real"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("status %d", res.StatusCode)
		}
		if !paused() {
			t.Fatal("the session is not paused")
		}
	})
}

// Every person action is in the session's timeline with who did it.
func TestConsoleActionsAreRecordedWithWhoAndWhen(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	ctx := context.Background()
	session := kit.Session(agent, kit.Mission(lead, true))
	d, err := kit.Gov.Decisions.Open(ctx, agent, session, governance.DecisionInput{Title: "T", Question: "Q?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Gov.Plans.Propose(ctx, agent, session, governance.PlanInput{Summary: "P"}); err != nil {
		t.Fatal(err)
	}
	b := webtest.ConsoleAs(t, base, lead.Email)
	steps := []struct {
		path string
		form url.Values
	}{
		{"/decisions/" + d.Ref + "/resolve", url.Values{"resolution": {"Yes"}, "instruction": {"Do it."}}},
		{"/sessions/" + session + "/plan/reject", url.Values{"note": {"Too broad"}}},
		{"/sessions/" + session + "/pause", url.Values{"reason": {"Wait"}}},
		{"/sessions/" + session + "/resume", nil},
		{"/sessions/" + session + "/remediations", url.Values{"severity": {"advisory"}, "instruction": {"Rename it."}}},
	}
	for _, s := range steps {
		if res, body := b.PostForm(s.path, s.form); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d %s", s.path, res.StatusCode, body)
		}
	}
	got, err := kit.Gov.Sessions.Get(ctx, lead, session)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"decision.resolved", "plan.rejected", "session.paused", "session.resumed", "remediation.requested"}
	var seen []string
	for _, e := range got.Timeline {
		if e.Actor == "person:"+lead.Email {
			seen = append(seen, e.Kind)
			if e.At.IsZero() {
				t.Errorf("%s has no time", e.Kind)
			}
		}
	}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("person actions = %v, want %v", seen, want)
	}
}

func formRequest(t *testing.T, u string, form url.Values) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

func sessionCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if strings.HasSuffix(c.Name, "madebook_session") {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", res.Header["Set-Cookie"])
	return nil
}

func sessionCookieFromJar(t *testing.T, b *webtest.Client, base string) string {
	t.Helper()
	for _, c := range b.HTTP.Jar.Cookies(mustURL(t, base)) {
		if c.Name == "madebook_session" {
			return c.Value
		}
	}
	t.Fatal("no session cookie in the jar")
	return ""
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
