package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/madebook/madebook/internal/gate"
)

// Executor is the adapter between one coding agent's hooks and the
// hook's logic: the executor's events in, read as Input (Claude Code's
// fields and event names, which Handle answers), and the answer out, as
// the executor reads it. Every executor has the same gate; only the
// shapes differ.
type Executor struct {
	// Name is the executor (gate.Codex): the agent of the sessions its hook
	// opens, the name of their hook run, the server its built-in tools are
	// classified under, and the path of its hook route (/hooks/codex).
	Name string
	// Title is what people call it ("Codex").
	Title string
	// Events maps the executor's event names to the hook's (Events); an
	// event it does not name gets no answer.
	Events map[string]string
	// ProjectDir is the environment variable the executor sets to the
	// project root for its hooks ("" when it sets none).
	ProjectDir string
	// SessionEnv is the environment variable holding the executor's
	// session id, when its events may lack one ("": none).
	SessionEnv string
	// transcript reads the tool calls of the executor's transcript (JSON
	// lines, from a reader at a line's start), for the report at a stop
	// that finds the calls that ran unchecked; nil: the hook reads none.
	transcript transcriptReader
	// EventArg: the executor's events do not name themselves (Copilot's),
	// so its hook configuration gives each its name (`madebook hook
	// copilot --event preToolUse`).
	EventArg bool
	// decode reads one event as the executor sends it into in (nil: the
	// fields are Claude Code's). It may leave the event name native:
	// ParseEvent maps it.
	decode func(raw []byte, in *Input) error
	// render writes the answer to in (a denial, context, a message) as
	// the executor reads it.
	render func(in Input, out Output) Rendered
}

// Rendered is an answer as the command hook gives it to the executor: its
// stdout (the executor's JSON) and its stderr (a message for the user,
// where the executor's JSON has no field for one). The hook exits 0 with
// it: every executor reads a denial from the JSON.
type Rendered struct {
	Stdout []byte
	Stderr string
}

// The executors' adapters, by name.
var executors = map[string]*Executor{
	gate.ClaudeCode: {Name: gate.ClaudeCode, Title: "Claude Code", Events: same(Events...), ProjectDir: "CLAUDE_PROJECT_DIR",
		transcript: transcriptCalls, render: claudeShape},
	gate.Codex: {Name: gate.Codex, Title: "Codex", Events: same(SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd),
		transcript: codexTranscriptCalls, render: codexRender},
	gate.Gemini: {Name: gate.Gemini, Title: "Gemini CLI", Events: geminiEvents, ProjectDir: "GEMINI_PROJECT_DIR",
		SessionEnv: "GEMINI_SESSION_ID", transcript: geminiTranscriptCalls, decode: geminiDecode, render: geminiRender},
	gate.Copilot: {Name: gate.Copilot, Title: "Copilot CLI", Events: copilotEvents, ProjectDir: "COPILOT_PROJECT_DIR", EventArg: true,
		decode: copilotDecode, render: copilotRender},
	gate.Cursor: {Name: gate.Cursor, Title: "Cursor", Events: cursorEvents, ProjectDir: "CURSOR_PROJECT_DIR",
		decode: cursorDecode, render: cursorRender},
}

// ExecutorOf returns the adapter of the executor named name.
func ExecutorOf(name string) (*Executor, bool) {
	e, ok := executors[name]
	return e, ok
}

// ClaudeCode is the adapter of Claude Code, whose hooks' shapes are the
// hook's own.
var ClaudeCode = executors[gate.ClaudeCode]

// same maps each event to itself.
func same(events ...string) map[string]string {
	m := make(map[string]string, len(events))
	for _, e := range events {
		m[e] = e
	}
	return m
}

// ParseEvent reads one event as the executor sends it: decoded into
// Input, named event when the executor's events do not name themselves
// (EventArg), its event name mapped to the hook's (an event the hook does
// not answer keeps its own name), its session id from the environment
// (getenv) when the event has none, then checked as ParseInput checks.
func (e *Executor) ParseEvent(raw []byte, event string, getenv func(string) string) (Input, error) {
	var in Input
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return in, &InputError{Code: "invalid_body", Msg: fmt.Sprintf("The hook input is not one JSON object; %s sends one.", e.Title)}
	}
	decode := e.decode
	if decode == nil {
		decode = func(raw []byte, in *Input) error { return json.Unmarshal(raw, in) }
	}
	if err := decode(trimmed, &in); err != nil {
		return in, &InputError{Code: "invalid_body", Msg: fmt.Sprintf("The hook input does not have %s's shape: %v.", e.Title, err)}
	}
	if in.HookEventName == "" {
		in.HookEventName = event
	}
	if name, ok := e.Events[in.HookEventName]; ok {
		in.HookEventName = name
	}
	if in.SessionID == "" && e.SessionEnv != "" && getenv != nil {
		in.SessionID = getenv(e.SessionEnv)
	}
	return in, in.check()
}

// Tool is Madebook's name of the event's tool (gate.ToolName): the
// executor's built-ins under its own name, MCP tools as
// mcp__server__tool.
func (e *Executor) Tool(in Input) string { return gate.ToolName(gate.SplitToolOf(e.Name, in.ToolName)) }

// ReadOnly reports whether the event's tool is one of the executor's
// built-ins that change nothing: when Madebook cannot answer, it runs.
func (e *Executor) ReadOnly(tool string) bool {
	server, name := gate.SplitToolOf(e.Name, tool)
	return gate.ReadOnlyBuiltin(server, name)
}

// Render is the answer out as the executor reads it.
func (e *Executor) Render(in Input, out Output) Rendered { return e.render(in, out.ForClaude()) }

// claudeShape is the answer as Claude Code reads it: its JSON on stdout,
// nothing when it says nothing.
func claudeShape(_ Input, out Output) Rendered {
	if out.Empty() {
		return Rendered{}
	}
	b, _ := json.Marshal(out)
	return Rendered{Stdout: append(b, '\n')}
}
