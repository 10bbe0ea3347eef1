package api_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/web/webtest"
)

// checkPath is the executor gate's question for a session.
func checkPath(session string) string { return "/api/v1/sessions/" + session + "/tool-calls/check" }

// checkCall asks the gate and fails if the question wrote anything.
func checkCall(a *webtest.API, session string, body map[string]any) map[string]any {
	a.T.Helper()
	before := a.Snapshot(session)
	got := a.Must(http.StatusOK, http.MethodPost, checkPath(session), a.AgentKey, body)
	if after := a.Snapshot(session); after != before {
		a.T.Errorf("the check wrote:\nbefore %s\nafter  %s", before, after)
	}
	return got
}

// recordBody is the tool call the check body describes, as the ledger
// takes it (and the Claude Code hook sends it): the tool's server and
// name, what it names (its input, cwd, root, …, read as the check reads
// them), its step.
func recordBody(check map[string]any) map[string]any {
	server, tool := gate.SplitTool(check["tool"].(string))
	body := map[string]any{"server": server, "tool": tool}
	for _, k := range []string{"input", "cwd", "root", "home", "paths", "scripts", "step"} {
		if v, ok := check[k]; ok && v != "" {
			body[k] = v
		}
	}
	return body
}

// graphAskPlan is seed 001's graph-ask-demo as a plan: two probes, then
// "Save this reading?" whose option 1 stores it and option 2 discards it.
// Its probe runs before the stopping point, so the registry must say
// get_cpu_info only reads (the step's own false lowers nothing).
var graphAskPlan = map[string]any{
	"summary": "Probe, then ask before saving.",
	"initial_steps": []any{
		map[string]any{"id": "cpu", "server": "mcp-monitor", "tool": "get_cpu_info", "side_effecting": false},
	},
	"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Save this reading?", "options": map[string]any{
		"1": map[string]any{"label": "Save", "steps": []any{map[string]any{"id": "store", "server": "Vodou-Recall", "tool": "memory_store"}}},
		"2": map[string]any{"label": "Discard", "steps": []any{map[string]any{"id": "discard", "server": "fs", "tool": "rm"}}},
	}}},
}

// gateStates builds sessions in each state the gate tells apart, each with
// a run, keyed by a name that reads as the state.
func gateStates(a *webtest.API) map[string][2]string {
	a.T.Helper()
	out := map[string][2]string{}
	add := func(name, sess string) string {
		run := openRun(a, sess, name)
		out[name] = [2]string{sess, run}
		return run
	}
	add("clean", a.Session(false))

	paused := a.Session(false)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+paused+"/pause", a.LeadTok, map[string]any{"reason": "Release freeze"})
	add("paused", paused)

	stopped := a.Session(false)
	if r := reportChange(a, stopped, changeBody([2]string{"config/deploy.sh", "#!/bin/sh\n" + seedSecretLine})); r.Status != http.StatusOK {
		a.T.Fatalf("the secret change: %d %s", r.Status, r.Body)
	}
	add("hard stop", stopped)

	add("plan not approved", a.Session(true))

	gated := a.Session(false)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+gated+"/decisions", a.AgentKey, map[string]any{
		"title": "Schema", "question": "Drop the legacy billing table?", "blocked_scope": []string{"db/migrations"}})
	add("decision open", gated)

	prompted := a.Session(false)
	walk(a, prompted, map[string]any{"name": "user.message.created"},
		map[string]any{"name": "IntentClassified", "payload": map[string]any{"intent": "direct"}},
		map[string]any{"name": "permission.prompt.requested", "payload": map[string]any{"prompt": "Run the migration?",
			"options": map[string]string{"1": "Allow", "2": "Deny"}, "tool": "Bash"}})
	add("permission prompt in direct mode", prompted)

	idle := a.Session(false)
	walk(a, idle, map[string]any{"name": "user.message.created"})
	add("tracked, classifying", idle)

	parked := a.Session(false)
	askOn(a, add("parked", parked))

	planned := a.Session(false)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+planned+"/plan", a.AgentKey, graphAskPlan)
	r := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+planned+"/runs", a.AgentKey, map[string]any{"name": "plan", "plan": true})
	out["plan run"] = [2]string{planned, r["id"].(string)}
	// A Claude Code session's run executes no plan: its calls are matched
	// with the session's approved plan by server and tool.
	add("approved plan, hook run", planned)
	answered := a.Session(false)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+answered+"/plan", a.AgentKey, graphAskPlan)
	hook := add("approved plan, stopping point answered on the hook run", answered)
	ask := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+hook+"/asks", a.AgentKey, map[string]any{
		"prompt": "Save this reading?", "options": map[string]string{"1": "Save", "2": "Discard"}, "stopping_point": 1})
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})
	return out
}

