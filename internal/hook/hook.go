// Package hook is the logic of Madebook's Claude Code hook: it reads the
// JSON Claude Code sends a hook, makes Madebook's agent calls through the
// Madebook interface, and returns the JSON Claude Code reads back.
//
// It runs in two places. Handle is the server's side: POST
// /hooks/claude-code answers one event in one request, whether Claude
// Code's own http hook sends it, or the command hook (Command, `madebook
// hook claude-code` and the lean `madebook-hook claude-code`), which adds
// what only the agent's machine knows (Local: the project root, the
// paths a call writes as the disk resolves them, what changed in a
// blocked scope, the tool calls the transcript holds) and answers for
// Madebook when it cannot be reached.
//
// Each event re-attaches the Madebook session whose external id is
// Claude's session_id, so the hook keeps no state between events:
//   - SessionStart opens (or re-attaches) the session and adds the brief,
//     protocol text included, to Claude's context;
//   - UserPromptSubmit takes a brief and adds its next action, its reason
//     and what it delivers (resolutions, remediations, permission answers);
//   - SubagentStart tells a subagent the session it works in and its next
//     action (it delivers nothing: deliveries are the main agent's);
//   - PreToolUse asks Madebook whether the call may run, on the session's
//     hook run, and denies it with the reason and what to do instead,
//     saying nothing when it may; a denied call is reported to the ledger,
//     which refuses it too and keeps the attempt in the timeline.
//     PermissionRequest asks the same and denies the prompt.
//     Madebook's own MCP tools (mcp__madebook__…) always run, unasked;
//   - PostToolUse and PostToolUseFailure record the call, with its paths,
//     its subagent and its error, in the ledger, on one run per Claude
//     session (named "claude-code", external id Claude's session_id): the
//     hook run;
//   - Stop, SubagentStop and SessionEnd report the tool calls the
//     transcript holds, which Madebook compares with the checks it made.
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
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/gate"
)

// The events the hook answers. Any other event gets an empty answer.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	// PermissionRequest fires when Claude Code would ask the user to
	// allow a call: the hook denies what Madebook refuses.
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
	// PostToolUseFailure is PostToolUse for a call that failed (a Bash
	// that exited 3): it ran, so it is recorded the same way, with its
	// error.
	PostToolUseFailure = "PostToolUseFailure"
	SubagentStart      = "SubagentStart"
	Stop               = "Stop"
	SubagentStop       = "SubagentStop"
	SessionEnd         = "SessionEnd"
)

// Events are the events the hook answers, in the order Claude Code's
// settings list them (`madebook init claude-code` writes one hook each).
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure,
	SubagentStart, Stop, SubagentStop, SessionEnd}

// MaxSessionID is the longest Claude session_id the hook accepts (it is a
// UUID, 36 characters).
const MaxSessionID = 200

// Input is what Claude Code sends a hook: the fields the hook reads, and
// what the command hook adds. Claude Code sends more (permission_mode,
// tool_response, …); they are ignored.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	Cwd            string `json:"cwd,omitempty"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source,omitempty"`
	Prompt         string `json:"prompt,omitempty"`
	ToolName       string `json:"tool_name,omitempty"`
	// ToolInput is the call's input, a JSON object.
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Error is why a call failed (PostToolUseFailure): "Exit code 3".
	Error json.RawMessage `json:"error,omitempty"`
	// AgentID and AgentType name the subagent an event is about (a call
	// it makes, its start and stop); "" for the main agent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// AgentTranscriptPath is a stopping subagent's own transcript.
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
	// Madebook is what the command hook adds on the agent's machine; nil
	// when Claude Code sends the event itself (an http hook).
	Madebook *Local `json:"madebook,omitempty"`
}

// ErrorText is the error of a failed call as a line of text: Claude Code
// sends a string; anything else is kept as its JSON.
func (in Input) ErrorText() string {
	var s string
	if len(in.Error) == 0 || string(in.Error) == "null" {
		return ""
	}
	if json.Unmarshal(in.Error, &s) == nil {
		return s
	}
	return string(in.Error)
}

