package console_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// consoleRole is who signs in to the console for a request of the console
// route table.
type consoleRole int

const (
	consoleAnonymous consoleRole = iota
	consoleViewer
	consoleLead
	consoleAdmin
)

var consoleRoles = []consoleRole{consoleAnonymous, consoleViewer, consoleLead, consoleAdmin}

func (r consoleRole) String() string {
	return [...]string{"anonymous", "viewer", "lead", "admin"}[r]
}

// authRole is the role of the person a signed-in caller is.
func (r consoleRole) authRole() auth.Role {
	return [...]auth.Role{"", auth.Viewer, auth.Lead, auth.Admin}[r]
}

// consoleEnv is a real Madebook over loopback HTTP, with a lead, an admin
// and an agent key that set up what each request needs (never signed in).
type consoleEnv struct {
	T    *testing.T
	Kit  *testkit.Kit
	e    *echo.Echo
	Base string

	Lead, Admin, Agent auth.Actor
	n                  int
}

func newConsoleEnv(t *testing.T) *consoleEnv {
	t.Helper()
	kit := testkit.New(t)
	e := web.NewServer(webtest.Deps(kit))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	c := &consoleEnv{T: t, Kit: kit, e: e, Base: srv.URL}
	c.Lead, _ = kit.Lead()
	c.Admin, _ = kit.Person(auth.Admin)
	c.Agent, _ = kit.Agent()
	return c
}

// consoleCaller is the browser a request is sent from: a person of the
// role, freshly signed in, or nobody.
type consoleCaller struct {
	role consoleRole
	who  auth.Actor // zero for anonymous
	b    *webtest.Client
}

func (e *consoleEnv) callerAs(t *testing.T, role consoleRole) consoleCaller {
	t.Helper()
	if role == consoleAnonymous {
		return consoleCaller{role: role, b: webtest.NewClient(t, e.Base)}
	}
	who, _ := e.Kit.Person(role.authRole())
	return consoleCaller{role: role, who: who, b: webtest.ConsoleAs(t, e.Base, who.Email)}
}

// consoleCall is one concrete request: the path, the form to post (nil
// for a GET), and what the call may change.
type consoleCall struct {
	path string
	form url.Values
	// state reads, through the services, what this call may change ("" if
	// nothing but the workspace's totals).
	state func() string
}

// consoleRouteCase is one console route of routes.go and the status each
// role gets.
type consoleRouteCase struct {
	method, path string // as registered on echo
	setup        func(e *consoleEnv, c consoleCaller) consoleCall
	want         map[consoleRole]int
	// public routes answer anonymous callers; every other route sends them
	// to sign in.
	public bool
	// writes says a successful call changes what state reads.
	writes bool
	// signsOut says a success sends the caller to the sign-in page.
	signsOut bool
	// stream says the route answers server-sent events that do not end:
	// the call reads the first event and hangs up.
	stream bool
}

func roleStatuses(anonymous, viewer, lead, admin int) map[consoleRole]int {
	return map[consoleRole]int{consoleAnonymous: anonymous, consoleViewer: viewer, consoleLead: lead, consoleAdmin: admin}
}

var (
	readPage    = roleStatuses(http.StatusSeeOther, http.StatusOK, http.StatusOK, http.StatusOK)
	leadPage    = roleStatuses(http.StatusSeeOther, http.StatusForbidden, http.StatusOK, http.StatusOK)
	leadAction  = roleStatuses(http.StatusSeeOther, http.StatusForbidden, http.StatusSeeOther, http.StatusSeeOther)
	adminPage   = roleStatuses(http.StatusSeeOther, http.StatusForbidden, http.StatusForbidden, http.StatusOK)
	adminAction = roleStatuses(http.StatusSeeOther, http.StatusForbidden, http.StatusForbidden, http.StatusSeeOther)
	anyoneIn    = roleStatuses(http.StatusSeeOther, http.StatusSeeOther, http.StatusSeeOther, http.StatusSeeOther)
)

func (e *consoleEnv) fatal(err error) {
	if err != nil {
		e.T.Helper()
		e.T.Fatal(err)
	}
}

func (e *consoleEnv) unique(prefix string) string {
	e.n++
	return fmt.Sprintf("%s-%d", prefix, e.n)
}

// session opens a fresh session on a fresh mission.
func (e *consoleEnv) Session(highRisk bool) string {
	return e.Kit.Session(e.Agent, e.Kit.Mission(e.Lead, highRisk))
}

