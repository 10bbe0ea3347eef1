// The authorization matrix: one table, routeTable, of every route of
// every surface (the JSON API, the console, /brief, the Claude Code hook,
// /metrics, /healthz, the OpenAPI document, the static assets) and every
// MCP tool and resource reached through POST /mcp, with the answer each
// of six callers gets: anonymous, a viewer, a lead, an admin, the agent
// key that owns what the call is about, and another agent key. People
// call the console from a signed-in browser (session cookie and CSRF
// token) and everything else with their personal token; agents always
// send their key (on the console, an admin's token sent without a browser
// session is tried too: a bearer secret never opens the console).
// TestTheAuthorizationMatrix runs every cell and checks
// that a refusal writes nothing (every table, compared before and after);
// TestTheAuthorizationMatrixCoversEverySurface fails when a route, a tool
// or a resource has no row.
package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/mcp"
	"github.com/madebook/madebook/web/webtest"
)

// caller is who sends a request in the matrix.
type caller int

const (
	asAnonymous caller = iota
	asViewer
	asLead
	asAdmin
	asOwnAgent   // the agent key that opened the session
	asOtherAgent // another agent key
	// asAdminToken is an admin's personal token sent to the console by a
	// browser without a session: a bearer secret is not a browser session,
	// so it gets what an agent key gets. Console rows only.
	asAdminToken
)

var callers = []caller{asAnonymous, asViewer, asLead, asAdmin, asOwnAgent, asOtherAgent}

func (c caller) String() string {
	return [...]string{"anonymous", "viewer", "lead", "admin", "the session's agent", "another agent", "an admin's token without a browser session"}[c]
}

func tokenOf(a *webtest.API, c caller) string {
	return [...]string{"", a.ViewerTok, a.LeadTok, a.AdminTok, a.AgentKey, a.OtherKey, a.AdminTok}[c]
}

// person is the person a caller is (zero for anonymous and the agents).
func person(a *webtest.API, c caller) auth.Actor {
	return [...]auth.Actor{{}, a.Viewer, a.Lead, a.Admin, {}, {}, {}}[c]
}

// routeCase is one row of the matrix: a route of routes.go, or an MCP
// tool or resource called through POST /mcp; how to build a fresh request
// to it, and what every caller gets.
type routeCase struct {
	method, path string // as registered on echo
	// mcp names the MCP tool ("tool open_session") or resource ("resource
	// madebook://protocol") the row calls through POST /mcp; "" for a route.
	mcp string
	// setup creates what the request needs and returns the concrete path
	// and the body (JSON, or url.Values for a form).
	setup func(a *webtest.API) (path string, body any)
	// want is the status per caller; callers not listed get 403, except
	// anonymous callers, who get 401 on an authenticated route.
	want map[caller]int
	// toolError is the code of the tool (or resource) error an MCP caller
	// gets in a 200 answer; a caller not listed here whose status is 200
	// gets a result.
	toolError map[caller]string
	// public routes answer anonymous callers.
	public bool
	// writes says a successful call changes the database; a call that
	// does not write must leave every table as it was, even when it
	// succeeds.
	writes bool
	// page marks a route whose answers are not JSON (Prometheus text,
	// assets): a redirect from it must lead to the sign-in page.
	page bool
	// console marks a console route: people call it from a signed-in
	// browser, agents from a browser that sends their key (which is not a
	// browser session), and a refused anonymous caller is sent to sign in.
	console bool
	// stream says the route answers server-sent events that do not end:
	// the call reads the first event and hangs up.
	stream bool
	// signsOut says a success sends the caller to the sign-in page.
	signsOut bool
	// header is sent besides the bearer (nil: none).
	header http.Header
}

// name is the row as the subtests name it.
func (rc routeCase) name() string {
	if rc.mcp != "" {
		return "MCP " + rc.mcp
	}
	return rc.method + " " + rc.path
}

// status is what caller c gets.
func (rc routeCase) status(c caller) int {
	switch want, ok := rc.want[c]; {
	case ok:
		return want
	case c == asAnonymous && rc.console && !rc.public:
		return http.StatusSeeOther
	case c == asAnonymous && !rc.public:
		return http.StatusUnauthorized
	default:
		return http.StatusForbidden
	}
}

var (
	people     = []caller{asViewer, asLead, asAdmin}
	leads      = []caller{asLead, asAdmin}
	everyone   = []caller{asViewer, asLead, asAdmin, asOwnAgent, asOtherAgent}
	bothAgents = []caller{asOwnAgent, asOtherAgent}
)

func statuses(status int, cs ...[]caller) map[caller]int {
	m := map[caller]int{}
	for _, list := range cs {
		for _, c := range list {
			m[c] = status
		}
	}
	return m
}

func with(m map[caller]int, c caller, status int) map[caller]int {
	m[c] = status
	return m
}

// signedIn is what each person gets on a console route from a signed-in
// browser; the anonymous caller and both agents (a key is not a browser
// session) are sent to sign in.
func signedIn(viewer, lead, admin int) map[caller]int {
	return map[caller]int{asAnonymous: http.StatusSeeOther, asViewer: viewer, asLead: lead, asAdmin: admin,
		asOwnAgent: http.StatusSeeOther, asOtherAgent: http.StatusSeeOther}
}

// What the people get on the console's pages and actions.
var (
	readPage    = signedIn(http.StatusOK, http.StatusOK, http.StatusOK)
	leadPage    = signedIn(http.StatusForbidden, http.StatusOK, http.StatusOK)
	leadAction  = signedIn(http.StatusForbidden, http.StatusSeeOther, http.StatusSeeOther)
	adminPage   = signedIn(http.StatusForbidden, http.StatusForbidden, http.StatusOK)
	adminAction = signedIn(http.StatusForbidden, http.StatusForbidden, http.StatusSeeOther)
	anyoneIn    = signedIn(http.StatusSeeOther, http.StatusSeeOther, http.StatusSeeOther)
)

// mcpHeader is the Accept every MCP request carries.
var mcpHeader = http.Header{"Accept": {"application/json, text/event-stream"}}

// rpc is a JSON-RPC request to the MCP server.
func rpc(method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
}

// mcpTool is the row of an MCP tool: both agent keys reach it (people's
// tokens are 403, no token 401, before any tool runs); other is the code
// of the tool error another agent key gets ("" when it may call the tool).
func mcpTool(name string, writes bool, other string, args func(a *webtest.API) map[string]any) routeCase {
	rc := routeCase{method: http.MethodPost, path: mcp.Path, mcp: "tool " + name, writes: writes, header: mcpHeader,
		setup: func(a *webtest.API) (string, any) {
			return mcp.Path, rpc("tools/call", map[string]any{"name": name, "arguments": args(a)})
		},
		want: statuses(http.StatusOK, bothAgents)}
	if other != "" {
		rc.toolError = map[caller]string{asOtherAgent: other}
	}
	return rc
}

