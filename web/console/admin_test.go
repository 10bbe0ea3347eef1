package console_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// admEnv is a real Madebook over loopback HTTP with an admin, a lead and a
// viewer, for the admin pages.
type admEnv struct {
	T   *testing.T
	Kit *testkit.Kit
	URL string
	log *webtest.Log

	Admin, Lead, Viewer          auth.Actor
	AdminTok, LeadTok, ViewerTok string
}

func newAdmEnv(t *testing.T) *admEnv {
	t.Helper()
	return newAdmEnvWith(t, func(*testkit.Kit) {})
}

// newAdmEnvWith is newAdmEnv with the kit's services changed by set (the
// maximum age of credentials, e.g.) once its people exist, before the
// server starts.
func newAdmEnvWith(t *testing.T, set func(*testkit.Kit)) *admEnv {
	t.Helper()
	kit := testkit.New(t)
	log := &webtest.Log{}
	a := &admEnv{T: t, Kit: kit, log: log}
	a.Admin, a.AdminTok = kit.Person(auth.Admin)
	a.Lead, a.LeadTok = kit.Lead()
	a.Viewer, a.ViewerTok = kit.Person(auth.Viewer)
	set(kit)
	d := webtest.Deps(kit)
	d.Logger = slog.New(slog.NewTextHandler(log, nil))
	srv := httptest.NewServer(web.NewServer(d))
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// signInAs signs in through POST /login with the testkit's password.
func (a *admEnv) signInAs(email string) *webtest.Client {
	a.T.Helper()
	return webtest.SignInWith(a.T, a.URL, email, "password-123")
}

// bearer sends an API request with a bearer secret and returns the status.
func (a *admEnv) bearer(method, path, secret string, body string) int {
	a.T.Helper()
	req, err := http.NewRequest(method, a.URL+path, strings.NewReader(body))
	if err != nil {
		a.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.T.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// state is every row an admin action may write, to check that a refused
// one wrote nothing.
func (a *admEnv) state() string {
	a.T.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, email, role, COALESCE(disabled_at, ''), password_hash FROM users ORDER BY id`,
		`SELECT id, name, COALESCE(revoked_at, '') FROM agent_keys ORDER BY id`,
		`SELECT id_hash, user_id FROM web_sessions ORDER BY id_hash`,
		`SELECT id, user_id, COALESCE(revoked_at, '') FROM api_tokens ORDER BY id`,
	} {
		fmt.Fprintln(&b, strings.Join(a.Kit.Rows(q), "\n"))
	}
	return b.String()
}

// wantRedirect fails unless r is a 303 to a path starting with prefix, and
// returns where it leads.
func wantRedirect(t *testing.T, r webtest.Page, prefix string) string {
	t.Helper()
	loc := r.Header.Get("Location")
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) {
		t.Fatalf("status %d to %q, want 303 to %s…; body %s", r.Status, loc, prefix, webtest.Short([]byte(r.Body)))
	}
	return loc
}

func TestAdminAddsAUser(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	page := b.Open("/admin/users")
	if page.Status != http.StatusOK || webtest.CountTestID(page.Body, "user-row") != 3 {
		t.Fatalf("users page: %d with %d rows", page.Status, webtest.CountTestID(page.Body, "user-row"))
	}
	loc := wantRedirect(t, b.Submit("/admin/users", url.Values{"email": {"  New.Person@Example.com "}, "role": {"lead"},
		"password": {"long-enough"}}), "/admin/users?")
	page = b.Open(loc)
	if page.Status != http.StatusOK || !strings.Contains(page.Text(), "Added new.person@example.com as lead.") {
		t.Fatalf("after adding: %d %s", page.Status, webtest.Short([]byte(page.Body)))
	}
	if !strings.Contains(page.Body, `data-email="new.person@example.com" data-role="lead" data-disabled="false"`) {
		t.Errorf("the new user's row is missing")
	}
	// The new person signs in with the initial password.
	nb := webtest.SignInWith(t, a.URL, "new.person@example.com", "long-enough")
	if r := nb.Open("/"); r.Status != http.StatusOK || !strings.Contains(r.Body, "new.person@example.com · lead") {
		t.Errorf("the new person's console: %d", r.Status)
	}
}

func TestAdminChangesARoleAndTheOldRoleStopsAtOnce(t *testing.T) {
	a := newAdmEnv(t)
	admin := a.signInAs(a.Admin.Email)
	lead := a.signInAs(a.Lead.Email)
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusOK {
		t.Fatalf("the lead's token before: %d", s) // now remembered
	}
	loc := wantRedirect(t, admin.Submit(fmt.Sprintf("/admin/users/%d/role", a.Lead.UserID), url.Values{"role": {"viewer"}}), "/admin/users?")
	if page := admin.Open(loc); !strings.Contains(page.Text(), a.Lead.Email+" is now viewer") ||
		!strings.Contains(page.Body, `data-email="`+a.Lead.Email+`" data-role="viewer"`) {
		t.Errorf("after the change: %s", webtest.Short([]byte(page.Body)))
	}
	wantRedirect(t, lead.Open("/"), "/login")
	if s := a.bearer(http.MethodPost, "/api/v1/missions", a.LeadTok, `{"slug":"after-demotion","title":"T"}`); s != http.StatusForbidden {
		t.Errorf("the demoted lead's token creates a mission: %d, want 403", s)
	}
}

func TestAdminDisablesAPersonWhoStopsAtOnceAndReenables(t *testing.T) {
	a := newAdmEnv(t)
	admin := a.signInAs(a.Admin.Email)
	lead := a.signInAs(a.Lead.Email)
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusOK {
		t.Fatalf("the lead's token before: %d", s) // now remembered
	}
	loc := wantRedirect(t, admin.Submit(fmt.Sprintf("/admin/users/%d/disable", a.Lead.UserID), nil), "/admin/users?")
	page := admin.Open(loc)
	if !strings.Contains(page.Text(), "Disabled "+a.Lead.Email) || !strings.Contains(page.Body, `data-email="`+a.Lead.Email+`" data-role="lead" data-disabled="true"`) {
		t.Errorf("after disabling: %s", webtest.Short([]byte(page.Body)))
	}
	wantRedirect(t, lead.Open("/"), "/login")
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusUnauthorized {
		t.Errorf("the disabled person's token: %d, want 401", s)
	}
	r := lead.Send(http.MethodPost, "/login", url.Values{"email": {a.Lead.Email}, "password": {"password-123"}})
	if r.Status != http.StatusUnauthorized {
		t.Errorf("a disabled person signs in: %d", r.Status)
	}

	loc = wantRedirect(t, admin.Submit(fmt.Sprintf("/admin/users/%d/enable", a.Lead.UserID), nil), "/admin/users?")
	if page := admin.Open(loc); !strings.Contains(page.Text(), "Re-enabled "+a.Lead.Email) {
		t.Errorf("after re-enabling: %s", webtest.Short([]byte(page.Body)))
	}
	a.signInAs(a.Lead.Email)
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusOK {
		t.Errorf("the re-enabled person's token: %d", s)
	}
}

func TestAdminCannotDemoteOrDisableThemselves(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	page := b.Open("/admin/users")
	if strings.Contains(page.Body, fmt.Sprintf(`"/admin/users/%d/`, a.Admin.UserID)) {
		t.Errorf("the admin's own row offers actions")
	}
	before := a.state()
	for _, tc := range []struct {
		name, path string
		form       url.Values
		msg        string
	}{
		{"disabling themselves", "disable", nil, "You cannot disable yourself"},
		{"making themselves a lead", "role", url.Values{"role": {"lead"}}, "You cannot change your own role"},
	} {
		t.Run(tc.name+" is refused with a message", func(t *testing.T) {
			r := b.Submit(fmt.Sprintf("/admin/users/%d/%s", a.Admin.UserID, tc.path), tc.form)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(), tc.msg) || webtest.CountTestID(r.Body, "form-error") != 1 {
				t.Fatalf("status %d, want 422 with %q: %s", r.Status, tc.msg, webtest.Short([]byte(r.Body)))
			}
		})
	}
	if after := a.state(); after != before {
		t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
	}
	if r := b.Open("/admin/users"); r.Status != http.StatusOK {
		t.Errorf("the admin was signed out: %d", r.Status)
	}
}

func TestAdminCreatesAKeyShownOnceThenRevokesIt(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	if r := b.Open("/admin/keys"); r.Status != http.StatusOK || webtest.CountTestID(r.Body, "keys-empty") != 1 {
		t.Fatalf("empty keys page: %d", r.Status)
	}
	r := b.Submit("/admin/keys", url.Values{"name": {" ci-runner "}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, webtest.Short([]byte(r.Body)))
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	m := regexp.MustCompile(`data-testid="new-secret"[^>]*>(mbk_[A-Za-z0-9_-]+)<`).FindStringSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no secret on the page: %s", webtest.Short([]byte(r.Body)))
	}
	secret := m[1]
	if !strings.Contains(r.Text(), "it will not be shown again") || strings.Count(r.Body, secret) != 1 {
		t.Errorf("the secret is not shown exactly once, with its warning")
	}
	if !strings.Contains(r.Body, `data-testid="key-row" data-name="ci-runner" data-revoked="false"`) {
		t.Errorf("the new key's row is missing")
	}

	again := b.Open("/admin/keys")
	if strings.Contains(again.Body, secret) || webtest.CountTestID(again.Body, "new-secret") != 0 {
		t.Errorf("a second visit shows the secret again")
	}
	var stored string
	if err := a.Kit.SQL().QueryRow(`SELECT key_hash FROM agent_keys WHERE name = 'ci-runner'`).Scan(&stored); err != nil || strings.Contains(stored, secret) {
		t.Errorf("the secret is stored: %q (%v)", stored, err)
	}

	if s := a.bearer(http.MethodGet, "/api/v1/missions", secret, ""); s != http.StatusOK {
		t.Fatalf("the new key: %d, want 200", s)
	}
	if s := a.bearer(http.MethodPost, "/brief", secret, `{"session":"nope"}`); s == http.StatusUnauthorized {
		t.Errorf("the new key is refused by /brief")
	}

	var id int64
	if err := a.Kit.SQL().QueryRow(`SELECT id FROM agent_keys WHERE name = 'ci-runner'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	loc := wantRedirect(t, b.Submit(fmt.Sprintf("/admin/keys/%d/revoke", id), nil), "/admin/keys?")
	page := b.Open(loc)
	if !strings.Contains(page.Text(), `Revoked the agent key "ci-runner"`) ||
		!strings.Contains(page.Body, `data-name="ci-runner" data-revoked="true"`) {
		t.Errorf("after revoking: %s", webtest.Short([]byte(page.Body)))
	}
	if s := a.bearer(http.MethodGet, "/api/v1/missions", secret, ""); s != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", s)
	}
	if s := a.bearer(http.MethodPost, "/brief", secret, `{"session":"nope"}`); s != http.StatusUnauthorized {
		t.Errorf("the revoked key on /brief: %d, want 401", s)
	}
}

// adminRoutes are every admin route, with a form that would succeed for an
// admin.
func (a *admEnv) adminRoutes() []struct {
	method, path string
	form         url.Values
} {
	agent, _ := a.Kit.Agent()
	other, _ := a.Kit.Person(auth.Lead)
	return []struct {
		method, path string
		form         url.Values
	}{
		{http.MethodGet, "/admin/users", nil},
		{http.MethodPost, "/admin/users", url.Values{"email": {"sneaky@example.com"}, "role": {"admin"}, "password": {"long-enough"}}},
		{http.MethodPost, fmt.Sprintf("/admin/users/%d/role", other.UserID), url.Values{"role": {"admin"}}},
		{http.MethodPost, fmt.Sprintf("/admin/users/%d/disable", other.UserID), nil},
		{http.MethodPost, fmt.Sprintf("/admin/users/%d/enable", other.UserID), nil},
		{http.MethodGet, "/admin/keys", nil},
		{http.MethodPost, "/admin/keys", url.Values{"name": {"sneaky"}}},
		{http.MethodPost, fmt.Sprintf("/admin/keys/%d/revoke", agent.KeyID), nil},
		{http.MethodGet, "/admin/tokens", nil},
		{http.MethodPost, fmt.Sprintf("/admin/tokens/%d/revoke", a.tokenOf(other)), nil},
	}
}

// tokenOf is the id of the person's (first) personal token.
func (a *admEnv) tokenOf(who auth.Actor) int64 {
	a.T.Helper()
	tokens, err := a.Kit.Auth.ListTokens(a.T.Context(), who)
	if err != nil || len(tokens) == 0 {
		a.T.Fatalf("the tokens of %s: %v %v", who.Email, tokens, err)
	}
	return tokens[0].ID
}

func TestAdminPagesAreForAdminsOnly(t *testing.T) {
	a := newAdmEnv(t)
	routes := a.adminRoutes()
	for _, who := range []auth.Actor{a.Lead, a.Viewer} {
		b := a.signInAs(who.Email)
		home := b.Open("/")
		if strings.Contains(home.Body, `href="/admin/users"`) || strings.Contains(home.Body, `href="/admin/keys"`) {
			t.Errorf("a %s sees a link to the admin pages", who.Role)
		}
		for _, r := range routes {
			t.Run(fmt.Sprintf("%s %s as a %s is 403 and writes nothing", r.method, r.path, who.Role), func(t *testing.T) {
				b.T = t
				before := a.state()
				var got webtest.Page
				if r.method == http.MethodGet {
					got = b.Open(r.path)
				} else {
					got = b.Submit(r.path, r.form)
				}
				if got.Status != http.StatusForbidden || !strings.Contains(got.Text(), "Only an admin") {
					t.Errorf("status %d, want 403 saying only an admin may: %s", got.Status, webtest.Short([]byte(got.Body)))
				}
				if after := a.state(); after != before {
					t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
	t.Run("an admin sees the links", func(t *testing.T) {
		b := a.signInAs(a.Admin.Email)
		// One Admin entry in the navigation; on the admin pages, a link
		// to each of them.
		if home := b.Open("/"); !strings.Contains(home.Body, `href="/admin/users"`) || strings.Contains(home.Body, `data-testid="admin-nav"`) {
			t.Errorf("an admin's home page has no Admin entry, or the admin pages' links")
		}
		users := b.Open("/admin/users")
		for _, link := range []string{"/admin/users", "/admin/keys", "/admin/tokens", "/admin/tools", "/admin/policies", "/admin/rules", "/admin/webhooks", "/activity"} {
			if !strings.Contains(users.Body, `href="`+link+`"`) {
				t.Errorf("the admin pages do not link to %s", link)
			}
		}
	})
	t.Run("anyone not signed in is sent to sign in", func(t *testing.T) {
		for _, r := range routes {
			req, _ := http.NewRequest(r.method, a.URL+r.path, strings.NewReader(r.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept", "text/html")
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
				t.Errorf("%s %s signed out: %d to %q", r.method, r.path, res.StatusCode, res.Header.Get("Location"))
			}
		}
	})
	t.Run("a request without the CSRF token is refused", func(t *testing.T) {
		b := a.signInAs(a.Admin.Email)
		before := a.state()
		r := b.Send(http.MethodPost, "/admin/keys", url.Values{"name": {"no-csrf"}})
		if r.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.Status)
		}
		if after := a.state(); after != before {
			t.Errorf("a refused call wrote")
		}
	})
}

func TestAdminBadInputIs422AndWritesNothing(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	if r := b.Submit("/admin/keys", url.Values{"name": {"taken"}}); r.Status != http.StatusCreated {
		t.Fatalf("create key: %d", r.Status)
	}
	var revoked int64
	if err := a.Kit.SQL().QueryRow(`SELECT id FROM agent_keys WHERE name = 'taken'`).Scan(&revoked); err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, b.Submit(fmt.Sprintf("/admin/keys/%d/revoke", revoked), nil), "/admin/keys?")

	for _, tc := range []struct {
		name, path string
		form       url.Values
		msg        string // in the page
		testid     string // where the message is shown
	}{
		{"a password under 8 characters", "/admin/users", url.Values{"email": {"short@example.com"}, "role": {"lead"}, "password": {"1234567"}},
			"at least 8 characters", "add-user-error"},
		{"an email already taken", "/admin/users", url.Values{"email": {strings.ToUpper(a.Lead.Email)}, "role": {"viewer"}, "password": {"long-enough"}},
			"already exists", "add-user-error"},
		{"an address that is not an email", "/admin/users", url.Values{"email": {"not-an-email"}, "role": {"viewer"}, "password": {"long-enough"}},
			"is not an email address", "add-user-error"},
		{"an unknown role for a new user", "/admin/users", url.Values{"email": {"x@example.com"}, "role": {"owner"}, "password": {"long-enough"}},
			`Unknown role "owner"`, "add-user-error"},
		{"an unknown role for a user", fmt.Sprintf("/admin/users/%d/role", a.Lead.UserID), url.Values{"role": {"owner"}},
			`Unknown role "owner"`, "form-error"},
		{"an unknown user", "/admin/users/9999/disable", nil, "There is no user 9999", "form-error"},
		{"a user id that is not a number", "/admin/users/bob/role", url.Values{"role": {"viewer"}}, "There is no user", "form-error"},
		{"an empty key name", "/admin/keys", url.Values{"name": {"   "}}, "name is required", "create-key-error"},
		{"a key name already taken", "/admin/keys", url.Values{"name": {"taken"}}, `named "taken" already exists`, "create-key-error"},
		{"an unknown key", "/admin/keys/9999/revoke", nil, "There is no agent key 9999", "form-error"},
		{"a key already revoked", fmt.Sprintf("/admin/keys/%d/revoke", revoked), nil, "already revoked", "form-error"},
	} {
		t.Run(tc.name+" is 422 with a message", func(t *testing.T) {
			b.T = t
			before := a.state()
			r := b.Submit(tc.path, tc.form)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.Status, webtest.Short([]byte(r.Body)))
			}
			if !strings.Contains(r.Text(), tc.msg) || webtest.CountTestID(r.Body, tc.testid) != 1 {
				t.Errorf("the page does not say %q in %s", tc.msg, tc.testid)
			}
			if webtest.CountTestID(r.Body, "new-secret") != 0 {
				t.Errorf("a failed call shows a secret")
			}
			if after := a.state(); after != before {
				t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	t.Run("the add-user form keeps the email and role but never the password", func(t *testing.T) {
		b.T = t
		r := b.Submit("/admin/users", url.Values{"email": {"keep@example.com"}, "role": {"lead"}, "password": {"short"}})
		if !strings.Contains(r.Body, `value="keep@example.com"`) || !strings.Contains(r.Body, `<option value="lead" selected>`) {
			t.Errorf("the form lost what was typed")
		}
		if strings.Contains(r.Body, `value="short"`) {
			t.Errorf("the form shows the password again")
		}
	})
}

func TestAdminActionsAreLoggedWithWhoAndWhat(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	wantRedirect(t, b.Submit(fmt.Sprintf("/admin/users/%d/disable", a.Viewer.UserID), nil), "/admin/users?")
	wantRedirect(t, b.Submit("/admin/users", url.Values{"email": {"logged@example.com"}, "role": {"viewer"}, "password": {"long-enough"}}), "/admin/users?")
	if r := b.Submit("/admin/keys", url.Values{"name": {"logged-key"}}); r.Status != http.StatusCreated {
		t.Fatalf("create key: %d", r.Status)
	}
	log := a.log.String()
	by := "by=person:" + a.Admin.Email
	for _, want := range []string{
		"action=user.disabled target=" + a.Viewer.Email + " " + by,
		"action=user.added target=logged@example.com " + by,
		"action=agent_key.created target=logged-key " + by,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not record %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "mbk_") || strings.Contains(log, "long-enough") {
		t.Errorf("the log holds a secret:\n%s", log)
	}
}

// A key made in the console may expire; the form says so, a lifetime it
// cannot read is a form message that writes nothing, and under the
// server's maximum age an expiry is required.
func TestAdminCreatesAKeyThatExpires(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	r := b.Submit("/admin/keys", url.Values{"name": {"ninety"}, "expires": {"90d"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, webtest.Short([]byte(r.Body)))
	}
	if !strings.Contains(r.Text(), "Expires: 2027-02-27 12:00:00 UTC") {
		t.Errorf("the new key's expiry is not shown: %s", webtest.Short([]byte(r.Body)))
	}
	page := b.Open("/admin/keys")
	row := regexp.MustCompile(`(?s)data-name="ninety".*?</tr>`).FindString(page.Body)
	if !strings.Contains(row, `data-state="active"`) || !strings.Contains(row, `datetime="2027-02-27T12:00:00Z"`) ||
		!strings.Contains(row, "never") || !strings.Contains(row, `data-testid="key-prefix">mbk_`) {
		t.Errorf("the key's row: %s", row)
	}

	for _, tc := range []struct{ expires, says string }{
		{"soon", `"soon" is not a lifetime`},
		{"30s", "too short"},
	} {
		t.Run("an expiry of "+tc.expires+" is 422 with a message, writing nothing", func(t *testing.T) {
			b.T = t
			before := a.state()
			r := b.Submit("/admin/keys", url.Values{"name": {"bad-" + tc.expires}, "expires": {tc.expires}})
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(), tc.says) ||
				webtest.CountTestID(r.Body, "create-key-error") != 1 || !strings.Contains(r.Body, `value="`+tc.expires+`"`) {
				t.Errorf("status %d; want 422 saying %q in the form, keeping what was typed: %s", r.Status, tc.says, webtest.Short([]byte(r.Body)))
			}
			if after := a.state(); after != before {
				t.Errorf("a refused create wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	t.Run("under a maximum age the form requires an expiry, and refuses none", func(t *testing.T) {
		a := newAdmEnvWith(t, func(k *testkit.Kit) { k.Auth.WithMaxAge(30 * 24 * time.Hour) })
		b := a.signInAs(a.Admin.Email)
		if p := b.Open("/admin/keys"); !strings.Contains(p.Text(), "at most 30d") || !strings.Contains(p.Body, `name="expires" value="" maxlength="40"`) {
			t.Errorf("the form does not say the maximum: %s", webtest.Short([]byte(p.Body)))
		}
		before := a.state()
		r := b.Submit("/admin/keys", url.Values{"name": {"forever"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(), "at most 30d (MADEBOOK_TOKEN_MAX_AGE)") {
			t.Errorf("status %d; want 422 naming the maximum: %s", r.Status, webtest.Short([]byte(r.Body)))
		}
		if after := a.state(); after != before {
			t.Errorf("a refused create wrote:\nbefore %s\nafter  %s", before, after)
		}
		if r := b.Submit("/admin/keys", url.Values{"name": {"thirty"}, "expires": {"30d"}}); r.Status != http.StatusCreated {
			t.Errorf("a key of the maximum age: %d", r.Status)
		}
	})
}

// The admin's page of personal tokens lists everyone's, never a secret,
// and revokes one: it is refused on its next request.
func TestAdminListsAndRevokesPersonalTokens(t *testing.T) {
	a := newAdmEnv(t)
	b := a.signInAs(a.Admin.Email)
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusOK {
		t.Fatalf("the lead's token: %d", s)
	}
	page := b.Open("/admin/tokens")
	if page.Status != http.StatusOK || webtest.CountTestID(page.Body, "token-row") != 3 {
		t.Fatalf("tokens page: %d, %d rows", page.Status, webtest.CountTestID(page.Body, "token-row"))
	}
	for _, secret := range []string{a.LeadTok, a.AdminTok, a.ViewerTok} {
		if strings.Contains(page.Body, secret[10:]) {
			t.Fatal("the page holds a secret")
		}
		if !strings.Contains(page.Body, ">"+secret[:10]+"…<") {
			t.Errorf("the page does not show the prefix %s…", secret[:10])
		}
	}
	row := regexp.MustCompile(`(?s)data-owner="` + regexp.QuoteMeta(a.Lead.Email) + `".*?</tr>`).FindString(page.Body)
	if !strings.Contains(row, "token 2026-11-29") || !strings.Contains(row, `data-state="active"`) ||
		!strings.Contains(row, `datetime="2026-11-29T12:00:00Z"`) {
		t.Errorf("the lead's row (name, state, last used): %s", row)
	}

	id := a.tokenOf(a.Lead)
	loc := wantRedirect(t, b.Submit(fmt.Sprintf("/admin/tokens/%d/revoke", id), nil), "/admin/tokens?")
	after := b.Open(loc)
	if !strings.Contains(after.Text(), `Revoked the personal token "token 2026-11-29" of `+a.Lead.Email) ||
		!strings.Contains(after.Body, `data-owner="`+a.Lead.Email+`" data-state="revoked"`) {
		t.Errorf("after revoking: %s", webtest.Short([]byte(after.Body)))
	}
	if s := a.bearer(http.MethodGet, "/api/v1/missions", a.LeadTok, ""); s != http.StatusUnauthorized {
		t.Errorf("the revoked token: %d, want 401", s)
	}
	for _, tc := range []struct{ name, path, says string }{
		{"a token already revoked", fmt.Sprintf("/admin/tokens/%d/revoke", id), "already revoked"},
		{"an unknown token", "/admin/tokens/9999/revoke", "There is no personal token 9999"},
		{"a token id that is not a number", "/admin/tokens/x/revoke", `There is no personal token "x"`},
	} {
		t.Run(tc.name+" is 422 with a message, writing nothing", func(t *testing.T) {
			b.T = t
			before := a.state()
			r := b.Submit(tc.path, nil)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(), tc.says) || webtest.CountTestID(r.Body, "form-error") != 1 {
				t.Errorf("status %d; want 422 saying %q: %s", r.Status, tc.says, webtest.Short([]byte(r.Body)))
			}
			if after := a.state(); after != before {
				t.Errorf("a refused revoke wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
