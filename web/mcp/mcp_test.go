package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	egate "github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/mcp"
	"github.com/madebook/madebook/web/webtest"
)

// bearer adds an Authorization header to every request the client sends.
type bearer struct{ secret string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// dial connects the SDK's own client to the server's /mcp with secret as
// the bearer ("" sends none).
func dial(t *testing.T, a *webtest.API, secret string) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c := sdk.NewClient(&sdk.Implementation{Name: "madebook-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a.Srv.URL + mcp.Path,
		HTTPClient: &http.Client{Transport: bearer{secret}, Timeout: 30 * time.Second}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// connect is dial that fails the test on an error.
func connect(t *testing.T, a *webtest.API, secret string) *sdk.ClientSession {
	t.Helper()
	s, err := dial(t, a, secret)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return s
}

// call calls a tool and returns its result, failing on a protocol error.
func call(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its structured content,
// failing unless it names the next action and its text says it.
func ok(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res := call(t, s, tool, args)
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, text(res))
	}
	out := structured(t, res)
	action, _ := out["next_action"].(string)
	if _, valid := protocol.ParseState(action); !valid || out["reason"] == "" {
		t.Fatalf("%s answers next_action %v, reason %v: %v", tool, out["next_action"], out["reason"], out)
	}
	blocks := texts(res)
	if want := fmt.Sprintf("%s: %s", action, out["reason"]); len(blocks) != 2 || blocks[0] != want {
		t.Fatalf("%s's text blocks are %q, want %q and the answer's JSON", tool, blocks, want)
	}
	var answer map[string]any
	if err := json.Unmarshal([]byte(blocks[1]), &answer); err != nil {
		t.Fatalf("%s's second text block is not JSON: %v", tool, err)
	}
	if a, b := mustJSON(t, answer), mustJSON(t, out); a != b {
		t.Errorf("%s's JSON text %s differs from its structured content %s", tool, a, b)
	}
	return out
}

// refused calls a tool that must fail as a tool error with code, and
// returns the error body ({"code","message",…}).
func refused(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any, code string) map[string]any {
	t.Helper()
	res := call(t, s, tool, args)
	if !res.IsError {
		t.Fatalf("%s succeeded, want the tool error %s: %s", tool, code, text(res))
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(text(res)), &env); err != nil || env.Error == nil {
		t.Fatalf("%s's error text is not {\"error\":{…}}: %q", tool, text(res))
	}
	if env.Error["code"] != code || env.Error["message"] == "" {
		t.Fatalf("%s's error is %v, want code %s with a message", tool, env.Error, code)
	}
	if got, _ := structured(t, res)["error"].(map[string]any); got["code"] != code {
		t.Errorf("%s's structured error is %v, want code %s", tool, got, code)
	}
	return env.Error
}

func text(res *sdk.CallToolResult) string { return strings.Join(texts(res), "\n") }

// texts are a result's text blocks, in order.
func texts(res *sdk.CallToolResult) []string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return parts
}

// mustJSON is v as JSON (maps' keys sorted), for comparing.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content is not an object: %s", b)
	}
	return m
}

func count(t *testing.T, m map[string]any, key string) int {
	t.Helper()
	l, isList := m[key].([]any)
	if !isList {
		t.Fatalf("%q is %T, want a list: %v", key, m[key], m)
	}
	return len(l)
}

// gate opens a session and a decision gate on it over MCP.
func gate(t *testing.T, a *webtest.API, s *sdk.ClientSession) (session, ref string) {
	t.Helper()
	sess := ok(t, s, "open_session", map[string]any{"mission": a.Kit.Mission(a.Lead, false), "title": "billing cleanup"})
	session, _ = sess["id"].(string)
	d := ok(t, s, "open_decision", map[string]any{"session": session, "title": "Schema",
		"question": "Drop the legacy billing table?", "blocked_scope": []string{"db/migrations"}, "allowed_scope": []string{"web/"}})
	ref, _ = d["ref"].(string)
	return session, ref
}