// TestTheExecutorGateOverHTTP asks the check, then records the same call,
// in every state the gate tells apart: each refusal is the check's
// denial, with its code, and says what to do instead.
func TestTheExecutorGateOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/Vodou-Recall/memory_store", a.AdminTok, map[string]any{"side_effecting": true})
	states := gateStates(a)
	edit := func(path string) map[string]any {
		return map[string]any{"tool": "Edit", "input": map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}}
	}
	read := map[string]any{"tool": "Read", "input": map[string]any{"file_path": "db/migrations/0001.sql"}}
	bash := map[string]any{"tool": "Bash", "input": map[string]any{"command": "make migrate"}}
	store := map[string]any{"tool": "mcp__Vodou-Recall__memory_store", "input": map[string]any{}}
	probe := map[string]any{"tool": "mcp__mcp-monitor__get_cpu_info"}
	unknownMCP := map[string]any{"tool": "mcp__github__create_issue", "input": map[string]any{"title": "x"}}
	clone := func(m map[string]any) map[string]any {
		out := make(map[string]any, len(m)+1)
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	withStep := func(m map[string]any, step string) map[string]any {
		out := clone(m)
		out["step"] = step
		return out
	}
	cases := []struct {
		name, state string
		call        map[string]any
		// code is the refusal ("" allowed); says is in its reason.
		code, says string
		writes     bool
	}{
		{"a clean session edits", "clean", edit("web/app.js"), "", "", true},
		{"an unclassified MCP tool is side-effecting, and runs on a clean session", "clean", unknownMCP, "", "", true},
		{"a paused session refuses an edit, quoting the pause", "paused", edit("web/app.js"), "session_blocked", "Release freeze", true},
		{"a paused session refuses Bash", "paused", bash, "session_blocked", "BLOCKED", true},
		{"a paused session lets the agent read", "paused", read, "", "", false},
		{"the registry wins: memory_store writes, and a paused session refuses it", "paused", store, "session_blocked", "BLOCKED", true},
		{"a probe the registry calls read-only runs on a paused session", "paused", probe, "", "", false},
		{"HARD_STOP refuses an edit, quoting the violation", "hard stop", edit("web/app.js"), "session_blocked", seedHardStop, true},
		{"HARD_STOP refuses an unclassified MCP tool", "hard stop", unknownMCP, "session_blocked", "HARD_STOP", true},
		{"a high-risk mission without an approved plan refuses an edit", "plan not approved", edit("web/app.js"), "session_blocked", "plan", true},
		{"DECISION_REQUIRED refuses an edit in the blocked scope, naming the gate", "decision open", edit("db/migrations/0042.sql"), "session_blocked", "DEC-", true},
		{"DECISION_REQUIRED lets an edit outside the blocked scope run", "decision open", edit("web/app.js"), "", "", true},
		{"DECISION_REQUIRED lets the agent read the blocked scope", "decision open", read, "", "", false},
		{"a pending permission prompt about Bash refuses Bash", "permission prompt in direct mode", bash, "session_blocked", "tool:Bash", true},
		{"a pending permission prompt about Bash lets an edit run in DIRECT_MODE", "permission prompt in direct mode", edit("web/app.js"), "", "", true},
		{"a tracked session in CLASSIFYING executes nothing", "tracked, classifying", edit("web/app.js"), "not_executing", "CLASSIFYING", true},
		{"a parked run refuses an edit, naming its ask", "parked", edit("web/app.js"), "run_parked", "save this reading?", true},
		{"a parked run lets the agent read", "parked", read, "", "", false},
		{"a plan run's side effect must name its step", "plan run", edit("web/app.js"), "step_required", "step", true},
		{"a plan run's initial step runs", "plan run", withStep(probe, "cpu"), "", "", false},
		{"a step behind the unanswered stopping point is not released", "plan run", withStep(store, "store"), "step_not_released", "Save this reading?", true},
		{"a step the plan lacks is unknown_step", "plan run", withStep(edit("web/app.js"), "deploy"), "unknown_step", "deploy", true},
		{"a step on a run of no plan is unknown_step", "clean", withStep(read, "cpu"), "unknown_step", "plan", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a.T = t
			sess, run := states[tc.state][0], states[tc.state][1]
			body := clone(tc.call)
			body["run"] = run
			got := checkCall(a, sess, body)
			if got["allow"] != (tc.code == "") || got["side_effecting"] != tc.writes {
				t.Fatalf("check: %v, want allow %v, side_effecting %v", got, tc.code == "", tc.writes)
			}
			if got["next_action"] == "" || (tc.code != "" && (got["code"] != tc.code || !strings.Contains(got["reason"].(string), tc.says))) {
				t.Errorf("check: %v, want code %s saying %q", got, tc.code, tc.says)
			}
			rec := recordBody(tc.call)
			path := "/api/v1/runs/" + run + "/tool-calls"
			if tc.code == "" {
				c := a.Must(http.StatusCreated, http.MethodPost, path, a.AgentKey, rec)
				if c["side_effecting"] != tc.writes {
					t.Errorf("recorded %v, want side_effecting %v", c, tc.writes)
				}
				return
			}
			status := http.StatusConflict
			if tc.code == "unknown_step" || tc.code == "step_required" {
				status = http.StatusUnprocessableEntity
			}
			if status == http.StatusConflict {
				a.RefusedAndKept(sess, status, tc.code, http.MethodPost, path, a.AgentKey, rec)
			} else {
				a.Refused(sess, status, tc.code, http.MethodPost, path, a.AgentKey, rec)
			}
			r := a.Do(http.MethodPost, path, a.AgentKey, rec)
			if msg := errorField(t, r, "message"); msg != got["reason"] {
				t.Errorf("the recording says %q, the check %q", msg, got["reason"])
			}
			if tc.code == "session_blocked" && (errorField(t, r, "next_action") != got["next_action"] || errorField(t, r, "reason") == "") {
				t.Errorf("session_blocked without the brief's next_action and reason: %s", r.Body)
			}
		})
	}
	a.T = t
}

