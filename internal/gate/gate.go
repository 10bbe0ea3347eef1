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
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// mcpPrefix starts the name Claude Code and Codex give an MCP tool:
// mcp__<server>__<tool>.
const mcpPrefix = "mcp__"

// Madebook is the server name Madebook's own MCP server is registered
// under, as docs/agents.md's .mcp.json names it: its tools appear to a coding
// agent as mcp__madebook__<tool>.
const Madebook = "madebook"

// governance are the tools of Madebook's MCP server (web/mcp). They are
// how an agent talks to Madebook itself (briefs, plans, decisions, the
// ledger), and Madebook governs each of them by its own rules, so the gate
// never counts them as side effects: a HARD_STOP, BLOCKED or plan-waiting
// session can still take a brief, propose its plan, open a decision and
// ask its stopping point's question. The registry cannot change that.
var governance = map[string]bool{
	"open_session": true, "brief": true, "open_decision": true, "propose_plan": true, "report_change": true,
	"report_event": true, "start_run": true, "ask": true, "record_tool_call": true, "finish_run": true,
	"report_evidence": true, "complete": true,
}

// GovernanceTools lists the tools of Madebook's MCP server the gate always
// lets run, sorted.
func GovernanceTools() []string { return slices.Sorted(maps.Keys(governance)) }

// SplitTool returns the server and tool of a tool as Madebook names it
// (ToolName): "mcp__github__create_issue" is tool create_issue of server
// github, and so "mcp__codex__apply_patch" is Codex's apply_patch; any
// other name ("Edit", "Bash") is a built-in of ClaudeCode.
func SplitTool(name string) (server, tool string) { return SplitToolOf(ClaudeCode, name) }

// SplitToolOf is SplitTool for a tool the executor names: a name that is
// not mcp__<server>__<tool> is the executor's built-in.
func SplitToolOf(executor, name string) (server, tool string) {
	if rest, ok := strings.CutPrefix(name, mcpPrefix); ok {
		if s, t, ok := strings.Cut(rest, "__"); ok && s != "" && t != "" {
			return s, t
		}
	}
	return executor, name
}

// ToolName is the one name Madebook gives a tool, the inverse of
// SplitTool: the tool itself for a ClaudeCode built-in (as Claude Code
// names it), mcp__server__tool for any other server, another executor's
// built-ins included (mcp__gemini__write_file).
func ToolName(server, tool string) string {
	if server == ClaudeCode {
		return tool
	}
	return mcpPrefix + server + "__" + tool
}

// AgentName is the name the coding agent calls a tool by: an executor's
// built-in by its own name (Bash, write_file), any other server's tool as
// mcp__server__tool.
func AgentName(server, tool string) string {
	if IsExecutor(server) {
		return tool
	}
	return ToolName(server, tool)
}

// Classify says whether a call writes. A tool of Madebook's own MCP server
// (server Madebook, see GovernanceTools) does not, whatever the registry
// says; else the registry's entry decides when there is one (registered
// non-nil); else an executor's read-only built-in does not write; else the
// call writes (fail safe). The agent's own flag (said) may only raise it:
// a call the agent says writes, writes.
func Classify(server, tool string, registered, said *bool) bool {
	writes := true
	switch {
	case server == Madebook && governance[tool]:
		writes = false
	case registered != nil:
		writes = *registered
	case ReadOnlyBuiltin(server, tool):
		writes = false
	}
	return writes || (said != nil && *said)
}

// The most paths the ledger records of one call, and the longest one it
// keeps.
const (
	MaxPaths = 100
	MaxPath  = 1000
)

// Session is what the gate knows of the session: its brief, decided now,
// and its lifecycle.
type Session struct {
	ID string
	// Root is the project root the session works in (recorded when it
	// was opened, or the first cwd it was sent); "" when not known.
	Root string
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
	// PlanApproved: the session's latest plan is approved (the brief's
	// input; its callers read Plan only then).
	PlanApproved bool
	// Plan is the session's approved plan, nil when it has none (or its
	// caller did not read it: a read-only call needs no step). A call on no
	// plan run that names no step is matched with the plan's steps by its
	// server and tool (see Decide).
	Plan *plan.Plan
	// Released are the options answered at Plan's stopping points (on any
	// of its asks): stopping point id → the options chosen.
	Released map[int][]string
}

