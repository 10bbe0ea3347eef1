package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/internal/testkit/apicheck"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/api"
	"github.com/madebook/madebook/web/webtest"
)

// caller is who sends a request in the route table.
type caller int

const (
	asAnonymous caller = iota
	asViewer
	asLead
	asAdmin
	asOwnAgent   // the agent key that opened the session
	asOtherAgent // another agent key
)

var callers = []caller{asAnonymous, asViewer, asLead, asAdmin, asOwnAgent, asOtherAgent}

func (c caller) String() string {
	return [...]string{"anonymous", "viewer", "lead", "admin", "the session's agent", "another agent"}[c]
}

func tokenOf(a *webtest.API, c caller) string {
	return [...]string{"", a.ViewerTok, a.LeadTok, a.AdminTok, a.AgentKey, a.OtherKey}[c]
}

// routeCase is one route of routes.go: how to build a fresh request to it,
// and the status every caller gets.
type routeCase struct {
	method, path string // as registered on echo
	// setup creates what the request needs and returns the concrete path,
	// the body, and the session whose state the call may change ("" if none).
	setup func(a *webtest.API) (path string, body any, session string)
	// want is the status per caller; callers not listed get 403, except
	// anonymous callers, who always get 401 on an authenticated route.
	want map[caller]int
	// public routes answer anonymous callers.
	public bool
	// writes says a successful call changes what snapshot sees.
	writes bool
	// page marks a console or asset route: its answers are not JSON, and
	// a redirect from it must lead to the sign-in page.
	page bool
	// header is sent besides the bearer (nil: none).
	header http.Header
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

func routeTable() []routeCase {
	ctx := context.Background()
	plainSession := func(a *webtest.API) string { return a.Session(false) }
	policies := 0
	// routePolicy defines a policy for a route to disable, enable or delete.
	// Policies are not in the snapshot: those routes' writes stays false.
	routePolicy := func(a *webtest.API) int64 {
		policies++
		p, err := a.Kit.Gov.Policies.Create(ctx, a.Admin, governance.PolicyInput{Name: fmt.Sprintf("Route table %d", policies),
			Severity: "low", Kind: "dependency", Pattern: fmt.Sprintf("route-table-%d", policies)})
		if err != nil {
			a.T.Fatal(err)
		}
		return p.ID
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
			setup: func(*webtest.API) (string, any, string) { return "/healthz", nil, "" },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodGet, path: "/metrics", page: true, // Prometheus text, not JSON
			setup: func(*webtest.API) (string, any, string) { return "/metrics", nil, "" },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/openapi.json", public: true,
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/openapi.json", nil, "" },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodPost, path: "/brief", writes: true, // last_brief_at
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/brief", map[string]string{"session": id}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/hooks/claude-code", writes: true, // opens the Claude session's session
			setup: func(a *webtest.API) (string, any, string) {
				slugs++
				return "/hooks/claude-code?mission=" + a.Kit.Mission(a.Lead, false), map[string]any{
					"session_id": fmt.Sprintf("route-table-claude-%d", slugs), "hook_event_name": "SessionStart", "source": "startup",
					"cwd": "/home/dev/billing", "transcript_path": "/home/dev/.claude/t.jsonl", "permission_mode": "default"}, ""
			},
			want: statuses(http.StatusOK, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/missions",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/missions", nil, "" },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/missions", writes: true,
			setup: func(*webtest.API) (string, any, string) {
				slugs++
				return "/api/v1/missions", map[string]any{"slug": fmt.Sprintf("route-table-%d", slugs), "title": "T"}, ""
			},
			want: statuses(http.StatusCreated, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				return "/api/v1/sessions", map[string]any{"mission": a.Kit.Mission(a.Lead, false), "title": "work"}, ""
			},
			want: statuses(http.StatusCreated, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/sessions/:id",
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id, nil, id
			},
			want: statuses(http.StatusOK, people, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/decisions", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/decisions", map[string]any{"title": "Schema", "question": "Drop it?",
					"blocked_scope": []string{"db/"}, "allowed_scope": []string{"web/"}}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := a.Session(true)
				return "/api/v1/sessions/" + id + "/plan", map[string]any{"summary": "read, then change"}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/approve", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/approve", map[string]any{"note": "ok"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/reject", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/reject", map[string]any{"note": "too broad"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/plan/modify", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := proposed(a)
				return "/api/v1/sessions/" + id + "/plan/modify", map[string]any{"instruction": "gate the migration"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/permissions/:id/answer", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, prompt := prompted(a)
				return "/api/v1/permissions/" + prompt + "/answer", map[string]any{"option": "1"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/pause", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/pause", map[string]any{"reason": "wait"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/resume", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				if _, err := a.Kit.Gov.Sessions.Pause(ctx, a.Lead, id, "wait"); err != nil {
					a.T.Fatal(err)
				}
				return "/api/v1/sessions/" + id + "/resume", map[string]any{}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/remediations", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/remediations", map[string]any{"severity": "required",
					"instruction": "Add a test.", "files": []string{"web/x.go"}}, id
			},
			want: statuses(http.StatusCreated, leads)},
		{method: http.MethodPost, path: "/api/v1/remediations/:id/close", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				r, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, id, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy up."})
				if err != nil {
					a.T.Fatal(err)
				}
				return fmt.Sprintf("/api/v1/remediations/%d/close", r.ID), map[string]any{"note": "done"}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/decisions/:ref/resolve", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, ref := decision(a)
				return "/api/v1/decisions/" + ref + "/resolve", map[string]any{"resolution": "Keep it.",
					"instruction": "Archive instead."}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/changes", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/changes", map[string]any{"files": []map[string]string{
					{"path": "web/app.go", "content": "package web\n"}}}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/evidence", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/evidence", map[string]any{"kind": "tests", "passed": true}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/complete", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/complete", map[string]any{}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/events", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/events", map[string]any{"name": "user.message.created"}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodGet, path: "/api/v1/policies",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/policies", nil, "" },
			want:  statuses(http.StatusOK, everyone)},
		// Policies and rules are not in the snapshot: writes stays false.
		{method: http.MethodPost, path: "/api/v1/policies",
			setup: func(*webtest.API) (string, any, string) {
				slugs++
				return "/api/v1/policies", map[string]any{"name": fmt.Sprintf("No TODO %d", slugs), "severity": "low",
					"kind": "content_regex", "pattern": `TODO`}, ""
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/policies/:id/disable",
			setup: func(a *webtest.API) (string, any, string) {
				return fmt.Sprintf("/api/v1/policies/%d/disable", routePolicy(a)), map[string]any{}, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/policies/:id/enable",
			setup: func(a *webtest.API) (string, any, string) {
				return fmt.Sprintf("/api/v1/policies/%d/enable", routePolicy(a)), nil, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodDelete, path: "/api/v1/policies/:id",
			setup: func(a *webtest.API) (string, any, string) {
				return fmt.Sprintf("/api/v1/policies/%d", routePolicy(a)), nil, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/rules",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/rules", nil, "" },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPost, path: "/api/v1/rules",
			setup: func(*webtest.API) (string, any, string) {
				slugs++
				return "/api/v1/rules", map[string]any{"concern": fmt.Sprintf("server state %d", slugs), "chosen": "react-query",
					"departures": []string{"redux-toolkit"}, "support": 31, "total": 34, "enforced": true}, ""
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodGet, path: "/api/v1/risk-gates",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/risk-gates", nil, "" },
			want:  statuses(http.StatusOK, everyone)},
		// Settings are not in the snapshot: writes stays false.
		{method: http.MethodPut, path: "/api/v1/risk-gates",
			setup: func(*webtest.API) (string, any, string) {
				return "/api/v1/risk-gates", map[string]any{"high": "a lead's review"}, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/violations/:id/clear", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, v := violated(a)
				return fmt.Sprintf("/api/v1/violations/%d/clear", v), map[string]any{"as": "fixed", "note": "Rotated the key."}, id
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/missions/:slug",
			setup: func(a *webtest.API) (string, any, string) {
				return "/api/v1/missions/" + a.Kit.Mission(a.Lead, false), nil, ""
			},
			want: statuses(http.StatusOK, everyone)},
		{method: http.MethodPatch, path: "/api/v1/missions/:slug", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				return "/api/v1/missions/" + a.Kit.Mission(a.Lead, false), map[string]any{"title": "Renamed"}, ""
			},
			want: statuses(http.StatusOK, leads)},
		{method: http.MethodGet, path: "/api/v1/audit/:report",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/audit/premature-side-effects", nil, "" },
			want:  statuses(http.StatusOK, people)},
		{method: http.MethodGet, path: "/api/v1/attention",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/attention", nil, "" },
			want:  statuses(http.StatusOK, people)},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/runs", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id := plainSession(a)
				return "/api/v1/sessions/" + id + "/runs", map[string]any{"name": "graph-ask-demo"}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPatch, path: "/api/v1/runs/:id", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, r := run(a)
				return "/api/v1/runs/" + r, map[string]any{"status": "complete"}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/asks", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, r := run(a)
				return "/api/v1/runs/" + r + "/asks", map[string]any{"prompt": "save this reading?",
					"options": map[string]string{"1": "Yes", "2": "No"}}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/runs/:id/tool-calls", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, r := run(a)
				return "/api/v1/runs/" + r + "/tool-calls", map[string]any{"server": "claude-code", "tool": "Read",
					"paths": []string{"web/app.js"}}, id
			},
			want: statuses(http.StatusCreated, []caller{asOwnAgent})},
		{method: http.MethodPost, path: "/api/v1/asks/:id/answer", writes: true,
			setup: func(a *webtest.API) (string, any, string) {
				id, ask := parked(a)
				return "/api/v1/asks/" + ask + "/answer", map[string]any{"option": "1"}, id
			},
			want: statuses(http.StatusOK, leads)},
		// MCP: an agent key initializes; a person's token is refused.
		{method: http.MethodPost, path: "/mcp",
			header: http.Header{"Accept": {"application/json, text/event-stream"}},
			setup: func(*webtest.API) (string, any, string) {
				return "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
					"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
					"clientInfo": map[string]any{"name": "route-table", "version": "1"}}}, ""
			},
			want: statuses(http.StatusOK, bothAgents)},
		{method: http.MethodGet, path: "/api/v1/tools",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/tools", nil, "" },
			want:  statuses(http.StatusOK, everyone)},
		{method: http.MethodPut, path: "/api/v1/tools", writes: true,
			setup: func(*webtest.API) (string, any, string) {
				slugs++
				return "/api/v1/tools", map[string]any{"server": "route-table", "tool": fmt.Sprintf("tool-%d", slugs),
					"side_effecting": false}, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPut, path: "/api/v1/tools/:server/:tool", writes: true,
			setup: func(*webtest.API) (string, any, string) {
				slugs++
				return fmt.Sprintf("/api/v1/tools/route-table/put-%d", slugs), map[string]any{"side_effecting": true}, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		// Webhook endpoints are not in the snapshot: writes stays false.
		{method: http.MethodGet, path: "/api/v1/webhooks",
			setup: func(*webtest.API) (string, any, string) { return "/api/v1/webhooks", nil, "" },
			want:  statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/webhooks",
			setup: func(*webtest.API) (string, any, string) {
				return "/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/route-table",
					"secret": "route-table-signing-secret", "events": []string{"hard_stop"}}, ""
			},
			want: statuses(http.StatusCreated, []caller{asAdmin})},
		{method: http.MethodDelete, path: "/api/v1/webhooks/:id",
			setup: func(a *webtest.API) (string, any, string) {
				w, err := a.Kit.Gov.Webhooks.Create(ctx, a.Admin, governance.WebhookInput{URL: "https://hooks.example.com/route-table",
					Secret: "route-table-signing-secret", Events: []string{"attention.created"}})
				if err != nil {
					a.T.Fatal(err)
				}
				return fmt.Sprintf("/api/v1/webhooks/%d", w.ID), nil, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		// The admin activity: admins only; reading writes nothing.
		{method: http.MethodGet, path: "/api/v1/admin/activity",
			setup: func(*webtest.API) (string, any, string) {
				return "/api/v1/admin/activity?limit=5&action=policy", nil, ""
			},
			want: statuses(http.StatusOK, []caller{asAdmin})},
		{method: http.MethodPost, path: "/api/v1/sessions/:id/tool-calls/check",
			setup: func(a *webtest.API) (string, any, string) {
				id, r := run(a)
				return "/api/v1/sessions/" + id + "/tool-calls/check", map[string]any{"tool": "Edit",
					"input": map[string]any{"file_path": "web/app.js"}, "run": r}, id
			},
			want: statuses(http.StatusOK, []caller{asOwnAgent})},

		// The console and its assets. A bearer secret is not a browser
		// session: it never opens the console, whatever its role (the
		// console's own tests sign in and cover its successes).
		{method: http.MethodGet, path: "/static/*", public: true, page: true,
			setup: func(*webtest.API) (string, any, string) { return "/static/htmx.min.js", nil, "" },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodGet, path: "/favicon.ico", public: true, page: true,
			setup: func(*webtest.API) (string, any, string) { return "/favicon.ico", nil, "" },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodGet, path: "/login", public: true, page: true,
			setup: func(*webtest.API) (string, any, string) { return "/login", nil, "" },
			want:  with(statuses(http.StatusOK, everyone), asAnonymous, http.StatusOK)},
		{method: http.MethodPost, path: "/login", public: true, page: true,
			setup: func(*webtest.API) (string, any, string) {
				// A new email each time: failed sign-ins are limited per account.
				slugs++
				return "/login", url.Values{"email": {fmt.Sprintf("nobody%d@example.com", slugs)}, "password": {"wrong-password"}}, ""
			},
			want: with(statuses(http.StatusUnauthorized, everyone), asAnonymous, http.StatusUnauthorized)},
		consoleOnly(http.MethodGet, "/", nil),
		consoleOnly(http.MethodGet, "/attention/queue", nil),
		consoleOnly(http.MethodGet, "/attention/count", nil),
		consoleOnly(http.MethodGet, "/attention/stream", nil),
		consoleOnly(http.MethodGet, "/attention/items/:kind/:session/:ref", func(a *webtest.API) (string, string) {
			id, ref := decision(a)
			return "/attention/items/decision/" + id + "/" + ref, id
		}),
		consoleOnly(http.MethodPost, "/logout", nil),
		consoleOnly(http.MethodPost, "/logout/everywhere", nil),
		consoleOnly(http.MethodPost, "/decisions/resolve", func(a *webtest.API) (string, string) {
			id, ref := decision(a)
			return "/decisions/resolve?ref=" + ref, id
		}),
		consoleOnly(http.MethodPost, "/decisions/:ref/resolve", func(a *webtest.API) (string, string) {
			id, ref := decision(a)
			return "/decisions/" + ref + "/resolve", id
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/plan/approve", func(a *webtest.API) (string, string) {
			id := proposed(a)
			return "/sessions/" + id + "/plan/approve", id
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/plan/reject", func(a *webtest.API) (string, string) {
			id := proposed(a)
			return "/sessions/" + id + "/plan/reject", id
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/plan/modify", func(a *webtest.API) (string, string) {
			id := proposed(a)
			return "/sessions/" + id + "/plan/modify", id
		}),
		consoleOnly(http.MethodPost, "/permissions/:id/answer", func(a *webtest.API) (string, string) {
			id, prompt := prompted(a)
			return "/permissions/" + prompt + "/answer", id
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/pause", func(a *webtest.API) (string, string) {
			id := plainSession(a)
			return "/sessions/" + id + "/pause", id
		}),
		consoleOnly(http.MethodGet, "/sessions", nil),
		consoleOnly(http.MethodGet, "/sessions/:id", func(a *webtest.API) (string, string) {
			id := plainSession(a)
			return "/sessions/" + id, id
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/remediations", func(a *webtest.API) (string, string) {
			id := plainSession(a)
			return "/sessions/" + id + "/remediations", id
		}),
		consoleOnly(http.MethodPost, "/remediations/:id/close", func(a *webtest.API) (string, string) {
			id := plainSession(a)
			r, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, id, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy up."})
			if err != nil {
				a.T.Fatal(err)
			}
			return fmt.Sprintf("/remediations/%d/close", r.ID), id
		}),
		consoleOnly(http.MethodPost, "/violations/:id/clear", func(a *webtest.API) (string, string) {
			id, v := violated(a)
			return fmt.Sprintf("/violations/%d/clear", v), id
		}),
		consoleOnly(http.MethodGet, "/missions", nil),
		consoleOnly(http.MethodGet, "/missions/new", nil),
		consoleOnly(http.MethodPost, "/missions", nil),
		consoleOnly(http.MethodGet, "/missions/:slug/edit", func(a *webtest.API) (string, string) {
			return "/missions/" + a.Kit.Mission(a.Lead, false) + "/edit", ""
		}),
		consoleOnly(http.MethodPost, "/missions/:slug", func(a *webtest.API) (string, string) {
			return "/missions/" + a.Kit.Mission(a.Lead, false), ""
		}),
		consoleOnly(http.MethodGet, "/audit", nil),
		consoleOnly(http.MethodGet, "/audit/:report", func(*webtest.API) (string, string) {
			return "/audit/stale-gates", ""
		}),
		consoleOnly(http.MethodGet, "/admin/users", nil),
		consoleOnly(http.MethodPost, "/admin/users", nil),
		consoleOnly(http.MethodPost, "/admin/users/:id/role", func(a *webtest.API) (string, string) {
			return fmt.Sprintf("/admin/users/%d/role", a.Viewer.UserID), ""
		}),
		consoleOnly(http.MethodPost, "/admin/users/:id/disable", func(a *webtest.API) (string, string) {
			return fmt.Sprintf("/admin/users/%d/disable", a.Viewer.UserID), ""
		}),
		consoleOnly(http.MethodPost, "/admin/users/:id/enable", func(a *webtest.API) (string, string) {
			return fmt.Sprintf("/admin/users/%d/enable", a.Viewer.UserID), ""
		}),
		consoleOnly(http.MethodGet, "/admin/keys", nil),
		consoleOnly(http.MethodPost, "/admin/keys", nil),
		consoleOnly(http.MethodPost, "/admin/keys/:id/revoke", func(a *webtest.API) (string, string) {
			return fmt.Sprintf("/admin/keys/%d/revoke", a.Other.KeyID), ""
		}),
		consoleOnly(http.MethodGet, "/admin/policies", nil),
		consoleOnly(http.MethodPost, "/admin/policies", nil),
		consoleOnly(http.MethodPost, "/admin/policies/:id/disable", func(*webtest.API) (string, string) {
			return "/admin/policies/1/disable", ""
		}),
		consoleOnly(http.MethodPost, "/admin/policies/:id/enable", func(*webtest.API) (string, string) {
			return "/admin/policies/1/enable", ""
		}),
		consoleOnly(http.MethodPost, "/admin/policies/:id/delete", func(*webtest.API) (string, string) {
			return "/admin/policies/1/delete", ""
		}),
		consoleOnly(http.MethodGet, "/admin/rules", nil),
		consoleOnly(http.MethodPost, "/admin/rules", nil),
		consoleOnly(http.MethodGet, "/admin/tools", nil),
		consoleOnly(http.MethodPost, "/admin/tools", nil),
		consoleOnly(http.MethodPost, "/admin/tools/delete", nil),
		consoleOnly(http.MethodGet, "/admin/webhooks", nil),
		consoleOnly(http.MethodPost, "/admin/webhooks", nil),
		consoleOnly(http.MethodPost, "/admin/webhooks/:id/remove", func(*webtest.API) (string, string) {
			return "/admin/webhooks/1/remove", ""
		}),
		consoleOnly(http.MethodGet, "/admin/activity", nil),
		consoleOnly(http.MethodPost, "/asks/:id/answer", func(a *webtest.API) (string, string) {
			return "/asks/ask_unknown/answer", ""
		}),
		consoleOnly(http.MethodPost, "/sessions/:id/resume", func(a *webtest.API) (string, string) {
			id := plainSession(a)
			if _, err := a.Kit.Gov.Sessions.Pause(ctx, a.Lead, id, "wait"); err != nil {
				a.T.Fatal(err)
			}
			return "/sessions/" + id + "/resume", id
		}),
	}
}

// consoleOnly is a console route that needs a signed-in browser session:
// every bearer caller, and the anonymous one, is sent to sign in, and
// nothing is written. setup (nil for the path itself) returns the concrete
// path and the session it would change.
func consoleOnly(method, path string, setup func(a *webtest.API) (string, string)) routeCase {
	return routeCase{method: method, path: path, public: true, page: true,
		setup: func(a *webtest.API) (string, any, string) {
			if setup == nil {
				return path, nil, ""
			}
			p, id := setup(a)
			return p, nil, id
		},
		want: with(statuses(http.StatusSeeOther, everyone), asAnonymous, http.StatusSeeOther)}
}

// TestEveryRouteAnswersEachCallerAsTheContractSays sends every route of
// routes.go as every kind of caller: anonymous gets 401, the wrong role or
// owner 403 with nothing written, the right caller its success status.
func TestEveryRouteAnswersEachCallerAsTheContractSays(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	for _, rc := range routeTable() {
		for _, c := range callers {
			want, ok := rc.want[c]
			switch {
			case ok:
			case c == asAnonymous && !rc.public:
				want = http.StatusUnauthorized
			default:
				want = http.StatusForbidden
			}
			t.Run(fmt.Sprintf("%s %s as %s is %d", rc.method, rc.path, c, want), func(t *testing.T) {
				a.T = t
				path, body, session := rc.setup(a)
				before := a.Snapshot(session)
				r := a.DoWith(rc.method, path, tokenOf(a, c), body, rc.header)
				if r.Status != want {
					t.Fatalf("status %d, want %d; body %s", r.Status, want, webtest.Short(r.Body))
				}
				if !rc.page {
					webtest.CheckJSONContentType(t, r)
				}
				if loc := r.Header.Get("Location"); r.Status >= 300 && r.Status < 400 && !strings.HasPrefix(loc, "/login") {
					t.Errorf("redirect to %q, want the sign-in page", loc)
				}
				after := a.Snapshot(session)
				if r.Status >= 300 {
					if !rc.page {
						webtest.CheckErrorShape(t, r)
					}
					if before != after {
						t.Errorf("a refused call changed state:\nbefore %s\nafter  %s", before, after)
					}
				} else if rc.writes && before == after {
					t.Errorf("a successful %s %s changed nothing", rc.method, rc.path)
				}
			})
		}
	}
	a.T = t
}

// TestRouteTableCoversEveryRegisteredRoute fails when routes.go registers a
// route the table above does not test, or the table names a route that is
// gone: adding a route without its auth test breaks the build's tests.
func TestRouteTableCoversEveryRegisteredRoute(t *testing.T) {
	t.Parallel()
	kit := testkit.New(t)
	e := web.NewServer(webtest.Deps(kit))
	var tested []string
	for _, rc := range routeTable() {
		tested = append(tested, rc.method+" "+rc.path)
	}
	webtest.RoutesCovered(t, e.Routes(), nil, "routeTable (routes_test.go)", tested)
}

// TestTheOpenAPIDocumentDescribesEveryJSONRoute fails when a JSON route is
// served that the document does not describe, or the document describes
// one that is not served. (Every HTTP test also checks its answers, and
// the requests the server accepted, against the document: webtest.API.)
func TestTheOpenAPIDocumentDescribesEveryJSONRoute(t *testing.T) {
	t.Parallel()
	e := web.NewServer(webtest.Deps(testkit.New(t)))
	var routes []apicheck.Route
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/") || strings.HasPrefix(r.Path, "/hooks/") || r.Path == "/brief" || r.Path == "/healthz" {
			routes = append(routes, apicheck.Route{Method: r.Method, Path: r.Path})
		}
	}
	apicheck.New(t, api.OpenAPI).Routes(t, routes)
}

// TestTheOpenAPIDocumentIsServed checks that GET /api/v1/openapi.json
// answers the embedded document, to anyone.
func TestTheOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	r := a.Do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, api.OpenAPI) {
		t.Fatalf("GET /api/v1/openapi.json: %d, %d bytes (want the %d embedded)", r.Status, len(r.Body), len(api.OpenAPI))
	}
	webtest.CheckJSONContentType(t, r)
}