// TestAStepRunsOnlyAfterItsStoppingPointIsAnswered walks seed 001's
// graph-ask-demo as a plan run: a run of no approved plan is refused, the
// probe runs, the store waits on the stopping point, the ask names it, a
// lead answers "Save", and only the saving option's step is released, on
// every run of the plan.
func TestAStepRunsOnlyAfterItsStoppingPointIsAnswered(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	sess := a.Session(false)
	runs := "/api/v1/sessions/" + sess + "/runs"
	a.Refused(sess, http.StatusConflict, "no_approved_plan", http.MethodPost, runs, a.AgentKey, map[string]any{"name": "p", "plan": true})
	if r := a.Do(http.MethodPost, runs, a.AgentKey, map[string]any{"name": "p", "plan": true}); errorField(t, r, "plan_status") != "none" {
		t.Errorf("no plan: %s", r.Body)
	}
	risky := a.Session(true)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+risky+"/plan", a.AgentKey, graphAskPlan)
	if r := a.Do(http.MethodPost, "/api/v1/sessions/"+risky+"/runs", a.AgentKey, map[string]any{"name": "p", "plan": true}); r.Status != http.StatusConflict ||
		errorField(t, r, "code") != "no_approved_plan" || errorField(t, r, "plan_status") != "proposed" {
		t.Errorf("a proposed plan: %d %s", r.Status, r.Body)
	}

	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/plan", a.AgentKey, graphAskPlan)
	started := a.Must(http.StatusCreated, http.MethodPost, runs, a.AgentKey, map[string]any{"name": "graph-ask-demo", "plan": true})
	run := started["id"].(string)
	if started["plan"] == nil {
		t.Errorf("the run does not name its plan: %v", started)
	}
	calls := "/api/v1/runs/" + run + "/tool-calls"
	a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, map[string]any{"server": "mcp-monitor", "tool": "get_cpu_info", "step": "cpu"})
	storeCall := map[string]any{"server": "Vodou-Recall", "tool": "memory_store", "step": "store"}
	a.RefusedAndKept(sess, http.StatusConflict, "step_not_released", http.MethodPost, calls, a.AgentKey, storeCall)
	if r := a.Do(http.MethodPost, calls, a.AgentKey, storeCall); errorField(t, r, "stopping_point") != float64(1) || errorField(t, r, "step") != "store" {
		t.Errorf("step_not_released does not name the stopping point: %s", r.Body)
	}

	asks := "/api/v1/runs/" + run + "/asks"
	askBody := func(sp int) map[string]any {
		return map[string]any{"prompt": "Save this reading?", "options": map[string]string{"1": "Save", "2": "Discard"}, "stopping_point": sp}
	}
	a.Refused(sess, http.StatusUnprocessableEntity, "unknown_stopping_point", http.MethodPost, asks, a.AgentKey, askBody(9))
	// A run of no plan, on a session whose plan is not approved, has no
	// stopping point to ask.
	plain := openRun(a, risky, "no plan")
	a.Refused(risky, http.StatusUnprocessableEntity, "unknown_stopping_point", http.MethodPost, "/api/v1/runs/"+plain+"/asks", a.AgentKey, askBody(1))
	ask := a.Must(http.StatusCreated, http.MethodPost, asks, a.AgentKey, askBody(1))
	if ask["stopping_point"] != float64(1) || ask["run_status"] != "parked" {
		t.Fatalf("ask: %v", ask)
	}
	a.RefusedAndKept(sess, http.StatusConflict, "run_parked", http.MethodPost, calls, a.AgentKey, storeCall)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})

	a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, storeCall)
	discard := map[string]any{"server": "fs", "tool": "rm", "step": "discard"}
	a.RefusedAndKept(sess, http.StatusConflict, "step_not_released", http.MethodPost, calls, a.AgentKey, discard)
	if v := checkCall(a, sess, map[string]any{"tool": "mcp__fs__rm", "run": run, "step": "discard"}); v["allow"] != false || v["code"] != "step_not_released" {
		t.Errorf("check of the other option's step: %v", v)
	}
	next := a.Must(http.StatusCreated, http.MethodPost, runs, a.AgentKey, map[string]any{"name": "phase 2", "parent": run, "plan": true})
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+next["id"].(string)+"/tool-calls", a.AgentKey, storeCall)

	var stored string
	if err := a.Kit.SQL().QueryRow(`SELECT step || ' ' || paths FROM tool_calls WHERE run_id = ? AND tool = 'memory_store'`, run).Scan(&stored); err != nil || stored != "store []" {
		t.Errorf("stored step and paths %q (%v)", stored, err)
	}
}

