package gemini

import (
	"bufio"
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

// readData reads a stream of "data: …" events, each ended by a blank line.
func readData(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	open := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("data is not JSON: %q", line)
			}
			out = append(out, m)
			open = true
		case line == "" && open:
			open = false
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	if open {
		t.Fatal("the last event is not ended by a blank line")
	}
	return out
}

// candidate is the first candidate of a GenerateContentResponse.
func candidate(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	cands, _ := res["candidates"].([]any)
	if len(cands) != 1 {
		t.Fatalf("candidates %v", res["candidates"])
	}
	return cands[0].(map[string]any)
}

// parts are a candidate's content parts.
func parts(t *testing.T, cand map[string]any) []any {
	t.Helper()
	content := cand["content"].(map[string]any)
	if content["role"] != "model" {
		t.Errorf("content role %v", content["role"])
	}
	return content["parts"].([]any)
}

// TestWriteStreamIsTheAPIsEventStream checks one event per part, the
// function call whole, and the finish reason and usage on the last event
// only.
func TestWriteStreamIsTheAPIsEventStream(t *testing.T) {
	reply := Say("Let me write it: é.").With(FunctionCallPart("write_file", map[string]string{"file_path": "a.txt", "content": "hé"}))
	var b strings.Builder
	if err := WriteStream(&b, "r1", "gemini-x", reply, 10); err != nil {
		t.Fatal(err)
	}
	evs := readData(t, b.String())
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2:\n%s", len(evs), b.String())
	}
	first, last := candidate(t, evs[0]), candidate(t, evs[1])
	if p := parts(t, first); len(p) != 1 || p[0].(map[string]any)["text"] != "Let me write it: é." {
		t.Errorf("first event's parts %v", p)
	}
	if _, ok := first["finishReason"]; ok {
		t.Errorf("the first event has a finishReason: %v", first)
	}
	p := parts(t, last)
	fc, _ := p[0].(map[string]any)["functionCall"].(map[string]any)
	args, _ := fc["args"].(map[string]any)
	if fc["name"] != "write_file" || args["content"] != "hé" || args["file_path"] != "a.txt" {
		t.Errorf("function call part %v", p)
	}
	if last["finishReason"] != "STOP" {
		t.Errorf("finishReason %v", last["finishReason"])
	}
	usage, _ := evs[1]["usageMetadata"].(map[string]any)
	if usage["promptTokenCount"] != 10.0 || usage["candidatesTokenCount"] == 0.0 || evs[1]["modelVersion"] != "gemini-x" {
		t.Errorf("last event %v", evs[1])
	}
}

// post sends a JSON body to the server and reads the answer.
func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

// TestServerAnswersTheCLIsRequests sends the requests the Gemini CLI
// sends: a streamed turn, the next one with the function's response, a
// JSON check on the side, a countTokens, and an unknown path.
func TestServerAnswersTheCLIsRequests(t *testing.T) {
	s := New(t, func(r *Request) Reply {
		if res, ok := r.LastFunctionResponse(); ok {
			return Say("got " + res.Output())
		}
		return Call("run_shell_command", map[string]string{"command": "ls"}, "Listing.")
	})
	stream := s.URL + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	tools := `"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object"}}]}]`
	first := `{"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":"list the files"}]}`
	res, body := post(t, stream, `{"contents":[`+first+`],"systemInstruction":{"parts":[{"text":"You are a CLI agent."}]},`+tools+`}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	evs := readData(t, body)
	if len(evs) != 2 || !strings.Contains(body, `"functionCall":{"args":{"command":"ls"},"name":"run_shell_command"}`) {
		t.Errorf("stream %s", body)
	}

	call := `{"role":"model","parts":[{"text":"Listing."},{"functionCall":{"id":"run_shell_command_1_0","name":"run_shell_command","args":{"command":"ls"}},"thoughtSignature":"skip_thought_signature_validator"}]}`
	result := `{"role":"user","parts":[{"functionResponse":{"id":"run_shell_command_1_0","name":"run_shell_command","response":{"output":"a.txt"}}}]}`
	_, body = post(t, stream, `{"contents":[`+first+`,`+call+`,`+result+`],`+tools+`}`)
	if evs := readData(t, body); len(evs) != 1 || !strings.Contains(body, `"text":"got a.txt"`) {
		t.Errorf("the answer to the function response: %s", body)
	}

	schema := `{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["model","user"]}},"required":["reasoning","next_speaker"]}`
	_, body = post(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[`+first+`],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":`+schema+`}}`)
	var side struct {
		Candidates []struct {
			Content struct{ Parts []Part }
		}
	}
	if err := json.Unmarshal([]byte(body), &side); err != nil || len(side.Candidates) != 1 || len(side.Candidates[0].Content.Parts) != 1 {
		t.Fatalf("side answer %s (%v)", body, err)
	}
	var check map[string]string
	if err := json.Unmarshal([]byte(side.Candidates[0].Content.Parts[0].Text), &check); err != nil || check["next_speaker"] != "user" {
		t.Errorf("the next speaker check got %s (%v)", body, err)
	}

	_, body = post(t, s.URL+"/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[`+first+`]}`)
	if !strings.Contains(body, `"totalTokens":`) {
		t.Errorf("countTokens %s", body)
	}
	res, body = post(t, s.URL+"/v1/messages", `{}`)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, `"status":"NOT_FOUND"`) {
		t.Errorf("an unknown path: %d %s", res.StatusCode, body)
	}

	reqs := s.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests logged", len(reqs))
	}
	turns := s.Turns()
	if len(turns) != 2 || turns[0] != reqs[0] || turns[1] != reqs[1] {
		t.Fatalf("turns %v", turns)
	}
	r0, r1 := turns[0], turns[1]
	if r0.Model != "gemini-2.5-flash" || r0.Action != "streamGenerateContent" || r0.Query.Get("alt") != "sse" {
		t.Errorf("path read as model %q action %q query %v", r0.Model, r0.Action, r0.Query)
	}
	if r0.Prompt() != "list the files" || r1.Prompt() != "list the files" || r0.System() != "You are a CLI agent." {
		t.Errorf("prompt %q / %q, system %q", r0.Prompt(), r1.Prompt(), r0.System())
	}
	if !r0.HasTool("run_shell_command") || r0.HasTool("write_file") || r0.Turn() != 0 || r1.Turn() != 1 {
		t.Errorf("tools %v, turns %d %d", r0.ToolNames(), r0.Turn(), r1.Turn())
	}
	if _, ok := r0.LastFunctionResponse(); ok {
		t.Error("the first turn has a function response")
	}
	fr, ok := r1.LastFunctionResponse()
	if !ok || fr.Name != "run_shell_command" || fr.ID != "run_shell_command_1_0" || fr.Output() != "a.txt" {
		t.Errorf("last function response %+v", fr)
	}
	if calls := r1.FunctionCalls(); len(calls) != 1 || string(calls[0].Args) != `{"command":"ls"}` {
		t.Errorf("function calls %+v", calls)
	}
	if r1.LastUserText() != "a.txt" || !strings.Contains(r1.AllText(), `run_shell_command {"command":"ls"}`) || r1.Count("a.txt") != 1 {
		t.Errorf("texts: last user %q, all %q", r1.LastUserText(), r1.AllText())
	}
	if !reqs[2].Side() || !reqs[2].JSON() || reqs[3].Action != "countTokens" || reqs[4].Action != "" {
		t.Errorf("side requests read as %v %v %q %q", reqs[2].Side(), reqs[2].JSON(), reqs[3].Action, reqs[4].Action)
	}
	for _, r := range reqs {
		if r.At.IsZero() {
			t.Errorf("request #%d has no time", r.N)
		}
	}
	dump := s.Dump()
	for _, want := range []string{"#1 POST", "turn turn=0", "got a.txt", "side turn=0", "#5 POST /v1/messages"} {
		if !strings.Contains(dump, want) {
			t.Errorf("the dump has no %q:\n%s", want, dump)
		}
	}
}