// BlocksPaths reports whether the session's brief blocks a path now: it
// is DECISION_REQUIRED with a path (not only tools) in its blocked scope.
// Only then does what a side-effecting call touches decide it.
func (s Session) BlocksPaths() bool {
	if s.NextAction != protocol.DecisionRequired {
		return false
	}
	for _, e := range s.BlockedScope {
		if !strings.HasPrefix(e, protocol.ScopeToolPrefix) {
			return true
		}
	}
	return false
}

// BlockedPaths are the paths (not the tools) of the session's blocked
// scope.
func (s Session) BlockedPaths() []string {
	var out []string
	for _, e := range s.BlockedScope {
		if !strings.HasPrefix(e, protocol.ScopeToolPrefix) {
			out = append(out, e)
		}
	}
	return out
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
	// Touches are the paths the call touches (TouchesOf).
	Touches Touches
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
	// Step is the plan step the call runs: the one it names, or the one
	// its server and tool matched in the session's approved plan; "" none.
	// The ledger records it.
	Step string
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

// allowStep allows the call as the step.
func allowStep(step string) Verdict { return Verdict{Allow: true, Step: step} }

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
//     that holds it (step_not_released);
//   - the call is on no plan run and names no step, the session has an
//     approved plan, and every step of it with the call's server and tool
//     lies behind a stopping point not yet answered with an option that
//     holds it (step_not_released, naming the first).
//
// A step the plan does not have is unknown_step, whatever the call. The
// verdict's Step is the step the call runs: the one it names, or the one
// it matched in the session's plan (an initial or released step first).
func Decide(s Session, r *Run, c Call) Verdict {
	if c.Step != "" {
		if v, known := knownStep(r, c.Step); !known {
			return v
		}
	}
	step, match := c.Step, matchStep(s, r, c)
	if step == "" && match != nil {
		step = match.step
	}
	if !c.SideEffecting {
		return allowStep(step)
	}
	switch s.NextAction {
	case protocol.HardStop:
		return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
			"Session %s is HARD_STOP: %s No side-effecting call may run until a person clears it: tell the user what Madebook said.",
			s.ID, sentence(s.Reason)), briefDetails(s))
	case protocol.Blocked:
		return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
			"Session %s is BLOCKED: %s No side-effecting call may run until that is resolved: read the repository, propose or revise the plan, or ask a person, and take a brief before you try again.",
			s.ID, sentence(s.Reason)), briefDetails(s))
	case protocol.DecisionRequired:
		if entry, what := blockedBy(s.BlockedScope, c); entry != "" && what == "" {
			return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
				"Session %s is DECISION_REQUIRED, its blocked scope holds %s, and Madebook cannot tell what this call touches: %s. %s %s",
				s.ID, entry, c.Touches.Undecidable, sentence(s.Reason), instead(c)), briefDetails(s))
		} else if entry != "" {
			return refuse(errs.Conflict, CodeSessionBlocked, fmt.Sprintf(
				"Session %s is DECISION_REQUIRED and %s is in its blocked scope (%s): %s %s",
				s.ID, what, entry, sentence(s.Reason), instead(c)), briefDetails(s))
		}
	}
	if s.Tracked && !lifecycle.Executes(s.Lifecycle) {
		return refuse(errs.Conflict, CodeNotExecuting, fmt.Sprintf(
			"Session %s is in %s, which executes nothing: a side-effecting call runs only in EXECUTING or DIRECT_MODE.",
			s.ID, s.Lifecycle), map[string]any{"lifecycle": string(s.Lifecycle)})
	}
	if r != nil {
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
	}
	if match != nil && !match.released {
		return notReleased(s, r, match)
	}
	return allowStep(step)
}

// briefDetails are a refusal's details when the session's brief refuses
// the call: its next action and reason.
func briefDetails(s Session) map[string]any {
	return map[string]any{"next_action": s.NextAction.String(), "reason": s.Reason}
}

// match is the step of the session's approved plan a call naming none was
// taken to run.
type match struct {
	step     string
	released bool // an initial step, or one whose stopping point was answered with an option holding it
	// sp and option hold the step, when not released: the first stopping
	// point and option that do.
	sp     *plan.StoppingPoint
	option string
}