// mcpResource is the row of an MCP resource, read at the uri setup returns.
func mcpResource(name, other string, uri func(a *webtest.API) string) routeCase {
	rc := routeCase{method: http.MethodPost, path: mcp.Path, mcp: "resource " + name, header: mcpHeader,
		setup: func(a *webtest.API) (string, any) {
			return mcp.Path, rpc("resources/read", map[string]any{"uri": uri(a)})
		},
		want: statuses(http.StatusOK, bothAgents)}
	if other != "" {
		rc.toolError = map[caller]string{asOtherAgent: other}
	}
	return rc
}

// routeTable is the authorization matrix: one row per route of routes.go
// and per MCP tool and resource, each with its setup and its cells. A new
// route, tool or resource needs its row here (the coverage test fails
// without one).
func routeTable() []routeCase {
	ctx := context.Background()
	plainSession := func(a *webtest.API) string { return a.Session(false) }
	policies := 0
	// routePolicy defines a policy for a route to disable or delete.
	routePolicy := func(a *webtest.API) int64 {
		policies++
		p, err := a.Kit.Gov.Policies.Create(ctx, a.Admin, governance.PolicyInput{Name: fmt.Sprintf("Route table %d", policies),
			Severity: "low", Kind: "dependency", Pattern: fmt.Sprintf("route-table-%d", policies)})
		if err != nil {
			a.T.Fatal(err)
		}
		return p.ID
	}
	// disabledPolicy defines a disabled policy, for a route to enable.
	disabledPolicy := func(a *webtest.API) int64 {
		id := routePolicy(a)
		if _, err := a.Kit.Gov.Policies.SetEnabled(ctx, a.Admin, id, false); err != nil {
			a.T.Fatal(err)
		}
		return id
	}
	// blockedTask opens a fresh session whose agent reports task t1
	// blocked, and returns it.
	blockedTask := func(a *webtest.API) string {
		id := plainSession(a)
		for _, ev := range []map[string]any{{"name": "user.message.created"}, {"name": "IntentClassified", "payload": map[string]any{"intent": "direct"}},
			{"name": "task.created", "payload": map[string]any{"task": "t1"}}, {"name": "task.blocked", "payload": map[string]any{"task": "t1"}}} {
			if r := a.Do(http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, ev); r.Status != http.StatusOK {
				a.T.Fatalf("report %v: %d %s", ev["name"], r.Status, webtest.Short(r.Body))
			}
		}
		return id
	}
	// paused pauses a fresh session and returns it.
	paused := func(a *webtest.API) string {
		id := plainSession(a)
		if _, err := a.Kit.Gov.Sessions.Pause(ctx, a.Lead, id, "wait"); err != nil {
			a.T.Fatal(err)
		}
		return id
	}
	// webhook adds a webhook endpoint and returns its id.
	webhook := func(a *webtest.API) int64 {
		w, err := a.Kit.Gov.Webhooks.Create(ctx, a.Admin, governance.WebhookInput{URL: "https://hooks.example.com/route-table",
			Secret: "route-table-signing-secret", Events: []string{"attention.created"}})
		if err != nil {
			a.T.Fatal(err)
		}
		return w.ID
	}
	// reachable adds an endpoint at a receiver on 127.0.0.1, open to
	// the kit's webhooks, and returns its id: what a test notification
	// is sent to.
	reachable := func(a *webtest.API) int64 {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		a.T.Cleanup(srv.Close)
		w, err := a.Kit.Gov.Webhooks.Create(ctx, a.Admin, governance.WebhookInput{URL: srv.URL + "/route-table",
			Secret: "route-table-signing-secret", Events: []string{"attention.created"}})
		if err != nil {
			a.T.Fatal(err)
		}
		return w.ID
	}
	// leadToken makes the lead another personal token and returns its id.
	leadToken := func(a *webtest.API) int64 {
		t, err := a.Kit.Auth.IssueToken(ctx, a.Admin, auth.TokenRequest{Email: a.Lead.Email, Name: "route table"})
		if err != nil {
			a.T.Fatal(err)
		}
		return t.ID
	}
	proposed := func(a *webtest.API) string {
		id := a.Session(true)
		if _, err := a.Kit.Gov.Plans.Propose(ctx, a.Agent, id, governance.PlanInput{Summary: "read, then change"}); err != nil {
			a.T.Fatal(err)
		}
		return id
	}
	decision := func(a *webtest.API) (string, string) {
		id := plainSession(a)
		d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
		if err != nil {
			a.T.Fatal(err)
		}
		return id, d.Ref
	}
	// run starts a run of a.Agent on a fresh session; parked also parks it
	// on a question and returns the ask.
	// pendingChange is a change another lead asked for that lowers a
	// protection of a two-person mission: it waits for a second lead.
	pendingChange := func(a *webtest.API) int64 {
		other, _ := a.Kit.Lead()
		slug := fmt.Sprintf("two-person-%d", other.UserID)
		if _, err := a.Kit.Gov.Missions.Create(ctx, other, governance.MissionInput{Slug: slug, Title: "Two people", TwoPerson: true}); err != nil {
			a.T.Fatal(err)
		}
		off := false
		edit, err := a.Kit.Gov.Missions.Patch(ctx, other, slug, governance.MissionPatch{TwoPerson: &off})
		if err != nil || edit.Pending == nil {
			a.T.Fatalf("a lead's change of a two-person mission: %v, pending %v", err, edit.Pending)
		}
		return edit.Pending.ID
	}
	run := func(a *webtest.API) (session, run string) {
		id := plainSession(a)
		r, err := a.Kit.Ledger.StartRun(ctx, a.Agent, id, "graph-ask-demo", "")
		if err != nil {
			a.T.Fatal(err)
		}
		return id, r.ID
	}
	parked := func(a *webtest.API) (session, ask string) {
		id, r := run(a)
		q, err := a.Kit.Ledger.RecordAsk(ctx, a.Agent, r, ledger.AskInput{Prompt: "save this reading?",
			Options: map[string]string{"1": "Yes", "2": "No"}})
		if err != nil {
			a.T.Fatal(err)
		}
		return id, q.ID
	}
	// prompted has a.Agent's client raise a permission prompt on a fresh
	// session and returns the session and the prompt's id.
	prompted := func(a *webtest.API) (string, string) {
		id := plainSession(a)
		r, err := a.Kit.Gov.Lifecycle.Report(ctx, a.Agent, id, governance.EventInput{Name: "permission.prompt.requested",
			Payload: []byte(`{"prompt":"Run make deploy?","options":{"1":"Allow","2":"Deny"},"tool":"Bash"}`)})
		if err != nil {
			a.T.Fatal(err)
		}
		return id, fmt.Sprint(r.Permission.ID)
	}
	// violated reports the seed's AWS secret on a fresh session and returns
	// the session and its open critical violation.
	violated := func(a *webtest.API) (string, int64) {
		id := plainSession(a)
		res, err := a.Kit.Gov.Changes.Report(ctx, a.Agent, id, change.Change{Files: []change.File{{Path: "config/deploy.sh",
			Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
		if err != nil {
			a.T.Fatal(err)
		}
		if len(res.Violations) == 0 {
			a.T.Fatal("the seed's secret raised no violation")
		}
		return id, res.Violations[0].ID
	}
	slugs := 0
	return []routeCase{
		{method: http.MethodGet, path: "/healthz", public: true,
			setup: func(*webtest.API) (string, any) { return "/healthz", nil },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodGet, path: "/metrics", page: true, // Prometheus text, not JSON
			setup: func(*webtest.API) (string, any) { return "/metrics", nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/openapi.json", public: true,
			setup: func(*webtest.API) (string, any) { return "/api/v1/openapi.json", nil },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodPost, path: "/brief", writes: true, // last_brief_at
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/brief", map[string]string{"session": id}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/hooks/:executor", writes: true, // opens the Claude session's session
			setup: func(a *webtest.API) (string, any) {
				slugs++
				return "/hooks/claude-code?mission=" + a.Kit.Mission(a.Lead, false), map[string]any{
					"session_id": fmt.Sprintf("route-table-claude-%d", slugs), "hook_event_name": "SessionStart", "source": "startup",
					"cwd": "/home/dev/billing", "transcript_path": "/home/dev/.claude/t.jsonl", "permission_mode": "default"}
			},
			want: statuses(http.StatusOK, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/missions",
			setup: func(*webtest.API) (string, any) { return "/api/v1/missions", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/missions", writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/api/v1/missions", map[string]any{"slug": fmt.Sprintf("route-table-%d", slugs), "title": "T"}
			},
			want: statuses(http.StatusCreated, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/sessions", map[string]any{"mission": a.Kit.Mission(a.Lead, false), "title": "work"}
			},
			want: statuses(http.StatusCreated, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/sessions/:id",
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id, nil
			},
			want: statuses(http.StatusOK, people, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/decisions", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/decisions", map[string]any{"title": "Schema", "question": "Drop it?",
					"blocked_scope": []string{"db/"}, "allowed_scope": []string{"web/"}}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := a.Session(true)
				return "/api/v1/sessions/" + id + "/plan", map[string]any{"summary": "read, then change"}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/approve", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/approve", map[string]any{"note": "ok"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/reject", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/reject", map[string]any{"note": "too broad"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/modify", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/modify", map[string]any{"instruction": "gate the migration"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/permissions/:id/answer", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, prompt := prompted(a)
				return "/api/v1/permissions/" + prompt + "/answer", map[string]any{"option": "1"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/pause", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/pause", map[string]any{"reason": "wait"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/resume", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				if _, err := a.Kit.Gov.Sessions.Pause(ctx, a.Lead, id, "wait"); err != nil {
					a.T.Fatal(err)
				}
				return "/api/v1/sessions/" + id + "/resume", map[string]any{}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/remediations", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/remediations", map[string]any{"severity": "required",
					"instruction": "Add a test.", "files": []string{"web/x.go"}}
			},
			want: statuses(http.StatusCreated, leads)},
		{method: http.MethodPost, path: "/api/v1/remediations/:id/close", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				r, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, id, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy up."})
				if err != nil {
					a.T.Fatal(err)
				}
				return fmt.Sprintf("/api/v1/remediations/%d/close", r.ID), map[string]any{"note": "done"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/decisions/:ref/resolve", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, ref := decision(a)
				return "/api/v1/decisions/" + ref + "/resolve", map[string]any{"resolution": "Keep it.",
					"instruction": "Archive instead."}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/changes", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/changes", map[string]any{"files": []map[string]string{
					{"path": "web/app.go", "content": "package web\n"}}}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/evidence", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/evidence", map[string]any{"kind": "tests", "passed": true}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/complete", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/complete", map[string]any{}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/events", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/events", map[string]any{"name": "user.message.created"}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodGet, path: "/api/v1/policies",
			setup: func(*webtest.API) (string, any) { return "/api/v1/policies", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/policies", writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/api/v1/policies", map[string]any{"name": fmt.Sprintf("No TODO %d", slugs), "severity": "low",
					"kind": "content_regex", "pattern": `TODO`}
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/policies/:id/disable", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/api/v1/policies/%d/disable", routePolicy(a)), map[string]any{}
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/policies/:id/enable", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/api/v1/policies/%d/enable", disabledPolicy(a)), nil
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodDelete, path: "/api/v1/policies/:id", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/api/v1/policies/%d", routePolicy(a)), nil
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/rules",
			setup: func(*webtest.API) (string, any) { return "/api/v1/rules", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/rules", writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/api/v1/rules", map[string]any{"concern": fmt.Sprintf("server state %d", slugs), "chosen": "react-query",
					"departures": []string{"redux-toolkit"}, "support": 31, "total": 34, "enforced": true}
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/risk-gates",
			setup: func(*webtest.API) (string, any) { return "/api/v1/risk-gates", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPut, path: "/api/v1/risk-gates", writes: true,
			setup: func(*webtest.API) (string, any) {
				return "/api/v1/risk-gates", map[string]any{"high": "a lead's review"}
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/violations/:id/clear", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, v := violated(a)
				return fmt.Sprintf("/api/v1/violations/%d/clear", v), map[string]any{"as": "fixed", "note": "Rotated the key."}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/missions/:slug",
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/missions/" + a.Kit.Mission(a.Lead, false), nil
			},
			want: statuses(http.StatusOK, everyone)},
		{method: http.MethodPatch, path: "/api/v1/missions/:slug", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/missions/" + a.Kit.Mission(a.Lead, false), map[string]any{"title": "Renamed"}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/missions/:slug/changes",
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/missions/" + a.Kit.Mission(a.Lead, false) + "/changes", nil
			},
			want: statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/mission-changes/:id/approve", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/api/v1/mission-changes/%d/approve", pendingChange(a)), map[string]any{"note": "Agreed."}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/mission-changes/:id/reject", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/api/v1/mission-changes/%d/reject", pendingChange(a)), nil
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/audit/:report",
			setup: func(*webtest.API) (string, any) { return "/api/v1/audit/premature-side-effects", nil },
			want:  statuses(http.StatusOK, people)},
		{method: http.MethodGet, path: "/api/v1/attention",
			setup: func(*webtest.API) (string, any) { return "/api/v1/attention", nil },
			want:  statuses(http.StatusOK, people)},
		{method: http.MethodPost, path: "/api/v1/attention/:kind/:session/:ref/claim", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				return "/api/v1/attention/paused/" + id + "/" + id + "/claim", map[string]any{}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodDelete, path: "/api/v1/attention/:kind/:session/:ref/claim", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				if _, err := a.Kit.Gov.Attention.Claim(ctx, a.Lead, governance.ItemKey{Kind: governance.ItemPaused, Session: id, Ref: id}, false); err != nil {
					a.T.Fatal(err)
				}
				return "/api/v1/attention/paused/" + id + "/" + id + "/claim", nil
			},
			want: statuses(http.StatusOK, leads)}, // the claimer, and an admin
		{method: http.MethodPost, path: "/api/v1/attention/:kind/:session/:ref/snooze", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				return "/api/v1/attention/paused/" + id + "/" + id + "/snooze", map[string]any{"for": "1h"}
			},
			want: statuses(http.StatusOK, people)},
		{method: http.MethodDelete, path: "/api/v1/attention/:kind/:session/:ref/snooze", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				for _, p := range []auth.Actor{a.Viewer, a.Lead, a.Admin} {
					if _, err := a.Kit.Gov.Attention.Snooze(ctx, p, governance.ItemKey{Kind: governance.ItemPaused, Session: id, Ref: id}, time.Hour); err != nil {
						a.T.Fatal(err)
					}
				}
				return "/api/v1/attention/paused/" + id + "/" + id + "/snooze", nil
			},
			want: statuses(http.StatusOK, people)},
		{method: http.MethodGet, path: "/api/v1/sessions",
			setup: func(a *webtest.API) (string, any) { plainSession(a); return "/api/v1/sessions", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/tasks/:task/acknowledge", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/sessions/" + blockedTask(a) + "/tasks/t1/acknowledge", map[string]any{}
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/tasks/:task/remediation", writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/api/v1/sessions/" + blockedTask(a) + "/tasks/t1/remediation", map[string]any{"instruction": "Split it."}
			},
			want: statuses(http.StatusCreated, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/runs", writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/runs", map[string]any{"name": "graph-ask-demo"}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodGet, path: "/api/v1/sessions/:id/runs",
			setup: func(a *webtest.API) (string, any) {
				id, _ := run(a)
				return "/api/v1/sessions/" + id + "/runs", nil
			},
			want: statuses(http.StatusOK, people, []caller{asOwnAgent})},
		{method: http.MethodGet, path: "/api/v1/runs/:id",
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r, nil
			},
			want: statuses(http.StatusOK, people, []caller{asOwnAgent})},
		{method: http.MethodPatch, path: "/api/v1/runs/:id", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r, map[string]any{"status": "complete"}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/asks", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r + "/asks", map[string]any{"prompt": "save this reading?",
					"options": map[string]string{"1": "Yes", "2": "No"}}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/tool-calls", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r + "/tool-calls", map[string]any{"server": "claude-code", "tool": "Read",
					"paths": []string{"web/app.js"}}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/breaches", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r + "/breaches", map[string]any{"tool": "Bash", "files": []string{"db/migrations/x.sql"}}
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/transcript", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, r := run(a)
				return "/api/v1/runs/" + r + "/transcript", map[string]any{"calls": []map[string]any{
					{"tool_use_id": "toolu_1", "tool": "Bash", "at": "2026-12-01T12:00:00Z", "paths": []string{"out.txt"}}}}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/asks/:id/answer", writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, ask := parked(a)
				return "/api/v1/asks/" + ask + "/answer", map[string]any{"option": "1"}
			},
			want: statuses(http.StatusOK, leads)},
		// MCP: an agent key initializes; a person's token is refused.
		{method: http.MethodPost, path: "/mcp", header: mcpHeader,
			setup: func(*webtest.API) (string, any) {
				return "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
					"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
					"clientInfo": map[string]any{"name": "route-table", "version": "1"}}}
			},
			want: statuses(http.StatusOK, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/tools",
			setup: func(*webtest.API) (string, any) { return "/api/v1/tools", nil },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPut, path: "/api/v1/tools", writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/api/v1/tools", map[string]any{"server": "route-table", "tool": fmt.Sprintf("tool-%d", slugs),
					"side_effecting": false}
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPut, path: "/api/v1/tools/:server/:tool", writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return fmt.Sprintf("/api/v1/tools/route-table/put-%d", slugs), map[string]any{"side_effecting": true}
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/webhooks",
			setup: func(*webtest.API) (string, any) { return "/api/v1/webhooks", nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/webhooks", writes: true,
			setup: func(*webtest.API) (string, any) {
				return "/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/route-table",
					"secret": "route-table-signing-secret", "events": []string{"hard_stop"}}
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodDelete, path: "/api/v1/webhooks/:id", writes: true,
			setup: func(a *webtest.API) (string, any) { return fmt.Sprintf("/api/v1/webhooks/%d", webhook(a)), nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		// A test notification: admins only; it is recorded in the admin
		// activity.
		{method: http.MethodPost, path: "/api/v1/webhooks/:id/test", writes: true,
			setup: func(a *webtest.API) (string, any) { return fmt.Sprintf("/api/v1/webhooks/%d/test", reachable(a)), nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		// The admin activity: admins only; reading writes nothing.
		// The activity record: every person; the admin route, admins only;
		// reading writes nothing.
		{method: http.MethodGet, path: "/api/v1/activity",
			setup: func(*webtest.API) (string, any) {
				return "/api/v1/activity?limit=5&kind=policy&since=2026-01-01T00:00:00Z", nil
			},
			want: statuses(http.StatusOK, people)},
		{method: http.MethodGet, path: "/api/v1/admin/activity",
			setup: func(*webtest.API) (string, any) { return "/api/v1/admin/activity?limit=5&action=policy", nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		// Credentials: a person lists and revokes their own tokens (here
		// the lead's), an admin anyone's; agent keys are an admin's.
		{method: http.MethodGet, path: "/api/v1/tokens",
			setup: func(*webtest.API) (string, any) { return "/api/v1/tokens", nil },
			want:  statuses(http.StatusOK, people)},
		{method: http.MethodDelete, path: "/api/v1/tokens/:id", writes: true,
			setup: func(a *webtest.API) (string, any) { return fmt.Sprintf("/api/v1/tokens/%d", leadToken(a)), nil },
			want:  statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/keys",
			setup: func(*webtest.API) (string, any) { return "/api/v1/keys", nil },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodDelete, path: "/api/v1/keys/:id", writes: true,
			setup: func(a *webtest.API) (string, any) {
				key, _ := a.Kit.Agent()
				return fmt.Sprintf("/api/v1/keys/%d", key.KeyID), nil
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/tool-calls/check",
			setup: func(a *webtest.API) (string, any) {
				id, r := run(a)
				return "/api/v1/sessions/" + id + "/tool-calls/check", map[string]any{"tool": "Edit",
					"input": map[string]any{"file_path": "web/app.js"}, "run": r}
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},

		// The assets.
		{method: http.MethodGet, path: "/static/*", public: true, page: true,
			setup: func(*webtest.API) (string, any) { return "/static/htmx.min.js", nil },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodGet, path: "/favicon.ico", public: true, page: true,
			setup: func(*webtest.API) (string, any) { return "/favicon.ico", nil },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},

		// The MCP server's tools and resources, each through POST /mcp.
		mcpTool("open_session", true, "", func(a *webtest.API) map[string]any {
			return map[string]any{"mission": a.Kit.Mission(a.Lead, false), "title": "matrix"}
		}),
		mcpTool("brief", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a)}
		}),
		mcpTool("open_decision", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a), "title": "Schema", "question": "Drop it?"}
		}),
		mcpTool("propose_plan", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": a.Session(true), "summary": "read, then change"}
		}),
		mcpTool("report_change", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a), "files": []map[string]string{{"path": "web/app.go", "content": "package web\n"}}}
		}),
		mcpTool("report_event", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a), "name": "user.message.created"}
		}),
		mcpTool("start_run", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a), "name": "matrix"}
		}),
		mcpTool("ask", true, "forbidden", func(a *webtest.API) map[string]any {
			_, r := run(a)
			return map[string]any{"run": r, "prompt": "save this reading?", "options": map[string]string{"1": "Yes", "2": "No"}}
		}),
		mcpTool("record_tool_call", true, "forbidden", func(a *webtest.API) map[string]any {
			_, r := run(a)
			return map[string]any{"run": r, "server": "claude-code", "tool": "Read", "paths": []string{"web/app.js"}}
		}),
		mcpTool("finish_run", true, "forbidden", func(a *webtest.API) map[string]any {
			_, r := run(a)
			return map[string]any{"run": r, "status": "complete"}
		}),
		mcpTool("report_evidence", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a), "kind": "tests", "passed": true}
		}),
		mcpTool("complete", true, "forbidden", func(a *webtest.API) map[string]any {
			return map[string]any{"session": plainSession(a)}
		}),
		mcpResource(mcp.ProtocolURI, "", func(*webtest.API) string { return mcp.ProtocolURI }),
		mcpResource(mcp.BriefTemplate, "forbidden", func(a *webtest.API) string {
			return "madebook://sessions/" + plainSession(a) + "/brief"
		}),

		// The console. People sign in; a key is not a browser session, so
		// the agents are sent to sign in like the anonymous caller.
		{method: http.MethodGet, path: "/login", public: true, console: true,
			setup: func(*webtest.API) (string, any) { return "/login", nil },
			want: map[caller]int{asAnonymous: http.StatusOK, asViewer: http.StatusSeeOther, asLead: http.StatusSeeOther,
				asAdmin: http.StatusSeeOther, asOwnAgent: http.StatusOK, asOtherAgent: http.StatusOK}},
		{method: http.MethodPost, path: "/login", public: true, console: true, want: anyoneIn, writes: true, // a new browser session
			setup: func(a *webtest.API) (string, any) {
				return "/login", url.Values{"email": {a.Lead.Email}, "password": {"password-123"}}
			}},
		{method: http.MethodPost, path: "/logout", console: true, want: anyoneIn, writes: true, signsOut: true,
			setup: func(*webtest.API) (string, any) { return "/logout", url.Values{} }},
		{method: http.MethodPost, path: "/logout/everywhere", console: true, want: anyoneIn, writes: true, signsOut: true,
			setup: func(*webtest.API) (string, any) { return "/logout/everywhere", url.Values{} }},

		// Attention.
		{method: http.MethodGet, path: "/", console: true, want: readPage, setup: page("/")},
		{method: http.MethodGet, path: "/attention/queue", console: true, want: readPage, setup: page("/attention/queue")},
		{method: http.MethodGet, path: "/attention/count", console: true, want: readPage, setup: page("/attention/count")},
		{method: http.MethodGet, path: "/attention/stream", console: true, want: readPage, stream: true,
			setup: page("/attention/stream?since=0")},
		{method: http.MethodGet, path: "/attention/items/:kind/:session/:ref", console: true, want: readPage,
			setup: func(a *webtest.API) (string, any) {
				id, ref := decision(a)
				return "/attention/items/decision/" + id + "/" + ref, nil
			}},
		{method: http.MethodGet, path: "/attention/items/:kind/:session/:ref/outcome", console: true, want: readPage,
			setup: func(a *webtest.API) (string, any) {
				id, ref := decision(a)
				if _, err := a.Kit.Gov.Decisions.Resolve(ctx, a.Lead, ref, "Keep it.", "Archive instead."); err != nil {
					a.T.Fatal(err)
				}
				return "/attention/items/decision/" + id + "/" + ref + "/outcome", nil
			}},
		{method: http.MethodPost, path: "/attention/items/:kind/:session/:ref/claim", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				return "/attention/items/paused/" + id + "/" + id + "/claim", url.Values{}
			}},
		{method: http.MethodPost, path: "/attention/items/:kind/:session/:ref/unclaim", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				if _, err := a.Kit.Gov.Attention.Claim(ctx, a.Lead, governance.ItemKey{Kind: governance.ItemPaused, Session: id, Ref: id}, false); err != nil {
					a.T.Fatal(err)
				}
				return "/attention/items/paused/" + id + "/" + id + "/unclaim", url.Values{}
			}}, // the claimer, and an admin
		{method: http.MethodPost, path: "/attention/items/:kind/:session/:ref/snooze", console: true, want: anyoneIn, writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				return "/attention/items/paused/" + id + "/" + id + "/snooze", url.Values{"for": {"1h"}}
			}},
		{method: http.MethodPost, path: "/attention/items/:kind/:session/:ref/unsnooze", console: true, want: anyoneIn, writes: true,
			setup: func(a *webtest.API) (string, any) {
				id := paused(a)
				for _, p := range []auth.Actor{a.Viewer, a.Lead, a.Admin} {
					if _, err := a.Kit.Gov.Attention.Snooze(ctx, p, governance.ItemKey{Kind: governance.ItemPaused, Session: id, Ref: id}, time.Hour); err != nil {
						a.T.Fatal(err)
					}
				}
				return "/attention/items/paused/" + id + "/" + id + "/unsnooze", url.Values{}
			}},
		{method: http.MethodPost, path: "/sessions/:id/tasks/:task/acknowledge", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + blockedTask(a) + "/tasks/t1/acknowledge", url.Values{}
			}},
		{method: http.MethodPost, path: "/sessions/:id/tasks/:task/remediation", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + blockedTask(a) + "/tasks/t1/remediation", url.Values{"instruction": {"Split it."}}
			}},
		{method: http.MethodPost, path: "/decisions/resolve", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, ref := decision(a)
				return "/decisions/resolve", url.Values{"refs": {ref}, "resolution": {"Keep it."}, "instruction": {"Archive instead."}}
			}},
		{method: http.MethodPost, path: "/decisions/:ref/resolve", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, ref := decision(a)
				return "/decisions/" + ref + "/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive instead."}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/approve", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + proposed(a) + "/plan/approve", url.Values{"note": {"Go ahead."}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/reject", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + proposed(a) + "/plan/reject", url.Values{"note": {"Too broad."}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/plan/modify", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + proposed(a) + "/plan/modify", url.Values{"note": {"Gate the migration behind a stopping point."}}
			}},
		{method: http.MethodPost, path: "/permissions/:id/answer", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, prompt := prompted(a)
				return "/permissions/" + prompt + "/answer", url.Values{"option": {"2"}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/pause", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + plainSession(a) + "/pause", url.Values{"reason": {"Stop touching billing."}}
			}},
		{method: http.MethodPost, path: "/sessions/:id/resume", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) { return "/sessions/" + paused(a) + "/resume", url.Values{} }},
		{method: http.MethodPost, path: "/asks/:id/answer", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				_, ask := parked(a)
				return "/asks/" + ask + "/answer", url.Values{"option": {"1"}}
			}},

		// Sessions.
		{method: http.MethodGet, path: "/sessions", console: true, want: readPage, setup: page("/sessions")},
		{method: http.MethodGet, path: "/sessions/:id", console: true, want: readPage,
			setup: func(a *webtest.API) (string, any) { return "/sessions/" + plainSession(a), nil }},
		{method: http.MethodPost, path: "/sessions/:id/remediations", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/sessions/" + plainSession(a) + "/remediations", url.Values{"severity": {"required"},
					"instruction": {"Add a test."}, "files": {"web/x.go\nweb/y.go"}}
			}},
		{method: http.MethodPost, path: "/remediations/:id/close", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				r, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, plainSession(a), governance.RemediationInput{Severity: "advisory",
					Instruction: "Tidy up."})
				if err != nil {
					a.T.Fatal(err)
				}
				return fmt.Sprintf("/remediations/%d/close", r.ID), url.Values{"note": {"Done."}}
			}},
		{method: http.MethodPost, path: "/violations/:id/clear", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				id, v := violated(a)
				return fmt.Sprintf("/violations/%d/clear", v), url.Values{"as": {"fixed"}, "note": {"Rotated the key."},
					"back": {"/sessions/" + id}}
			}},

		// Missions.
		{method: http.MethodGet, path: "/missions", console: true, want: readPage, setup: page("/missions")},
		{method: http.MethodGet, path: "/missions/new", console: true, want: leadPage, setup: page("/missions/new")},
		{method: http.MethodPost, path: "/missions", console: true, want: leadAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/missions", url.Values{"slug": {fmt.Sprintf("matrix-%d", slugs)}, "title": {"Roles"}, "text": {"Check every role."}}
			}},
		{method: http.MethodGet, path: "/missions/:slug/edit", console: true, want: leadPage,
			setup: func(a *webtest.API) (string, any) { return "/missions/" + a.Kit.Mission(a.Lead, false) + "/edit", nil }},
		{method: http.MethodPost, path: "/missions/:slug", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return "/missions/" + a.Kit.Mission(a.Lead, false), url.Values{"title": {"Renamed"}, "text": {"Do the other thing."}}
			}},
		{method: http.MethodPost, path: "/missions/changes/:id", console: true, want: leadAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/missions/changes/%d", pendingChange(a)), url.Values{"do": {"approve"}, "note": {"Agreed."}}
			}},
		{method: http.MethodGet, path: "/activity", console: true, want: readPage, setup: page("/activity?kind=policy&since=2026-01-01")},

		// Audit.
		{method: http.MethodGet, path: "/audit", console: true, want: readPage, setup: page("/audit")},
		{method: http.MethodGet, path: "/audit/:report", console: true, want: readPage, setup: page("/audit/premature-side-effects")},

		// Administration.
		{method: http.MethodGet, path: "/admin/users", console: true, want: adminPage, setup: page("/admin/users")},
		{method: http.MethodPost, path: "/admin/users", console: true, want: adminAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/users", url.Values{"email": {fmt.Sprintf("added%d@example.com", slugs)}, "role": {"viewer"},
					"password": {"long-enough"}}
			}},
		// The users an admin changes are fresh ones: the matrix's people
		// keep their roles.
		{method: http.MethodPost, path: "/admin/users/:id/role", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				target, _ := a.Kit.Person(auth.Viewer)
				return fmt.Sprintf("/admin/users/%d/role", target.UserID), url.Values{"role": {"lead"}}
			}},
		{method: http.MethodPost, path: "/admin/users/:id/disable", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				target, _ := a.Kit.Person(auth.Viewer)
				return fmt.Sprintf("/admin/users/%d/disable", target.UserID), url.Values{}
			}},
		{method: http.MethodPost, path: "/admin/users/:id/enable", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				target, _ := a.Kit.Person(auth.Viewer)
				if _, err := a.Kit.Auth.SetDisabled(ctx, a.Admin, target.UserID, true); err != nil {
					a.T.Fatal(err)
				}
				return fmt.Sprintf("/admin/users/%d/enable", target.UserID), url.Values{}
			}},
		{method: http.MethodGet, path: "/admin/keys", console: true, want: adminPage, setup: page("/admin/keys")},
		{method: http.MethodPost, path: "/admin/keys", console: true, writes: true,
			want: signedIn(http.StatusForbidden, http.StatusForbidden, http.StatusCreated),
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/keys", url.Values{"name": {fmt.Sprintf("matrix-key-%d", slugs)}}
			}},
		{method: http.MethodPost, path: "/admin/keys/:id/revoke", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				key, _ := a.Kit.Agent()
				return fmt.Sprintf("/admin/keys/%d/revoke", key.KeyID), url.Values{}
			}},
		{method: http.MethodGet, path: "/admin/tokens", console: true, want: adminPage, setup: page("/admin/tokens")},
		{method: http.MethodPost, path: "/admin/tokens/:id/revoke", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/tokens/%d/revoke", leadToken(a)), url.Values{}
			}},
		{method: http.MethodGet, path: "/admin/policies", console: true, want: adminPage, setup: page("/admin/policies")},
		{method: http.MethodPost, path: "/admin/policies", console: true, want: adminAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/policies", url.Values{"name": {fmt.Sprintf("No TODO %d", slugs)}, "severity": {"low"},
					"kind": {"content_regex"}, "pattern": {"TODO"}, "action": {"violation"}}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/disable", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/policies/%d/disable", routePolicy(a)), url.Values{}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/enable", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/policies/%d/enable", disabledPolicy(a)), url.Values{}
			}},
		{method: http.MethodPost, path: "/admin/policies/:id/delete", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/policies/%d/delete", routePolicy(a)), url.Values{}
			}},
		{method: http.MethodGet, path: "/admin/rules", console: true, want: adminPage, setup: page("/admin/rules")},
		{method: http.MethodPost, path: "/admin/rules", console: true, want: adminAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/rules", url.Values{"concern": {fmt.Sprintf("server state %d", slugs)}, "chosen": {"React Query"},
					"departures": {"redux-toolkit"}, "support": {"31"}, "total": {"34"}, "enforced": {"true"}}
			}},
		{method: http.MethodGet, path: "/admin/tools", console: true, want: adminPage, setup: page("/admin/tools")},
		{method: http.MethodPost, path: "/admin/tools", console: true, want: adminAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/tools", url.Values{"server": {"github"}, "tool": {fmt.Sprintf("read-%d", slugs)}, "side_effecting": {"false"}}
			}},
		{method: http.MethodPost, path: "/admin/tools/delete", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				slugs++
				tool := fmt.Sprintf("write-%d", slugs)
				if _, err := a.Kit.Ledger.SetTool(ctx, a.Admin, "github", tool, ledger.ToolInput{SideEffecting: true}); err != nil {
					a.T.Fatal(err)
				}
				return "/admin/tools/delete", url.Values{"server": {"github"}, "tool": {tool}}
			}},
		{method: http.MethodGet, path: "/admin/activity", console: true, want: adminPage,
			setup: page("/admin/activity?action=policy&limit=10")},
		{method: http.MethodGet, path: "/admin/webhooks", console: true, want: adminPage, setup: page("/admin/webhooks")},
		{method: http.MethodPost, path: "/admin/webhooks", console: true, want: adminAction, writes: true,
			setup: func(*webtest.API) (string, any) {
				slugs++
				return "/admin/webhooks", url.Values{"url": {fmt.Sprintf("https://hooks.example.com/hook-%d", slugs)},
					"secret": {"console-signing-secret"}, "events": {"hard_stop", "decision.expired"}}
			}},
		{method: http.MethodPost, path: "/admin/webhooks/:id/remove", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/webhooks/%d/remove", webhook(a)), url.Values{}
			}},
		{method: http.MethodPost, path: "/admin/webhooks/:id/test", console: true, want: adminAction, writes: true,
			setup: func(a *webtest.API) (string, any) {
				return fmt.Sprintf("/admin/webhooks/%d/test", reachable(a)), url.Values{}
			}},
	}
}

