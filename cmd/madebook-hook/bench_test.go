package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/hook"
)

// BenchmarkHookEvent measures one PreToolUse as Claude Code runs a
// command hook: a process started (exec form, no shell) with the event's
// JSON on stdin and its output read through pipes, waited for. Madebook is
// a real `madebook serve` on a temporary SQLite file, with a mission, an
// agent key and a session that every event re-attaches by Claude's
// session_id (a SessionStart opened it); the repository is found through
// CLAUDE_PROJECT_DIR, as Claude Code sets it. The hooks:
//
//   - noop: a #!/bin/sh script, `cat >/dev/null`: the cheapest hook there
//     is;
//   - madebook-hook: the lean binary, built as docs/benchmarks.md says
//     (CGO_ENABLED=0);
//   - madebook-hook-cgo: the same, built with the default settings (cgo
//     on: net and os/user link the C library);
//   - madebook_hook: `madebook hook claude-code`, the server's binary;
//   - in-process: internal/hook's Command in the benchmark's process, on a
//     fresh connection: the hook's work without a process start.
//
// Each Madebook hook's iteration also runs the no-op (in turns, which one
// first), so noise hits both alike: ns/op is the hook's own mean,
// noop-ns/op the no-op's in the same iterations, and x-noop the ratio of
// the two. Madebook answers every event (an allowed call prints nothing),
// which the benchmark checks before it measures.
//
//	go test -run '^$' -bench HookEvent -benchtime 200x ./cmd/madebook-hook
func BenchmarkHookEvent(b *testing.B) {
	w := newHookWorld(b)
	events := []struct{ name, tool, input string }{
		{"edit", "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"hi","new_string":"hello"}`, filepath.Join(w.repo, "web", "app.js"))},
		{"bash", "Bash", `{"command":"go test ./...","description":"Run the tests"}`},
	}
	for _, ev := range events {
		b.Run(ev.name, func(b *testing.B) {
			payload := func(i int) []byte { return w.preToolUse(ev.tool, ev.input, i) }
			for _, h := range w.hooks {
				if out, err := w.spawn(h, payload(0)); err != nil || len(out) > 0 {
					b.Fatalf("%s on %s: %v, answered %q: Madebook should allow the call (print nothing)", h.name, ev.name, err, out)
				}
			}
			// A server that has answered a while (its caches filled, its
			// heap grown), whichever sub-benchmark runs first.
			for i := range 200 {
				if err := w.inProcess(payload(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("noop", func(b *testing.B) {
				n := 0
				for b.Loop() {
					w.timed(b, w.noop, payload(n))
					n++
				}
			})
			b.Run("in-process", func(b *testing.B) {
				n := 0
				for b.Loop() {
					if err := w.inProcess(payload(n)); err != nil {
						b.Fatal(err)
					}
					n++
				}
			})
			for _, h := range w.hooks {
				b.Run(h.name, func(b *testing.B) {
					var hookTime, noopTime time.Duration
					n := 0
					for b.Loop() {
						in := payload(n)
						for k := range 2 {
							if (n+k)%2 == 0 {
								noopTime += w.timed(b, w.noop, in)
							} else {
								hookTime += w.timed(b, h, in)
							}
						}
						n++
					}
					b.ReportMetric(float64(hookTime.Nanoseconds())/float64(n), "ns/op")
					b.ReportMetric(float64(noopTime.Nanoseconds())/float64(n), "noop-ns/op")
					b.ReportMetric(float64(hookTime)/float64(noopTime), "x-noop")
				})
			}
		})
	}
}

// BenchmarkHookEventClaudeCode measures the same hooks inside the real
// Claude Code (MADEBOOK_CLAUDE, else `claude` on PATH; skipped without
// it). One `claude -p` run against a scripted model (a mock of the
// Messages API, below) makes three Bash calls an iteration, `echo noop
// N`, `echo lean N` and `echo full N`, and a PreToolUse hook of each kind
// runs on its own call (the hook's `if` picks it): noop, madebook-hook and
// madebook_hook. A hook's time is from Claude Code's hook_started to its
// hook_response in the stream-json output (--include-hook-events), as the
// benchmark reads them: what Claude Code spends on the hook, its own work
// around the process included (a hook_success's durationMs in the
// transcript would say the same in whole milliseconds, but Claude Code
// keeps none for a hook that prints nothing). Its metrics are each hook's
// mean (noop-ms, madebook-hook-ms, madebook_hook-ms) and the ratios to
// the no-op's; ns/op is the run's time an iteration, the model's turns
// included. Give it calls enough for a mean:
//
//	MADEBOOK_CLAUDE=/tmp/cc/node_modules/.bin/claude go test -run '^$' -bench HookEventClaudeCode -benchtime 40x ./cmd/madebook-hook
func BenchmarkHookEventClaudeCode(b *testing.B) {
	claude := os.Getenv("MADEBOOK_CLAUDE")
	if claude == "" {
		claude, _ = exec.LookPath("claude")
	}
	if claude == "" {
		b.Skip("the Claude Code CLI is not installed: set MADEBOOK_CLAUDE to its binary, or put claude on PATH")
	}
	w := newHookWorld(b)
	kinds := []struct {
		word string // the word the Bash call echoes
		hook hookCmd
	}{{"noop", w.noop}, {"lean", w.hooks[0]}, {"full", w.hooks[2]}}
	var entries []any
	for _, k := range kinds {
		h := map[string]any{"type": "command", "command": k.hook.path, "if": "Bash(echo " + k.word + " *)", "timeout": 10}
		if len(k.hook.args) > 0 {
			h["args"] = k.hook.args
		}
		entries = append(entries, map[string]any{"matcher": "Bash", "hooks": []any{h}})
	}
	writeJSON(b, filepath.Join(w.repo, ".claude", "settings.json"), map[string]any{
		"hooks":       map[string]any{"PreToolUse": entries},
		"permissions": map[string]any{"allow": []string{"Bash(echo *)"}},
	})
	model := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		serveModel(rw, req, b.N*len(kinds), func(call int) string {
			return fmt.Sprintf("echo %s %d", kinds[call%len(kinds)].word, call/len(kinds))
		})
	}))
	defer model.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Run the commands.", "--output-format", "stream-json", "--verbose",
		"--include-hook-events", "--permission-mode", "acceptEdits")
	cmd.Dir = w.repo
	cmd.Env = append([]string{"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=x", "CLAUDE_CONFIG_DIR=" + b.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}, w.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// Each hook's times: the word of the Bash call it runs on names it.
	took := map[string][]time.Duration{}
	started := map[string]time.Time{}
	word := ""
	var lines []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		at := time.Now()
		lines = append(lines, sc.Text())
		var line struct {
			Type, Subtype string
			HookID        string `json:"hook_id"`
			HookEvent     string `json:"hook_event"`
			Message       struct {
				Content []struct {
					Type  string
					Input struct{ Command string }
				}
			}
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Type == "assistant":
			for _, c := range line.Message.Content {
				if f := strings.Fields(c.Input.Command); c.Type == "tool_use" && len(f) > 1 {
					word = f[1]
				}
			}
		case line.Subtype == "hook_started" && line.HookEvent == "PreToolUse":
			started[line.HookID] = at
		case line.Subtype == "hook_response" && line.HookEvent == "PreToolUse" && !started[line.HookID].IsZero():
			took[word] = append(took[word], at.Sub(started[line.HookID]))
		}
	}
	err = cmd.Wait()
	b.StopTimer()
	if err != nil {
		b.Fatalf("claude: %v\n%s\n%s", err, strings.Join(lines, "\n"), stderr.Bytes())
	}
	mean := func(word string) float64 {
		d := took[word]
		if len(d) != b.N {
			b.Fatalf("%d PreToolUse hooks ran on `echo %s`, want %d\n%s", len(d), word, b.N, strings.Join(lines, "\n"))
		}
		var sum time.Duration
		for _, v := range d {
			sum += v
		}
		return float64(sum.Microseconds()) / 1000 / float64(len(d))
	}
	noop := mean(kinds[0].word)
	b.ReportMetric(noop, "noop-ms")
	for _, k := range kinds[1:] {
		m := mean(k.word)
		b.ReportMetric(m, k.hook.name+"-ms")
		b.ReportMetric(m/noop, k.hook.name+"-x-noop")
	}
}