// TestTheCheckRefusesWhatIsNotItsToAsk covers the check's own errors.
func TestTheCheckRefusesWhatIsNotItsToAsk(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess, other := a.Session(false), a.Session(false)
	run := openRun(a, other, "elsewhere")
	a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, checkPath(sess), a.OtherKey, map[string]any{"tool": "Edit"})
	a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, checkPath(sess), a.LeadTok, map[string]any{"tool": "Edit"})
	a.Refused("", http.StatusNotFound, "session_not_found", http.MethodPost, checkPath("ses_nope"), a.AgentKey, map[string]any{"tool": "Edit"})
	a.Refused(sess, http.StatusUnprocessableEntity, "tool_required", http.MethodPost, checkPath(sess), a.AgentKey, map[string]any{"tool": " "})
	a.Refused(sess, http.StatusUnprocessableEntity, "run_not_in_session", http.MethodPost, checkPath(sess), a.AgentKey, map[string]any{"tool": "Edit", "run": run})
	a.Refused(sess, http.StatusNotFound, "run_not_found", http.MethodPost, checkPath(sess), a.AgentKey, map[string]any{"tool": "Edit", "run": "run_nope"})
	a.Refused(sess, http.StatusUnprocessableEntity, "unknown_field", http.MethodPost, checkPath(sess), a.AgentKey, map[string]any{"tool": "Edit", "bogus": []string{"x"}})

	t.Log("admins classify a tool by its path; the registry then decides the check")
	a.Refused("", http.StatusForbidden, "forbidden", http.MethodPut, "/api/v1/tools/claude-code/Bash", a.LeadTok, map[string]any{"side_effecting": false})
	a.Refused("", http.StatusUnprocessableEntity, "side_effecting_required", http.MethodPut, "/api/v1/tools/claude-code/Bash", a.AdminTok, map[string]any{})
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+sess+"/pause", a.LeadTok, map[string]any{"reason": "Release freeze"})
	if v := checkCall(a, sess, map[string]any{"tool": "Bash", "input": map[string]any{"command": "ls"}}); v["allow"] != false {
		t.Errorf("Bash on a paused session: %v", v)
	}
	tool := a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/claude-code/Bash", a.AdminTok, map[string]any{"side_effecting": false})
	if tool["server"] != "claude-code" || tool["tool"] != "Bash" || tool["side_effecting"] != false {
		t.Errorf("classified %v", tool)
	}
	if v := checkCall(a, sess, map[string]any{"tool": "Bash", "input": map[string]any{"command": "ls"}}); v["allow"] != true || v["side_effecting"] != false {
		t.Errorf("Bash the registry calls read-only, on a paused session: %v", v)
	}
}