// page is the setup of a console page that needs nothing.
func page(path string) func(*webtest.API) (string, any) {
	return func(*webtest.API) (string, any) { return path, nil }
}

// TestTheAuthorizationMatrix sends every row of the matrix as every
// caller: each gets the status (and, over MCP, the tool error) its cell
// says; a refusal (an error status, a tool error, or a console request
// sent to sign in) leaves every table as it was; a successful call writes
// when its row says it does and nothing otherwise.
func TestTheAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // reachable's receiver is on 127.0.0.1
	parent := t
	for _, rc := range routeTable() {
		cs := callers
		if rc.console {
			cs = append(slices.Clone(callers), asAdminToken)
		}
		for _, c := range cs {
			want := rc.status(c)
			if c == asAdminToken {
				want = rc.status(asOwnAgent)
			}
			outcome := fmt.Sprint(want)
			if code := rc.toolError[c]; code != "" {
				outcome += " with the tool error " + code
			}
			t.Run(fmt.Sprintf("%s as %s is %s", rc.name(), c, outcome), func(t *testing.T) {
				a.T = t
				defer func() { a.T = parent }()
				path, body := rc.setup(a)
				var b *webtest.Client
				if rc.console {
					b = webtest.NewClient(t, a.Srv.URL)
					if who := person(a, c); who.Email != "" {
						b = webtest.ConsoleAs(t, a.Srv.URL, who.Email)
					}
				}
				before := dump(a)
				var r webtest.Response
				if rc.console {
					bearer := ""
					if c == asOwnAgent || c == asOtherAgent || c == asAdminToken {
						bearer = tokenOf(a, c)
					}
					form, _ := body.(url.Values)
					r = browse(t, b, rc.method, path, form, bearer, rc.stream)
				} else {
					r = a.DoWith(rc.method, path, tokenOf(a, c), body, rc.header)
				}
				if r.Status != want {
					t.Fatalf("status %d, want %d; Location %q; body %s", r.Status, want, r.Header.Get("Location"), webtest.Short(r.Body))
				}
				refused := r.Status >= 300
				switch {
				case rc.mcp != "" && r.Status == http.StatusOK:
					got := mcpErrorCode(t, r.Body)
					if got != rc.toolError[c] {
						t.Fatalf("MCP error %q, want %q: %s", got, rc.toolError[c], webtest.Short(r.Body))
					}
					refused = got != ""
				case rc.console:
					refused = r.Status >= 400 || (person(a, c).Email == "" && !rc.public)
					checkConsoleAnswer(t, rc, c, path, r, refused, b)
				case !rc.page:
					webtest.CheckJSONContentType(t, r)
				}
				if !rc.console && r.Status >= 300 {
					if !rc.page {
						webtest.CheckErrorShape(t, r)
					}
					if loc := r.Header.Get("Location"); r.Status < 400 && !strings.HasPrefix(loc, "/login") {
						t.Errorf("redirect to %q, want the sign-in page", loc)
					}
				}
				changed := dumpDiff(before, dump(a))
				switch {
				case refused && changed != "":
					t.Errorf("a refused call wrote:\n%s", changed)
				case !refused && !rc.writes && changed != "":
					t.Errorf("a call that must not write wrote:\n%s", changed)
				case !refused && rc.writes && changed == "":
					t.Errorf("a successful %s changed nothing", rc.name())
				}
			})
		}
	}
}

