// Package gate is the executor gate's one decision: may this tool call run
// now? It is pure (facts in, a verdict out, no I/O and no clock), and both
// places that ask it use it: the check an agent's hook makes before every
// tool call (`POST /api/v1/sessions/{id}/tool-calls/check`, which writes
// nothing) and the recording of a call in the ledger (`POST
// /api/v1/runs/{id}/tool-calls`, which refuses what the check denies). The
// same facts give the same verdict in both, so the check and the record
// cannot disagree.
package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// ClaudeCode is the server Claude Code's built-in tools (Read, Edit, Bash,
// …) are classified under, in the tool registry and in recorded calls.
const ClaudeCode = "claude-code"

// mcpPrefix starts the name Claude Code gives an MCP tool:
// mcp__<server>__<tool>.
const mcpPrefix = "mcp__"

// readOnly are Claude Code's built-in tools that change nothing. Every
// other tool (Edit, Write, MultiEdit, NotebookEdit, Bash, and any tool
// nobody classified) is side-effecting unless the registry says otherwise.
var readOnly = map[string]bool{
	"Read": true, "Grep": true, "Glob": true, "LS": true, "WebSearch": true, "WebFetch": true, "TodoWrite": true,
}

// ReadOnlyBuiltins lists Claude Code's built-in read-only tools, sorted.
func ReadOnlyBuiltins() []string { return slices.Sorted(maps.Keys(readOnly)) }

// SplitTool returns the server and tool of a tool as a coding agent names
// it: "mcp__github__create_issue" is tool create_issue of server github;
// any other name ("Edit", "Bash") is a built-in of ClaudeCode.
func SplitTool(name string) (server, tool string) {
	if rest, ok := strings.CutPrefix(name, mcpPrefix); ok {
		if s, t, ok := strings.Cut(rest, "__"); ok && s != "" && t != "" {
			return s, t
		}
	}
	return ClaudeCode, name
}

// ToolName is the name a coding agent knows the tool by, the inverse of
// SplitTool: the tool itself for a ClaudeCode built-in, mcp__server__tool
// for any other server.
func ToolName(server, tool string) string {
	if server == ClaudeCode {
		return tool
	}
	return mcpPrefix + server + "__" + tool
}

// Classify says whether a call writes. The registry's entry decides when
// there is one (registered non-nil); else a ClaudeCode read-only built-in
// does not write; else the call writes (fail safe). The agent's own flag
// (said) may only raise it: a call the agent says writes, writes.
func Classify(server, tool string, registered, said *bool) bool {
	writes := true
	switch {
	case registered != nil:
		writes = *registered
	case server == ClaudeCode && readOnly[tool]:
		writes = false
	}
	return writes || (said != nil && *said)
}

// pathKeys are the input fields a coding agent's tool names its paths in.
var pathKeys = []string{"file_path", "notebook_path", "path"}