// TestAChangeOnABlockedSessionIsRefusedAndKept: the one refusal that
// writes. The attempt is in the timeline and in the blocked-changes
// report; the session's change is not.
func TestAChangeOnABlockedSessionIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	for _, tc := range []struct {
		name, code, says string
		session          func() string
	}{
		{"a person pulled the brake", "paused", "Release freeze", func() string {
			s := a.Session(false)
			a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/pause", a.LeadTok, map[string]any{"reason": "Release freeze"})
			return s
		}},
		{"the plan of a high-risk mission is not approved", "plan_not_approved", "plan", func() string { return a.Session(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.T = t
			sess := tc.session()
			rows := len(audit(a, "/api/v1/audit/blocked-changes", a.ViewerTok).Rows)
			r := reportChange(a, sess, changeBody([2]string{"web/app.js", "x\n"}))
			webtest.CheckError(t, r, http.StatusConflict, "code_change_blocked")
			if errorField(t, r, "next_action") != "BLOCKED" || errorField(t, r, "reason_code") != tc.code ||
				!strings.Contains(fmt.Sprint(errorField(t, r, "reason")), tc.says) {
				t.Errorf("refusal %s", r.Body)
			}
			if n := webtest.CountOf(a.Timeline(sess), "change.blocked"); n != 1 {
				t.Errorf("%d change.blocked events in the timeline, want 1", n)
			}
			if d := a.DetailOf(sess); d.Change != nil {
				t.Errorf("the refused change was recorded: %+v", d.Change)
			}
			got := audit(a, "/api/v1/audit/blocked-changes", a.ViewerTok).Rows
			if len(got) != rows+1 {
				t.Fatalf("blocked-changes has %d rows, want %d", len(got), rows+1)
			}
			last := got[len(got)-1]
			if last["session_id"] != sess || last["code"] != tc.code || fmt.Sprint(last["files"]) != "[web/app.js]" {
				t.Errorf("row %v", last)
			}
		})
	}
	a.T = t
}