// resolve resolves a gate as a lead, over REST.
func resolve(a *webtest.API, ref string) {
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok,
		map[string]any{"resolution": "Keep it.", "instruction": "Archive the rows instead."})
}

var toolNames = []string{"ask", "brief", "complete", "finish_run", "open_decision", "open_session", "propose_plan",
	"record_tool_call", "report_change", "report_event", "report_evidence", "start_run"}

// TestTheToolsAreListedWithDescribedInputs: a stock client lists the
// twelve tools, each with a description and an input schema whose every
// property an agent can read the meaning of.
func TestTheToolsAreListedWithDescribedInputs(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		t.Run(tool.Name+" has a description and described inputs", func(t *testing.T) {
			if len(tool.Description) < 20 {
				t.Errorf("description %q", tool.Description)
			}
			b, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Type       string                    `json:"type"`
				Properties map[string]map[string]any `json:"properties"`
				Required   []string                  `json:"required"`
			}
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 || len(schema.Required) == 0 {
				t.Fatalf("input schema %s", b)
			}
			for name, p := range schema.Properties {
				if d, _ := p["description"].(string); d == "" {
					t.Errorf("input %q has no description: %s", name, b)
				}
			}
		})
	}
	slices.Sort(names)
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v, want %v", names, toolNames)
	}
	// The executor gate always lets exactly these run (mcp__madebook__…).
	if got := egate.GovernanceTools(); !slices.Equal(got, names) {
		t.Errorf("the gate's own tools %v are not the MCP server's %v", got, names)
	}
}

// TestAResolutionReachesAnMCPAgentOnce is the done-when: open a
// session and a gate, brief (DECISION_REQUIRED), a lead resolves the gate
// over REST, and the next brief delivers the resolution, once.
func TestAResolutionReachesAnMCPAgentOnce(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	session, ref := gate(t, a, s)
	if !strings.HasPrefix(ref, "DEC-") {
		t.Fatalf("open_decision answered ref %q", ref)
	}
	b := ok(t, s, "brief", map[string]any{"session": session})
	if b["next_action"] != "DECISION_REQUIRED" || !strings.Contains(b["reason"].(string), ref) || count(t, b, "decisions") != 1 {
		t.Fatalf("brief with the gate open: %v, %v", b["next_action"], b["reason"])
	}
	if p, _ := b["protocol"].(string); p != protocol.Text {
		t.Errorf("the brief does not carry the protocol text")
	}
	resolve(a, ref)
	first := ok(t, s, "brief", map[string]any{"session": session})
	if first["next_action"] != "CONTINUE" || count(t, first, "resolutions") != 1 {
		t.Fatalf("the first brief after the resolution: %v, %d resolutions", first["next_action"], count(t, first, "resolutions"))
	}
	r := first["resolutions"].([]any)[0].(map[string]any)
	if r["ref"] != ref || r["instruction"] != "Archive the rows instead." {
		t.Errorf("delivered %v", r)
	}
	if n := count(t, ok(t, s, "brief", map[string]any{"session": session}), "resolutions"); n != 0 {
		t.Errorf("the second brief delivers %d resolutions, want 0", n)
	}
	if n := webtest.CountOf(a.Timeline(session), "resolution.delivered"); n != 1 {
		t.Errorf("%d resolution.delivered events, want 1", n)
	}
}