func (e *consoleEnv) decision() (string, string) {
	id := e.Session(false)
	d, err := e.Kit.Gov.Decisions.Open(context.Background(), e.Agent, id, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
	e.fatal(err)
	return id, d.Ref
}

func (e *consoleEnv) proposed() string {
	id := e.Session(true)
	_, err := e.Kit.Gov.Plans.Propose(context.Background(), e.Agent, id, governance.PlanInput{Summary: "read, then change"})
	e.fatal(err)
	return id
}

func (e *consoleEnv) paused() string {
	id := e.Session(false)
	_, err := e.Kit.Gov.Sessions.Pause(context.Background(), e.Lead, id, "wait")
	e.fatal(err)
	return id
}

// parkedAsk starts a run on a fresh session and parks it on a question
// with two options; it returns the session and the ask.
func (e *consoleEnv) parkedAsk() (string, string) {
	ctx := context.Background()
	id := e.Session(false)
	run, err := e.Kit.Ledger.StartRun(ctx, e.Agent, id, "roles-run", "")
	e.fatal(err)
	ask, err := e.Kit.Ledger.RecordAsk(ctx, e.Agent, run.ID, ledger.AskInput{Prompt: "Save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}})
	e.fatal(err)
	return id, ask.ID
}

// prompted has the agent's client raise a permission prompt on a fresh
// session; it returns the session and the prompt's id.
func (e *consoleEnv) prompted() (string, string) {
	id := e.Session(false)
	r, err := e.Kit.Gov.Lifecycle.Report(context.Background(), e.Agent, id, governance.EventInput{
		Name:    "permission.prompt.requested",
		Payload: []byte(`{"prompt":"Run make deploy?","options":{"1":"Allow","2":"Deny"},"tool":"Bash"}`)})
	e.fatal(err)
	return id, fmt.Sprint(r.Permission.ID)
}

// criticalViolation has the agent report a change with a secret in it on
// session id, and returns the critical violation's id.
func (e *consoleEnv) criticalViolation(id string) string {
	res, err := e.Kit.Gov.Changes.Report(context.Background(), e.Agent, id, change.Change{Files: []change.File{{Path: "config/deploy.sh",
		Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
	e.fatal(err)
	if len(res.Violations) == 0 {
		e.T.Fatal("the seed's secret raised no violation")
	}
	return fmt.Sprint(res.Violations[0].ID)
}

// waits reports whether an item of kind with ref still waits in the
// Attention queue.
func (e *consoleEnv) waits(kind, ref string) bool {
	items, err := e.Kit.Gov.Attention.List(context.Background())
	e.fatal(err)
	for _, it := range items {
		if it.Kind == kind && it.Ref == ref {
			return true
		}
	}
	return false
}

// sessionState is a session as the services see it: the brake, the plan,
// every decision and remediation, and the length of its timeline.
func (e *consoleEnv) sessionState(id string) func() string {
	return func() string {
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		var b strings.Builder
		fmt.Fprintf(&b, "paused=%t %q events=%d", d.Paused, d.PauseReason, len(d.Timeline))
		if d.Plan != nil {
			fmt.Fprintf(&b, " plan=%s %q", d.Plan.Status, d.Plan.Note)
		}
		for _, dec := range d.Decisions {
			fmt.Fprintf(&b, " %s=%s %q %q", dec.Ref, dec.Status, dec.Resolution, dec.Instruction)
		}
		for _, r := range d.Remediations {
			fmt.Fprintf(&b, " remediation-%d=%+v", r.ID, r)
		}
		return b.String()
	}
}

func (e *consoleEnv) missionState(slug string) func() string {
	return func() string {
		m, err := e.Kit.Gov.Missions.Get(context.Background(), slug)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%+v", m)
	}
}

func (e *consoleEnv) usersState() string {
	users, err := e.Kit.Auth.ListUsers(context.Background())
	e.fatal(err)
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "%d %s %s disabled=%t\n", u.ID, u.Email, u.Role, u.Disabled)
	}
	return b.String()
}

func (e *consoleEnv) keysState() string {
	keys, err := e.Kit.Auth.ListKeys(context.Background())
	e.fatal(err)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d %s revoked=%t\n", k.ID, k.Name, k.Revoked())
	}
	return b.String()
}

func (e *consoleEnv) toolsState() string {
	tools, err := e.Kit.Ledger.ListTools(context.Background())
	e.fatal(err)
	var b strings.Builder
	for _, tl := range tools {
		fmt.Fprintf(&b, "%s.%s side-effecting=%t\n", tl.Server, tl.Tool, tl.SideEffecting)
	}
	return b.String()
}

// signedInState says which of the console session tokens still work.
func (e *consoleEnv) signedInState(tokens ...string) func() string {
	return func() string {
		var b strings.Builder
		for i, tok := range tokens {
			_, err := e.Kit.Auth.WebSession(context.Background(), tok)
			fmt.Fprintf(&b, "session %d signed in: %t\n", i, err == nil)
		}
		return b.String()
	}
}

// totals is the workspace at a glance: a refused call, or a read, must
// leave it as it was.
func (e *consoleEnv) totals() string {
	ctx := context.Background()
	ms, err := e.Kit.Gov.Missions.List(ctx)
	e.fatal(err)
	ss, err := e.Kit.Gov.Sessions.List(ctx)
	e.fatal(err)
	users, err := e.Kit.Auth.ListUsers(ctx)
	e.fatal(err)
	keys, err := e.Kit.Auth.ListKeys(ctx)
	e.fatal(err)
	n, err := e.Kit.Gov.Attention.Count(ctx)
	e.fatal(err)
	// Every admin action records itself: a refused one records nothing.
	acts := e.Kit.Rows(`SELECT count(*) AS admin_activity FROM admin_activity`)
	return fmt.Sprintf("missions=%d sessions=%d users=%d keys=%d attention=%d %s", len(ms), len(ss), len(users), len(keys), n, acts)
}

// cookieToken is the caller's console session token, "" when signed out.
func (e *consoleEnv) cookieToken(c consoleCaller) string {
	for _, ck := range c.b.HTTP.Jar.Cookies(mustURL(e.T, e.Base)) {
		if ck.Name == "madebook_session" {
			return ck.Value
		}
	}
	return ""
}

// consoleRouteTable lists every console route of routes.go: all but the
// JSON API, /brief, /healthz, /favicon.ico and /static/*.
func consoleRouteTable() []consoleRouteCase {
	ctx := context.Background()
	page := func(path string) func(*consoleEnv, consoleCaller) consoleCall {
		return func(*consoleEnv, consoleCaller) consoleCall { return consoleCall{path: path} }
	}
	return []consoleRouteCase{
		// Signing in and out.
		{method: http.MethodGet, path: "/login", public: true, setup: page("/login"),
			want: roleStatuses(http.StatusOK, http.StatusSeeOther, http.StatusSeeOther, http.StatusSeeOther)},
		{method: http.MethodPost, path: "/login", public: true, want: anyoneIn,
			setup: func(e *consoleEnv, c consoleCaller) consoleCall {
				email := c.who.Email
				if email == "" {
					who, _ := e.Kit.Lead()
					email = who.Email
				}
				return consoleCall{path: "/login", form: url.Values{"email": {email}, "password": {"password-123"}}}
			}},
		{method: http.MethodPost, path: "/logout", want: anyoneIn, writes: true, signsOut: true,
			setup: func(e *consoleEnv, c consoleCaller) consoleCall {
				return consoleCall{path: "/logout", state: e.signedInState(e.cookieToken(c))}
			}},
		{method: http.MethodPost, path: "/logout/everywhere", want: anyoneIn, writes: true, signsOut: true,
			setup: func(e *consoleEnv, c consoleCaller) consoleCall {
				// The same person on another device, or (for anonymous
				// callers) someone else, who must stay signed in.
				email := c.who.Email
				if email == "" {
					who, _ := e.Kit.Lead()
					email = who.Email
				}
				other, _, err := e.Kit.Auth.Login(ctx, email, "password-123", "192.0.2.7")
				e.fatal(err)
				return consoleCall{path: "/logout/everywhere", state: e.signedInState(e.cookieToken(c), other)}
			}},

		// Attention.
		{method: http.MethodGet, path: "/", setup: page("/"), want: readPage},
		{method: http.MethodGet, path: "/attention/queue", setup: page("/attention/queue"), want: readPage},
		{method: http.MethodGet, path: "/attention/count", setup: page("/attention/count"), want: readPage},
		{method: http.MethodGet, path: "/attention/stream", setup: page("/attention/stream?since=0"), want: readPage, stream: true},
		{method: http.MethodGet, path: "/attention/items/:kind/:session/:ref", want: readPage,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id, ref := e.decision()
				return consoleCall{path: "/attention/items/decision/" + id + "/" + ref, state: e.sessionState(id)}
			}},
		{method: http.MethodPost, path: "/decisions/resolve", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id, ref := e.decision()
				return consoleCall{path: "/decisions/resolve", state: e.sessionState(id),
					form: url.Values{"refs": {ref}, "resolution": {"Keep it."}, "instruction": {"Archive instead."}}}
			}},
		{method: http.MethodPost, path: "/decisions/:ref/resolve", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id, ref := e.decision()
				return consoleCall{path: "/decisions/" + ref + "/resolve", state: e.sessionState(id),
					form: url.Values{"resolution": {"Keep it."}, "instruction": {"Archive instead."}}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/approve", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.proposed()
				return consoleCall{path: "/sessions/" + id + "/plan/approve", state: e.sessionState(id),
					form: url.Values{"note": {"Go ahead."}}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/reject", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.proposed()
				return consoleCall{path: "/sessions/" + id + "/plan/reject", state: e.sessionState(id),
					form: url.Values{"note": {"Too broad."}}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/modify", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.proposed()
				return consoleCall{path: "/sessions/" + id + "/plan/modify", state: e.sessionState(id),
					form: url.Values{"note": {"Gate the migration behind a stopping point."}}}
			}},
		{method: http.MethodPost, path: "/permissions/:id/answer", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id, prompt := e.prompted()
				session := e.sessionState(id)
				return consoleCall{path: "/permissions/" + prompt + "/answer", form: url.Values{"option": {"2"}},
					state: func() string {
						return fmt.Sprintf("%s prompt waits: %t", session(), e.waits(governance.ItemPermission, prompt))
					}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/pause", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.Session(false)
				return consoleCall{path: "/sessions/" + id + "/pause", state: e.sessionState(id),
					form: url.Values{"reason": {"Stop touching billing."}}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/resume", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.paused()
				return consoleCall{path: "/sessions/" + id + "/resume", state: e.sessionState(id), form: url.Values{}}
			}},
		{method: http.MethodPost, path: "/asks/:id/answer", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id, ask := e.parkedAsk()
				session := e.sessionState(id)
				return consoleCall{path: "/asks/" + ask + "/answer", form: url.Values{"option": {"1"}},
					state: func() string { return fmt.Sprintf("%s ask waits: %t", session(), e.waits(governance.ItemAsk, ask)) }}
			}},

		// Sessions.
		{method: http.MethodGet, path: "/sessions", setup: page("/sessions"), want: readPage},
		{method: http.MethodGet, path: "/sessions/:id", want: readPage,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.Session(false)
				return consoleCall{path: "/sessions/" + id, state: e.sessionState(id)}
			}},
		{method: http.MethodPost, path: "/sessions/:id/remediations", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.Session(false)
				return consoleCall{path: "/sessions/" + id + "/remediations", state: e.sessionState(id),
					form: url.Values{"severity": {"required"}, "instruction": {"Add a test."}, "files": {"web/x.go\nweb/y.go"}}}
			}},
		{method: http.MethodPost, path: "/remediations/:id/close", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.Session(false)
				r, err := e.Kit.Gov.Remediations.Request(ctx, e.Lead, id, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy up."})
				e.fatal(err)
				return consoleCall{path: fmt.Sprintf("/remediations/%d/close", r.ID), state: e.sessionState(id),
					form: url.Values{"note": {"Done."}}}
			}},
		{method: http.MethodPost, path: "/violations/:id/clear", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				id := e.Session(false)
				return consoleCall{path: "/violations/" + e.criticalViolation(id) + "/clear", state: e.sessionState(id),
					form: url.Values{"as": {"fixed"}, "note": {"Rotated the key."}, "back": {"/sessions/" + id}}}
			}},

		// Missions.
		{method: http.MethodGet, path: "/missions", setup: page("/missions"), want: readPage},
		{method: http.MethodGet, path: "/missions/new", setup: page("/missions/new"), want: leadPage},
		{method: http.MethodPost, path: "/missions", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				slug := e.unique("roles")
				return consoleCall{path: "/missions", state: e.missionState(slug),
					form: url.Values{"slug": {slug}, "title": {"Roles"}, "text": {"Check every role."}}}
			}},
		{method: http.MethodGet, path: "/missions/:slug/edit", want: leadPage,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				slug := e.Kit.Mission(e.Lead, false)
				return consoleCall{path: "/missions/" + slug + "/edit", state: e.missionState(slug)}
			}},
		{method: http.MethodPost, path: "/missions/:slug", want: leadAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				slug := e.Kit.Mission(e.Lead, false)
				return consoleCall{path: "/missions/" + slug, state: e.missionState(slug),
					form: url.Values{"title": {"Renamed"}, "text": {"Do the other thing."}}}
			}},

		// Audit.
		{method: http.MethodGet, path: "/audit", setup: page("/audit"), want: readPage},
		{method: http.MethodGet, path: "/audit/:report", setup: page("/audit/premature-side-effects"), want: readPage},

		// Admin.
		{method: http.MethodGet, path: "/admin/users", setup: page("/admin/users"), want: adminPage},
		{method: http.MethodPost, path: "/admin/users", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/users", state: e.usersState,
					form: url.Values{"email": {e.unique("added") + "@example.com"}, "role": {"viewer"}, "password": {"long-enough"}}}
			}},
		{method: http.MethodPost, path: "/admin/users/:id/role", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				target, _ := e.Kit.Person(auth.Viewer)
				return consoleCall{path: fmt.Sprintf("/admin/users/%d/role", target.UserID), state: e.usersState,
					form: url.Values{"role": {"lead"}}}
			}},
		{method: http.MethodPost, path: "/admin/users/:id/disable", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				target, _ := e.Kit.Person(auth.Viewer)
				return consoleCall{path: fmt.Sprintf("/admin/users/%d/disable", target.UserID), state: e.usersState, form: url.Values{}}
			}},
		{method: http.MethodPost, path: "/admin/users/:id/enable", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				target, _ := e.Kit.Person(auth.Viewer)
				_, err := e.Kit.Auth.SetDisabled(ctx, e.Admin, target.UserID, true)
				e.fatal(err)
				return consoleCall{path: fmt.Sprintf("/admin/users/%d/enable", target.UserID), state: e.usersState, form: url.Values{}}
			}},
		{method: http.MethodGet, path: "/admin/keys", setup: page("/admin/keys"), want: adminPage},
		{method: http.MethodPost, path: "/admin/keys", writes: true,
			want: roleStatuses(http.StatusSeeOther, http.StatusForbidden, http.StatusForbidden, http.StatusCreated),
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/keys", state: e.keysState, form: url.Values{"name": {e.unique("roles-key")}}}
			}},
		{method: http.MethodPost, path: "/admin/keys/:id/revoke", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				key, _ := e.Kit.Agent()
				return consoleCall{path: fmt.Sprintf("/admin/keys/%d/revoke", key.KeyID), state: e.keysState, form: url.Values{}}
			}},
		{method: http.MethodGet, path: "/admin/policies", setup: page("/admin/policies"), want: adminPage},
		{method: http.MethodPost, path: "/admin/policies", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/policies", state: func() string {
					ps, err := e.Kit.Gov.Policies.List(ctx)
					e.fatal(err)
					return fmt.Sprintf("%d policies", len(ps))
				}, form: url.Values{"name": {e.unique("No TODO")}, "severity": {"low"}, "kind": {"content_regex"},
					"pattern": {"TODO"}, "action": {"violation"}}}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/disable", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: fmt.Sprintf("/admin/policies/%d/disable", e.policy(true)), state: e.policiesState, form: url.Values{}}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/enable", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: fmt.Sprintf("/admin/policies/%d/enable", e.policy(false)), state: e.policiesState, form: url.Values{}}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/delete", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: fmt.Sprintf("/admin/policies/%d/delete", e.policy(true)), state: e.policiesState, form: url.Values{}}
			}},
		{method: http.MethodGet, path: "/admin/rules", setup: page("/admin/rules"), want: adminPage},
		{method: http.MethodPost, path: "/admin/rules", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/rules", state: func() string {
					rs, err := e.Kit.Gov.Policies.ListRules(ctx)
					e.fatal(err)
					return fmt.Sprintf("%d rules", len(rs))
				}, form: url.Values{"concern": {e.unique("server state")}, "chosen": {"React Query"},
					"departures": {"redux-toolkit"}, "support": {"31"}, "total": {"34"}, "enforced": {"true"}}}
			}},
		{method: http.MethodGet, path: "/admin/tools", setup: page("/admin/tools"), want: adminPage},
		{method: http.MethodPost, path: "/admin/tools", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/tools", state: e.toolsState,
					form: url.Values{"server": {"github"}, "tool": {e.unique("read")}, "side_effecting": {"false"}}}
			}},
		{method: http.MethodPost, path: "/admin/tools/delete", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				tool := e.unique("write")
				_, err := e.Kit.Ledger.SetTool(ctx, e.Admin, "github", tool, true)
				e.fatal(err)
				return consoleCall{path: "/admin/tools/delete", state: e.toolsState,
					form: url.Values{"server": {"github"}, "tool": {tool}}}
			}},
		{method: http.MethodGet, path: "/admin/activity", setup: page("/admin/activity?action=policy&limit=10"), want: adminPage},
		{method: http.MethodGet, path: "/admin/webhooks", setup: page("/admin/webhooks"), want: adminPage},
		{method: http.MethodPost, path: "/admin/webhooks", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				return consoleCall{path: "/admin/webhooks", state: e.webhooksState,
					form: url.Values{"url": {"https://hooks.example.com/" + e.unique("hook")}, "secret": {"console-signing-secret"},
						"events": {"hard_stop", "decision.expired"}}}
			}},
		{method: http.MethodPost, path: "/admin/webhooks/:id/remove", want: adminAction, writes: true,
			setup: func(e *consoleEnv, _ consoleCaller) consoleCall {
				w, err := e.Kit.Gov.Webhooks.Create(ctx, e.Admin, governance.WebhookInput{URL: "https://hooks.example.com/" + e.unique("gone"),
					Secret: "console-signing-secret", Events: []string{"attention.created"}})
				e.fatal(err)
				return consoleCall{path: fmt.Sprintf("/admin/webhooks/%d/remove", w.ID), state: e.webhooksState}
			}},
	}
}