// Local is what only the agent's machine knows of an event, which the
// command hook sends with it.
type Local struct {
	// Root is the project root (CLAUDE_PROJECT_DIR, else git's top level,
	// else the cwd).
	Root string `json:"root,omitempty"`
	// Site is what a tool call names and where it stands, its paths
	// resolved on the disk (PreToolUse, PermissionRequest, PostToolUse).
	Site *Site `json:"site,omitempty"`
	// Breach is what an allowed call changed inside the blocked scope
	// (PostToolUse), when it changed something there.
	Breach *Breach `json:"breach,omitempty"`
	// Calls are the tool calls the transcript holds since the last report
	// (Stop, SubagentStop, SessionEnd).
	Calls []TranscriptCall `json:"calls,omitempty"`
}

// TranscriptCall is a tool call as the executor's transcript holds it:
// never its input, only what names it and the paths it names.
type TranscriptCall struct {
	ToolUseID string    `json:"tool_use_id"`
	Tool      string    `json:"tool"`
	At        time.Time `json:"at"`
	Paths     []string  `json:"paths,omitempty"`
	AgentID   string    `json:"agent_id,omitempty"`
	AgentType string    `json:"agent_type,omitempty"`
}

// InputError is a hook input the hook cannot act on: Code is the API's
// error code for it, Field the field at fault ("" for the whole input),
// Msg a sentence saying what is wrong.
type InputError struct {
	Code, Field, Msg string
}

func (e *InputError) Error() string { return e.Msg }

// ParseInput decodes a hook's input as Claude Code sends it, and as the
// command hook sends any executor's event to Madebook: one JSON object
// with a session_id and a hook_event_name; fields it does not read are
// ignored, and tool_input, when present, is an object. Errors:
// *InputError, codes invalid_body, session_id_required,
// session_id_too_long, hook_event_name_required, invalid_field.
func ParseInput(b []byte) (Input, error) { return ClaudeCode.ParseEvent(b, "", nil) }

// check refuses an input the hook cannot act on (see ParseInput).
func (in Input) check() error {
	switch {
	case strings.TrimSpace(in.SessionID) == "":
		return &InputError{Code: "session_id_required", Field: "session_id", Msg: "The hook input has no session_id."}
	case utf8.RuneCountInString(in.SessionID) > MaxSessionID:
		return &InputError{Code: "session_id_too_long", Field: "session_id",
			Msg: fmt.Sprintf("The hook input's session_id is over %d characters.", MaxSessionID)}
	case in.HookEventName == "":
		return &InputError{Code: "hook_event_name_required", Field: "hook_event_name", Msg: "The hook input has no hook_event_name."}
	case len(in.ToolInput) > 0 && !isObject(in.ToolInput) && string(bytes.TrimSpace(in.ToolInput)) != "null":
		return &InputError{Code: "invalid_field", Field: "tool_input", Msg: "The hook input's tool_input is not a JSON object."}
	}
	return nil
}