// matchStep finds the step of the session's approved plan a call on no
// plan run, naming no step, runs: the first initial or released step with
// the call's server and tool, else the first one behind a stopping point
// (stopping points in order, options by key). Nil when the call names a
// step, is on a plan run, the session has no approved plan, or no step of
// it has the call's server and tool.
func matchStep(s Session, r *Run, c Call) *match {
	if c.Step != "" || (r != nil && r.Plan != nil) || s.Plan == nil {
		return nil
	}
	server, tool := SplitTool(c.Tool)
	is := func(st plan.Step) bool { return st.Tool != "" && st.Tool == tool && st.Server == server }
	if i := slices.IndexFunc(s.Plan.InitialSteps, is); i >= 0 {
		return &match{step: s.Plan.InitialSteps[i].ID, released: true}
	}
	var first *match
	for i := range s.Plan.StoppingPoints {
		sp := &s.Plan.StoppingPoints[i]
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			j := slices.IndexFunc(sp.Options[key].Steps, is)
			if j < 0 {
				continue
			}
			id := sp.Options[key].Steps[j].ID
			if slices.Contains(s.Released[sp.ID], key) {
				return &match{step: id, released: true}
			}
			if first == nil {
				first = &match{step: id, sp: sp, option: key}
			}
		}
	}
	return first
}

// notReleased refuses a call matched to a step of the session's plan that
// is not released yet, saying how to get its stopping point answered: on a
// run of its own (a child of the call's run), so that the call's run does
// not park and its earlier side effects are not taken for premature ones.
func notReleased(s Session, r *Run, m *match) Verdict {
	parent := ""
	if r != nil {
		parent = fmt.Sprintf(", \"parent\": %q", r.ID)
	}
	return refuse(errs.Conflict, CodeStepNotReleased, fmt.Sprintf(
		"The call is step %q of session %s's approved plan, which lies behind stopping point %d (%q): it runs only after a person answers that stopping point's ask with option %s (%s). "+
			"Ask the stopping point's question on a run of its own: start one (the Madebook MCP tool start_run, {\"session\": %q, \"name\": \"stopping point %d\"%s}), "+
			"ask on it (the MCP tool ask, with \"stopping_point\": %d and the stopping point's options), and wait for the answer: your next brief says when it is given.",
		m.step, s.ID, m.sp.ID, m.sp.Title, m.option, m.sp.Options[m.option].Label, s.ID, m.sp.ID, parent, m.sp.ID),
		map[string]any{"step": m.step, "stopping_point": m.sp.ID, "option": m.option})
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
		return allowStep(step)
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
				return allowStep(step)
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
// the call it is ("path \"db/x\" (rm)", "tool Bash"), what "" when the
// entry blocks the call because Madebook cannot tell what it touches;
// entry "" when none. A path the
// call writes to blocks an entry it lies in or is an ancestor of (deleting
// or moving db removes db/migrations); a path it only reads blocks none; a
// call Madebook cannot read blocks whenever a path is blocked.
func blockedBy(scope []string, c Call) (entry, what string) {
	for _, e := range scope {
		if t, ok := strings.CutPrefix(e, protocol.ScopeToolPrefix); ok {
			if t == c.Tool {
				return e, "tool " + c.Tool
			}
			continue
		}
		for _, p := range c.Touches.Paths {
			if p.Writes && p.Holds(e, p.Glob) {
				return e, touched(p)
			}
		}
		if c.Touches.Undecidable != "" {
			return e, "" // what the call touches cannot be told
		}
	}
	return "", ""
}

// touched names a path a call touches, for a refusal.
func touched(p Touch) string {
	what := "path " + strconv.Quote(p.Path)
	if p.Glob {
		what = "the pattern " + strconv.Quote(p.Path)
	}
	if p.By != "" {
		what += " (" + p.By + ")"
	}
	return what
}

// instead says what a call refused for its blocked scope may do instead.
func instead(c Call) string {
	switch {
	case c.Touches.Undecidable != "":
		return "Madebook cannot tell what it touches, so it may not run while a path is blocked: name the paths in the command itself (no variables, eval, $(…) or scripts), or use the Edit and Write tools, outside the blocked scope; or wait for the answer in your next brief."
	case c.Touches.Guessed:
		return "Work outside the blocked scope, or wait for the answer in your next brief. (The tool names no path fields in Madebook's tool registry, so every string of its input was taken for a path: an admin who declares them, PUT /api/v1/tools/{server}/{tool} with \"path_fields\", makes the gate precise.)"
	}
	return "Work outside the blocked scope, or wait for the answer in your next brief."
}

// sentence returns the brief's reason ending in a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
