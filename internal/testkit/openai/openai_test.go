package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteStreamIsTheResponsesAPIsEventStream checks the event order, the
// deltas reassembling each item, the items as output_item.done carries
// them, and the completed response.
func TestWriteStreamIsTheResponsesAPIsEventStream(t *testing.T) {
	reply := Say("Writing it: é.").With(
		FunctionCall("call_1", "exec_command", map[string]string{"cmd": "echo hé"}),
		CustomCall("call_2", "apply_patch", "*** Begin Patch\n*** Add File: a.txt\n+hé\n*** End Patch\n"),
	)
	for i := range reply.Items {
		reply.Items[i].ID = []string{"msg_1", "fc_1", "ctc_1"}[i]
	}
	var b bytes.Buffer
	if err := WriteStream(&b, "resp_1", "gpt-x", reply, 10); err != nil {
		t.Fatal(err)
	}
	evs, err := ReadStream(&b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	text, args, input := "", "", ""
	var done []map[string]any
	for i, e := range evs {
		names = append(names, e.Name)
		if e.Data["type"] != e.Name {
			t.Errorf("event %q has data type %v", e.Name, e.Data["type"])
		}
		if seq, _ := e.Data["sequence_number"].(float64); int(seq) != i {
			t.Errorf("event %d %s has sequence_number %v", i, e.Name, e.Data["sequence_number"])
		}
		switch e.Name {
		case "response.output_text.delta":
			text += e.Data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.Data["delta"].(string)
		case "response.custom_tool_call_input.delta":
			input += e.Data["delta"].(string)
		case "response.output_item.done":
			done = append(done, e.Data["item"].(map[string]any))
		}
	}
	want := "response.created response.in_progress " +
		"response.output_item.added response.content_part.added response.output_text.delta response.output_text.delta " +
		"response.output_text.done response.content_part.done response.output_item.done " +
		"response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta " +
		"response.function_call_arguments.done response.output_item.done " +
		"response.output_item.added response.custom_tool_call_input.delta response.custom_tool_call_input.delta " +
		"response.custom_tool_call_input.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if text != "Writing it: é." {
		t.Errorf("text deltas make %q", text)
	}
	if args != `{"cmd":"echo hé"}` {
		t.Errorf("argument deltas make %q", args)
	}
	if input != reply.Items[2].Input {
		t.Errorf("input deltas make %q", input)
	}
	if done[0]["type"] != "message" || done[0]["role"] != "assistant" || done[0]["content"].([]any)[0].(map[string]any)["text"] != "Writing it: é." {
		t.Errorf("message item %v", done[0])
	}
	if done[1]["type"] != "function_call" || done[1]["call_id"] != "call_1" || done[1]["name"] != "exec_command" || done[1]["arguments"] != args {
		t.Errorf("function_call item %v", done[1])
	}
	if done[2]["type"] != "custom_tool_call" || done[2]["call_id"] != "call_2" || done[2]["name"] != "apply_patch" || done[2]["input"] != input {
		t.Errorf("custom_tool_call item %v", done[2])
	}
	added := evs[2].Data["item"].(map[string]any)
	if added["status"] != "in_progress" || added["id"] != "msg_1" {
		t.Errorf("output_item.added item %v", added)
	}
	resp := evs[len(evs)-1].Data["response"].(map[string]any)
	if resp["id"] != "resp_1" || resp["status"] != "completed" || resp["model"] != "gpt-x" || len(resp["output"].([]any)) != 3 {
		t.Errorf("completed response %v", resp)
	}
	if u := resp["usage"].(map[string]any); u["input_tokens"] != 10.0 || u["total_tokens"] == nil {
		t.Errorf("usage %v", u)
	}
	if created := evs[0].Data["response"].(map[string]any); created["id"] != "resp_1" || created["status"] != "in_progress" {
		t.Errorf("created response %v", created)
	}
}