// checkConsoleAnswer checks a console answer beyond its status: the
// security headers on every answer; a caller who is not signed in sent
// to sign in (and back to the page); a refusal a page; a success leading
// to a page the caller may see.
func checkConsoleAnswer(t *testing.T, rc routeCase, c caller, path string, r webtest.Response, refused bool, b *webtest.Client) {
	t.Helper()
	for h, v := range map[string]string{"Content-Security-Policy": web.ContentSecurityPolicy,
		"X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "X-Content-Type-Options": "nosniff"} {
		if got := r.Header.Get(h); got != v {
			t.Errorf("%s %q, want %q", h, got, v)
		}
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" && !(rc.stream && cc == "no-cache") {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	loc := r.Header.Get("Location")
	ct := r.Header.Get("Content-Type")
	switch {
	case refused && r.Status < 400:
		to := "/login"
		if rc.method == http.MethodGet && path != "/" {
			to += "?next=" + url.QueryEscape(path)
		}
		if loc != to {
			t.Errorf("sent to %q, want %q", loc, to)
		}
	case refused:
		if !strings.HasPrefix(ct, "text/html") {
			t.Errorf("a refusal for a browser is %q, want an HTML page", ct)
		}
	case r.Status == http.StatusSeeOther && rc.signsOut:
		if loc != "/login" {
			t.Errorf("signed out to %q, want /login", loc)
		}
	case r.Status == http.StatusSeeOther:
		if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/login") {
			t.Errorf("a success redirects to %q, want a console page", loc)
		}
		if next, body := b.Get(loc); next.StatusCode != http.StatusOK {
			t.Errorf("following the redirect to %s: %d %s", loc, next.StatusCode, webtest.Short([]byte(body)))
		}
	case rc.stream:
		if ct != "text/event-stream" || !strings.Contains(string(r.Body), "event: queue\ndata: ") {
			t.Errorf("Content-Type %q, first event %q: want a stream saying the queue changed since ?since=0", ct, r.Body)
		}
	default:
		if !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q, want text/html", ct)
		}
	}
}