// TestEveryToolAnswersTheRESTAnswerAndTheNextAction drives the tools a
// brief and a gate do not: runs, asks, tool calls, changes, evidence,
// plans and completion.
func TestEveryToolAnswersTheRESTAnswerAndTheNextAction(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	sess := ok(t, s, "open_session", map[string]any{"mission": a.Kit.Mission(a.Lead, true), "title": "work"})
	id := sess["id"].(string)
	if sess["lifecycle"] != "IDLE" || sess["next_action"] != "BLOCKED" { // no approved plan yet
		t.Errorf("open_session: %v", sess)
	}
	p := ok(t, s, "propose_plan", map[string]any{"session": id, "summary": "Read, then ask before writing",
		"initial_steps": []any{map[string]any{"id": "read", "server": "fs", "tool": "read_file", "side_effecting": false}}})
	if p["status"] != "proposed" || p["next_action"] != "BLOCKED" {
		t.Errorf("propose_plan on a high-risk mission: status %v, next %v", p["status"], p["next_action"])
	}
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/plan/approve", a.LeadTok, map[string]any{"note": "ok"})
	run := ok(t, s, "start_run", map[string]any{"session": id, "name": "graph"})
	runID := run["id"].(string)
	if run["status"] != "running" || run["next_action"] != "CONTINUE" {
		t.Errorf("start_run: %v", run)
	}
	tc := ok(t, s, "record_tool_call", map[string]any{"run": runID, "server": "fs", "tool": "read_file",
		"side_effecting": false, "started_at": "2026-11-29T12:00:00Z"})
	if tc["run"] != runID || tc["started_at"] != "2026-11-29T12:00:00Z" {
		t.Errorf("record_tool_call: %v", tc)
	}
	refused(t, s, "record_tool_call", map[string]any{"run": runID, "server": "fs", "tool": "read_file", "started_at": "noon"},
		"invalid_started_at")
	q := ok(t, s, "ask", map[string]any{"run": runID, "prompt": "Write it?", "options": map[string]string{"1": "Yes", "2": "No"}})
	if q["run_status"] != "parked" {
		t.Errorf("ask: %v", q)
	}
	refused(t, s, "record_tool_call", map[string]any{"run": runID, "server": "fs", "tool": "write_file", "side_effecting": true}, "run_parked")
	refused(t, s, "finish_run", map[string]any{"run": runID, "status": "complete"}, "run_has_open_ask")
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+q["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})
	if f := ok(t, s, "finish_run", map[string]any{"run": runID, "status": "complete"}); f["status"] != "complete" {
		t.Errorf("finish_run: %v", f)
	}
	ch := ok(t, s, "report_change", map[string]any{"session": id, "files": []map[string]string{{"path": "web/app.go", "content": "package web\n"}}})
	if _, hasRisk := ch["risk"].(map[string]any); !hasRisk || count(t, ch, "violations") != 0 {
		t.Errorf("report_change: %v", ch)
	}
	if ev := ok(t, s, "report_evidence", map[string]any{"session": id, "kind": "tests", "passed": true, "detail": "212 passed"}); ev["kind"] != "tests" || ev["passed"] != true {
		t.Errorf("report_evidence: %v", ev)
	}
	if g := ok(t, s, "complete", map[string]any{"session": id}); g["evidence_gate"] == nil {
		t.Errorf("complete: %v", g)
	}
	secret := "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
	if hard := ok(t, s, "report_change", map[string]any{"session": id, "files": []map[string]string{{"path": "deploy.sh", "content": secret}}}); hard["next_action"] != "HARD_STOP" {
		t.Errorf("a change with a secret answers %v, want HARD_STOP", hard["next_action"])
	}
}

// TestTheSDKsClientCannotConnectWithoutAnAgentKey: a wrong key is 401
// before any tool runs, and the SDK's own client cannot connect with it,
// without a key, or with a person's token. (What every caller gets from
// every tool and resource is the authorization matrix,
// web/authz_matrix_test.go.)
func TestTheSDKsClientCannotConnectWithoutAnAgentKey(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "open_session", "arguments": map[string]any{"mission": a.Kit.Mission(a.Lead, false)}}}
	a.Refused("", http.StatusUnauthorized, "unauthorized", http.MethodPost, mcp.Path, "mbk_not-a-key", body)
	for name, secret := range map[string]string{"no key": "", "a wrong key": "mbk_not-a-key", "a person's token": a.LeadTok} {
		t.Run("the SDK's client cannot connect with "+name, func(t *testing.T) {
			if _, err := dial(t, a, secret); err == nil {
				t.Errorf("the SDK's client connected with %s", name)
			}
		})
	}
}