// Output is the hook's answer as Claude Code reads it, and what Madebook
// tells the command hook beside it. The zero Output says nothing.
type Output struct {
	Specific *Specific `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user (Stop: tool calls no hook
	// checked).
	SystemMessage string `json:"systemMessage,omitempty"`
	// Madebook is for the command hook, never for Claude: only an event
	// that carried Local gets it.
	Madebook *Reply `json:"madebook,omitempty"`
}

// Reply is what Madebook's answer tells the command hook.
type Reply struct {
	// Watch are the blocked scope's paths to watch while an allowed call
	// runs.
	Watch []string `json:"watch,omitempty"`
}

// Specific is the event-specific part of an answer.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// Decision is a PermissionRequest's answer.
	Decision *Decision `json:"decision,omitempty"`
}

// Decision answers a PermissionRequest: behavior "deny" with the message
// Claude is shown.
type Decision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// Empty reports whether the answer says nothing to Claude: the command
// prints nothing for it.
func (o Output) Empty() bool { return o.Specific == nil && o.SystemMessage == "" }

// Denied reports whether the answer denies a tool call.
func (o Output) Denied() bool {
	return o.Specific != nil && (o.Specific.PermissionDecision == "deny" || o.Specific.Decision != nil && o.Specific.Decision.Behavior == "deny")
}

// ForClaude is the answer without what only the command hook reads.
func (o Output) ForClaude() Output {
	o.Madebook = nil
	return o
}

// DenialReason is what a denial tells Claude ("" when it denies nothing).
func (o Output) DenialReason() string {
	switch {
	case o.Specific == nil:
		return ""
	case o.Specific.Decision != nil:
		return o.Specific.Decision.Message
	}
	return o.Specific.PermissionDecisionReason
}

// Madebook is the calls the hook makes. Every error is an *NoAnswer when
// Madebook could not be reached or failed (a 5xx), or an *APIError when
// it refused the call.
type Madebook interface {
	// OpenSession opens, or re-attaches to, the session of this agent key
	// whose external id is externalID, on the mission, and returns it with
	// its next action; executor names the executor (the session's agent),
	// and root, when not "", is the project root (recorded when the
	// session has none).
	OpenSession(ctx context.Context, executor, mission, externalID, root string) (Opened, error)
	// Brief takes the session's brief, delivering what it delivers.
	Brief(ctx context.Context, session string) (Brief, error)
	// Check asks whether a tool call may run now; it keeps only that the
	// call was checked (when it names the executor's id of the call).
	Check(ctx context.Context, session string, req CheckRequest) (Verdict, error)
	// OpenRun opens, or re-attaches to, the session's run whose external
	// id is externalID, and returns its id.
	OpenRun(ctx context.Context, session, name, externalID string) (string, error)
	// Attach is OpenSession, then OpenRun of the hook's run (named after
	// the executor, with the session's external id): the session and run
	// ids. The server answers a re-attach, every event after the first, in
	// one read.
	Attach(ctx context.Context, executor, mission, externalID, root string) (session, run string, err error)
	// RecordToolCall records a tool call on the run.
	RecordToolCall(ctx context.Context, run string, call ToolCall) error
	// ReportBreach reports files a call changed inside the blocked scope.
	ReportBreach(ctx context.Context, run string, b Breach) error
	// ReportTranscript reports the tool calls an executor's transcript
	// holds, and returns those that ran without a check.
	ReportTranscript(ctx context.Context, run string, calls []TranscriptCall) ([]TranscriptCall, error)
}

// Opened is a session the hook opened or re-attached to, with its next
// action and reason, as every agent call answers them.
type Opened struct {
	ID         string `json:"id"`
	NextAction string `json:"next_action"`
	Reason     string `json:"reason"`
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
	// ToolUseID is the executor's id of the call: Madebook keeps that it
	// was checked (the ungoverned-tool-calls audit looks for calls no
	// check names). AgentID is the subagent making it.
	ToolUseID string `json:"tool_use_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
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
	// ToolUseID is the executor's id of the call; AgentID and AgentType
	// the subagent that made it ("" for the main agent); Error why it
	// failed ("" when it did not).
	ToolUseID string `json:"tool_use_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Config is how the hook runs.
type Config struct {
	// Executor is the coding agent whose events the hook answers; nil is
	// Claude Code.
	Executor *Executor
	// Mission is the slug of the mission the executor's session works on.
	Mission string
	// FailOpen lets every tool run when Madebook does not answer.
	FailOpen bool
}

// executor is the config's executor: Claude Code unless it names one.
func (c Config) executor() *Executor {
	if c.Executor == nil {
		return ClaudeCode
	}
	return c.Executor
}

// Own reports whether the tool is one of Madebook's own MCP tools
// (mcp__madebook__brief, …): the executor gate never counts them as side
// effects, so the hook lets them run without asking.
func Own(tool string) bool {
	server, name := gate.SplitTool(tool)
	return server == gate.Madebook && !gate.Classify(server, name, nil, nil)
}

// Handle answers one hook event with Madebook's calls. When one fails,
// the answer is Unanswered's: Claude is told, and a side-effecting call
// denied unless FailOpen.
func Handle(ctx context.Context, mb Madebook, cfg Config, in Input) Output {
	var (
		out Output
		err error
	)
	switch in.HookEventName {
	case SessionStart:
		out, err = sessionStart(ctx, mb, cfg, in)
	case UserPromptSubmit:
		out, err = userPromptSubmit(ctx, mb, cfg, in)
	case SubagentStart:
		out, err = subagentStart(ctx, mb, cfg, in)
	case PreToolUse, PermissionRequest:
		out, err = checkCall(ctx, mb, cfg, in)
	case PostToolUse, PostToolUseFailure:
		out, err = postToolUse(ctx, mb, cfg, in)
	case Stop, SubagentStop, SessionEnd:
		out, err = stopped(ctx, mb, cfg, in)
	}
	if err != nil {
		return Unanswered(cfg, in, err)
	}
	return out
}

// Unanswered is the answer to an event Madebook did not answer (err says
// why): Claude is told, a side-effecting call is denied unless FailOpen,
// and what Madebook cannot record is said to be off the record.
func Unanswered(cfg Config, in Input, err error) Output {
	switch in.HookEventName {
	case SessionStart, UserPromptSubmit, SubagentStart:
		return withContext(in.HookEventName, ungoverned(cfg, err))
	case PreToolUse, PermissionRequest:
		if cfg.FailOpen || cfg.executor().ReadOnly(in.ToolName) || Own(in.ToolName) {
			return Output{}
		}
		var na *NoAnswer
		if errors.As(err, &na) {
			return deny(in.HookEventName, fmt.Sprintf("%s. %s is side-effecting, and Madebook governs this session: it may not run until Madebook answers. "+
				"Reading the repository still works; tell the user Madebook is not answering.", failure(err), in.ToolName))
		}
		return deny(in.HookEventName, fmt.Sprintf("%s. %s is side-effecting, and the hook could not ask Madebook whether it may run. "+
			"Reading the repository still works; tell the user, who must fix the hook's setup.", failure(err), in.ToolName))
	case PostToolUse, PostToolUseFailure:
		if in.Madebook != nil && in.Madebook.Breach != nil {
			b := in.Madebook.Breach
			return withContext(in.HookEventName, fmt.Sprintf("This %s call changed %s, inside the blocked scope, and reporting it to Madebook failed: %s. Tell the user.",
				in.ToolName, strings.Join(b.Files, ", "), failure(err)))
		}
		return withContext(in.HookEventName, fmt.Sprintf("This %s call is not on Madebook's record: %s.", in.ToolName, failure(err)))
	case Stop, SubagentStop, SessionEnd:
		return Output{SystemMessage: fmt.Sprintf("Madebook did not get this session's tool calls from the transcript: %s. The hook reports them again at the next stop.", failure(err))}
	}
	return Output{}
}

// withContext is an answer that adds text to Claude's context.
func withContext(event, text string) Output {
	return Output{Specific: &Specific{HookEventName: event, AdditionalContext: text}}
}

// deny is the answer that denies a call, as the event asks it: a
// PreToolUse's permission decision, or a PermissionRequest's decision.
func deny(event, reason string) Output {
	if event == PermissionRequest {
		return Output{Specific: &Specific{HookEventName: PermissionRequest, Decision: &Decision{Behavior: "deny", Message: reason}}}
	}
	return Output{Specific: &Specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// open opens or re-attaches the Claude session's Madebook session.
func open(ctx context.Context, mb Madebook, cfg Config, in Input) (Opened, error) {
	if cfg.Mission == "" {
		return Opened{}, &APIError{Code: "mission_required", Message: fmt.Sprintf("No mission is set: set MADEBOOK_MISSION (or the hook's --mission) to the slug of the mission this %s session works on.", cfg.executor().Title)}
	}
	return mb.OpenSession(ctx, cfg.executor().Name, cfg.Mission, in.SessionID, projectRoot(in))
}

// openRun opens or re-attaches the session and its hook run.
func openRun(ctx context.Context, mb Madebook, cfg Config, in Input) (session, run string, err error) {
	if cfg.Mission == "" {
		_, err := open(ctx, mb, cfg, in) // says what to set
		return "", "", err
	}
	return mb.Attach(ctx, cfg.executor().Name, cfg.Mission, in.SessionID, projectRoot(in))
}

// projectRoot is the project root of the event, as the agent's machine
// tells it (Local.Root). Without one (Claude Code's http hook), a
// session's root is the cwd it started in, and "" leaves the session's
// recorded root to decide.
func projectRoot(in Input) string {
	if in.Madebook != nil {
		return in.Madebook.Root
	}
	if in.HookEventName == SessionStart {
		return in.Cwd
	}
	return ""
}

// site is what the event's call names: the command hook's, resolved on
// the agent's machine, else the call as Claude Code sent it.
func site(in Input) Site {
	if in.Madebook != nil && in.Madebook.Site != nil {
		s := *in.Madebook.Site
		s.Input = in.ToolInput
		return s
	}
	return Site{Input: in.ToolInput, Cwd: in.Cwd, Root: projectRoot(in)}
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

// briefFor opens or re-attaches the session and takes its brief.
func briefFor(ctx context.Context, mb Madebook, cfg Config, in Input) (Opened, Brief, error) {
	session, err := open(ctx, mb, cfg, in)
	if err != nil {
		return Opened{}, Brief{}, err
	}
	b, err := mb.Brief(ctx, session.ID)
	return session, b, err
}

func sessionStart(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	session, b, err := briefFor(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	var s strings.Builder
	fmt.Fprintf(&s, "This %s session is governed by Madebook (session %s, mission %s). "+
		"Its hook checks every tool call against the brief below before it runs, and records it after", cfg.executor().Title, session.ID, cfg.Mission)
	if run, err := mb.OpenRun(ctx, session.ID, cfg.executor().Name, in.SessionID); err == nil {
		fmt.Fprintf(&s, ", on run %s. When a call is a step of your approved plan that waits on a stopping point, "+
			"ask that stopping point's question on a run of its own (the Madebook MCP tool start_run with \"parent\": %q, then ask on it with stopping_point N) "+
			"and wait for a person's answer", run, run)
	}
	s.WriteString(".\n\n")
	writeBrief(&s, b)
	if b.Protocol != "" {
		fmt.Fprintf(&s, "\n%s\n", strings.TrimSpace(b.Protocol))
	}
	return withContext(SessionStart, s.String()), nil
}

func userPromptSubmit(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	_, b, err := briefFor(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	var s strings.Builder
	writeBrief(&s, b)
	return withContext(UserPromptSubmit, s.String()), nil
}

// subagentStart tells a subagent where it works and what Madebook says
// now. It takes no brief: a brief delivers, and what it delivers (a
// lead's answer) is the main agent's, on its next prompt.
func subagentStart(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	session, err := open(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	var s strings.Builder
	fmt.Fprintf(&s, "You are a subagent of a %s session governed by Madebook (session %s, mission %s). "+
		"Its hook checks each of your tool calls before it runs, as it checks the main agent's, and records it after.\n", cfg.executor().Title, session.ID, cfg.Mission)
	fmt.Fprintf(&s, "Madebook's next action: %s", session.NextAction)
	if session.Reason != "" {
		fmt.Fprintf(&s, ": %s", session.Reason)
	}
	s.WriteString("\nA call Madebook denies says why and what to do instead: do that, or report it back to the main agent.")
	return withContext(SubagentStart, s.String()), nil
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

// checkCall answers a PreToolUse, or a PermissionRequest, by the check:
// nothing when the call may run (with the blocked scope to watch, for the
// command hook), else a denial with the check's reason, and the attempt
// reported to the ledger.
func checkCall(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	if Own(in.ToolName) {
		return Output{}, nil
	}
	session, run, err := openRun(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	at := site(in)
	v, err := mb.Check(ctx, session, CheckRequest{Tool: cfg.executor().Tool(in), Site: at, Run: run, ToolUseID: in.ToolUseID, AgentID: in.AgentID})
	if err != nil {
		return Output{}, err
	}
	if v.Allow {
		if in.Madebook != nil && len(v.Watch) > 0 {
			return Output{Madebook: &Reply{Watch: v.Watch}}, nil
		}
		return Output{}, nil
	}
	// The attempt goes on the record: the ledger refuses the call by the
	// same rules and keeps the refusal in the session's timeline. Its
	// answer changes nothing here: the call is denied. A permission prompt
	// comes after its PreToolUse, which reported it.
	if in.HookEventName == PreToolUse {
		_ = mb.RecordToolCall(ctx, run, toolCall(cfg.executor(), in, at))
	}
	reason := strings.TrimSpace(v.Reason)
	if reason == "" {
		reason = "Madebook does not allow this call now. " + instead
	}
	return deny(in.HookEventName, "Madebook denied this "+in.ToolName+" call. "+reason), nil
}

func postToolUse(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	_, run, err := openRun(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	if err := mb.RecordToolCall(ctx, run, toolCall(cfg.executor(), in, site(in))); err != nil {
		return Output{}, err
	}
	if in.Madebook == nil || in.Madebook.Breach == nil {
		return Output{}, nil
	}
	b := *in.Madebook.Breach
	if err := mb.ReportBreach(ctx, run, b); err != nil {
		return Output{}, err
	}
	return withContext(in.HookEventName, fmt.Sprintf("This %s call changed %s, inside the blocked scope (%s), before its decision was made: Madebook recorded a breach and stopped the session (HARD_STOP). Stop, and tell the user.",
		in.ToolName, strings.Join(b.Files, ", "), strings.Join(b.Scope, ", "))), nil
}

// stopped reports, when the agent or a subagent stops or the session
// ends, the tool calls its transcript holds that the command hook read,
// and tells the user of those that ran without a check.
func stopped(ctx context.Context, mb Madebook, cfg Config, in Input) (Output, error) {
	if in.Madebook == nil || len(in.Madebook.Calls) == 0 {
		return Output{}, nil
	}
	_, run, err := openRun(ctx, mb, cfg, in)
	if err != nil {
		return Output{}, err
	}
	found, err := mb.ReportTranscript(ctx, run, in.Madebook.Calls)
	if err != nil || len(found) == 0 {
		return Output{}, err
	}
	names := make([]string, 0, len(found))
	for _, c := range found {
		names = append(names, c.Tool+" ("+c.ToolUseID+")")
	}
	return Output{SystemMessage: fmt.Sprintf("Madebook: %s ran without a check by its hook, so nothing governed %s. "+
		"Madebook stopped the session (HARD_STOP) until a person reviews %s: see the audit report ungoverned-tool-calls.",
		strings.Join(names, ", "), itThem(len(found)), itThem(len(found)))}, nil
}

// itThem is "it" for one, "them" for more.
func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// toolCall is the ledger's record of the call the executor e reports:
// the tool mcp__<server>__<tool> under its server, the executor's own
// tools under its name, read-only ones said to be so, with what it names
// (which Madebook reads as the check did), its subagent and its error.
func toolCall(e *Executor, in Input, at Site) ToolCall {
	server, tool := gate.SplitToolOf(e.Name, in.ToolName)
	c := ToolCall{Server: server, Tool: tool, Site: at, ToolUseID: in.ToolUseID, AgentID: in.AgentID, AgentType: in.AgentType}
	if in.HookEventName == PostToolUseFailure {
		c.Error = in.ErrorText()
		if c.Error == "" {
			c.Error = "failed"
		}
	}
	if gate.ReadOnlyBuiltin(server, tool) {
		no := false
		c.SideEffecting = &no
	}
	return c
}

// ToolCallOf is the ledger's record of the call the executor reports, as
// Madebook reads it from the event alone.
func ToolCallOf(e *Executor, in Input) ToolCall { return toolCall(e, in, site(in)) }

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