// Paths returns the paths a tool's input names, in its file_path,
// notebook_path and path fields, in that order; fields that are absent,
// empty or not strings name none.
func Paths(input map[string]json.RawMessage) []string {
	var out []string
	for _, k := range pathKeys {
		raw, ok := input[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// InScope reports whether path p falls in the scope entry: a glob (an
// entry with *, ? or [) matches as glob.Match says; any other entry is a
// path prefix, matching itself and everything under it ("db/migrations"
// matches "db/migrations/0001.sql"). A leading "./" is ignored on both.
func InScope(entry, p string) bool {
	entry = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(entry), "./"), "/")
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	if entry == "" || p == "" {
		return false
	}
	if strings.ContainsAny(entry, "*?[") {
		return glob.Match(entry, p)
	}
	return p == entry || strings.HasPrefix(p, entry+"/")
}

// Session is what the gate knows of the session: its brief, decided now,
// and its lifecycle.
type Session struct {
	ID string
	// AgentKeyID is the key that opened the session (its callers check
	// ownership with it; Decide does not read it).
	AgentKeyID int64
	// Tracked: the session's agent has reported a lifecycle event, so the
	// lifecycle governs.
	Tracked   bool
	Lifecycle lifecycle.State
	// NextAction, Reason and BlockedScope are the brief's.
	NextAction   protocol.State
	Reason       string
	BlockedScope []string
}

// Run is what the gate knows of the run a call is part of.
type Run struct {
	ID string
	// OpenAsk is the question the run is parked on; nil: not parked.
	OpenAsk *Ask
	// Plan is the approved plan the run executes; nil: it executes none.
	Plan *plan.Plan
	// Released are the options answered at the plan's stopping points, on
	// any run of the plan: stopping point id → the options chosen.
	Released map[int][]string
}

// Ask is the question a parked run waits on.
type Ask struct {
	ID      string
	Prompt  string
	AskedAt time.Time
}

// Call is the tool call asked about.
type Call struct {
	// Tool is the tool as the agent knows it (see ToolName); a blocked
	// scope entry "tool:<Tool>" blocks it.
	Tool string
	// SideEffecting is the call's classification (see Classify).
	SideEffecting bool
	// Paths are the paths the call names.
	Paths []string
	// Step is the plan step the call runs; "" names none.
	Step string
	// StartedAt is when the call started, if reported late; nil is now.
	StartedAt *time.Time
}

// The codes of the gate's refusals.
const (
	CodeSessionBlocked  = "session_blocked"   // 409: the brief forbids the call
	CodeNotExecuting    = "not_executing"     // 409: a tracked session in a state that executes nothing
	CodeRunParked       = "run_parked"        // 409: the run waits on a person's answer
	CodeStepNotReleased = "step_not_released" // 409: the step lies behind an unanswered stopping point
	CodeUnknownStep     = "unknown_step"      // 422: the run's plan has no such step (or the run executes no plan)
	CodeStepRequired    = "step_required"     // 422: a side-effecting call on a run executing a plan names no step
)

// Verdict is the gate's answer: the call may run, or it may not, why, and
// what to do instead.
type Verdict struct {
	Allow bool
	// Code is the refusal's code; "" when allowed.
	Code string
	// Kind is the refusal's error kind: Conflict, or Invalid for a step
	// the plan does not have.
	Kind errs.Kind
	// Reason says, when refused, why and what to do instead.
	Reason string
	// Details are the refusal's extra fields (next_action and reason, the
	// brief's; ask; lifecycle; step, stopping_point and option).
	Details map[string]any
}

// Err is the refusal as the ledger answers it; nil when allowed.
func (v Verdict) Err() error {
	if v.Allow {
		return nil
	}
	e := errs.E(v.Kind, v.Code, "%s", v.Reason)
	for _, k := range slices.Sorted(maps.Keys(v.Details)) {
		e = e.With(k, v.Details[k])
	}
	return e
}

var allow = Verdict{Allow: true}

func refuse(kind errs.Kind, code, reason string, details map[string]any) Verdict {
	return Verdict{Code: code, Kind: kind, Reason: reason, Details: details}
}

// Decide says whether the call may run in the session now, on run r (nil:
// the call names no run). Read-only calls run unless they name a step the
// run's plan lacks. A side-effecting call is refused, in this order:
//   - the brief is HARD_STOP or BLOCKED (session_blocked);
//   - the brief is DECISION_REQUIRED and the call names a path in the
//     blocked scope, or its tool is blocked (session_blocked);
//   - the session is tracked and its lifecycle state executes nothing
//     (not_executing);
//   - the run is parked, unless the call started before the question was
//     asked (run_parked);
//   - the run executes a plan and the call names no step (step_required),
//     or a step behind a stopping point not yet answered with the option
//     that holds it (step_not_released).
//
// A step the plan does not have is unknown_step, whatever the call.
func Decide(s Session, r *Run, c Call) Verdict {
	if c.Step != "" {
		if v, known := knownStep(r, c.Step); !known {
			return v
		}
	}
	if !c.SideEffecting {
		return allow
	}
	brief := map[string]any{"next_action": s.NextAction.String(), "reason": s.Reason}
	switch s.NextAction {
	case protocol.HardStop, protocol.Blocked:
		return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
			"Session %s is %s: %s No side-effecting call may run until that is resolved; read, plan, or ask a person, and take a brief before you try again.",
			s.ID, s.NextAction, sentence(s.Reason)), brief)
	case protocol.DecisionRequired:
		if entry, what := blockedBy(s.BlockedScope, c); entry != "" {
			return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
				"Session %s is DECISION_REQUIRED and %s is in its blocked scope (%s): %s Work outside the blocked scope, or wait for the answer in your next brief.",
				s.ID, what, entry, sentence(s.Reason)), brief)
		}
	}
	if s.Tracked && !lifecycle.Executes(s.Lifecycle) {
		return refuse(errs.Conflict, CodeNotExecuting, fmt.Sprintf(
			"Session %s is in %s, which executes nothing: a side-effecting call runs only in EXECUTING or DIRECT_MODE.",
			s.ID, s.Lifecycle), map[string]any{"lifecycle": string(s.Lifecycle)})
	}
	if r == nil {
		return allow
	}
	if a := r.OpenAsk; a != nil && (c.StartedAt == nil || !c.StartedAt.Before(a.AskedAt)) {
		// A call reported late that started before the question was asked
		// happened before the run parked: it is recorded as reported, and
		// the audit finds it.
		return refuse(errs.Conflict, CodeRunParked, fmt.Sprintf(
			"Run %s is parked on ask %s (%q): a side-effecting call must wait for a person's answer.",
			r.ID, a.ID, a.Prompt), map[string]any{"ask": a.ID})
	}
	if r.Plan != nil && c.Step == "" {
		return refuse(errs.Invalid, CodeStepRequired, fmt.Sprintf(
			"Run %s executes a plan: name the plan step this side-effecting call runs (\"step\").", r.ID), nil)
	}
	if r.Plan != nil {
		return released(r, c.Step)
	}
	return allow
}