// TestAnotherKeysBriefDeliversNothing: another key's brief of a session
// with a resolution waiting is refused, naming why, and the owner's next
// brief still delivers the resolution.
func TestAnotherKeysBriefDeliversNothing(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	mine := connect(t, a, a.AgentKey)
	session, ref := gate(t, a, mine)
	resolve(a, ref)
	other := connect(t, a, a.OtherKey)
	if e := refused(t, other, "brief", map[string]any{"session": session}, "forbidden"); !strings.Contains(e["message"].(string), "another agent key") {
		t.Errorf("message %q", e["message"])
	}
	if n := count(t, ok(t, mine, "brief", map[string]any{"session": session}), "resolutions"); n != 1 {
		t.Errorf("after another key's brief, the owner's brief delivers %d resolutions, want 1", n)
	}
	refused(t, mine, "brief", map[string]any{"session": "ses_nope"}, "session_not_found")
}

// TestAToolErrorCarriesTheRESTCodeAndMessage: the same bad input answers
// the same code and message over MCP as over REST.
func TestAToolErrorCarriesTheRESTCodeAndMessage(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	sess := ok(t, s, "open_session", map[string]any{"mission": a.Kit.Mission(a.Lead, true)})
	id := sess["id"].(string)
	sideEffectFirst := map[string]any{"summary": "Drop it", "initial_steps": []any{map[string]any{"id": "drop", "server": "db",
		"tool": "drop_table", "side_effecting": true}}, "stopping_points": []any{map[string]any{"id": 1, "type": "menu",
		"title": "Drop?", "options": map[string]any{"1": map[string]any{"label": "Yes", "steps": []any{}}}}}}
	cases := []struct {
		name, tool, path string
		args, body       map[string]any
		status           int
		code             string
	}{
		{"a plan that writes before its gate", "propose_plan", "/api/v1/sessions/" + id + "/plan",
			map[string]any{"session": id}, sideEffectFirst, http.StatusUnprocessableEntity, "side_effect_before_gate"},
		{"a gate without a title", "open_decision", "/api/v1/sessions/" + id + "/decisions",
			map[string]any{"session": id}, map[string]any{"title": " ", "question": "Q?"}, http.StatusUnprocessableEntity, "title_required"},
		{"an unknown mission", "open_session", "/api/v1/sessions", map[string]any{}, map[string]any{"mission": "nowhere"},
			http.StatusUnprocessableEntity, "unknown_mission"},
		{"a brief without a session", "brief", "/brief", map[string]any{}, map[string]any{"session": ""},
			http.StatusUnprocessableEntity, "session_required"},
		{"an unknown run", "finish_run", "/api/v1/runs/run_nope", map[string]any{"run": "run_nope"},
			map[string]any{"status": "complete"}, http.StatusNotFound, "run_not_found"},
		{"a gate without its title field", "open_decision", "/api/v1/sessions/" + id + "/decisions",
			map[string]any{"session": id}, map[string]any{"question": "Q?"}, http.StatusUnprocessableEntity, "title_required"},
		{"a gate whose title is a number", "open_decision", "/api/v1/sessions/" + id + "/decisions",
			map[string]any{"session": id}, map[string]any{"title": 7, "question": "Q?"}, http.StatusUnprocessableEntity, "invalid_field"},
		{"a gate with a field no gate takes", "open_decision", "/api/v1/sessions/" + id + "/decisions",
			map[string]any{"session": id}, map[string]any{"title": "T", "question": "Q?", "urgency": "high"},
			http.StatusUnprocessableEntity, "unknown_field"},
		{"evidence whose passed is text", "report_evidence", "/api/v1/sessions/" + id + "/evidence",
			map[string]any{"session": id}, map[string]any{"kind": "tests", "passed": "yes"}, http.StatusUnprocessableEntity, "invalid_field"},
		{"a tool call whose paths are not a list", "record_tool_call", "/api/v1/runs/run_nope/tool-calls",
			map[string]any{"run": "run_nope"}, map[string]any{"server": "fs", "tool": "write", "paths": "a.go"},
			http.StatusUnprocessableEntity, "invalid_field"},
		{"an event whose payload takes another event's field", "report_event", "/api/v1/sessions/" + id + "/events",
			map[string]any{"session": id}, map[string]any{"name": "task.progress", "payload": map[string]any{"task": "T", "intent": "chat"}},
			http.StatusUnprocessableEntity, "unknown_field"},
		{"a permission prompt nobody can answer", "report_event", "/api/v1/sessions/" + id + "/events",
			map[string]any{"session": id}, map[string]any{"name": "permission.prompt.requested",
				"payload": map[string]any{"prompt": "Run?", "options": map[string]any{"1": "   "}}},
			http.StatusUnprocessableEntity, "invalid_options"},
		{"an event payload that is no object", "report_event", "/api/v1/sessions/" + id + "/events",
			map[string]any{"session": id}, map[string]any{"name": "reply.sent", "payload": "now"},
			http.StatusUnprocessableEntity, "invalid_payload"},
		{"a run that re-attaches and executes the plan", "start_run", "/api/v1/sessions/" + id + "/runs",
			map[string]any{"session": id}, map[string]any{"name": "r", "plan": true, "external_id": "x"},
			http.StatusUnprocessableEntity, "plan_with_external_id"},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.code+" over both", func(t *testing.T) {
			a.T = t
			args := map[string]any{}
			for k, v := range c.body {
				args[k] = v
			}
			for k, v := range c.args {
				args[k] = v
			}
			method := http.MethodPost
			if c.tool == "finish_run" {
				method = http.MethodPatch
			}
			r := a.Do(method, c.path, a.AgentKey, c.body)
			webtest.CheckError(t, r, c.status, c.code)
			var rest struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(r.Body, &rest); err != nil {
				t.Fatal(err)
			}
			got := refused(t, s, c.tool, args, c.code)
			if got["message"] != rest.Error["message"] || got["field"] != rest.Error["field"] {
				t.Errorf("MCP says %v, REST %v", got, rest.Error)
			}
		})
	}
}