// policy defines a policy, enabled or disabled, and returns its id.
func (e *consoleEnv) policy(enabled bool) int64 {
	ctx := context.Background()
	p, err := e.Kit.Gov.Policies.Create(ctx, e.Admin, governance.PolicyInput{Name: e.unique("Roles policy"), Severity: "low",
		Kind: "dependency", Pattern: e.unique("roles-dep")})
	e.fatal(err)
	if !enabled {
		_, err = e.Kit.Gov.Policies.SetEnabled(ctx, e.Admin, p.ID, false)
		e.fatal(err)
	}
	return p.ID
}

// policiesState lists the policies and their state.
func (e *consoleEnv) policiesState() string {
	ps, err := e.Kit.Gov.Policies.List(context.Background())
	e.fatal(err)
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%d %s enabled=%t\n", p.ID, p.Name, p.Enabled)
	}
	return b.String()
}

// webhooksState lists the webhook endpoints.
func (e *consoleEnv) webhooksState() string {
	ws, err := e.Kit.Gov.Webhooks.List(context.Background(), e.Admin)
	e.fatal(err)
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "%d %s %v\n", w.ID, w.URL, w.Events)
	}
	return b.String()
}

// isConsoleRoute reports whether a registered route belongs to the console.
func isConsoleRoute(r *echo.Route) bool {
	switch {
	case r.Method == echo.RouteNotFound: // a catch-all, not a route anyone calls
		return false
	case r.Path == "/api/v1" || strings.HasPrefix(r.Path, "/api/v1/"), r.Path == "/brief", r.Path == "/healthz", r.Path == "/mcp",
		strings.HasPrefix(r.Path, "/hooks/"), r.Path == "/metrics",
		r.Path == "/favicon.ico", strings.HasPrefix(r.Path, "/static/"):
		return false
	}
	return true
}

