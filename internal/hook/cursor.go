package hook

import (
	"bytes"
	"encoding/json"
	"strings"
)

// cursorEvents are Cursor's agent hook events, as the hook's, shaped as
// Cursor's documentation (cursor.com/docs/hooks) shows them: Cursor does
// not install here, so no run of it checked them. beforeSubmitPrompt is
// not among them: its answer cannot add context, and a brief taken there
// would deliver what the agent is never shown.
var cursorEvents = map[string]string{
	"sessionStart": SessionStart, "preToolUse": PreToolUse, "postToolUse": PostToolUse,
	"postToolUseFailure": PostToolUseFailure, "subagentStart": SubagentStart, "stop": Stop,
	"subagentStop": SubagentStop, "sessionEnd": SessionEnd,
}

// cursorMCPServer is the server a Cursor MCP tool is checked under:
// Cursor names one MCP:<tool>, without its server.
const cursorMCPServer = "mcp"

// cursorEvent is what Cursor sends a hook.
type cursorEvent struct {
	ConversationID string          `json:"conversation_id"`
	SessionID      string          `json:"session_id"`
	HookEventName  string          `json:"hook_event_name"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ErrorMessage   string          `json:"error_message"`
	FailureType    string          `json:"failure_type"`
	SubagentID     string          `json:"subagent_id"`
	SubagentType   string          `json:"subagent_type"`
}

// cursorDecode reads a Cursor event: the session is the conversation, the
// cwd the first workspace root when the event has none, an input sent as
// a JSON string read as its object, an MCP tool (MCP:<tool>) as
// mcp__mcp__<tool>, and a call Cursor itself denied (postToolUseFailure
// with failure_type permission_denied) left unanswered: it did not run.
func cursorDecode(raw []byte, in *Input) error {
	var c cursorEvent
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	*in = Input{SessionID: c.ConversationID, HookEventName: c.HookEventName, Cwd: c.Cwd, ToolName: c.ToolName,
		ToolUseID: c.ToolUseID, AgentID: c.SubagentID, AgentType: c.SubagentType}
	if in.SessionID == "" {
		in.SessionID = c.SessionID
	}
	if in.Cwd == "" && len(c.WorkspaceRoots) > 0 {
		in.Cwd = c.WorkspaceRoots[0]
	}
	if args := bytes.TrimSpace(c.ToolInput); len(args) > 0 && args[0] == '"' {
		var text string
		if err := json.Unmarshal(args, &text); err != nil {
			return err
		}
		in.ToolInput = json.RawMessage(text)
	} else if len(args) > 0 {
		in.ToolInput = json.RawMessage(args)
	}
	if tool, ok := strings.CutPrefix(in.ToolName, "MCP:"); ok && tool != "" {
		in.ToolName = mcpName(cursorMCPServer, tool)
	}
	switch {
	case c.HookEventName == "postToolUseFailure" && c.FailureType == "permission_denied":
		in.HookEventName = "postToolUseFailure (permission_denied)"
	case c.HookEventName == "postToolUseFailure":
		in.Error, _ = json.Marshal(c.ErrorMessage)
	}
	return nil
}

// cursorAnswer is an answer as Cursor reads it.
type cursorAnswer struct {
	Permission        string `json:"permission,omitempty"`
	UserMessage       string `json:"user_message,omitempty"`
	AgentMessage      string `json:"agent_message,omitempty"`
	AdditionalContext string `json:"additional_context,omitempty"`
}

// cursorRender is the answer as Cursor reads it: a denial is
// {"permission":"deny"} with the reason for the user and the agent;
// context for the model is additional_context (sessionStart,
// postToolUse); a message for the user goes to stderr.
func cursorRender(_ Input, out Output) Rendered {
	var c cursorAnswer
	switch {
	case out.Denied():
		reason := out.DenialReason()
		c.Permission, c.UserMessage, c.AgentMessage = "deny", reason, reason
	case out.Specific != nil:
		c.AdditionalContext = out.Specific.AdditionalContext
	}
	r := Rendered{Stderr: out.SystemMessage}
	if c != (cursorAnswer{}) {
		r.Stdout = jsonAnswer(c).Stdout
	}
	return r
}