// TestFunctionResponseOutput reads the output, else the error, else the
// whole response.
func TestFunctionResponseOutput(t *testing.T) {
	for raw, want := range map[string]string{
		`{"output":"ok"}`:                        "ok",
		`{"error":"Tool execution blocked: no"}`: "Tool execution blocked: no",
		`{"other":1}`:                            `{"other":1}`,
		`{"output":[1]}`:                         `[1]`,
	} {
		if got := (FunctionResponse{Response: json.RawMessage(raw)}).Output(); got != want {
			t.Errorf("%s: Output() = %q, want %q", raw, got, want)
		}
	}
}

// TestGeminiRuns runs the real Gemini CLI (MADEBOOK_GEMINI, the path of
// its gemini binary) once against a scripted model that writes a file with
// write_file, then reads it with run_shell_command: the file is written and
// both function responses come back.
func TestGeminiRuns(t *testing.T) {
	bin := os.Getenv("MADEBOOK_GEMINI")
	if bin == "" {
		t.Skip("set MADEBOOK_GEMINI to the gemini binary (npm install --prefix DIR @google/gemini-cli@0.61.0; DIR/node_modules/.bin/gemini)")
	}
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	target := filepath.Join(repo, "hello.txt")
	s := New(t, func(r *Request) Reply {
		res, ok := r.LastFunctionResponse()
		switch {
		case !ok:
			return Call("write_file", map[string]string{"file_path": target, "content": "hello from the script\n"}, "Writing it.")
		case res.Name == "write_file":
			return Call("run_shell_command", map[string]string{"command": "cat hello.txt && echo shell-ran"})
		default:
			return Say("Done: " + res.Output())
		}
	})
	home := Home(t, repo)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "Write hello.txt, then show it.", "-m", "gemini-2.5-flash",
		"--output-format", "stream-json", "--approval-mode", "yolo", "--session-id", "5f1c3a52-7d40-4e8e-9b7e-2f0c1d9a6b10")
	cmd.Dir = repo
	cmd.Env = append(s.Env(home), "PATH="+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil || t.Failed() {
		t.Logf("gemini output:\n%s", out)
	}
	if err != nil {
		t.Fatalf("gemini: %v\n%s", err, s.Dump())
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "hello from the script\n" {
		t.Errorf("hello.txt holds %q (%v)\n%s", got, err, s.Dump())
	}
	turns := s.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d turns, want 3\n%s", len(turns), s.Dump())
	}
	if p := turns[0].Prompt(); p != "Write hello.txt, then show it." {
		t.Errorf("prompt %q", p)
	}
	for _, tool := range []string{"write_file", "run_shell_command", "replace", "read_file"} {
		if !turns[0].HasTool(tool) {
			t.Errorf("the CLI does not offer %s: %v", tool, turns[0].ToolNames())
		}
	}
	frs := turns[2].FunctionResponses()
	if len(frs) != 2 || frs[0].Name != "write_file" || !strings.Contains(frs[0].Output(), "Successfully created") ||
		frs[1].Name != "run_shell_command" || !strings.Contains(frs[1].Output(), "hello from the script\nshell-ran") {
		t.Errorf("function responses %+v\n%s", frs, s.Dump())
	}
	if !strings.Contains(string(out), `"type":"result"`) {
		t.Errorf("no stream-json result in the output:\n%s", out)
	}
}
