package hook

import (
	"bytes"
	"encoding/json"
	"strings"
)

// copilotEvents are Copilot CLI's events (1.0.102), as the hook's. Its
// payloads do not name their event: the hook's configuration gives each
// hook its event (`madebook hook copilot --event preToolUse`).
var copilotEvents = map[string]string{
	"sessionStart": SessionStart, "userPromptSubmitted": UserPromptSubmit, "preToolUse": PreToolUse,
	"postToolUse": PostToolUse, "postToolUseFailure": PostToolUseFailure, "subagentStart": SubagentStart,
	"agentStop": Stop, "subagentStop": SubagentStop, "sessionEnd": SessionEnd,
}

// copilotEvent is what Copilot CLI sends a hook, in its camelCase fields.
type copilotEvent struct {
	SessionID string          `json:"sessionId"`
	Cwd       string          `json:"cwd"`
	Prompt    string          `json:"prompt"`
	Source    string          `json:"source"`
	ToolName  string          `json:"toolName"`
	ToolArgs  json.RawMessage `json:"toolArgs"`
	Error     json.RawMessage `json:"error"`
	// AgentID and AgentType name the subagent (a task) a call is made in;
	// its events carry the subagent's own session id, and the session it
	// works for in ParentAgentID.
	AgentID       string `json:"agentId"`
	AgentType     string `json:"agentType"`
	ParentAgentID string `json:"parentAgentId"`
}

// copilotDecode reads a Copilot CLI event: a freeform tool's arguments
// (apply_patch's patch, a string) as {"input": …}, an MCP tool
// (<server>-<tool>: split at the first "-", since no built-in has one)
// as mcp__<server>__<tool>, a subagent's call on the session it works
// for, and, since Copilot gives a call no id, its id made from its tool
// and input.
func copilotDecode(raw []byte, in *Input) error {
	var c copilotEvent
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	*in = Input{SessionID: c.SessionID, Cwd: c.Cwd, Prompt: c.Prompt, Source: c.Source, ToolName: c.ToolName,
		Error: c.Error, AgentID: c.AgentID, AgentType: c.AgentType}
	if c.ParentAgentID != "" && c.AgentID != "" {
		in.SessionID = c.ParentAgentID
	}
	if args := bytes.TrimSpace(c.ToolArgs); len(args) > 0 && args[0] == '"' {
		var text string
		if err := json.Unmarshal(args, &text); err != nil {
			return err
		}
		in.ToolInput, _ = json.Marshal(map[string]string{"input": text})
	} else if len(args) > 0 {
		in.ToolInput = json.RawMessage(args)
	}
	if server, tool, ok := strings.Cut(in.ToolName, "-"); ok && server != "" && tool != "" {
		in.ToolName = mcpName(server, tool)
	}
	if in.ToolName != "" {
		in.ToolUseID = callID("copilot", in.ToolName, in.ToolInput)
	}
	return nil
}

// copilotAnswer is an answer as Copilot CLI reads it.
type copilotAnswer struct {
	Decision          string `json:"permissionDecision,omitempty"`
	Reason            string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// copilotRender is the answer as Copilot CLI reads it: a denial is
// {"permissionDecision":"deny","permissionDecisionReason"}; context for
// the model is additionalContext; a message for the user goes to stderr
// (Copilot has no field for one).
func copilotRender(_ Input, out Output) Rendered {
	var c copilotAnswer
	switch {
	case out.Denied():
		c.Decision, c.Reason = "deny", out.DenialReason()
	case out.Specific != nil:
		c.AdditionalContext = out.Specific.AdditionalContext
	}
	r := Rendered{Stderr: out.SystemMessage}
	if c != (copilotAnswer{}) {
		r.Stdout = jsonAnswer(c).Stdout
	}
	return r
}
