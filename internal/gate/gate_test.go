package gate_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

func TestClassify(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name             string
		server, tool     string
		registered, said *bool
		want             bool
	}{
		{"Read is one of Claude Code's read-only built-ins", gate.ClaudeCode, "Read", nil, nil, false},
		{"TodoWrite, despite its name, changes no file", gate.ClaudeCode, "TodoWrite", nil, nil, false},
		{"Edit writes", gate.ClaudeCode, "Edit", nil, nil, true},
		{"Bash writes unless the registry says otherwise", gate.ClaudeCode, "Bash", nil, nil, true},
		{"the registry may call Bash read-only", gate.ClaudeCode, "Bash", &no, nil, false},
		{"the registry may call Read side-effecting", gate.ClaudeCode, "Read", &yes, nil, true},
		{"a Read on another server is not the built-in: unclassified, it writes", "fs", "Read", nil, nil, true},
		{"a tool nobody classified writes, whatever the agent says", "fs", "mystery", nil, &no, true},
		{"the registry wins over the agent's false", "Vodou-Recall", "memory_store", &yes, &no, true},
		{"the agent may raise a read-only tool to writing", "mcp-monitor", "get_cpu_info", &no, &yes, true},
		{"a registered read-only tool stays read-only when the agent agrees", "mcp-monitor", "get_cpu_info", &no, &no, false},
		{"Madebook's own propose_plan never writes", gate.Madebook, "propose_plan", nil, nil, false},
		{"nor does its brief, even if the registry says it writes", gate.Madebook, "brief", &yes, nil, false},
		{"an unknown tool on the madebook server is unclassified: it writes", gate.Madebook, "drop_tables", nil, nil, true},
		{"a brief tool on another server is not Madebook's", "other", "brief", nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := gate.Classify(tc.server, tc.tool, tc.registered, tc.said); got != tc.want {
				t.Errorf("Classify = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestToolNames(t *testing.T) {
	for _, tc := range []struct{ name, server, tool string }{
		{"Edit", gate.ClaudeCode, "Edit"},
		{"mcp__github__create_issue", "github", "create_issue"},
		{"mcp__vodou_recall__memory__store", "vodou_recall", "memory__store"},
		{"mcp__broken", gate.ClaudeCode, "mcp__broken"},
		{"mcp____x", gate.ClaudeCode, "mcp____x"},
	} {
		server, tool := gate.SplitTool(tc.name)
		if server != tc.server || tool != tc.tool {
			t.Errorf("SplitTool(%q) = %q, %q; want %q, %q", tc.name, server, tool, tc.server, tc.tool)
		}
		if tc.server != gate.ClaudeCode || !strings.HasPrefix(tc.name, "mcp__") {
			if got := gate.ToolName(server, tool); got != tc.name {
				t.Errorf("ToolName(%q, %q) = %q, want %q", server, tool, got, tc.name)
			}
		}
	}
}

// object is a tool's input as a check reads it: flat, or decoded by
// encoding/json (which a list among its values needs); Paths reads both
// alike.
func object(t *testing.T, flat bool, js string) input.Object {
	t.Helper()
	if flat {
		o, err := input.ParseObject([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	var o input.Object
	if err := json.Unmarshal([]byte(js), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// planOf is seed 001's graph-ask-demo as a plan: probes first, then a
// menu whose option 1 saves the reading and option 2 discards it.
func planOf() *plan.Plan {
	return &plan.Plan{
		InitialSteps: []plan.Step{{ID: "cpu"}, {ID: "memory"}},
		StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Save this reading?", Options: map[string]plan.Option{
			"1": {Label: "Save", Steps: []plan.Step{{ID: "store"}}},
			"2": {Label: "Discard", Steps: []plan.Step{{ID: "discard"}}},
		}}},
	}
}

func TestDecide(t *testing.T) {
	clean := gate.Session{ID: "ses_1", NextAction: protocol.Continue, Reason: protocol.ContinueText}
	with := func(f func(*gate.Session)) gate.Session {
		s := clean
		f(&s)
		return s
	}
	paused := with(func(s *gate.Session) {
		s.NextAction, s.Reason = protocol.Blocked, "A person paused this session: Release freeze"
	})
	hardStop := with(func(s *gate.Session) { s.NextAction, s.Reason = protocol.HardStop, "Secrets in source was violated." })
	gated := with(func(s *gate.Session) {
		s.NextAction, s.Reason = protocol.DecisionRequired, "DEC-001 is waiting on a person: Drop the legacy billing table?"
		s.BlockedScope = []string{"db/migrations", "tool:Bash"}
	})
	idle := with(func(s *gate.Session) { s.Tracked, s.Lifecycle = true, lifecycle.Idle })
	asked := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	before := asked.Add(-time.Minute)
	parkedRun := &gate.Run{ID: "run_1", OpenAsk: &gate.Ask{ID: "ask_1", Prompt: "save?", AskedAt: asked}}
	planRun := &gate.Run{ID: "run_2", Plan: planOf(), Released: map[int][]string{}}
	answered := &gate.Run{ID: "run_3", Plan: planOf(), Released: map[int][]string{1: {"1"}}}
	edit := func(paths ...string) gate.Call {
		return gate.Call{Tool: "Edit", SideEffecting: true, Touches: gate.Named(paths, gate.Where{})}
	}
	read := gate.Call{Tool: "Read", Touches: gate.Named([]string{"db/migrations/0001.sql"}, gate.Where{})}
	step := func(c gate.Call, s string) gate.Call { c.Step = s; return c }
	recall := func() *plan.Plan {
		p := planOf()
		p.InitialSteps[0].Server, p.InitialSteps[0].Tool = "mcp-monitor", "get_cpu_info"
		p.StoppingPoints[0].Options["1"].Steps[0].Server = "Vodou-Recall"
		p.StoppingPoints[0].Options["1"].Steps[0].Tool = "memory_store"
		return p
	}
	withPlan := func(released map[int][]string) gate.Session {
		return with(func(s *gate.Session) { s.PlanApproved, s.Plan, s.Released = true, recall(), released })
	}
	planned, plannedAnswered, plannedOther := withPlan(nil), withPlan(map[int][]string{1: {"1"}}), withPlan(map[int][]string{1: {"2"}})
	hookRun := &gate.Run{ID: "run_hook"}
	store := gate.Call{Tool: "mcp__Vodou-Recall__memory_store", SideEffecting: true}
	probe := gate.Call{Tool: "mcp__mcp-monitor__get_cpu_info", SideEffecting: true}

	cases := []struct {
		name string
		s    gate.Session
		r    *gate.Run
		c    gate.Call
		code string
		kind errs.Kind
	}{
		{"a clean session runs an edit", clean, nil, edit("web/app.js"), "", 0},
		{"a paused session refuses every side effect, quoting the pause", paused, nil, edit("web/app.js"), gate.CodeSessionBlocked, errs.Conflict},
		{"a paused session still lets the agent read", paused, nil, read, "", 0},
		{"HARD_STOP refuses every side effect", hardStop, nil, gate.Call{Tool: "Bash", SideEffecting: true}, gate.CodeSessionBlocked, errs.Conflict},
		{"DECISION_REQUIRED refuses an edit in the blocked scope", gated, nil, edit("db/migrations/0042.sql"), gate.CodeSessionBlocked, errs.Conflict},
		{"DECISION_REQUIRED runs an edit outside the blocked scope", gated, nil, edit("web/app.js"), "", 0},
		{"a permission prompt's tool:Bash refuses Bash", gated, nil, gate.Call{Tool: "Bash", SideEffecting: true}, gate.CodeSessionBlocked, errs.Conflict},
		{"DECISION_REQUIRED lets a read of the blocked scope run", gated, nil, read, "", 0},
		{"a tracked session in IDLE executes nothing", idle, nil, edit("web/app.js"), gate.CodeNotExecuting, errs.Conflict},
		{"a parked run refuses a side effect, naming the ask", clean, parkedRun, edit("web/app.js"), gate.CodeRunParked, errs.Conflict},
		{"a call reported late that started before the ask is the audit's business", clean, parkedRun,
			gate.Call{Tool: "Edit", SideEffecting: true, StartedAt: &before}, "", 0},
		{"a parked run lets a read run", clean, parkedRun, read, "", 0},
		{"a side effect on a plan run names its step", clean, planRun, edit("web/app.js"), gate.CodeStepRequired, errs.Invalid},
		{"an initial step runs", clean, planRun, step(edit(), "cpu"), "", 0},
		{"a step behind an unanswered stopping point is not released", clean, planRun, step(edit(), "store"), gate.CodeStepNotReleased, errs.Conflict},
		{"answered with option 1, option 1's step runs", clean, answered, step(edit(), "store"), "", 0},
		{"answered with option 1, option 2's step is still not released", clean, answered, step(edit(), "discard"), gate.CodeStepNotReleased, errs.Conflict},
		{"a step the plan lacks is unknown, even for a read", clean, answered, step(read, "deploy"), gate.CodeUnknownStep, errs.Invalid},
		{"a step on a run of no plan is unknown", clean, &gate.Run{ID: "run_4"}, step(edit(), "cpu"), gate.CodeUnknownStep, errs.Invalid},
		{"a step with no run is unknown", clean, nil, step(read, "cpu"), gate.CodeUnknownStep, errs.Invalid},
		{"the brief comes first: a paused session refuses even a released step", paused, answered, step(edit(), "store"), gate.CodeSessionBlocked, errs.Conflict},
		// A call on no plan run that names no step (a Claude Code session's
		// hook run) is matched with the session's approved plan by its
		// server and tool.
		{"a call matching a step behind an unanswered stopping point is not released", planned, hookRun, store, gate.CodeStepNotReleased, errs.Conflict},
		{"so it is with no run at all", planned, nil, store, gate.CodeStepNotReleased, errs.Conflict},
		{"answered with option 1, the matched step runs", plannedAnswered, hookRun, store, "", 0},
		{"answered with option 2, option 1's step is still not released", plannedOther, hookRun, store, gate.CodeStepNotReleased, errs.Conflict},
		{"a call matching an initial step runs", planned, hookRun, probe, "", 0},
		{"a call matching no step runs as before", planned, hookRun, edit("web/app.js"), "", 0},
		{"a read-only call matching a step still runs", planned, hookRun, gate.Call{Tool: "mcp__Vodou-Recall__memory_store"}, "", 0},
		{"a parked hook run refuses first", planned, parkedRun, store, gate.CodeRunParked, errs.Conflict},
		{"a plan run keeps its own rule: name the step", planned, planRun, store, gate.CodeStepRequired, errs.Invalid},
		{"Madebook's own tools run while the plan is unapproved", paused, nil, gate.Call{Tool: "mcp__madebook__propose_plan",
			SideEffecting: gate.Classify(gate.Madebook, "propose_plan", nil, nil)}, "", 0},
	}
	wantStep := map[string]string{store.Tool: "store", probe.Tool: "cpu"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := gate.Decide(tc.s, tc.r, tc.c)
			if v.Allow != (tc.code == "") || v.Code != tc.code {
				t.Fatalf("Decide = %+v, want code %q", v, tc.code)
			}
			err := v.Err()
			if tc.code == "" && tc.s.Plan != nil && tc.r != planRun && v.Step != wantStep[tc.c.Tool] {
				t.Errorf("the verdict takes the call as step %q, want %q", v.Step, wantStep[tc.c.Tool])
			}
			if tc.code == "" {
				if err != nil || v.Reason != "" {
					t.Errorf("an allowed call has err %v, reason %q", err, v.Reason)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code || e.Message != v.Reason || v.Reason == "" {
				t.Errorf("Err() = %#v, want kind %v code %s with the reason", err, tc.kind, tc.code)
			}
			if tc.code == gate.CodeSessionBlocked {
				if !strings.Contains(v.Reason, tc.s.Reason) || e.Details["next_action"] != tc.s.NextAction.String() ||
					e.Details["reason"] != tc.s.Reason {
					t.Errorf("session_blocked does not carry the brief: %q %v", v.Reason, e.Details)
				}
			}
			if tc.code == gate.CodeRunParked && e.Details["ask"] != "ask_1" {
				t.Errorf("run_parked names %v", e.Details)
			}
			if tc.code == gate.CodeStepNotReleased && (e.Details["stopping_point"] != 1 || !strings.Contains(v.Reason, "Save this reading?")) {
				t.Errorf("step_not_released: %q %v", v.Reason, e.Details)
			}
			if tc.code == gate.CodeStepNotReleased && tc.r != planRun && tc.r != answered {
				// It says what to do: ask the stopping point's question, on
				// the run, and wait for the answer.
				for _, want := range []string{`step "store"`, "stopping point 1", "option 1 (Save)", `"stopping_point": 1`, "wait for the answer"} {
					if !strings.Contains(v.Reason, want) {
						t.Errorf("the reason %q does not say %q", v.Reason, want)
					}
				}
				if !strings.Contains(v.Reason, "start_run") || (tc.r != nil && !strings.Contains(v.Reason, `"parent": "`+tc.r.ID+`"`)) {
					t.Errorf("the reason %q does not say to ask on a run of its own, under the call's run", v.Reason)
				}
				if e.Details["step"] != "store" {
					t.Errorf("step_not_released names step %v", e.Details["step"])
				}
			}
		})
	}
}