// knownStep reports whether the run's plan has the step; when it does not
// the verdict is the refusal.
func knownStep(r *Run, step string) (Verdict, bool) {
	if r == nil || r.Plan == nil {
		id := ""
		if r != nil {
			id = r.ID
		}
		return refuse(errs.Invalid, CodeUnknownStep, fmt.Sprintf(
			"Run %s executes no plan, so it has no step %q: start the run with \"plan\": true, or leave \"step\" out.", id, step),
			map[string]any{"step": step}), false
	}
	if slices.ContainsFunc(r.Plan.InitialSteps, func(s plan.Step) bool { return s.ID == step }) {
		return allow, true
	}
	for _, sp := range r.Plan.StoppingPoints {
		for _, o := range sp.Options {
			if slices.ContainsFunc(o.Steps, func(s plan.Step) bool { return s.ID == step }) {
				return allow, true
			}
		}
	}
	return refuse(errs.Invalid, CodeUnknownStep, fmt.Sprintf(
		"The plan run %s executes has no step %q: name one of its steps.", r.ID, step), map[string]any{"step": step}), false
}

// released decides a known step: an initial step runs; a step in an
// option's steps runs once its stopping point was answered with that
// option (any such option, when several hold it).
func released(r *Run, step string) Verdict {
	if slices.ContainsFunc(r.Plan.InitialSteps, func(s plan.Step) bool { return s.ID == step }) {
		return allow
	}
	var first *plan.StoppingPoint
	var firstOption string
	for i := range r.Plan.StoppingPoints {
		sp := &r.Plan.StoppingPoints[i]
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			if !slices.ContainsFunc(sp.Options[key].Steps, func(s plan.Step) bool { return s.ID == step }) {
				continue
			}
			if slices.Contains(r.Released[sp.ID], key) {
				return allow
			}
			if first == nil {
				first, firstOption = sp, key
			}
		}
	}
	return refuse(errs.Conflict, CodeStepNotReleased, fmt.Sprintf(
		"Step %q lies behind stopping point %d (%q): it runs only after a person answers that stopping point's ask with option %s (%s). Ask it on this run with \"stopping_point\": %d and wait for the answer.",
		step, first.ID, first.Title, firstOption, first.Options[firstOption].Label, first.ID),
		map[string]any{"step": step, "stopping_point": first.ID, "option": firstOption})
}

// blockedBy returns the blocked scope entry the call falls in and what of
// the call it is ("path x", "tool Bash"); "" when none.
func blockedBy(scope []string, c Call) (entry, what string) {
	for _, e := range scope {
		if t, ok := strings.CutPrefix(e, protocol.ScopeToolPrefix); ok {
			if t == c.Tool {
				return e, "tool " + c.Tool
			}
			continue
		}
		for _, p := range c.Paths {
			if InScope(e, p) {
				return e, "path " + strconv.Quote(p)
			}
		}
	}
	return "", ""
}

// sentence returns the brief's reason ending in a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