// TestTheCheckAndTheRecordNeverDisagree asks the check and then records
// the same call for hundreds of generated inputs over every state the
// gate tells apart: the check allows exactly what the ledger records, and
// denies with exactly the code the ledger refuses with.
func TestTheCheckAndTheRecordNeverDisagree(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/claude-code/Bash", a.AdminTok, map[string]any{"side_effecting": true})
	states := gateStates(a)
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func(list ...string) string { return list[rng.IntN(len(list))] }
	tools := []string{"Read", "Grep", "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "mcp__github__create_issue",
		"mcp__mcp-monitor__get_cpu_info", "mcp__Vodou-Recall__memory_store", "mcp__fs__rm", "mcp__madebook__propose_plan"}
	seen := map[string]int{}
	for i := range 300 {
		name := pick(names...)
		sess, run := states[name][0], states[name][1]
		body := map[string]any{"tool": pick(tools...), "run": run}
		if p := pick("", "web/app.js", "db/migrations/0042.sql", "db/migrations", "./db/migrations/x.sql", "web/../db/migrations/x.sql",
			"db//migrations/x.sql", "/db/migrations/x.sql", "../db/migrations/x.sql"); p != "" {
			body["input"] = map[string]any{pick("file_path", "notebook_path", "path"): p}
			if body["tool"] == "Bash" {
				body["input"] = map[string]any{"command": "rm -f " + p + " && echo done"}
			}
		}
		if s := pick("", "", "cpu", "store", "discard", "deploy"); s != "" {
			body["step"] = s
		}
		v := a.Must(http.StatusOK, http.MethodPost, checkPath(sess), a.AgentKey, body)
		r := a.Do(http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, recordBody(body))
		what, _ := json.Marshal(body)
		if allowed := r.Status == http.StatusCreated; allowed != v["allow"] {
			t.Fatalf("input %d (%s, %s): the check says allow=%v, the ledger answered %d %s", i, name, what, v["allow"], r.Status, r.Body)
		}
		if r.Status != http.StatusCreated {
			if code := errorField(t, r, "code"); code != v["code"] {
				t.Fatalf("input %d (%s, %s): the check says %v, the ledger %v", i, name, what, v["code"], code)
			}
			seen[v["code"].(string)]++
		} else {
			seen["allowed"]++
		}
	}
	for _, want := range []string{"allowed", "session_blocked", "not_executing", "run_parked", "step_not_released", "unknown_step", "step_required"} {
		if seen[want] == 0 {
			t.Errorf("no generated input was %s (%v): the test does not cover it", want, seen)
		}
	}
}

// A run that executes the plan is always new: it cannot also re-attach by
// external_id.
func TestAPlanRunCannotReattach(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	a.Refused(id, http.StatusUnprocessableEntity, "plan_with_external_id", http.MethodPost, "/api/v1/sessions/"+id+"/runs",
		a.AgentKey, map[string]any{"name": "migrate", "plan": true, "external_id": "claude-1"})
}