// browse sends a console request from browser b as a browser does (a form
// with b's CSRF token, when it has one), with the bearer secret when not
// "". A stream is read up to its first event, then hung up.
func browse(t *testing.T, b *webtest.Client, method, path string, form url.Values, bearer string, stream bool) webtest.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var body io.Reader = http.NoBody
	if method != http.MethodGet {
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		if b.CSRF != "" {
			f.Set("csrf", b.CSRF)
		}
		body = strings.NewReader(f.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, b.Base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if !stream {
		res, got := b.Do(req)
		return webtest.Response{Status: res.StatusCode, Header: res.Header, Body: []byte(got)}
	}
	res, err := b.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		got, _ := io.ReadAll(res.Body)
		return webtest.Response{Status: res.StatusCode, Header: res.Header, Body: got}
	}
	var got strings.Builder
	rd := bufio.NewReader(res.Body)
	for !strings.Contains(got.String(), "event: ") || !strings.HasSuffix(got.String(), "\n\n") {
		line, err := rd.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, got.String())
		}
	}
	return webtest.Response{Status: res.StatusCode, Header: res.Header, Body: []byte(got.String())}
}

// mcpErrorCode is the code of the error an MCP answer carries: a tool
// error's {"error":{"code"}} (its structured content), or the same body
// as a JSON-RPC error's data; "" for a result.
func mcpErrorCode(t *testing.T, body []byte) string {
	t.Helper()
	var env struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct{ Code string } `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code int64 `json:"code"`
			Data struct {
				Error struct{ Code string } `json:"error"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("the answer is not JSON-RPC: %v: %s", err, webtest.Short(body))
	}
	switch {
	case env.Error != nil && env.Error.Data.Error.Code != "":
		return env.Error.Data.Error.Code
	case env.Error != nil:
		return fmt.Sprintf("JSON-RPC error %d", env.Error.Code)
	case env.Result == nil:
		t.Fatalf("neither a result nor an error: %s", webtest.Short(body))
	case env.Result.IsError:
		if env.Result.StructuredContent.Error.Code == "" {
			return "a tool error without a code"
		}
		return env.Result.StructuredContent.Error.Code
	}
	return ""
}