// TestMCPAndRESTBriefsDeliverAResolutionOnce races briefs over MCP and
// over REST at one session: exactly one delivers the resolution.
func TestMCPAndRESTBriefsDeliverAResolutionOnce(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	const n = 8 // of each
	clients := make([]*sdk.ClientSession, n)
	for i := range clients {
		clients[i] = connect(t, a, a.AgentKey)
	}
	for round := range 3 {
		session, ref := gate(t, a, clients[0])
		resolve(a, ref)
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			delivered int
			failures  []string
		)
		tally := func(resolutions int, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err.Error())
			}
			delivered += resolutions
		}
		for i := range n {
			wg.Go(func() {
				res, err := clients[i].CallTool(context.Background(), &sdk.CallToolParams{Name: "brief",
					Arguments: map[string]any{"session": session}})
				if err != nil || res.IsError {
					tally(0, fmt.Errorf("MCP brief: %v %v", err, res))
					return
				}
				var b struct {
					Resolutions []json.RawMessage `json:"resolutions"`
				}
				raw, _ := json.Marshal(res.StructuredContent)
				err = json.Unmarshal(raw, &b)
				tally(len(b.Resolutions), err)
			})
			wg.Go(func() { tally(a.BriefDelivers(session)) })
		}
		wg.Wait()
		t.Logf("round %d", round)
		a.CheckDeliveredOnce(session, delivered, failures)
	}
}