// TestEveryConsoleRouteAnswersEachRole signs in as each role (and as
// nobody) and sends every console route: the anonymous caller is sent to
// sign in, a viewer reads but changes nothing, a lead acts but is refused
// the admin pages, an admin does everything. A refused call changes
// nothing; a successful one really does what it says.
func TestEveryConsoleRouteAnswersEachRole(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	parent := t
	table := consoleRouteTable()

	t.Run("the table lists every console route, and only those", func(t *testing.T) {
		var tested []string
		for _, rc := range table {
			key := rc.method + " " + rc.path
			tested = append(tested, key)
			for _, role := range consoleRoles {
				if _, ok := rc.want[role]; !ok {
					t.Errorf("%s has no status for the %s", key, role)
				}
			}
		}
		webtest.RoutesCovered(t, e.e.Routes(), isConsoleRoute, "consoleRouteTable (web/console/roles_test.go)", tested)
	})

	for _, rc := range table {
		for _, role := range consoleRoles {
			want := rc.want[role]
			t.Run(fmt.Sprintf("%s %s as %s is %d", rc.method, rc.path, role, want), func(t *testing.T) {
				e.T = t
				defer func() { e.T = parent }()
				c := e.callerAs(t, role)
				call := rc.setup(e, c)
				state := func() string {
					s := e.totals()
					if call.state != nil {
						s += "\n" + call.state()
					}
					return s
				}
				before := state()
				var res *http.Response
				var body string
				switch {
				case rc.stream:
					res, body = firstEvent(t, c.b, call.path)
				case rc.method == http.MethodGet:
					res, body = c.b.Get(call.path)
				default:
					res, body = c.b.PostForm(call.path, call.form)
				}
				if res.StatusCode != want {
					t.Fatalf("status %d, want %d; Location %q; body %s", res.StatusCode, want, res.Header.Get("Location"), webtest.Short([]byte(body)))
				}
				// Every answer, page, fragment, redirect or refusal, carries
				// the security headers; a stream may say no-cache instead.
				for h, v := range map[string]string{"Content-Security-Policy": web.ContentSecurityPolicy,
					"X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "X-Content-Type-Options": "nosniff"} {
					if got := res.Header.Get(h); got != v {
						t.Errorf("%s %q, want %q", h, got, v)
					}
				}
				if cc := res.Header.Get("Cache-Control"); cc != "no-store" && !(rc.stream && cc == "no-cache") {
					t.Errorf("Cache-Control %q, want no-store", cc)
				}
				refused := res.StatusCode >= 400 || (role == consoleAnonymous && !rc.public)
				loc := res.Header.Get("Location")
				switch {
				case role == consoleAnonymous && !rc.public:
					to := "/login"
					if rc.method == http.MethodGet && call.path != "/" {
						to += "?next=" + url.QueryEscape(call.path)
					}
					if loc != to {
						t.Errorf("sent to %q, want %q", loc, to)
					}
				case refused:
					if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
						t.Errorf("a refusal for a browser is %q, want an HTML page", ct)
					}
				case res.StatusCode == http.StatusSeeOther && rc.signsOut:
					if loc != "/login" {
						t.Errorf("signed out to %q, want /login", loc)
					}
				case res.StatusCode == http.StatusSeeOther:
					if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/login") {
						t.Errorf("a success redirects to %q, want a console page", loc)
					}
				case rc.stream:
					if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" || !strings.Contains(body, "event: queue\ndata: ") {
						t.Errorf("Content-Type %q, first event %q: want a stream saying the queue changed since ?since=0", ct, body)
					}
				default:
					if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
						t.Errorf("Content-Type %q, want text/html", ct)
					}
				}
				after := state()
				switch {
				case refused || !rc.writes:
					if before != after {
						t.Errorf("the call changed what it must not:\nbefore %s\nafter  %s", before, after)
					}
				case before == after:
					t.Errorf("a successful %s %s changed nothing: %s", rc.method, call.path, after)
				}
				// Where a success leads is a page the caller may see.
				if !refused && res.StatusCode == http.StatusSeeOther {
					if next, nbody := c.b.Get(loc); next.StatusCode != http.StatusOK {
						t.Errorf("following the redirect to %s: %d %s", loc, next.StatusCode, webtest.Short([]byte(nbody)))
					}
				}
			})
		}
	}

	t.Run("htmx queue actions", func(t *testing.T) {
		e.T = t
		defer func() { e.T = parent }()
		testConsoleQueueHTMX(t, e)
	})
}