// dump is every row of every table, with the last-brief times a brief
// keeps in memory (serve writes them in batches) written first: a brief
// stamps its session, and a refused one must not.
func dump(a *webtest.API) map[string][]string {
	a.T.Helper()
	if err := a.Kit.Gov.Briefs.FlushTimes(context.Background()); err != nil {
		a.T.Fatal(err)
	}
	return a.Kit.Dump()
}

// dumpDiff says which rows of which tables differ between two dumps of
// the database; "" when none do.
func dumpDiff(before, after map[string][]string) string {
	if reflect.DeepEqual(before, after) {
		return ""
	}
	var tables []string
	for name := range after {
		tables = append(tables, name)
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			tables = append(tables, name)
		}
	}
	sort.Strings(tables)
	var b strings.Builder
	for _, name := range tables {
		was, is := before[name], after[name]
		if slices.Equal(was, is) {
			continue
		}
		for _, row := range was {
			if !slices.Contains(is, row) {
				fmt.Fprintf(&b, "%s: - %s\n", name, row)
			}
		}
		for _, row := range is {
			if !slices.Contains(was, row) {
				fmt.Fprintf(&b, "%s: + %s\n", name, row)
			}
		}
	}
	return b.String()
}

// TestTheAuthorizationMatrixCoversEverySurface fails when routes.go
// registers a route the matrix has no row for, when the MCP server offers
// a tool or a resource without one, or when the matrix names one that is
// gone: adding any of them without its row breaks the tests.
func TestTheAuthorizationMatrixCoversEverySurface(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	var tested, offered, listed []string
	for _, rc := range routeTable() {
		if rc.mcp != "" {
			listed = append(listed, rc.mcp)
			continue
		}
		tested = append(tested, rc.method+" "+rc.path)
	}
	webtest.RoutesCovered(t, a.E.Routes(), nil, "routeTable (web/authz_matrix_test.go)", tested)

	list := func(method, field string) []map[string]any {
		r := a.DoWith(http.MethodPost, mcp.Path, a.AgentKey, rpc(method, map[string]any{}), mcpHeader)
		var env struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s: %d %v %s", method, r.Status, err, webtest.Short(r.Body))
		}
		var items []map[string]any
		if err := json.Unmarshal(env.Result[field], &items); err != nil {
			t.Fatalf("%s: %v %s", method, err, webtest.Short(r.Body))
		}
		return items
	}
	for _, tool := range list("tools/list", "tools") {
		offered = append(offered, fmt.Sprint("tool ", tool["name"]))
	}
	for _, res := range list("resources/list", "resources") {
		offered = append(offered, fmt.Sprint("resource ", res["uri"]))
	}
	for _, tmpl := range list("resources/templates/list", "resourceTemplates") {
		offered = append(offered, fmt.Sprint("resource ", tmpl["uriTemplate"]))
	}
	slices.Sort(offered)
	slices.Sort(listed)
	if len(offered) < 10 {
		t.Fatalf("the MCP server offers only %v", offered)
	}
	if !slices.Equal(offered, slices.Compact(slices.Clone(listed))) || len(listed) != len(offered) {
		t.Errorf("the MCP server offers %v;\nthe matrix lists %v: give every tool and resource one row", offered, listed)
	}
}