// TestTheLifecycleThroughReportEvent: report_event moves the session's
// lifecycle as POST …/events does, and refuses an event the state does
// not allow, naming those it does.
func TestTheLifecycleThroughReportEvent(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	id := ok(t, s, "open_session", map[string]any{"mission": a.Kit.Mission(a.Lead, false)})["id"].(string)
	got := ok(t, s, "report_event", map[string]any{"session": id, "name": "user.message.created"})
	if got["lifecycle"] != "CLASSIFYING" || count(t, got, "transitions") != 1 {
		t.Fatalf("user.message.created: %v", got)
	}
	e := refused(t, s, "report_event", map[string]any{"session": id, "name": "reply.sent"}, "transition_not_allowed")
	if e["lifecycle"] != "CLASSIFYING" || len(e["allowed"].([]any)) == 0 {
		t.Errorf("the refusal names lifecycle %v and allowed %v", e["lifecycle"], e["allowed"])
	}
	got = ok(t, s, "report_event", map[string]any{"session": id, "name": "IntentClassified", "payload": map[string]any{"intent": "task"}})
	if got["lifecycle"] == "CLASSIFYING" {
		t.Errorf("IntentClassified left the session in CLASSIFYING: %v", got)
	}
	if e := refused(t, s, "report_event", map[string]any{"session": id, "name": "architecture.impact.completed", "payload": map[string]any{"why": "x"}},
		"unknown_field"); e["field"] != "payload.why" {
		t.Errorf("a payload field the event does not take: %v", e)
	}
	if d := a.DetailOf(id); d.Lifecycle != got["lifecycle"] || !d.Tracked {
		t.Errorf("the session shows %s (tracked %v), the tool answered %v", d.Lifecycle, d.Tracked, got["lifecycle"])
	}
}

// TestTheResources: the protocol text, and a session's brief preview,
// which delivers nothing.
func TestTheResources(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	ctx := context.Background()
	list, err := s.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != mcp.ProtocolURI {
		t.Fatalf("resources: %v %v", list, err)
	}
	templates, err := s.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != mcp.BriefTemplate {
		t.Fatalf("resource templates: %v %v", templates, err)
	}
	p, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.ProtocolURI})
	if err != nil || len(p.Contents) != 1 || p.Contents[0].Text != protocol.Text {
		t.Fatalf("the protocol resource: %v", err)
	}

	session, ref := gate(t, a, s)
	resolve(a, ref)
	uri := "madebook://sessions/" + session + "/brief"
	for i := range 2 {
		r, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("read %s: %v", uri, err)
		}
		var preview map[string]any
		if err := json.Unmarshal([]byte(r.Contents[0].Text), &preview); err != nil {
			t.Fatalf("the preview is not JSON: %v", err)
		}
		if preview["session"] != session || preview["next_action"] != "CONTINUE" || count(t, preview, "resolutions") != 1 {
			t.Errorf("preview %d: %v, %v, %d resolutions", i+1, preview["session"], preview["next_action"], count(t, preview, "resolutions"))
		}
	}
	if n := count(t, ok(t, s, "brief", map[string]any{"session": session}), "resolutions"); n != 1 {
		t.Errorf("after two previews the brief delivers %d resolutions, want 1", n)
	}
	for _, bad := range []string{"madebook://sessions/ses_nope/brief", "madebook://sessions//brief"} {
		if _, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("read %s: no error", bad)
		}
	}
}

