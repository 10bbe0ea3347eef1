package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/gate"
)

// geminiEvents are Gemini CLI's events (0.61.0), as the hook's.
var geminiEvents = map[string]string{
	"SessionStart": SessionStart, "BeforeAgent": UserPromptSubmit, "BeforeTool": PreToolUse, "AfterTool": PostToolUse,
	"AfterAgent": Stop, "SessionEnd": SessionEnd,
}

// geminiEvent is what Gemini CLI sends a hook beside Claude Code's fields
// (session_id, cwd, hook_event_name, tool_name, tool_input, prompt): the
// call's output, and for an MCP tool (named mcp_<server>_<tool>) its
// server and tool apart.
type geminiEvent struct {
	Input
	ToolResponse struct {
		Error json.RawMessage `json:"error"`
	} `json:"tool_response"`
	MCP *struct {
		Server string `json:"server_name"`
		Tool   string `json:"tool_name"`
	} `json:"mcp_context"`
}

// geminiDecode reads a Gemini CLI event: an MCP tool named
// mcp__<server>__<tool>, a failed call (an error in tool_response) as
// PostToolUseFailure, and, since Gemini gives a call no id, the call's id
// made from its tool and input (callID), which pairs a BeforeTool with
// its AfterTool.
func geminiDecode(raw []byte, in *Input) error {
	var g geminiEvent
	if err := json.Unmarshal(raw, &g); err != nil {
		return err
	}
	*in = g.Input
	if g.MCP != nil && g.MCP.Server != "" && g.MCP.Tool != "" {
		in.ToolName = mcpName(g.MCP.Server, g.MCP.Tool)
	}
	if e := g.ToolResponse.Error; len(e) > 0 && string(e) != "null" && in.HookEventName == "AfterTool" {
		in.Error = e
		in.HookEventName = PostToolUseFailure
	}
	if in.ToolName != "" && in.ToolUseID == "" {
		in.ToolUseID = callID("gemini", in.ToolName, in.ToolInput)
	}
	return nil
}

// geminiRender is the answer as Gemini CLI reads it: a denial is
// {"decision":"deny","reason"} (Gemini ignores Claude Code's
// hookSpecificOutput for one); context for the model is
// hookSpecificOutput.additionalContext; a message for the user is
// systemMessage.
func geminiRender(_ Input, out Output) Rendered {
	if out.Empty() {
		return Rendered{}
	}
	type context struct {
		AdditionalContext string `json:"additionalContext"`
	}
	var g struct {
		Decision      string   `json:"decision,omitempty"`
		Reason        string   `json:"reason,omitempty"`
		SystemMessage string   `json:"systemMessage,omitempty"`
		Specific      *context `json:"hookSpecificOutput,omitempty"`
	}
	g.SystemMessage = out.SystemMessage
	switch {
	case out.Denied():
		g.Decision, g.Reason = "deny", out.DenialReason()
	case out.Specific != nil && out.Specific.AdditionalContext != "":
		g.Specific = &context{out.Specific.AdditionalContext}
	}
	return jsonAnswer(g)
}

// mcpName is the hook's name of an MCP tool: mcp__<server>__<tool>.
func mcpName(server, tool string) string { return "mcp__" + server + "__" + tool }

// callID is the id of a call made of the executor, its tool and its input
// (its JSON with the keys sorted), for an executor whose events give a
// call no id: a call's check and its record carry the same one, and so do
// two calls alike.
func callID(executor, tool string, input json.RawMessage) string {
	canon := []byte(input)
	var v any
	if json.Unmarshal(input, &v) == nil {
		canon, _ = json.Marshal(v)
	}
	sum := sha256.Sum256(append([]byte(tool+"\x00"), canon...))
	return executor + "_" + hex.EncodeToString(sum[:12])
}

// jsonAnswer is v, as JSON on stdout, the exit status 0.
func jsonAnswer(v any) Rendered {
	b, _ := json.Marshal(v)
	return Rendered{Stdout: append(b, '\n')}
}

// geminiRecord is a message record of Gemini CLI's transcript (JSON
// lines: a record, written again each time it changes, or a $set of
// records): a model's message holds the tool calls it made, each with
// its status and result.
type geminiRecord struct {
	Type      string `json:"type"`
	ToolCalls []struct {
		Name      string          `json:"name"`
		Args      json.RawMessage `json:"args"`
		Status    string          `json:"status"`
		Timestamp time.Time       `json:"timestamp"`
		Result    []struct {
			FunctionResponse struct {
				Response struct {
					Error string `json:"error"`
				} `json:"response"`
			} `json:"functionResponse"`
		} `json:"result"`
	} `json:"toolCalls"`
}

// geminiBlocked starts the error of a call a BeforeTool hook blocked: it
// never ran.
const geminiBlocked = "Tool execution blocked:"

// geminiTranscriptCalls is Gemini CLI's transcriptReader: each tool call
// of the model's messages that ran (status success or error, not one a
// hook blocked), with the id the hook made for it (callID: its tool and
// arguments), the tool as Madebook names it. An MCP tool is left out: the
// transcript names it mcp_<server>_<tool>, which does not say where its
// server's name ends.
func geminiTranscriptCalls(r io.Reader, root, agentID, agentType string) ([]TranscriptCall, int64) {
	var (
		calls []TranscriptCall
		seen  = map[string]bool{}
		read  int64
	)
	add := func(rec geminiRecord) {
		for _, tc := range rec.ToolCalls {
			ran := tc.Status == "success" || tc.Status == "error"
			for _, res := range tc.Result {
				ran = ran && !strings.HasPrefix(res.FunctionResponse.Response.Error, geminiBlocked)
			}
			if !ran || tc.Name == "" || strings.HasPrefix(tc.Name, "mcp_") || len(calls) >= MaxTranscriptCalls {
				continue
			}
			id := callID(gate.Gemini, tc.Name, tc.Args)
			if seen[id] {
				continue
			}
			seen[id] = true
			name := gate.ToolName(gate.Gemini, tc.Name)
			calls = append(calls, TranscriptCall{ToolUseID: id, Tool: name, At: tc.Timestamp.UTC(),
				Paths: namedPaths(name, tc.Args, root, root), AgentID: agentID, AgentType: agentType})
		}
	}
	read = eachLine(r, func() bool { return len(calls) < MaxTranscriptCalls }, func(line []byte) {
		var l struct {
			geminiRecord
			Set struct {
				Messages []geminiRecord `json:"messages"`
			} `json:"$set"`
		}
		if json.Unmarshal(line, &l) != nil {
			return
		}
		add(l.geminiRecord)
		for _, rec := range l.Set.Messages {
			add(rec)
		}
	})
	return calls, read
}
