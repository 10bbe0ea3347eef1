package hook_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/hook"
)

func executor(t *testing.T, name string) *hook.Executor {
	t.Helper()
	e, ok := hook.ExecutorOf(name)
	if !ok {
		t.Fatalf("no adapter for %s", name)
	}
	return e
}

// TestEachExecutorsEventsReadAsTheHooks reads payloads shaped as each
// executor sends them (recorded from Codex 0.171.0, Gemini CLI 0.61.0 and
// Copilot CLI 1.0.102; Cursor's as its documentation shows them) into the
// hook's Input.
func TestEachExecutorsEventsReadAsTheHooks(t *testing.T) {
	env := map[string]string{"GEMINI_SESSION_ID": "gem-env-1"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		name, executor, event, payload string
		want                           hook.Input
		input                          string // the tool input, as JSON ("" for none)
		idPrefix                       string // a tool use id made by the adapter starts so
	}{
		{name: "codex apply_patch", executor: gate.Codex, payload: `{"session_id":"019a","turn_id":"t1","transcript_path":"/h/r.jsonl","cwd":"/w/repo/db","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: x.sql\n+x\n*** End Patch\n"},"tool_use_id":"call_1"}`,
			want:  hook.Input{SessionID: "019a", TranscriptPath: "/h/r.jsonl", Cwd: "/w/repo/db", HookEventName: hook.PreToolUse, ToolName: "apply_patch", ToolUseID: "call_1"},
			input: `{"command":"*** Begin Patch\n*** Add File: x.sql\n+x\n*** End Patch\n"}`},
		{name: "codex session end", executor: gate.Codex, payload: `{"session_id":"019a","transcript_path":"/h/r.jsonl","cwd":"/w/repo","hook_event_name":"SessionEnd","reason":"other"}`,
			want: hook.Input{SessionID: "019a", TranscriptPath: "/h/r.jsonl", Cwd: "/w/repo", HookEventName: hook.SessionEnd}},
		{name: "gemini write_file", executor: gate.Gemini, payload: `{"session_id":"gem-1","transcript_path":"/h/s.jsonl","cwd":"/w/repo","hook_event_name":"BeforeTool","timestamp":"2026-12-03T16:45:11.000Z","tool_name":"write_file","tool_input":{"content":"x","file_path":"db/migrations/1.sql"}}`,
			want:  hook.Input{SessionID: "gem-1", TranscriptPath: "/h/s.jsonl", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "write_file"},
			input: `{"content":"x","file_path":"db/migrations/1.sql"}`, idPrefix: "gemini_"},
		{name: "gemini MCP tool", executor: gate.Gemini, payload: `{"session_id":"gem-1","cwd":"/w/repo","hook_event_name":"BeforeTool","tool_name":"mcp_madebook_brief","tool_input":{},"mcp_context":{"server_name":"madebook","tool_name":"brief","url":"http://127.0.0.1:8080/mcp"}}`,
			want:  hook.Input{SessionID: "gem-1", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "mcp__madebook__brief"},
			input: `{}`, idPrefix: "gemini_"},
		{name: "gemini failed call", executor: gate.Gemini, payload: `{"session_id":"gem-1","cwd":"/w/repo","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":"nope"},"tool_response":{"llmContent":"","returnDisplay":"","error":{"message":"File not found","type":"file_not_found"}}}`,
			want:  hook.Input{SessionID: "gem-1", Cwd: "/w/repo", HookEventName: hook.PostToolUseFailure, ToolName: "read_file", Error: json.RawMessage(`{"message":"File not found","type":"file_not_found"}`)},
			input: `{"file_path":"nope"}`, idPrefix: "gemini_"},
		{name: "gemini prompt, its session id from the environment", executor: gate.Gemini, payload: `{"cwd":"/w/repo","hook_event_name":"BeforeAgent","prompt":"Go"}`,
			want: hook.Input{SessionID: "gem-env-1", Cwd: "/w/repo", HookEventName: hook.UserPromptSubmit, Prompt: "Go"}},
		{name: "copilot create", executor: gate.Copilot, event: "preToolUse", payload: `{"sessionId":"ac96","timestamp":1796316303091,"cwd":"/w/repo","toolName":"create","toolArgs":{"path":"/w/repo/hello.txt","file_text":"hello\n"}}`,
			want:  hook.Input{SessionID: "ac96", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "create"},
			input: `{"path":"/w/repo/hello.txt","file_text":"hello\n"}`, idPrefix: "copilot_"},
		{name: "copilot apply_patch, its patch a string", executor: gate.Copilot, event: "preToolUse", payload: `{"sessionId":"ac96","timestamp":1,"cwd":"/w/repo","toolName":"apply_patch","toolArgs":"*** Begin Patch\n*** Add File: /w/repo/p.txt\n+x\n*** End Patch\n"}`,
			want:  hook.Input{SessionID: "ac96", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "apply_patch"},
			input: `{"input":"*** Begin Patch\n*** Add File: /w/repo/p.txt\n+x\n*** End Patch\n"}`, idPrefix: "copilot_"},
		{name: "copilot MCP tool in a subagent", executor: gate.Copilot, event: "postToolUse", payload: `{"sessionId":"child","timestamp":1,"cwd":"/w/repo","toolName":"madebook-brief","toolArgs":{},"agentId":"child","agentType":"explore","parentAgentId":"root","toolResult":{"resultType":"success","textResultForLlm":"ok"}}`,
			want:  hook.Input{SessionID: "root", Cwd: "/w/repo", HookEventName: hook.PostToolUse, ToolName: "mcp__madebook__brief", AgentID: "child", AgentType: "explore"},
			input: `{}`, idPrefix: "copilot_"},
		{name: "copilot failed call", executor: gate.Copilot, event: "postToolUseFailure", payload: `{"sessionId":"ac96","timestamp":1,"cwd":"/w/repo","toolName":"view","toolArgs":{"path":"/w/repo/x"},"error":"Path does not exist"}`,
			want:  hook.Input{SessionID: "ac96", Cwd: "/w/repo", HookEventName: hook.PostToolUseFailure, ToolName: "view", Error: json.RawMessage(`"Path does not exist"`)},
			input: `{"path":"/w/repo/x"}`, idPrefix: "copilot_"},
		{name: "copilot stop", executor: gate.Copilot, event: "agentStop", payload: `{"sessionId":"ac96","timestamp":1,"cwd":"/w/repo","transcriptPath":"/h/events.jsonl","stopReason":"end_turn"}`,
			want: hook.Input{SessionID: "ac96", Cwd: "/w/repo", HookEventName: hook.Stop}},
		{name: "cursor shell", executor: gate.Cursor, payload: `{"conversation_id":"conv-1","generation_id":"g","hook_event_name":"preToolUse","workspace_roots":["/w/repo"],"tool_name":"Shell","tool_input":{"command":"npm install","working_directory":"/w/repo"},"tool_use_id":"abc123","cwd":"/w/repo"}`,
			want:  hook.Input{SessionID: "conv-1", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "Shell", ToolUseID: "abc123"},
			input: `{"command":"npm install","working_directory":"/w/repo"}`},
		{name: "cursor MCP tool, its input a JSON string, no cwd", executor: gate.Cursor, payload: `{"conversation_id":"conv-1","hook_event_name":"preToolUse","workspace_roots":["/w/repo"],"tool_name":"MCP:create_issue","tool_input":"{\"title\":\"x\"}","tool_use_id":"t2"}`,
			want:  hook.Input{SessionID: "conv-1", Cwd: "/w/repo", HookEventName: hook.PreToolUse, ToolName: "mcp__mcp__create_issue", ToolUseID: "t2"},
			input: `{"title":"x"}`},
		{name: "cursor failed call", executor: gate.Cursor, payload: `{"conversation_id":"conv-1","hook_event_name":"postToolUseFailure","tool_name":"Shell","tool_input":{"command":"npm test"},"tool_use_id":"t3","cwd":"/w/repo","error_message":"Command timed out after 30s","failure_type":"timeout"}`,
			want:  hook.Input{SessionID: "conv-1", Cwd: "/w/repo", HookEventName: hook.PostToolUseFailure, ToolName: "Shell", ToolUseID: "t3", Error: json.RawMessage(`"Command timed out after 30s"`)},
			input: `{"command":"npm test"}`},
		{name: "cursor call it denied itself: not run, not answered", executor: gate.Cursor, payload: `{"conversation_id":"conv-1","hook_event_name":"postToolUseFailure","tool_name":"Shell","tool_input":{"command":"rm -rf /"},"tool_use_id":"t4","cwd":"/w/repo","error_message":"denied","failure_type":"permission_denied"}`,
			want:  hook.Input{SessionID: "conv-1", Cwd: "/w/repo", HookEventName: "postToolUseFailure (permission_denied)", ToolName: "Shell", ToolUseID: "t4"},
			input: `{"command":"rm -rf /"}`},
		{name: "cursor session start", executor: gate.Cursor, payload: `{"conversation_id":"conv-1","hook_event_name":"sessionStart","session_id":"conv-1","workspace_roots":["/w/repo"],"is_background_agent":false,"composer_mode":"agent"}`,
			want: hook.Input{SessionID: "conv-1", Cwd: "/w/repo", HookEventName: hook.SessionStart}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := executor(t, c.executor).ParseEvent([]byte(c.payload), c.event, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if c.input != "" && !jsonEqual(t, string(got.ToolInput), c.input) {
				t.Errorf("tool_input %s, want %s", got.ToolInput, c.input)
			}
			if c.idPrefix != "" {
				if !strings.HasPrefix(got.ToolUseID, c.idPrefix) {
					t.Errorf("tool_use_id %q, want one made from the call (%s…)", got.ToolUseID, c.idPrefix)
				}
				got.ToolUseID = ""
			}
			got.ToolInput = nil
			if len(c.want.Error) > 0 && !jsonEqual(t, string(got.Error), string(c.want.Error)) {
				t.Errorf("error %s, want %s", got.Error, c.want.Error)
			}
			got.Error, c.want.Error = nil, nil
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(c.want)
			if string(g) != string(w) {
				t.Errorf("read as\n %s\nwant\n %s", g, w)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestACallsMadeIDPairsItsCheckWithItsRecord: an executor that gives a
// call no id gets one made from its tool and input, the same for the
// BeforeTool and the AfterTool of the call, whatever the keys' order,
// and another for another call.
func TestACallsMadeIDPairsItsCheckWithItsRecord(t *testing.T) {
	g := executor(t, gate.Gemini)
	read := func(payload string) string {
		in, err := g.ParseEvent([]byte(payload), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return in.ToolUseID
	}
	before := read(`{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"a","content":"x"}}`)
	after := read(`{"session_id":"s","hook_event_name":"AfterTool","tool_name":"write_file","tool_input":{"content":"x","file_path":"a"},"tool_response":{"llmContent":"ok"}}`)
	other := read(`{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"b","content":"x"}}`)
	if before == "" || before != after || before == other {
		t.Errorf("ids %q (before), %q (after), %q (another call)", before, after, other)
	}
}

// TestEachExecutorReadsItsAnswer renders a denial, context for the model
// and a message for the user as each executor reads them, exactly: Codex
// drops an answer with one key it does not know, and lets the call run.
func TestEachExecutorReadsItsAnswer(t *testing.T) {
	deny := hook.Output{Specific: &hook.Specific{HookEventName: hook.PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: "No."},
		Madebook: &hook.Reply{Watch: []string{"db"}}}
	ctx := hook.Output{Specific: &hook.Specific{HookEventName: hook.SessionStart, AdditionalContext: "Governed."}}
	msg := hook.Output{SystemMessage: "Ran unchecked."}
	for _, c := range []struct {
		executor      string
		out           hook.Output
		stdout, probe string
	}{
		{gate.ClaudeCode, deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No."}}`, ""},
		{gate.ClaudeCode, ctx, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Governed."}}`, ""},
		{gate.ClaudeCode, msg, `{"systemMessage":"Ran unchecked."}`, ""},
		{gate.Codex, deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No."}}`, ""},
		{gate.Codex, ctx, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Governed."}}`, ""},
		{gate.Codex, msg, ``, "Ran unchecked."},
		{gate.Gemini, deny, `{"decision":"deny","reason":"No."}`, ""},
		{gate.Gemini, ctx, `{"hookSpecificOutput":{"additionalContext":"Governed."}}`, ""},
		{gate.Gemini, msg, `{"systemMessage":"Ran unchecked."}`, ""},
		{gate.Copilot, deny, `{"permissionDecision":"deny","permissionDecisionReason":"No."}`, ""},
		{gate.Copilot, ctx, `{"additionalContext":"Governed."}`, ""},
		{gate.Copilot, msg, ``, "Ran unchecked."},
		{gate.Cursor, deny, `{"permission":"deny","user_message":"No.","agent_message":"No."}`, ""},
		{gate.Cursor, ctx, `{"additional_context":"Governed."}`, ""},
		{gate.Cursor, msg, ``, "Ran unchecked."},
	} {
		r := executor(t, c.executor).Render(hook.Input{}, c.out)
		if got := strings.TrimSpace(string(r.Stdout)); got != c.stdout || r.Stderr != c.probe {
			t.Errorf("%s: stdout %s, stderr %q; want %s, %q", c.executor, got, r.Stderr, c.stdout, c.probe)
		}
		if r := executor(t, c.executor).Render(hook.Input{}, hook.Output{}); len(r.Stdout) > 0 || r.Stderr != "" {
			t.Errorf("%s: the empty answer prints %q %q", c.executor, r.Stdout, r.Stderr)
		}
	}
}

// TestEveryExecutorNamesItsEvents: each adapter maps its events onto the
// hook's, and `madebook hook EXECUTOR` knows them all.
func TestEveryExecutorNamesItsEvents(t *testing.T) {
	for _, name := range gate.Executors { // executor fails the test for one with no adapter
		e := executor(t, name)
		if e.Name != name || e.Title == "" || len(e.Events) == 0 {
			t.Errorf("%s: %+v", name, e)
		}
		for native, ours := range e.Events {
			if !slices.Contains(hook.Events, ours) {
				t.Errorf("%s's %s maps to %s, which the hook does not answer", name, native, ours)
			}
		}
		if _, ok := e.Events[firstKey(e.Events, hook.PreToolUse)]; !ok {
			t.Errorf("%s has no event before a tool call", name)
		}
	}
}

func firstKey(m map[string]string, v string) string {
	for k, x := range m {
		if x == v {
			return k
		}
	}
	return ""
}

// TestAnotherExecutorsCallsAreItsOwn: when Madebook does not answer, an
// executor's read-only built-in runs and its write is denied, Madebook's
// own MCP tools run; a call is recorded under the executor's name.
func TestAnotherExecutorsCallsAreItsOwn(t *testing.T) {
	g := executor(t, gate.Gemini)
	cfg := hook.Config{Executor: g, Mission: "billing"}
	down := &hook.NoAnswer{Err: errorString("connection refused")}
	call := func(tool string) hook.Input {
		return hook.Input{SessionID: "s", HookEventName: hook.PreToolUse, ToolName: tool, ToolInput: json.RawMessage(`{"file_path":"a"}`)}
	}
	for tool, denied := range map[string]bool{"read_file": false, "write_file": true, "Read": true, "mcp__madebook__brief": false} {
		if got := hook.Unanswered(cfg, call(tool), down).Denied(); got != denied {
			t.Errorf("%s with Madebook down: denied %v, want %v", tool, got, denied)
		}
	}
	w := hook.ToolCallOf(g, call("write_file"))
	r := hook.ToolCallOf(g, call("read_file"))
	m := hook.ToolCallOf(g, call("mcp__github__create_issue"))
	if w.Server != gate.Gemini || w.Tool != "write_file" || w.SideEffecting != nil ||
		r.Server != gate.Gemini || r.SideEffecting == nil || *r.SideEffecting ||
		m.Server != "github" || m.Tool != "create_issue" {
		t.Errorf("recorded as %+v, %+v, %+v", w, r, m)
	}
	if got := g.Tool(call("write_file")); got != "mcp__gemini__write_file" {
		t.Errorf("Madebook names Gemini's write_file %q", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// codexRollout is a Codex 0.171.0 transcript (its rollout) as it writes
// one, cut to the lines the hook reads and a few it skips.
const codexRollout = `{"timestamp":"2026-12-03T16:45:44.100Z","type":"session_meta","payload":{"id":"019a","cwd":"/repo","originator":"codex_exec"}}
{"timestamp":"2026-12-03T16:45:44.200Z","type":"turn_context","payload":{"cwd":"/repo","model":"gpt-5.5"}}
{"timestamp":"2026-12-03T16:45:45.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Write the files."}]}}
{"timestamp":"2026-12-03T16:45:46.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"echo x > db/migrations/1.sql\"}","call_id":"call_0"}}
{"timestamp":"2026-12-03T16:45:46.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_0","output":"Process exited with code 0"}}
{"timestamp":"2026-12-03T16:45:47.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: web/a.go\n+package web\n*** End Patch\n","call_id":"call_1"}}
{"timestamp":"2026-12-03T16:45:47.500Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_1","output":"Success. Updated the following files:\nA web/a.go\n"}}
{"timestamp":"2026-12-03T16:45:48.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: db/migrations/2.sql\n+x\n*** End Patch\n","call_id":"call_2"}}
{"timestamp":"2026-12-03T16:45:48.100Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_2","output":"Command blocked by PreToolUse hook: Madebook denied this apply_patch call. Command: *** Begin Patch"}}
{"timestamp":"2026-12-03T16:45:49.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":3,\"chars\":\"\"}","call_id":"call_3"}}
{"timestamp":"2026-12-03T16:45:50.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":3,\"chars\":\"rm -rf db\\n\"}","call_id":"call_4"}}
{"timestamp":"2026-12-03T16:45:51.000Z","type":"response_item","payload":{"type":"function_call","namespace":"mcp__github","name":"create_issue","arguments":"{\"title\":\"x\"}","call_id":"call_5"}}
{"timestamp":"2026-12-03T16:45:52.000Z","type":"event_msg","payload":{"type":"task_complete"}}
{"timestamp":"2026-12-03T16:45:53.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_pa`

// TestCodexsTranscriptIsReadForTheCallsThatRan: at a stop, the hook
// reports each call of Codex's rollout that ran, named as Madebook named
// it when checking it, with the paths it names: not a call a hook
// blocked, nor a write_stdin that wrote nothing; a partial last line
// waits.
func TestCodexsTranscriptIsReadForTheCallsThatRan(t *testing.T) {
	dir := t.TempDir()
	transcript := dir + "/rollout.jsonl"
	if err := os.WriteFile(transcript, []byte(codexRollout), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newEventServer(t, &fake{state: "CONTINUE"})
	cmd := srv.command(t, dir)
	cmd.Executor = executor(t, gate.Codex)
	cmd.Answer(context.Background(), hook.Input{SessionID: "019a", HookEventName: hook.Stop, TranscriptPath: transcript, Cwd: "/repo"})
	if len(srv.fake.transcripts) != 1 {
		t.Fatalf("reports %v", srv.fake.transcripts)
	}
	var got []string
	for _, c := range srv.fake.transcripts[0] {
		got = append(got, c.ToolUseID+" "+c.Tool+" "+strings.Join(c.Paths, ","))
	}
	want := []string{"call_0 mcp__codex__Bash db/migrations/1.sql", "call_1 mcp__codex__apply_patch web/a.go",
		"call_4 mcp__codex__write_stdin db", "call_5 mcp__github__create_issue x"} // an MCP tool's every string, as for Claude Code
	if !slices.Equal(got, want) {
		t.Errorf("reported\n %q\nwant\n %q", got, want)
	}
}

// geminiTranscript is a Gemini CLI 0.61.0 transcript as it writes one (a
// header, records written again as they change, $set lines), cut short.
const geminiTranscript = `{"sessionId":"5f1c","projectHash":"6263","startTime":"2026-12-03T17:27:14.269Z","lastUpdated":"2026-12-03T17:27:14.269Z","kind":"main"}
{"$set":{"messages":[{"id":"d049","timestamp":"2026-12-03T17:27:14.269Z","type":"user","content":[{"text":"<session_context>…"}]}]}}
{"id":"4c7e","timestamp":"2026-12-03T17:27:14.398Z","type":"gemini","content":"","model":"gemini-2.5-flash"}
{"id":"4c7e","timestamp":"2026-12-03T17:27:14.398Z","type":"gemini","content":"","model":"gemini-2.5-flash","toolCalls":[{"id":"write_file__write_file_1796318834296_0","name":"write_file","args":{"content":"hello\n","file_path":"web/a.txt"},"result":[{"functionResponse":{"id":"write_file__write_file_1796318834296_0","name":"write_file","response":{"output":"Successfully created and wrote to new file: /repo/web/a.txt."}}}],"status":"success","timestamp":"2026-12-03T17:27:14.413Z","displayName":"WriteFile"}]}
{"id":"f230","timestamp":"2026-12-03T17:27:14.434Z","type":"gemini","content":"","toolCalls":[{"id":"write_file__write_file_2","name":"write_file","args":{"content":"x","file_path":"db/migrations/2.sql"},"result":[{"functionResponse":{"name":"write_file","response":{"error":"Tool execution blocked: Madebook denied this write_file call."}}}],"status":"error","timestamp":"2026-12-03T17:27:14.440Z"}]}
{"id":"f231","timestamp":"2026-12-03T17:27:14.450Z","type":"gemini","content":"","toolCalls":[{"id":"run_shell_command__3","name":"run_shell_command","args":{"command":"rm 1.sql","dir_path":"db/migrations"},"result":[],"status":"success","timestamp":"2026-12-03T17:27:14.460Z"},{"id":"mcp_4","name":"mcp_madebook_brief","args":{},"status":"success","timestamp":"2026-12-03T17:27:14.470Z"},{"id":"x_5","name":"write_file","args":{"file_path":"c"},"status":"cancelled","timestamp":"2026-12-03T17:27:14.480Z"}]}
{"$set":{"lastUpdated":"2026-12-03T17:27:14.513Z"}}
{"id":"97c5","type":"gemini","content":"Do`

// TestGeminisTranscriptIsReadForTheCallsThatRan: the hook reports each
// call of Gemini's transcript that ran, with the id it made for the
// call's check (so a checked call is not ungoverned), once though the
// record is written twice; not a call a hook blocked, a cancelled one,
// nor an MCP tool (its server's name cannot be told).
func TestGeminisTranscriptIsReadForTheCallsThatRan(t *testing.T) {
	dir := t.TempDir()
	transcript := dir + "/session.jsonl"
	if err := os.WriteFile(transcript, []byte(geminiTranscript), 0o600); err != nil {
		t.Fatal(err)
	}
	g := executor(t, gate.Gemini)
	srv := newEventServer(t, &fake{state: "CONTINUE"})
	cmd := srv.command(t, dir)
	cmd.Executor = g
	cmd.Answer(context.Background(), hook.Input{SessionID: "5f1c", HookEventName: hook.Stop, TranscriptPath: transcript, Cwd: "/repo"})
	if len(srv.fake.transcripts) != 1 {
		t.Fatalf("reports %v", srv.fake.transcripts)
	}
	checked, err := g.ParseEvent([]byte(`{"session_id":"5f1c","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"web/a.txt","content":"hello\n"}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range srv.fake.transcripts[0] {
		got = append(got, c.ToolUseID+" "+c.Tool+" "+strings.Join(c.Paths, ","))
	}
	want := []string{checked.ToolUseID + " mcp__gemini__write_file web/a.txt", got[len(got)-1]}
	if len(got) != 2 || got[0] != want[0] || !strings.HasSuffix(got[1], " mcp__gemini__run_shell_command db/migrations/1.sql") {
		t.Errorf("reported\n %q\nwant the write (id %s) and the shell command in db/migrations", got, checked.ToolUseID)
	}
}