// TestArgumentsAreReadAsRESTReadsABody: what does not fit a tool's input
// schema (an unknown, missing or mistyped field, no arguments at all) is
// refused with the code, message and field REST gives the same body, and
// runs nothing.
func TestArgumentsAreReadAsRESTReadsABody(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	slug := a.Kit.Mission(a.Lead, false)
	for name, c := range map[string]struct {
		args map[string]any
		code string
	}{
		"an unknown field":    {map[string]any{"mission": slug, "external": "x"}, "unknown_field"},
		"a missing field":     {map[string]any{"title": "no mission"}, "mission_required"},
		"a mistyped field":    {map[string]any{"mission": 3}, "invalid_field"},
		"no arguments at all": {nil, "mission_required"},
	} {
		t.Run(name+" is "+c.code+" as over REST", func(t *testing.T) {
			a.T = t
			body := c.args
			if body == nil {
				body = map[string]any{}
			}
			r := a.Do(http.MethodPost, "/api/v1/sessions", a.AgentKey, body)
			webtest.CheckError(t, r, http.StatusUnprocessableEntity, c.code)
			var rest struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(r.Body, &rest); err != nil {
				t.Fatal(err)
			}
			before := a.Snapshot("")
			e := refused(t, s, "open_session", c.args, c.code)
			if e["message"] != rest.Error["message"] || e["field"] != rest.Error["field"] {
				t.Errorf("MCP says %v, REST %v", e, rest.Error)
			}
			if after := a.Snapshot(""); after != before {
				t.Errorf("a refused call wrote:\n%s\n%s", before, after)
			}
		})
	}
}

// TestTheSDKsOwnRefusalsAnswerInTheAPIsShape: what the SDK refuses at the
// HTTP level (it writes plain text) is answered as
// {"error":{"code","message"}} with the SDK's status and words.
func TestTheSDKsOwnRefusalsAnswerInTheAPIsShape(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	initialize := webtest.RawBody(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	both := "application/json, text/event-stream"
	cases := []struct {
		name, accept, contentType string
		status                    int
		code, says                string
	}{
		{"an Accept without text/event-stream", "application/json", "application/json", http.StatusBadRequest,
			"invalid_mcp_request", "Accept must contain both"},
		{"a body that is not JSON", both, "text/plain", http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type"},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			a.T = t
			r := a.DoWith(http.MethodPost, mcp.Path, a.AgentKey, initialize,
				http.Header{"Accept": {c.accept}, "Content-Type": {c.contentType}})
			webtest.CheckError(t, r, c.status, c.code)
			if !strings.Contains(string(r.Body), c.says) {
				t.Errorf("the message does not say %q: %s", c.says, r.Body)
			}
		})
	}
	t.Run("GET is 405: the server is stateless, with no event stream to open", func(t *testing.T) {
		a.T = t
		webtest.CheckError(t, a.Do(http.MethodGet, mcp.Path, a.AgentKey, nil), http.StatusMethodNotAllowed, "method_not_allowed")
	})
	t.Run("a well-formed initialize is answered as JSON", func(t *testing.T) {
		a.T = t
		r := a.DoWith(http.MethodPost, mcp.Path, a.AgentKey, initialize, http.Header{"Accept": {both}})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"serverInfo"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		webtest.CheckJSONContentType(t, r)
	})
}

// An MCP agent runs the approved plan step by step: a step behind a
// stopping point is refused until that stopping point's ask is answered
// with its option.
func TestAPlanRunsStepByStepThroughMCP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	id := ok(t, s, "open_session", map[string]any{"mission": a.Kit.Mission(a.Lead, false)})["id"].(string)
	ok(t, s, "propose_plan", map[string]any{"session": id, "summary": "Read, then ask before dropping",
		"initial_steps": []any{map[string]any{"id": "read", "server": "claude-code", "tool": "Read"}},
		"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Drop it?", "options": map[string]any{
			"1": map[string]any{"label": "Drop", "steps": []any{map[string]any{"id": "drop", "server": "db", "tool": "run_migration"}}},
			"2": map[string]any{"label": "Keep", "steps": []any{}}}}}})
	run := ok(t, s, "start_run", map[string]any{"session": id, "name": "migrate", "plan": true})["id"].(string)
	refused(t, s, "record_tool_call", map[string]any{"run": run, "server": "db", "tool": "run_migration", "step": "drop"},
		"step_not_released")
	refused(t, s, "record_tool_call", map[string]any{"run": run, "server": "db", "tool": "run_migration", "step": "nope"},
		"unknown_step")
	ask := ok(t, s, "ask", map[string]any{"run": run, "prompt": "Drop it?", "options": map[string]any{"1": "Drop", "2": "Keep"},
		"stopping_point": 1})["id"].(string)
	if _, err := a.Kit.Ledger.AnswerAsk(t.Context(), a.Lead, ask, "1"); err != nil {
		t.Fatal(err)
	}
	ok(t, s, "record_tool_call", map[string]any{"run": run, "server": "db", "tool": "run_migration", "step": "drop",
		"paths": []any{"db/migrations/0042.sql"}})
}