// TestReadStreamReadsServerSentEvents checks comments, multi-line data, an
// event without a name, CRLF line ends, and data that is not JSON.
func TestReadStreamReadsServerSentEvents(t *testing.T) {
	evs, err := ReadStream(strings.NewReader(": keep-alive\r\nevent: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\ndata: {\"type\":\"b\"}\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Name != "a" || evs[0].Data["x"] != 1.0 || evs[1].Name != "b" {
		t.Fatalf("events %+v", evs)
	}
	if _, err := ReadStream(strings.NewReader("event: a\ndata: nope\n\n")); err == nil {
		t.Error("data that is not JSON is read")
	}
	if _, err := ReadStream(strings.NewReader("what\n")); err == nil {
		t.Error("a line that is not SSE is read")
	}
}

// codexBody is a request as Codex 0.171 sends it (shortened): developer
// and user messages first, then the calls and their outputs.
const codexBody = `{"model":"gpt-5.5","instructions":"","stream":true,"store":false,"parallel_tool_calls":true,
"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
 {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},
 {"type":"tool_search","execution":"client","parameters":{"type":"object"}},
 {"type":"web_search","external_web_access":true}],
"input":[
 {"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex."}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>be nice</INSTRUCTIONS>"}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]},
 {"type":"message","role":"developer","content":[{"type":"input_text","text":"SESSION CONTEXT"}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"Write the file."}]},
 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
 {"type":"function_call_output","call_id":"call_1","output":"Process exited with code 0\nOutput:\na.txt\n"},
 {"type":"tool_search_call","call_id":"call_2","execution":"client","arguments":{"query":"echo","limit":8}},
 {"type":"tool_search_output","call_id":"call_2","execution":"client","status":"completed","tools":[{"type":"namespace","name":"mcp__mb","description":"d","tools":[{"type":"function","name":"echo_text","parameters":{"type":"object"}}]}]},
 {"type":"custom_tool_call","id":"ctc_1","call_id":"call_3","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"},
 {"type":"custom_tool_call_output","call_id":"call_3","output":[{"type":"input_text","text":"Success."}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:0\">go on</hook_prompt>"}]}
]}`

// TestRequestReadsCodexsConversation checks the helpers on a request as
// Codex sends it.
func TestRequestReadsCodexsConversation(t *testing.T) {
	r := &Request{Body: []byte(codexBody)}
	if err := r.parse(); err != nil {
		t.Fatal(err)
	}
	if r.Model != "gpt-5.5" || !r.Stream || r.Store || len(r.Input) != 12 {
		t.Fatalf("request %+v", r)
	}
	if got := strings.Join(r.ToolNames(), ","); got != "exec_command,apply_patch,tool_search,web_search" {
		t.Errorf("tool names %s", got)
	}
	if !r.HasTool("apply_patch") || !r.HasTool("web_search") || r.HasTool("shell") {
		t.Error("HasTool")
	}
	if got := r.Prompt(); got != "Write the file." {
		t.Errorf("prompt %q", got)
	}
	if got := r.Turn(); got != 3 {
		t.Errorf("turn %d, want 3", got)
	}
	out, ok := r.LastToolOutput()
	if !ok || out.Type != "custom_tool_call_output" || out.OutputText() != "Success." {
		t.Errorf("last tool output %+v", out)
	}
	if out, ok := r.ToolOutput("call_1"); !ok || !strings.Contains(out.Text(), "a.txt") {
		t.Errorf("output of call_1 %+v", out)
	}
	calls := r.ToolCalls()
	if len(calls) != 3 || calls[0].Name != "exec_command" || calls[1].Arguments != `{"query":"echo","limit":8}` || calls[2].Input == "" {
		t.Errorf("tool calls %+v", calls)
	}
	var args struct{ Cmd string }
	if err := calls[0].Args(&args); err != nil || args.Cmd != "ls" {
		t.Errorf("args %+v %v", args, err)
	}
	st := r.SearchedTools()
	if len(st) != 1 || st[0].Namespace != MCPNamespace("mb") || st[0].Name != "echo_text" {
		t.Errorf("searched tools %+v", st)
	}
	all := r.AllText()
	for _, s := range []string{"SESSION CONTEXT", "exec_command {\"cmd\":\"ls\"}", "a.txt", "Success.", "go on"} {
		if !strings.Contains(all, s) {
			t.Errorf("AllText lacks %q", s)
		}
	}
	if p := r.Patch("call_9", "*** Begin Patch\n*** End Patch\n").Items[0]; p.Type != "custom_tool_call" || p.Name != "apply_patch" {
		t.Errorf("Patch with a custom apply_patch %+v", p)
	}
	r.Tools[1] = Tool{Type: "function", Name: "apply_patch"}
	if p := r.Patch("call_9", "P").Items[0]; p.Type != "function_call" || p.Arguments != `{"input":"P"}` {
		t.Errorf("Patch with a function apply_patch %+v", p)
	}

	s := &Request{Body: []byte(`{"model":"m","input":"hello"}`)}
	if err := s.parse(); err != nil || s.Prompt() != "hello" || s.Model != "m" || !s.Side() {
		t.Errorf("a string input: %+v %v", s, err)
	}
}

// TestServerAnswersTheCLIsRequests sends the requests a CLI sends: a
// streaming turn, its follow-up with the tool output, one without stream,
// one on the side, a bad body and another path.
func TestServerAnswersTheCLIsRequests(t *testing.T) {
	s := New(t, func(r *Request) Reply {
		if out, ok := r.LastToolOutput(); ok {
			return Say("got " + out.OutputText())
		}
		return Call("", "exec_command", map[string]string{"cmd": "ls"})
	})
	post := func(body string) (*http.Response, []byte) {
		t.Helper()
		res, err := http.Post(s.BaseURL()+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	tools := `"tools":[{"type":"function","name":"exec_command"}]`
	res, body := post(`{"model":"gpt-5.5","stream":true,` + tools + `,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("streaming turn: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	evs, err := ReadStream(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var call map[string]any
	for _, e := range evs {
		if e.Name == "response.output_item.done" {
			call = e.Data["item"].(map[string]any)
		}
	}
	if call["type"] != "function_call" || call["call_id"] == "" || call["arguments"] != `{"cmd":"ls"}` {
		t.Fatalf("call %v", call)
	}
	follow := `{"model":"gpt-5.5",` + tools + `,"input":[{"type":"function_call","call_id":"` + call["call_id"].(string) +
		`","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"` + call["call_id"].(string) + `","output":"a.txt"}]}`
	res, body = post(follow)
	var resp struct {
		Status string
		Output []struct {
			Type    string
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil || res.StatusCode != 200 || resp.Status != "completed" ||
		len(resp.Output) != 1 || resp.Output[0].Content[0].Text != "got a.txt" {
		t.Fatalf("non-streaming follow-up: %d %s", res.StatusCode, body)
	}
	if _, body = post(`{"model":"gpt-5.5","input":"title?"}`); !strings.Contains(string(body), SideReply) {
		t.Errorf("side request answered %s", body)
	}
	if res, _ = post(`{"input":[1]}`); res.StatusCode != 400 {
		t.Errorf("bad body: %d", res.StatusCode)
	}
	if res, err := http.Get(s.URL + "/v1/nothing"); err != nil || res.StatusCode != 404 {
		t.Errorf("other path: %v %v", res, err)
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d requests logged", n)
	}
	if n := len(s.Responses()); n != 2 {
		t.Errorf("%d turns", n)
	}
	if d := s.Dump(); !strings.Contains(d, "#2 ") || !strings.Contains(d, "got a.txt") || !strings.Contains(d, "/v1/nothing") {
		t.Errorf("dump:\n%s", d)
	}
}

// TestCodexRuns runs the real Codex CLI (MADEBOOK_CODEX is its path) once
// against a scripted model that runs a shell command, then writes a file
// with apply_patch, and checks the file and that both outputs came back.
func TestCodexRuns(t *testing.T) {
	bin := os.Getenv("MADEBOOK_CODEX")
	if bin == "" {
		t.Skip("MADEBOOK_CODEX is not the path of a codex binary")
	}
	repo, home := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Be brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const prompt = "Write notes.txt."
	patch := "*** Begin Patch\n*** Add File: notes.txt\n+written by apply_patch\n*** End Patch\n"
	srv := New(t, func(r *Request) Reply {
		switch {
		case r.Turn() == 0:
			return Call("call_shell", "exec_command", map[string]string{"cmd": "printf 'from-shell\\n' > shell.txt && cat shell.txt"})
		case r.Turn() == 1:
			return r.Patch("call_patch", patch, "Now the file.")
		default:
			return Say("Done.")
		}
	})
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(srv.CodexConfig(repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, CodexArgs(prompt)...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, KeyEnv+"=sk-mock")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex: %v\n%s\nrequests:\n%s", err, out, srv.Dump())
	}
	defer func() {
		if t.Failed() {
			t.Logf("codex output:\n%s\nrequests:\n%s", out, srv.Dump())
		}
	}()

	got, err := os.ReadFile(filepath.Join(repo, "notes.txt"))
	if err != nil || string(got) != "written by apply_patch\n" {
		t.Errorf("notes.txt: %q %v", got, err)
	}
	turns := srv.Responses()
	if len(turns) != 3 {
		t.Fatalf("%d turns, want 3", len(turns))
	}
	first, last := turns[0], turns[2]
	if first.Model != Model || !first.HasTool("exec_command") || !first.HasTool("apply_patch") {
		t.Errorf("first request: model %s, tools %v", first.Model, first.ToolNames())
	}
	if got := first.Prompt(); got != prompt {
		t.Errorf("prompt %q, want %q", got, prompt)
	}
	if !strings.Contains(first.AllText(), "Be brief.") {
		t.Error("AGENTS.md is not in the model's context")
	}
	shell, ok := last.ToolOutput("call_shell")
	if !ok || shell.Type != "function_call_output" || !strings.Contains(shell.OutputText(), "from-shell") {
		t.Errorf("shell output %+v", shell)
	}
	p, ok := last.ToolOutput("call_patch")
	if !ok || !strings.Contains(p.OutputText(), "A notes.txt") {
		t.Errorf("apply_patch output %+v", p)
	}
	if !strings.Contains(string(out), `"type":"turn.completed"`) {
		t.Errorf("codex did not complete the turn:\n%s", out)
	}
}