// TestAClaudeCodeSessionRunsAStepOnlyAfterItsStoppingPointIsAnswered walks
// the audit's case: a session with an approved plan whose step store
// (Vodou-Recall's memory_store) lies behind stopping point 1, and a Claude
// Code hook run that names no step. The call is taken as step store, and
// refused (check and record alike, the refusal kept) until the agent asks
// the stopping point's question on a run of its own and a lead answers
// Save; then it runs on the hook run, recorded as step store, and the
// audit finds nothing premature.
func TestAClaudeCodeSessionRunsAStepOnlyAfterItsStoppingPointIsAnswered(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	sess := a.Session(false)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/plan", a.AgentKey, graphAskPlan)
	hook := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/runs", a.AgentKey,
		map[string]any{"name": "claude-code", "external_id": "claude-1"})["id"].(string)
	calls := "/api/v1/runs/" + hook + "/tool-calls"
	store := map[string]any{"tool": "mcp__Vodou-Recall__memory_store", "run": hook}

	// A side effect before the question: not premature, the ask is not
	// on this run.
	a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, map[string]any{"server": "claude-code", "tool": "Edit", "paths": []string{"web/app.js"}})
	v := checkCall(a, sess, store)
	if v["allow"] != false || v["code"] != "step_not_released" {
		t.Fatalf("check of memory_store before the answer: %v", v)
	}
	for _, says := range []string{`step "store"`, "stopping point 1", "Save this reading?", "option 1 (Save)", "start_run",
		`"parent": "` + hook + `"`, `"stopping_point": 1`, "wait for the answer"} {
		if !strings.Contains(v["reason"].(string), says) {
			t.Errorf("the reason %q does not say %q", v["reason"], says)
		}
	}
	if v := checkCall(a, sess, map[string]any{"tool": "mcp__Vodou-Recall__memory_store"}); v["code"] != "step_not_released" {
		t.Errorf("a check naming no run: %v", v)
	}
	a.RefusedAndKept(sess, http.StatusConflict, "step_not_released", http.MethodPost, calls, a.AgentKey, recordBody(store))
	if r := a.Do(http.MethodPost, calls, a.AgentKey, recordBody(store)); errorField(t, r, "step") != "store" || errorField(t, r, "stopping_point") != float64(1) {
		t.Errorf("step_not_released does not name the step and stopping point: %s", r.Body)
	}
	if n := webtest.CountOf(a.Timeline(sess), "tool_call.refused"); n != 2 {
		t.Errorf("%d tool_call.refused events in the timeline, want 2 (RefusedAndKept's and this one's)", n)
	}
	// The initial step and a call of no step run, recorded as such.
	if c := a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, map[string]any{"server": "mcp-monitor", "tool": "get_cpu_info"}); c["step"] != "cpu" {
		t.Errorf("the probe is recorded as step %v, want cpu", c["step"])
	}
	if c := a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, map[string]any{"server": "claude-code", "tool": "Edit",
		"paths": []string{"web/app.js"}}); c["step"] != nil {
		t.Errorf("an edit no step names is recorded as step %v", c["step"])
	}

	// The agent asks the stopping point's question on a run of its own,
	// under the hook run: that run parks, the hook run goes on.
	asking := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/runs", a.AgentKey,
		map[string]any{"name": "stopping point 1", "parent": hook})["id"].(string)
	ask := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+asking+"/asks", a.AgentKey, map[string]any{
		"prompt": "Save this reading?", "options": map[string]string{"1": "Save", "2": "Discard"}, "stopping_point": 1})
	if ask["stopping_point"] != float64(1) || ask["run_status"] != "parked" {
		t.Fatalf("ask: %v", ask)
	}
	if v := checkCall(a, sess, store); v["code"] != "step_not_released" {
		t.Errorf("check while the question waits: %v", v)
	}
	a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, map[string]any{"server": "claude-code", "tool": "Edit", "paths": []string{"web/b.js"}})
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})
	if v := checkCall(a, sess, store); v["allow"] != true {
		t.Fatalf("check after Save: %v", v)
	}
	c := a.Must(http.StatusCreated, http.MethodPost, calls, a.AgentKey, recordBody(store))
	if c["step"] != "store" || c["side_effecting"] != true {
		t.Errorf("recorded %v, want step store, side-effecting", c)
	}
	// Option 2's step is still held.
	if v := checkCall(a, sess, map[string]any{"tool": "mcp__fs__rm", "run": hook}); v["code"] != "step_not_released" {
		t.Errorf("the other option's step: %v", v)
	}
	if b := audit(a, "/api/v1/audit/premature-side-effects", a.ViewerTok); len(b.Rows) != 0 {
		t.Errorf("premature side effects: %v, want none", b.Rows)
	}
}

// TestMadebooksOwnToolsAlwaysRun: a session that is BLOCKED (its plan not
// approved), HARD_STOP or paused can still reach Madebook through its MCP
// tools (brief, propose_plan, open_decision, ask …): the check allows them
// and the ledger records them as read-only, even when the registry says
// otherwise.
func TestMadebooksOwnToolsAlwaysRun(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/madebook/propose_plan", a.AdminTok, map[string]any{"side_effecting": true})
	states := gateStates(a)
	for _, name := range []string{"plan not approved", "hard stop", "paused", "parked"} {
		sess, run := states[name][0], states[name][1]
		for _, tool := range gate.GovernanceTools() {
			v := checkCall(a, sess, map[string]any{"tool": "mcp__madebook__" + tool, "run": run})
			if v["allow"] != true || v["side_effecting"] != false {
				t.Errorf("%s: check of mcp__madebook__%s: %v", name, tool, v)
			}
		}
		c := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey,
			map[string]any{"server": "madebook", "tool": "propose_plan"})
		if c["side_effecting"] != false {
			t.Errorf("%s: propose_plan recorded as %v", name, c)
		}
		if v := checkCall(a, sess, map[string]any{"tool": "mcp__madebook__drop_everything", "run": run}); v["allow"] != false {
			t.Errorf("%s: a tool Madebook's server does not have is not one of its own: %v", name, v)
		}
	}
}