// serveModel answers POST /v1/messages as the Messages API streams it: a
// turn of the agent (a request that offers tools) calls Bash with
// command(n) for its n-th call, until calls are made, then says it is
// done; anything else (a title, a quota check) gets a word of text.
func serveModel(rw http.ResponseWriter, req *http.Request, calls int, command func(n int) string) {
	var r struct {
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method != http.MethodPost || req.URL.Path != "/v1/messages" || json.Unmarshal(body, &r) != nil {
		http.Error(rw, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`, http.StatusNotFound)
		return
	}
	turn := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	block := map[string]any{"type": "text", "text": "Done."}
	stop := "end_turn"
	if len(r.Tools) > 0 && turn < calls {
		input, _ := json.Marshal(map[string]string{"command": command(turn), "description": "Echo a word"})
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_bench%06d", turn), "name": "Bash", "input": json.RawMessage(input)}
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": len(body)/4 + 1, "output_tokens": 10}
	msg := map[string]any{"id": fmt.Sprintf("msg_bench%06d", turn), "type": "message", "role": "assistant", "model": "claude-mock",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !r.Stream {
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(msg)
		return
	}
	rw.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(rw, "event: %s\ndata: %s\n\n", name, b)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"message": start})
	if block["type"] == "tool_use" {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use",
			"id": block["id"], "name": "Bash", "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta",
			"partial_json": string(block["input"].(json.RawMessage))}})
	} else {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{})
}

// hookWorld is the benchmarks' Madebook, repository and hook commands.
type hookWorld struct {
	tb      testing.TB
	repo    string
	session string // Claude's session_id
	env     []string
	noop    hookCmd
	hooks   []hookCmd // madebook-hook, madebook-hook-cgo, madebook_hook
}

// hookCmd is a hook as Claude Code's exec form runs it: a program and its
// arguments, no shell.
type hookCmd struct {
	name string
	path string
	args []string
}

func newHookWorld(tb testing.TB) *hookWorld {
	tb.Helper()
	bin := tb.TempDir()
	lean := buildInto(tb, bin, "madebook-hook", ".", "CGO_ENABLED=0")
	leanCgo := buildInto(tb, bin, "madebook-hook-cgo", ".")
	full := buildInto(tb, bin, "madebook", "../madebook")
	noop := filepath.Join(bin, "noop.sh")
	if err := os.WriteFile(noop, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o755); err != nil {
		tb.Fatal(err)
	}
	url, key, mission := startMadebook(tb, full)

	repo, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	for name, text := range map[string]string{"web/app.js": "console.log('hi')\n", "go.mod": "module example.com/app\n"} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	w := &hookWorld{tb: tb, repo: repo, session: "0b6d3c1e-5a7f-4f6a-9d1c-6b00c0ffee01",
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir(), "TMPDIR=" + tb.TempDir(),
			"MADEBOOK_URL=" + url, "MADEBOOK_KEY=" + key, "MADEBOOK_MISSION=" + mission, "CLAUDE_PROJECT_DIR=" + repo},
		noop: hookCmd{name: "noop", path: noop},
		hooks: []hookCmd{
			{name: "madebook-hook", path: lean, args: []string{"claude-code"}},
			{name: "madebook-hook-cgo", path: leanCgo, args: []string{"claude-code"}},
			{name: "madebook_hook", path: full, args: []string{"hook", "claude-code"}},
		},
	}
	// SessionStart opens the session; every later event re-attaches to it
	// by its session_id.
	start, _ := json.Marshal(map[string]string{"session_id": w.session, "transcript_path": w.transcript(),
		"cwd": repo, "permission_mode": "acceptEdits", "hook_event_name": "SessionStart", "source": "startup"})
	out, err := w.spawn(w.hooks[0], start)
	if err != nil || !bytes.Contains(out, []byte("additionalContext")) {
		tb.Fatalf("SessionStart: %v, answered %q: Madebook should open the session and add its brief", err, out)
	}
	return w
}

// startMadebook starts `madebook serve` on a temporary SQLite file, with
// a lead who creates a mission and an agent key, as docs/running.md sets
// one up; it returns the URL, the key and the mission's slug. The server
// is stopped when the benchmark ends.
func startMadebook(tb testing.TB, bin string) (url, key, mission string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "madebook.db")
	cli := func(stdin string, args ...string) string {
		cmd := exec.Command(bin, append(args, "--db", path)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			tb.Fatalf("madebook %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return strings.TrimSpace(string(out))
	}
	cli("password-123\n", "user", "add", "--email", "lead@example.com", "--role", "lead")
	token := cli("", "token", "create", "--email", "lead@example.com")
	key = cli("", "key", "create", "--name", "claude")

	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", path)
	stdout, err := serve.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		tb.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		// Every line is read (a full pipe would stop the server); the
		// "listening" line carries the address.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				select {
				case addr <- line.Addr:
				default:
				}
			}
		}
	}()
	tb.Cleanup(func() {
		_ = serve.Process.Kill()
		_ = serve.Wait()
	})
	select {
	case url = <-addr:
	case <-time.After(30 * time.Second):
		tb.Fatalf("madebook serve did not listen within 30 s\n%s", stderr.Bytes())
	}
	mission = "bench"
	body := strings.NewReader(`{"slug":"bench","title":"Bench","text":"Do the thing."}`)
	req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/missions", body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	reply, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		tb.Fatalf("POST /api/v1/missions: %d %s", res.StatusCode, reply)
	}
	return url, key, mission
}

// transcript is where the Claude session's transcript would be.
func (w *hookWorld) transcript() string {
	return filepath.Join(w.repo, ".claude-home", "projects", "bench", w.session+".jsonl")
}

// preToolUse is Claude Code's PreToolUse for the tool, the i-th of the
// session.
func (w *hookWorld) preToolUse(tool, input string, i int) []byte {
	b, err := json.Marshal(map[string]any{"session_id": w.session, "transcript_path": w.transcript(), "cwd": w.repo,
		"permission_mode": "acceptEdits", "hook_event_name": "PreToolUse", "tool_name": tool,
		"tool_input": json.RawMessage(input), "tool_use_id": fmt.Sprintf("toolu_bench%08d", i)})
	if err != nil {
		w.tb.Fatal(err)
	}
	return b
}

// spawn runs the hook once on the event and returns what it printed.
func (w *hookWorld) spawn(h hookCmd, event []byte) ([]byte, error) {
	cmd := exec.Command(h.path, h.args...)
	cmd.Dir = w.repo
	cmd.Env = w.env
	cmd.Stdin = bytes.NewReader(event)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", h.name, err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// timed is spawn's wall time, from the start of the process to its end.
func (w *hookWorld) timed(b *testing.B, h hookCmd, event []byte) time.Duration {
	start := time.Now()
	if _, err := w.spawn(h, event); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// inProcess is the hook's work on the event without a process of its
// own: internal/hook's Command in the benchmark's process, on a fresh
// connection to Madebook, as a process has.
func (w *hookWorld) inProcess(event []byte) error {
	env := map[string]string{}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := hook.NewCommand(hook.ClaudeCode, func(k string) string { return env[k] }, "", "")
	c.Transport = &http.Transport{DisableKeepAlives: true}
	var out bytes.Buffer
	if err := c.Run(context.Background(), bytes.NewReader(event), &out, io.Discard); err != nil {
		return err
	}
	if out.Len() > 0 {
		return fmt.Errorf("in-process: answered %q: Madebook should allow the call (print nothing)", out.Bytes())
	}
	return nil
}

// buildInto builds the package pkg as dir/name (env added to the go
// command's) and returns its path. The binary is then copied into place,
// as an install does: one the Go linker has just written (through a
// memory mapping) sits in the page cache in small pages and maps slower at
// every start (0.2–0.8 ms here) until the cache drops it.
func buildInto(tb testing.TB, dir, name, pkg string, env ...string) string {
	tb.Helper()
	linked := filepath.Join(dir, name+".linked")
	cmd := exec.Command("go", "build", "-o", linked, pkg)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	text, err := os.ReadFile(linked)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, text, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Remove(linked); err != nil {
		tb.Fatal(err)
	}
	return path
}

// writeJSON writes v, indented, to path.
func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		tb.Fatal(err)
	}
}