// A tool call counts against its key's limits as its REST route does:
// open_session past the sessions limit is a tool error rate_limited with
// retry_after, writing nothing; the brief goes on.
func TestAToolPastItsKeysLimitIsToldToWait(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPIWith(t, func(d *web.Deps) {
		d.Limits = ratelimit.New(ratelimit.Config{Sessions: ratelimit.Limit{N: 1, Per: time.Hour}})
	})
	s := connect(t, a, a.AgentKey)
	mission := a.Kit.Mission(a.Lead, false)
	id := ok(t, s, "open_session", map[string]any{"mission": mission})["id"].(string)
	before := a.Kit.Dump()
	body := refused(t, s, "open_session", map[string]any{"mission": mission}, "rate_limited")
	if body["retry_after"] != float64(3600) {
		t.Errorf("retry_after %v, want 3600", body["retry_after"])
	}
	if !reflect.DeepEqual(before, a.Kit.Dump()) {
		t.Error("a refused open_session changed the database")
	}
	ok(t, s, "brief", map[string]any{"session": id})
}

// TestAnExternalIDReattachesOverMCPAsOverREST: open_session and start_run
// take external_id as REST does; the same id again answers what it opened,
// whichever surface opened it.
func TestAnExternalIDReattachesOverMCPAsOverREST(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := connect(t, a, a.AgentKey)
	slug := a.Kit.Mission(a.Lead, false)
	first := ok(t, s, "open_session", map[string]any{"mission": slug, "external_id": "claude-7f3a"})
	again := ok(t, s, "open_session", map[string]any{"mission": slug, "external_id": "claude-7f3a"})
	if first["id"] == nil || again["id"] != first["id"] {
		t.Fatalf("the same external id opened %v, then %v", first["id"], again["id"])
	}
	rest := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey,
		map[string]any{"mission": slug, "external_id": "claude-7f3a"})
	if rest["id"] != first["id"] {
		t.Fatalf("REST re-attached to %v, want %v", rest["id"], first["id"])
	}
	other := ok(t, s, "open_session", map[string]any{"mission": slug, "external_id": "claude-other"})
	if other["id"] == first["id"] {
		t.Fatal("another external id re-attached")
	}
	id := first["id"].(string)
	run := ok(t, s, "start_run", map[string]any{"session": id, "name": "sub", "external_id": "agent-1"})
	runAgain := ok(t, s, "start_run", map[string]any{"session": id, "name": "sub", "external_id": "agent-1"})
	if run["id"] == nil || runAgain["id"] != run["id"] {
		t.Fatalf("the same run external id started %v, then %v", run["id"], runAgain["id"])
	}
	restRun := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/runs", a.AgentKey,
		map[string]any{"name": "sub", "external_id": "agent-1"})
	if restRun["id"] != run["id"] {
		t.Fatalf("REST re-attached to run %v, want %v", restRun["id"], run["id"])
	}
	if fresh := ok(t, s, "start_run", map[string]any{"session": id, "name": "sub"}); fresh["id"] == run["id"] {
		t.Fatal("a run without an external id re-attached")
	}
}
