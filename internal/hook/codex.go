package hook

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/gate"
)

// Codex CLI (0.171.0) sends Claude Code's fields and event names
// (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop,
// SessionEnd); its shell is Bash {"command"} and its patch tool
// apply_patch {"command": the whole patch}, their paths as the model
// wrote them, from the cwd (which follows the shell's workdir). It gives
// its hooks no project directory: the root is git's top level.

// codexRender is the answer as Codex reads it: Claude Code's
// hookSpecificOutput, with only the keys Codex knows (one key more and
// Codex drops the whole answer, and the tool runs); a message for the
// user goes to stderr.
func codexRender(_ Input, out Output) Rendered {
	r := Rendered{Stderr: out.SystemMessage}
	if out.Specific == nil {
		return r
	}
	r.Stdout = jsonAnswer(struct {
		Specific *Specific `json:"hookSpecificOutput"`
	}{out.Specific}).Stdout
	return r
}

// codexLine is the part of a line of Codex's transcript (its rollout,
// JSON lines) the hook reads: a response item, as the model was sent it
// (a function_call, a custom_tool_call, their outputs), or the turn's
// context, which names the cwd.
type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		CallID    string          `json:"call_id"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		Output    json.RawMessage `json:"output"`
		Cwd       string          `json:"cwd"`
	} `json:"payload"`
}

// codexBlocked starts the output of a call Codex's PreToolUse hook
// blocked: it never ran.
var codexBlocked = []string{"Command blocked by PreToolUse hook:", "Tool call blocked by PreToolUse hook:"}

// codexTranscriptCalls is Codex's transcriptReader: each function or
// custom tool call, named as its hooks name it (exec_command is Bash
// {"command"}, apply_patch {"command": the patch}, an MCP server's
// namespaced function mcp__server__tool), less those a hook blocked and
// the write_stdin calls that write nothing (they only read a running
// command's output). The tool is sent as Madebook names it
// (mcp__codex__Bash): the check named it so.
func codexTranscriptCalls(r io.Reader, root, agentID, agentType string) ([]TranscriptCall, int64) {
	var (
		calls   []TranscriptCall
		blocked = map[string]bool{}
		seen    = map[string]bool{}
		read    int64
		cwd     = root
	)
	read = eachLine(r, func() bool { return len(calls) < MaxTranscriptCalls }, func(line []byte) {
		var l codexLine
		if json.Unmarshal(line, &l) != nil {
			return
		}
		p := l.Payload
		switch {
		case (l.Type == "turn_context" || l.Type == "session_meta") && p.Cwd != "":
			cwd = p.Cwd
		case l.Type != "response_item":
		case p.Type == "function_call_output" || p.Type == "custom_tool_call_output":
			if out := outputText(p.Output); slices.ContainsFunc(codexBlocked, func(b string) bool { return strings.HasPrefix(out, b) }) {
				blocked[p.CallID] = true
			}
		case (p.Type == "function_call" || p.Type == "custom_tool_call") && p.CallID != "" && !seen[p.CallID]:
			tool, input, ok := codexCall(p.Type, p.Namespace, p.Name, p.Arguments, p.Input)
			if !ok {
				return
			}
			seen[p.CallID] = true
			name := gate.ToolName(gate.SplitToolOf(gate.Codex, tool))
			calls = append(calls, TranscriptCall{ToolUseID: p.CallID, Tool: name, At: l.Timestamp.UTC(),
				Paths: namedPaths(name, input, root, cwd), AgentID: agentID, AgentType: agentType})
		}
	})
	out := calls[:0]
	for _, c := range calls {
		if !blocked[c.ToolUseID] {
			out = append(out, c)
		}
	}
	return out, read
}

// codexCall is a transcript's call as Codex's hooks name it and its input
// as they send it; ok is false for a call that does nothing to report (a
// write_stdin of no characters).
func codexCall(kind, namespace, name, arguments, freeform string) (tool string, input json.RawMessage, ok bool) {
	var args map[string]any
	if kind == "custom_tool_call" {
		args = map[string]any{"input": freeform}
	} else if json.Unmarshal([]byte(arguments), &args) != nil {
		args = map[string]any{}
	}
	switch {
	case strings.HasPrefix(namespace, "mcp__"):
		tool = namespace + "__" + name
	case name == "exec_command" || name == "shell":
		tool, args = "Bash", map[string]any{"command": args["cmd"], "workdir": args["workdir"]}
	case name == "apply_patch":
		tool, args = "apply_patch", map[string]any{"command": args["input"]}
	case name == "write_stdin":
		if chars, _ := args["chars"].(string); chars == "" {
			return "", nil, false
		}
		tool = name
	default:
		tool = name
	}
	b, _ := json.Marshal(args)
	return tool, b, true
}

// outputText is a tool call's output as text: the string, or its text
// parts joined.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
