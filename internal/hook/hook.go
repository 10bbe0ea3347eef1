// Package hook is the logic of Madebook's Claude Code hook, apart from its
// transport: it reads the JSON Claude Code sends a hook, makes Madebook's
// agent calls through the Madebook interface, and returns the JSON Claude
// Code reads back. `madebook hook claude-code` runs it over HTTP (a command
// hook); POST /hooks/claude-code runs it inside the server (an http hook).
//
// Each event re-attaches the Madebook session whose external id is
// Claude's session_id, so the hook keeps no state between events:
//   - SessionStart opens (or re-attaches) the session and adds the brief,
//     protocol text included, to Claude's context;
//   - UserPromptSubmit takes a brief and adds its next action, its reason
//     and what it delivers (resolutions, remediations, permission answers);
//   - PreToolUse asks Madebook whether the call may run, on the session's
//     hook run, and denies it with the reason and what to do instead,
//     saying nothing when it may; a denied call is reported to the ledger,
//     which refuses it too and keeps the attempt in the timeline.
//     Madebook's own MCP tools (mcp__madebook__…) always run, unasked;
//   - PostToolUse records the call, with its paths, in the ledger, on one
//     run per Claude session (named "claude-code", external id Claude's
//     session_id): the hook run.
//
// When Madebook does not answer, side-effecting tools are denied and
// read-only ones run, unless FailOpen lets all run.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/gate"
)

// The events the hook answers. Any other event gets an empty answer.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	// PostToolUseFailure is PostToolUse for a call that failed (a Bash
	// that exited 3): it ran, so it is recorded and compared the same way.
	PostToolUseFailure = "PostToolUseFailure"
)

// RunName is the name of the run that holds a Claude session's tool calls.
const RunName = "claude-code"

// Agent is the name a session opened by the hook gives its agent.
const Agent = "claude-code"

// BuiltinServer is the server the ledger records Claude Code's own tools
// under (an MCP tool mcp__<server>__<tool> is recorded under its server).
const BuiltinServer = "claude-code"

// MaxSessionID is the longest Claude session_id the hook accepts (it is a
// UUID, 36 characters).
const MaxSessionID = 200