// htmx posts a form as htmx does from the Attention page.
func (e *consoleEnv) htmx(b *webtest.Client, path string, form url.Values) (*http.Response, string) {
	e.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.CSRF)
	req, err := http.NewRequest(http.MethodPost, e.Base+path, strings.NewReader(form.Encode()))
	e.fatal(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", e.Base+"/")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.Do(req)
}

// testConsoleQueueHTMX sends the Attention queue's actions as htmx does:
// a success answers the new count; a mistake answers the item (or the
// queue) again, 422, with the message; a viewer is refused with a message
// and the anonymous caller sent to sign in.
func testConsoleQueueHTMX(t *testing.T, e *consoleEnv) {
	lead := e.callerAs(t, consoleLead)
	viewer := e.callerAs(t, consoleViewer)
	// Each case runs as its own subtest, and reports failures there.
	parent := t
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			e.T, lead.b.T, viewer.b.T = t, t, t
			defer func() { e.T, lead.b.T, viewer.b.T = parent, parent, parent }()
			f(t)
		})
	}
	decisionOf := func(id, ref string) governance.Decision {
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		for _, dec := range d.Decisions {
			if dec.Ref == ref {
				return dec
			}
		}
		t.Fatalf("no decision %s on %s", ref, id)
		return governance.Decision{}
	}
	wantCount := func(t *testing.T, res *http.Response, body string) {
		t.Helper()
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="nav-count"`) || !strings.Contains(body, `hx-swap-oob="true"`) {
			t.Fatalf("status %d, want 200 with the count update: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
	}
	// A success says what happens next in the live region, and asks the
	// queue to refresh itself.
	wantAnnounce := func(t *testing.T, res *http.Response, body string, words ...string) {
		t.Helper()
		if !strings.Contains(body, `id="announce" hx-swap-oob="innerHTML"`) {
			t.Errorf("no words for the live region: %s", webtest.Short([]byte(body)))
		}
		for _, w := range words {
			if !strings.Contains(body, w) {
				t.Errorf("the words lack %q: %s", w, body)
			}
		}
		if res.Header.Get("HX-Trigger") != "queue-changed" {
			t.Errorf("HX-Trigger %q, want queue-changed", res.Header.Get("HX-Trigger"))
		}
	}
	// An action on an item removes its line: the answer replaces it.
	wantLineGone := func(t *testing.T, res *http.Response, id string) {
		t.Helper()
		if res.Header.Get("HX-Retarget") != "#"+id || res.Header.Get("HX-Reswap") != "outerHTML" {
			t.Errorf("HX-Retarget %q, HX-Reswap %q: want the line #%s replaced", res.Header.Get("HX-Retarget"), res.Header.Get("HX-Reswap"), id)
		}
	}
	want422 := func(t *testing.T, res *http.Response, body string, parts ...string) {
		t.Helper()
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		for _, p := range parts {
			if !strings.Contains(body, p) {
				t.Errorf("the answer lacks %q: %s", p, body)
			}
		}
	}

	run("resolve without an instruction is 422 with the item and the message", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {""}})
		want422(t, res, body, `data-ref="`+ref+`"`, `data-testid="error-instruction"`, "The instruction is required.", `value="Keep it."`)
		if strings.Contains(body, "<html") {
			t.Errorf("the answer is a whole webtest.Page, not the item")
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
	})
	run("resolve answers the count update", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive instead."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, ref+" resolved — the agent gets the resolution and instruction on its next brief.")
		wantLineGone(t, res, "item-decision-"+ref)
		if d := decisionOf(id, ref); d.Status != governance.DecisionResolved || d.Instruction != "Archive instead." {
			t.Errorf("the decision is %s %q, want resolved", d.Status, d.Instruction)
		}
	})
	run("resolve of a gate someone else resolved answers the count update", func(t *testing.T) {
		_, ref := e.decision()
		_, err := e.Kit.Gov.Decisions.Resolve(context.Background(), e.Lead, ref, "First.", "Do it.")
		e.fatal(err)
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Second."}, "instruction": {"Do that."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "already", "It has left the queue.")
		wantLineGone(t, res, "item-decision-"+ref)
	})
	run("bulk resolve without an instruction is 422 with the bulk bar and the message", func(t *testing.T) {
		id1, ref1 := e.decision()
		id2, ref2 := e.decision()
		res, body := e.htmx(lead.b, "/decisions/resolve", url.Values{"refs": {ref1, ref2}, "resolution": {"Keep them."}})
		want422(t, res, body, `id="bulk"`, `data-testid="error-instruction"`, "The instruction is required.", `value="Keep them."`)
		if decisionOf(id1, ref1).Status != governance.DecisionOpen || decisionOf(id2, ref2).Status != governance.DecisionOpen {
			t.Errorf("a refused bulk resolve resolved something")
		}
	})
	run("bulk resolve answers an empty bulk bar, the words, the count update and a refresh", func(t *testing.T) {
		id1, ref1 := e.decision()
		id2, ref2 := e.decision()
		res, body := e.htmx(lead.b, "/decisions/resolve", url.Values{"refs": {ref1, ref2}, "resolution": {"Keep them."}, "instruction": {"Archive."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, ref1+", "+ref2+" resolved — each agent gets the resolution and instruction on its next brief.")
		if !strings.Contains(body, `id="bulk"`) || strings.Contains(body, `value="Keep them."`) {
			t.Errorf("the bulk bar does not come back empty: %s", webtest.Short([]byte(body)))
		}
		if decisionOf(id1, ref1).Status != governance.DecisionResolved || decisionOf(id2, ref2).Status != governance.DecisionResolved {
			t.Errorf("bulk resolve did not resolve both")
		}
	})
	for _, verb := range []string{"approve", "reject"} {
		status := map[string]string{"approve": governance.PlanApproved, "reject": governance.PlanRejected}[verb]
		run(verb+" with a note too long is 422 with the item and the message", func(t *testing.T) {
			id := e.proposed()
			before := e.sessionState(id)()
			res, body := e.htmx(lead.b, "/sessions/"+id+"/plan/"+verb, url.Values{"note": {strings.Repeat("n", 4001)}})
			want422(t, res, body, `data-ref="`+id+`"`, `data-kind="plan"`, `data-testid="error-note"`, "at most 4000 are allowed")
			if after := e.sessionState(id)(); after != before {
				t.Errorf("a refused %s changed the session:\nbefore %s\nafter  %s", verb, before, after)
			}
		})
		run(verb+" answers the count update", func(t *testing.T) {
			id := e.proposed()
			res, body := e.htmx(lead.b, "/sessions/"+id+"/plan/"+verb, url.Values{"note": {"Noted."}})
			wantCount(t, res, body)
			wantAnnounce(t, res, body, map[string]string{"approve": "approved — the agent may proceed; it is told on its next brief.",
				"reject": "rejected — the agent is told on its next brief and goes back to idle."}[verb])
			wantLineGone(t, res, "item-plan-"+id)
			d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
			e.fatal(err)
			if d.Plan == nil || d.Plan.Status != status {
				t.Errorf("the plan is %+v, want %s", d.Plan, status)
			}
		})
	}
	run("pause answers the words, the count update and a refresh of the queue", func(t *testing.T) {
		id := e.Session(false)
		res, body := e.htmx(lead.b, "/sessions/"+id+"/pause", url.Values{"reason": {"Stop."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "paused — the agent is told to stop on its next brief.")
		if !e.waits(governance.ItemPaused, id) {
			t.Errorf("the paused session does not wait in the queue")
		}
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		if !d.Paused || d.PauseReason != "Stop." {
			t.Errorf("the session is paused=%t %q", d.Paused, d.PauseReason)
		}
	})
	run("pausing a paused session is 422 with the brake form, open, and the message", func(t *testing.T) {
		id := e.paused()
		before := e.sessionState(id)()
		res, body := e.htmx(lead.b, "/sessions/"+id+"/pause", url.Values{"reason": {"Again."}})
		want422(t, res, body, `data-testid="pause-form"`, "<details class=\"brake\" open", "already paused", `value="Again."`)
		if after := e.sessionState(id)(); after != before {
			t.Errorf("a refused pause changed the session:\nbefore %s\nafter  %s", before, after)
		}
	})
	run("resume answers the count update", func(t *testing.T) {
		id := e.paused()
		res, body := e.htmx(lead.b, "/sessions/"+id+"/resume", nil)
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Brake released on ", "the agent may continue on its next brief.")
		wantLineGone(t, res, "item-paused-"+id)
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		if d.Paused {
			t.Errorf("the session is still paused")
		}
	})
	run("an answer that is not an option is 422 with the item and the message", func(t *testing.T) {
		_, ask := e.parkedAsk()
		res, body := e.htmx(lead.b, "/asks/"+ask+"/answer", url.Values{"option": {"7"}})
		want422(t, res, body, `data-ref="`+ask+`"`, `data-kind="ask"`, `has no option &#34;7&#34;: choose one of 1, 2.`)
		if !e.waits(governance.ItemAsk, ask) {
			t.Errorf("a refused answer took the ask out of the queue")
		}
	})
	run("answer answers the count update", func(t *testing.T) {
		_, ask := e.parkedAsk()
		res, body := e.htmx(lead.b, "/asks/"+ask+"/answer", url.Values{"option": {"2"}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Answered &#34;No&#34; — the run resumes from where it parked")
		wantLineGone(t, res, "item-ask-"+ask)
		if e.waits(governance.ItemAsk, ask) {
			t.Errorf("the answered ask still waits")
		}
	})
	run("clearing a violation without saying how is 422 with the item and the message", func(t *testing.T) {
		id := e.Session(false)
		v := e.criticalViolation(id)
		before := e.sessionState(id)()
		res, body := e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"note": {"Rotated."}})
		want422(t, res, body, `data-kind="violation"`, `data-testid="error-as"`, "Choose how the violation was cleared: fixed, or a false positive.", `value="Rotated."`)
		res, body = e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"as": {"gone"}})
		want422(t, res, body, `data-testid="error-as"`, "(not &#34;gone&#34;)")
		if after := e.sessionState(id)(); after != before || !e.waits(governance.ItemViolation, v) {
			t.Errorf("a refused clear changed the session:\nbefore %s\nafter  %s", before, after)
		}
		res, body = e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"as": {"false_positive"}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Violation cleared as a false positive — the HARD_STOP lifts on the agent&#39;s next brief.")
		wantLineGone(t, res, "item-violation-"+v)
	})
	run("a viewer is refused with a message and nothing changes", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(viewer.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive."}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "lead") {
			t.Fatalf("status %d, want 403 with a message: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
		pid := e.Session(false)
		if res, _ := e.htmx(viewer.b, "/sessions/"+pid+"/pause", url.Values{"reason": {"No."}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's pause: %d, want 403", res.StatusCode)
		}
		if d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, pid); err != nil || d.Paused {
			t.Errorf("a viewer paused the session (%v)", err)
		}
	})
	run("an anonymous caller is sent to sign in", func(t *testing.T) {
		id, ref := e.decision()
		anon := webtest.NewClient(t, e.Base)
		res, _ := e.htmx(anon, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive."}})
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("HX-Redirect") != "/login" {
			t.Fatalf("status %d, HX-Redirect %q; want 401 to /login", res.StatusCode, res.Header.Get("HX-Redirect"))
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
	})
}

// firstEvent opens a push stream as a browser's EventSource does, reads up
// to its first event (a redirect or a refusal ends at once) and hangs up.
func firstEvent(t *testing.T, b *webtest.Client, path string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := b.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	var got strings.Builder
	r := bufio.NewReader(res.Body)
	for !strings.Contains(got.String(), "event: ") || !strings.HasSuffix(got.String(), "\n\n") {
		line, err := r.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, got.String())
		}
	}
	return res, got.String()
}