// Input is what Claude Code sends a hook: the fields the hook reads.
// Claude Code sends more (transcript_path, permission_mode, tool_use_id,
// …); they are ignored.
type Input struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	Source        string          `json:"source"`
	Prompt        string          `json:"prompt"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
}

// InputError is a hook input the hook cannot act on: Code is the API's
// error code for it, Field the field at fault ("" for the whole input),
// Msg a sentence saying what is wrong.
type InputError struct {
	Code, Field, Msg string
}

func (e *InputError) Error() string { return e.Msg }

// ParseInput decodes a hook's input: one JSON object with a session_id and
// a hook_event_name; fields it does not read are ignored, and tool_input,
// when present, is an object. Errors: *InputError, codes invalid_body,
// session_id_required, session_id_too_long, hook_event_name_required,
// invalid_field.
func ParseInput(b []byte) (Input, error) {
	var in Input
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return in, &InputError{Code: "invalid_body", Msg: "The hook input is not one JSON object; Claude Code sends one."}
	}
	if err := json.Unmarshal(trimmed, &in); err != nil {
		return in, &InputError{Code: "invalid_body", Msg: fmt.Sprintf("The hook input does not have Claude Code's shape: %v.", err)}
	}
	switch {
	case strings.TrimSpace(in.SessionID) == "":
		return in, &InputError{Code: "session_id_required", Field: "session_id", Msg: "The hook input has no session_id."}
	case utf8.RuneCountInString(in.SessionID) > MaxSessionID:
		return in, &InputError{Code: "session_id_too_long", Field: "session_id",
			Msg: fmt.Sprintf("The hook input's session_id is over %d characters.", MaxSessionID)}
	case in.HookEventName == "":
		return in, &InputError{Code: "hook_event_name_required", Field: "hook_event_name", Msg: "The hook input has no hook_event_name."}
	case len(in.ToolInput) > 0 && !isObject(in.ToolInput) && string(bytes.TrimSpace(in.ToolInput)) != "null":
		return in, &InputError{Code: "invalid_field", Field: "tool_input", Msg: "The hook input's tool_input is not a JSON object."}
	}
	return in, nil
}

// Output is the hook's answer as Claude Code reads it. The zero Output
// says nothing.
type Output struct {
	Specific *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is the event-specific part of an answer.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Empty reports whether the answer says nothing: the command prints
// nothing for it.
func (o Output) Empty() bool { return o.Specific == nil }

// Denied reports whether the answer denies a tool call.
func (o Output) Denied() bool { return o.Specific != nil && o.Specific.PermissionDecision == "deny" }

// Madebook is the calls the hook makes. Every error is an *NoAnswer when
// Madebook could not be reached or failed (a 5xx), or an *APIError when
// it refused the call.
type Madebook interface {
	// OpenSession opens, or re-attaches to, the session of this agent key
	// whose external id is externalID, on the mission, and returns its id;
	// root, when not "", is the project root (recorded when the session
	// has none).
	OpenSession(ctx context.Context, mission, externalID, root string) (string, error)
	// Brief takes the session's brief, delivering what it delivers.
	Brief(ctx context.Context, session string) (Brief, error)
	// Check asks whether a tool call may run now; it writes nothing.
	Check(ctx context.Context, session string, req CheckRequest) (Verdict, error)
	// OpenRun opens, or re-attaches to, the session's run whose external
	// id is externalID, and returns its id.
	OpenRun(ctx context.Context, session, name, externalID string) (string, error)
	// RecordToolCall records a tool call on the run.
	RecordToolCall(ctx context.Context, run string, call ToolCall) error
	// ReportBreach reports files a call changed inside the blocked scope.
	ReportBreach(ctx context.Context, run string, b Breach) error
}

// Breach is the body of POST /api/v1/runs/{id}/breaches: a call that
// changed files inside the blocked scope, which the check had allowed.
type Breach struct {
	Tool      string   `json:"tool"`
	ToolUseID string   `json:"tool_use_id,omitempty"`
	Files     []string `json:"files"`
	Scope     []string `json:"scope,omitempty"`
	Command   string   `json:"command,omitempty"`
}

// NoAnswer is a call Madebook did not answer: unreachable, too slow, or
// failing (a 5xx). Err says where and why, as it follows "Madebook does
// not answer" ("at http://…: connection refused").
type NoAnswer struct{ Err error }

func (e *NoAnswer) Error() string { return e.Err.Error() }

func (e *NoAnswer) Unwrap() error { return e.Err }

// APIError is a call Madebook refused with its error code and message;
// Status 0 says the hook refused it itself, not set up to make it.
type APIError struct {
	Status        int
	Code, Message string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// Brief is the part of Madebook's brief the hook tells Claude.
type Brief struct {
	Session      string   `json:"session"`
	BriefID      string   `json:"brief_id"`
	NextAction   string   `json:"next_action"`
	Reason       string   `json:"reason"`
	Also         []Reason `json:"also"`
	BlockedScope []string `json:"blocked_scope"`
	AllowedScope []string `json:"allowed_scope"`
	Decisions    []struct {
		Ref      string `json:"ref"`
		Title    string `json:"title"`
		Question string `json:"question"`
	} `json:"decisions"`
	Resolutions []struct {
		Ref         string `json:"ref"`
		Resolution  string `json:"resolution"`
		Instruction string `json:"instruction"`
		ResolvedBy  string `json:"resolved_by"`
	} `json:"resolutions"`
	Remediations []struct {
		ID          int64    `json:"id"`
		Severity    string   `json:"severity"`
		Instruction string   `json:"instruction"`
		Files       []string `json:"files"`
	} `json:"remediations"`
	Permissions []struct {
		ID         int64  `json:"id"`
		Prompt     string `json:"prompt"`
		Option     string `json:"option"`
		Label      string `json:"label"`
		AnsweredBy string `json:"answered_by"`
	} `json:"permissions"`
	Protocol string `json:"protocol"`
}

// Reason is one reason of a brief.
type Reason struct {
	State string `json:"state"`
	Code  string `json:"code"`
	Ref   string `json:"ref"`
	Text  string `json:"text"`
}

// Site is what a tool call names and where it stands, as the check and
// the record both read it (ledger.Site): the tool's input, Claude Code's
// working directory, the project root, and what only the agent's machine
// knows.
type Site struct {
	Input json.RawMessage `json:"input,omitempty"`
	// Cwd is Claude Code's working directory: relative paths are joined
	// with it.
	Cwd string `json:"cwd,omitempty"`
	// Root is the project root the scopes are relative to.
	Root string `json:"root,omitempty"`
	// Home expands ~ and $HOME in a Bash command.
	Home string `json:"home,omitempty"`
	// Paths are the paths the call writes to as the disk resolves them
	// (symlinks followed, globs matched), when they differ from the paths
	// as written.
	Paths []string `json:"paths,omitempty"`
	// Scripts are the shell scripts a Bash command runs, as read from disk.
	Scripts map[string]string `json:"scripts,omitempty"`
}

// CheckRequest is the body of POST /api/v1/sessions/{id}/tool-calls/check.
type CheckRequest struct {
	Tool string `json:"tool"`
	Site
	// Run is the hook run the call is part of.
	Run string `json:"run,omitempty"`
}

// Verdict is the check's answer.
type Verdict struct {
	Allow         bool   `json:"allow"`
	SideEffecting bool   `json:"side_effecting"`
	Reason        string `json:"reason"`
	NextAction    string `json:"next_action"`
	// Watch are the blocked scope's paths to watch while an allowed call
	// runs.
	Watch []string `json:"watch"`
}

// ToolCall is the body of POST /api/v1/runs/{id}/tool-calls the hook sends.
type ToolCall struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// SideEffecting is false for a tool the hook knows reads only, and
	// unset otherwise: the tool registry decides, and a tool nobody
	// classified is side-effecting.
	SideEffecting *bool `json:"side_effecting,omitempty"`
	// Site is what the call names, which Madebook reads as the check did:
	// it records what the call touched relative to the project root.
	Site
}

// Config is how the hook runs.
type Config struct {
	// Mission is the slug of the mission the Claude session works on.
	Mission string
	// FailOpen lets every tool run when Madebook does not answer.
	FailOpen bool
	// Where says where Madebook is, for messages ("http://127.0.0.1:8080").
	Where string
	// Machine is the agent's machine, when the hook runs on it (the
	// command hook): nil in the server's http hook.
	Machine Machine
	// StateDir is where the command hook keeps what it noted of the blocked
	// scope before a call, until the call has run ("" keeps nothing).
	StateDir string
}

// readOnly are Claude Code's tools that only read. Every other tool,
// mcp__<server>__<tool> included, is side-effecting unless Madebook's tool
// registry says otherwise.
var readOnly = map[string]bool{
	"Read": true, "Grep": true, "Glob": true, "LS": true,
	"WebSearch": true, "WebFetch": true, "TodoWrite": true,
}

// ReadOnly reports whether the hook takes a tool as read-only when
// Madebook cannot say.
func ReadOnly(tool string) bool { return readOnly[tool] }

// Own reports whether the tool is one of Madebook's own MCP tools
// (mcp__madebook__brief, …): the executor gate never counts them as side
// effects, so the hook lets them run without asking.
func Own(tool string) bool {
	server, name := gate.SplitTool(tool)
	return server == gate.Madebook && !gate.Classify(server, name, nil, nil)
}

// Handle answers one hook event. Every failure of Madebook is part of the
// answer: Claude is told, and a side-effecting call denied unless FailOpen.
func Handle(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	switch in.HookEventName {
	case SessionStart:
		return sessionStart(ctx, mb, cfg, in)
	case UserPromptSubmit:
		return userPromptSubmit(ctx, mb, cfg, in)
	case PreToolUse:
		return preToolUse(ctx, mb, cfg, in)
	case PostToolUse, PostToolUseFailure:
		return postToolUse(ctx, mb, cfg, in)
	}
	return Output{}
}

// withContext is an answer that adds text to Claude's context.
func withContext(event, text string) Output {
	return Output{Specific: &Specific{HookEventName: event, AdditionalContext: text}}
}

// deny is a PreToolUse answer that denies the call.
func deny(reason string) Output {
	return Output{Specific: &Specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// open opens or re-attaches the Claude session's Madebook session.
func open(ctx context.Context, mb Madebook, cfg Config, in Input) (string, error) {
	if cfg.Mission == "" {
		return "", &APIError{Code: "mission_required", Message: "No mission is set: set MADEBOOK_MISSION to the slug of the mission this Claude session works on."}
	}
	return mb.OpenSession(ctx, cfg.Mission, in.SessionID, projectRoot(cfg, in))
}

// projectRoot is the project root of the call, as the agent's machine
// tells it (Machine.Root). Without one (the server's http hook), a
// session's root is the cwd it started in, and "" leaves the session's
// recorded root to decide.
func projectRoot(cfg Config, in Input) string {
	if cfg.Machine == nil {
		if in.HookEventName == SessionStart {
			return in.Cwd
		}
		return ""
	}
	return cfg.Machine.Root(in.Cwd)
}

// failure says why Madebook gave no answer, in words for Claude.
func failure(err error) string {
	var (
		na *NoAnswer
		ae *APIError
	)
	if errors.As(err, &na) {
		return strings.TrimSuffix(fmt.Sprintf("Madebook does not answer %v", na.Err), ".")
	}
	if errors.As(err, &ae) && ae.Status == 0 {
		return "The Madebook hook is not set up: " + strings.TrimSuffix(ae.Message, ".")
	}
	return strings.TrimSuffix(fmt.Sprintf("Madebook refused the hook's call: %v", err), ".")
}

// ungoverned is what Claude is told when Madebook cannot govern the session.
func ungoverned(cfg Config, err error) string {
	what := "Side-effecting tools (Edit, Write, Bash, MCP tools, …) are denied until it answers; reading the repository still works."
	if cfg.FailOpen {
		what = "MADEBOOK_FAIL_OPEN is set: every tool runs, ungoverned, until it answers."
	}
	return failure(err) + ". " + what
}

// briefFor opens or re-attaches the session and takes its brief. When
// Madebook gives none, failed is the event's answer that tells Claude why.
func briefFor(ctx context.Context, mb Madebook, cfg Config, in Input) (session string, b Brief, failed *Output) {
	session, err := open(ctx, mb, cfg, in)
	if err == nil {
		b, err = mb.Brief(ctx, session)
	}
	if err != nil {
		out := withContext(in.HookEventName, ungoverned(cfg, err))
		return "", Brief{}, &out
	}
	return session, b, nil
}

func sessionStart(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	session, b, failed := briefFor(ctx, mb, cfg, in)
	if failed != nil {
		return *failed
	}
	var s strings.Builder
	fmt.Fprintf(&s, "This Claude Code session is governed by Madebook (session %s, mission %s). "+
		"Its hook checks every tool call against the brief below before it runs, and records it after", session, cfg.Mission)
	if run, err := mb.OpenRun(ctx, session, RunName, in.SessionID); err == nil {
		fmt.Fprintf(&s, ", on run %s. When a call is a step of your approved plan that waits on a stopping point, "+
			"ask that stopping point's question on a run of its own (the Madebook MCP tool start_run with \"parent\": %q, then ask on it with stopping_point N) "+
			"and wait for a person's answer", run, run)
	}
	s.WriteString(".\n\n")
	writeBrief(&s, b)
	if b.Protocol != "" {
		fmt.Fprintf(&s, "\n%s\n", strings.TrimSpace(b.Protocol))
	}
	return withContext(SessionStart, s.String())
}

func userPromptSubmit(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	_, b, failed := briefFor(ctx, mb, cfg, in)
	if failed != nil {
		return *failed
	}
	var s strings.Builder
	writeBrief(&s, b)
	return withContext(UserPromptSubmit, s.String())
}

// writeBrief writes a brief's next action and reason, what it warns of,
// the gates still open, and what it delivers.
func writeBrief(s *strings.Builder, b Brief) {
	fmt.Fprintf(s, "Madebook's next action: %s", b.NextAction)
	if b.Reason != "" {
		fmt.Fprintf(s, ": %s", b.Reason)
	}
	s.WriteString("\n")
	if len(b.BlockedScope) > 0 {
		fmt.Fprintf(s, "Blocked scope (leave alone): %s\n", strings.Join(b.BlockedScope, ", "))
	}
	if len(b.AllowedScope) > 0 {
		fmt.Fprintf(s, "Allowed scope (go on working here): %s\n", strings.Join(b.AllowedScope, ", "))
	}
	for _, r := range b.Also {
		fmt.Fprintf(s, "Also %s: %s\n", r.State, r.Text)
	}
	for _, d := range b.Decisions {
		fmt.Fprintf(s, "Open decision %s, waiting on a person: %s — %s\n", d.Ref, d.Title, d.Question)
	}
	for _, r := range b.Resolutions {
		fmt.Fprintf(s, "Resolved %s by %s: %s. Instruction: %s\n", r.Ref, r.ResolvedBy, r.Resolution, r.Instruction)
	}
	for _, r := range b.Remediations {
		fmt.Fprintf(s, "Remediation %d (%s): %s", r.ID, r.Severity, r.Instruction)
		if len(r.Files) > 0 {
			fmt.Fprintf(s, " Files: %s", strings.Join(r.Files, ", "))
		}
		s.WriteString("\n")
	}
	for _, p := range b.Permissions {
		fmt.Fprintf(s, "Permission prompt %d (%q) answered by %s: option %s, %s\n", p.ID, p.Prompt, p.AnsweredBy, p.Option, p.Label)
	}
}

// instead is what a denied agent does when Madebook's refusal says no
// more than that the call may not run.
const instead = "Take a brief (the Madebook MCP tool `brief`) and do what it says."

func preToolUse(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	if Own(in.ToolName) {
		return Output{}
	}
	session, err := open(ctx, mb, cfg, in)
	var run string
	if err == nil {
		run, err = mb.OpenRun(ctx, session, RunName, in.SessionID)
	}
	var v Verdict
	root := projectRoot(cfg, in)
	site := siteOf(cfg.Machine, in, root)
	if err == nil {
		v, err = mb.Check(ctx, session, CheckRequest{Tool: in.ToolName, Site: site, Run: run})
	}
	if err != nil {
		if cfg.FailOpen || ReadOnly(in.ToolName) {
			return Output{}
		}
		var na *NoAnswer
		if errors.As(err, &na) {
			return deny(fmt.Sprintf("%s. %s is side-effecting, and Madebook governs this session: it may not run until Madebook answers. "+
				"Reading the repository still works; tell the user Madebook is not answering.", failure(err), in.ToolName))
		}
		return deny(fmt.Sprintf("%s. %s is side-effecting, and the hook could not ask Madebook whether it may run. "+
			"Reading the repository still works; tell the user, who must fix the hook's setup.", failure(err), in.ToolName))
	}
	if v.Allow {
		watchBefore(cfg, in, root, v.Watch)
		return Output{}
	}
	// The attempt goes on the record: the ledger refuses the call by the
	// same rules and keeps the refusal in the session's timeline. Its
	// answer changes nothing here: the call is denied.
	_ = mb.RecordToolCall(ctx, run, toolCall(in, site))
	reason := strings.TrimSpace(v.Reason)
	if reason == "" {
		reason = "Madebook does not allow this call now. " + instead
	}
	return deny("Madebook denied this " + in.ToolName + " call. " + reason)
}

func postToolUse(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	session, err := open(ctx, mb, cfg, in)
	var run string
	if err == nil {
		run, err = mb.OpenRun(ctx, session, RunName, in.SessionID)
	}
	root := projectRoot(cfg, in)
	if err == nil {
		err = mb.RecordToolCall(ctx, run, toolCall(in, siteOf(cfg.Machine, in, root)))
	}
	if err != nil {
		return withContext(in.HookEventName, fmt.Sprintf("This %s call is not on Madebook's record: %s.", in.ToolName, failure(err)))
	}
	if b := watchAfter(cfg, in); b != nil {
		if err := mb.ReportBreach(ctx, run, *b); err != nil {
			return withContext(in.HookEventName, fmt.Sprintf("This %s call changed %s, inside the blocked scope, and reporting it to Madebook failed: %s. Tell the user.",
				in.ToolName, strings.Join(b.Files, ", "), failure(err)))
		}
		return withContext(in.HookEventName, fmt.Sprintf("This %s call changed %s, inside the blocked scope (%s), before its decision was made: Madebook recorded a breach and stopped the session (HARD_STOP). Stop, and tell the user.",
			in.ToolName, strings.Join(b.Files, ", "), strings.Join(b.Scope, ", ")))
	}
	return Output{}
}

// ToolCallOf is the ledger's record of the call Claude reports, with no
// machine to resolve its paths on (the server's http hook): see toolCall.
func ToolCallOf(in Input) ToolCall { return toolCall(in, siteOf(nil, in, "")) }

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// Unconfigured is the Madebook of a hook that is not set up (no agent
// key, say): every call fails with Err, so side-effecting tools are
// denied with Err as the reason, as when Madebook does not answer.
type Unconfigured struct{ Err error }

// OpenSession fails with u.Err.
func (u Unconfigured) OpenSession(context.Context, string, string, string) (string, error) {
	return "", u.Err
}

// Brief fails with u.Err.
func (u Unconfigured) Brief(context.Context, string) (Brief, error) { return Brief{}, u.Err }

// Check fails with u.Err.
func (u Unconfigured) Check(context.Context, string, CheckRequest) (Verdict, error) {
	return Verdict{}, u.Err
}

// OpenRun fails with u.Err.
func (u Unconfigured) OpenRun(context.Context, string, string, string) (string, error) {
	return "", u.Err
}

// RecordToolCall fails with u.Err.
func (u Unconfigured) RecordToolCall(context.Context, string, ToolCall) error { return u.Err }

// ReportBreach fails with u.Err.
func (u Unconfigured) ReportBreach(context.Context, string, Breach) error { return u.Err }
