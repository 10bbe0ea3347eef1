package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit/anthropic"
	"github.com/madebook/madebook/web/webtest"
)

// claudeVersion is the Claude Code release this test is written against
// (.ci/run installs it; docs/testing.md says how to install it locally).
const claudeVersion = "2.1.328"

// claudeBinary finds the real Claude Code CLI: MADEBOOK_CLAUDE, else
// claude on PATH (agentBinary); MADEBOOK_REQUIRE_CLAUDE=1 makes a missing
// one a failure.
func claudeBinary(t *testing.T) string {
	t.Helper()
	return agentBinary(t, "MADEBOOK_CLAUDE", "MADEBOOK_REQUIRE_CLAUDE", "claude", "@anthropic-ai/claude-code", claudeVersion)
}

// TestClaudeCode runs the real Claude Code CLI, offline against a scripted
// model (internal/testkit/anthropic), in real git repositories governed by
// `madebook hook claude-code` through the settings `madebook init
// claude-code` writes. Each subtest is its own Claude session on its own
// Madebook, and checks the disk, Madebook's API and claude's stream-json
// output.
func TestClaudeCode(t *testing.T) {
	claude := claudeBinary(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Parallel()
	began := time.Now()
	bin := buildMadebook(t)
	t.Cleanup(func() { t.Logf("the Claude Code test took %.1f s", time.Since(began).Seconds()) })
	env := claudeEnv{claude: claude, bin: bin}

	t.Run("cd-then-write", func(t *testing.T) { t.Parallel(); claudeCdThenWrite(t, env) })
	t.Run("hook-missing", func(t *testing.T) { t.Parallel(); claudeHookMissing(t, env) })
	t.Run("madebook-down", func(t *testing.T) { t.Parallel(); claudeMadebookDown(t, env) })
	t.Run("failed-call", func(t *testing.T) { t.Parallel(); claudeFailedCall(t, env) })
	t.Run("toolsearch-paused", func(t *testing.T) { t.Parallel(); claudeToolSearchPaused(t, env) })
	t.Run("subagent", func(t *testing.T) { t.Parallel(); claudeSubagent(t, env) })
	t.Run("ungoverned-audit", func(t *testing.T) { t.Parallel(); claudeUngovernedAudit(t, env) })
	t.Run("delivered-once", func(t *testing.T) { t.Parallel(); claudeDeliveredOnce(t, env) })
}

// claudeEnv is what every scenario shares: the claude and madebook binaries.
type claudeEnv struct{ claude, bin string }

// claudeWorld is one scenario: a git repository set up by `madebook init
// claude-code`, a Madebook (a real server on a fresh database) with a
// mission, a scripted model, and a private home for claude.
type claudeWorld struct {
	t       *testing.T
	env     claudeEnv
	api     *webtest.API
	mission string
	repo    string
	home    string
	tmp     string
	// url is the Madebook the hook and the MCP server are pointed at.
	url string
	// sid is the Claude session id the scenario gives claude
	// (--session-id), so that it can set the Madebook session up first.
	sid   string
	model *anthropic.Server
}

// newClaudeWorld sets a scenario up; url, when given, is the Madebook the
// project is pointed at instead of the world's own.
func newClaudeWorld(t *testing.T, env claudeEnv, url ...string) *claudeWorld {
	t.Helper()
	a := webtest.NewAPI(t)
	w := &claudeWorld{t: t, env: env, api: a, mission: a.Kit.Mission(a.Lead, false), repo: repository(t),
		home: t.TempDir(), tmp: t.TempDir(), url: a.Srv.URL, sid: claudeUUID(t)}
	if len(url) > 0 {
		w.url = url[0]
	}
	w.initProject()
	return w
}

// initProject runs `madebook init claude-code` in the repository.
func (w *claudeWorld) initProject() {
	t := w.t
	t.Helper()
	code, stdout, stderr := runBinary(t, w.env.bin, []string{"MADEBOOK_URL=", "MADEBOOK_MISSION="},
		"init", "claude-code", "--dir", w.repo, "--url", w.url, "--mission", w.mission)
	if code != 0 {
		t.Fatalf("madebook init claude-code: exit %d\n%s%s", code, stdout, stderr)
	}
	hooks := w.hooks()
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"} {
		if _, ok := hooks[ev]; !ok {
			t.Fatalf("madebook init claude-code wrote no %s hook:\n%s", ev, w.readFile(".claude/settings.json"))
		}
	}
}

// settings reads .claude/settings.json.
func (w *claudeWorld) settings() map[string]any {
	w.t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(w.readFile(".claude/settings.json")), &s); err != nil {
		w.t.Fatal(err)
	}
	return s
}

// hooks is the settings' "hooks".
func (w *claudeWorld) hooks() map[string]any {
	w.t.Helper()
	hooks, _ := w.settings()["hooks"].(map[string]any)
	return hooks
}

// editHooks changes the settings' hooks.
func (w *claudeWorld) editHooks(edit func(hooks map[string]any)) {
	w.t.Helper()
	s := w.settings()
	hooks, _ := s["hooks"].(map[string]any)
	edit(hooks)
	s["hooks"] = hooks
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.repo, ".claude", "settings.json"), b, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// setHookCommand points every hook of event at command.
func setHookCommand(hooks map[string]any, event, command string) {
	entries, _ := hooks[event].([]any)
	for _, e := range entries {
		inner, _ := e.(map[string]any)["hooks"].([]any)
		for _, h := range inner {
			h.(map[string]any)["command"] = command
		}
	}
}

func (w *claudeWorld) readFile(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.repo, filepath.FromSlash(rel)))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// exists reports whether the repository holds rel.
func (w *claudeWorld) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(w.repo, filepath.FromSlash(rel)))
	return err == nil
}

func (w *claudeWorld) abs(rel string) string { return filepath.Join(w.repo, filepath.FromSlash(rel)) }

// script starts the scripted model.
func (w *claudeWorld) script(s anthropic.Scenario) { w.model = anthropic.New(w.t, s) }

// openSession opens the Madebook session Claude's session w.sid will
// re-attach to (its external_id), as the agent, and returns its id.
func (w *claudeWorld) openSession() string {
	w.t.Helper()
	s := w.api.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", w.api.AgentKey,
		map[string]any{"mission": w.mission, "external_id": w.sid, "root": w.repo, "agent": "claude-code"})
	return s["id"].(string)
}

// sessionOf is the Madebook session the hook opened for Claude's session
// sid: re-attaching by external_id must find it (200, not 201).
func (w *claudeWorld) sessionOf(sid string) string {
	w.t.Helper()
	if sid == "" {
		w.t.Fatal("claude's stream-json output has no system/init line with a session_id")
	}
	r := w.api.Do(http.MethodPost, "/api/v1/sessions", w.api.AgentKey, map[string]any{"mission": w.mission, "external_id": sid})
	if r.Status != http.StatusOK {
		w.t.Fatalf("re-attaching to Claude's session %s: status %d, want 200 (the hook opened no session for it): %s", sid, r.Status, r.Body)
	}
	return r.Object(w.t)["id"].(string)
}

// openGate opens a decision gate on the session blocking scope, as the
// agent, through the API, and returns its ref.
func (w *claudeWorld) openGate(session, question string, scope ...string) string {
	w.t.Helper()
	d := w.api.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+session+"/decisions", w.api.AgentKey,
		map[string]any{"title": "Schema", "question": question, "blocked_scope": scope})
	return d["ref"].(string)
}

// ledgerCalls are the tool calls the ledger holds for the session.
func (w *claudeWorld) ledgerCalls(session string) []ledger.ToolCall {
	w.t.Helper()
	return sessionLedger(w.t, w.api, session)
}

// sessionLedger is the tool calls the ledger holds for the session, from
// GET /api/v1/sessions/{id}/runs and GET /api/v1/runs/{id}.
func sessionLedger(t *testing.T, api *webtest.API, session string) []ledger.ToolCall {
	t.Helper()
	var calls []ledger.ToolCall
	runs := api.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions/"+session+"/runs?limit=500", api.LeadTok, nil)
	items, _ := runs["items"].([]any)
	for _, it := range items {
		id, _ := it.(map[string]any)["id"].(string)
		var run struct {
			ToolCalls []ledger.ToolCall `json:"tool_calls"`
		}
		r := api.Do(http.MethodGet, "/api/v1/runs/"+id+"?limit=500", api.LeadTok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET /api/v1/runs/%s: %d %s", id, r.Status, r.Body)
		}
		if err := json.Unmarshal([]byte(r.Body), &run); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, run.ToolCalls...)
	}
	return calls
}

// ledgerCall is the ledger's call with Claude's tool_use_id.
func ledgerCall(calls []ledger.ToolCall, id string) (ledger.ToolCall, bool) {
	for _, c := range calls {
		if c.ToolUseID == id {
			return c, true
		}
	}
	return ledger.ToolCall{}, false
}

func describeLedger(calls []ledger.ToolCall) string {
	b, _ := json.MarshalIndent(calls, "", "  ")
	return string(b)
}

// claudeRun is one run of `claude -p`: its exit status, its output, and
// the stream-json lines of its stdout.
type claudeRun struct {
	w              *claudeWorld
	code           int
	stdout, stderr string
	lines          []map[string]any
	elapsed        time.Duration
	// sessionID is Claude's session id, from the system/init line.
	sessionID string
}

// claudeLimit bounds one claude run.
const claudeLimit = 90 * time.Second

// run runs `claude -p prompt` in the repository, with extra flags, and
// returns what it did. It kills claude's process group after claudeLimit.
func (w *claudeWorld) run(prompt string, extra ...string) claudeRun {
	t := w.t
	t.Helper()
	if w.model == nil {
		t.Fatal("no scripted model: call script first")
	}
	// acceptEdits lets Write and Edit run headless; Bash and Madebook's
	// MCP tools are allowed by name, as a user's settings would.
	args := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash", "mcp__madebook"}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), claudeLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.env.claude, args...)
	cmd.Dir = w.repo
	cmd.Env = []string{"HOME=" + w.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(w.home, ".claude"), "PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + w.tmp, "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + w.model.URL, "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"MADEBOOK_KEY=" + w.api.AgentKey, "MADEBOOK_URL=" + w.url, "MADEBOOK_MISSION=" + w.mission}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := claudeRun{w: w, elapsed: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	// What claude left running in its group (a background shell) goes too.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil && ctx.Err() == nil:
		t.Fatalf("claude: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		r.lines = append(r.lines, line)
		if line["type"] == "system" && line["subtype"] == "init" && r.sessionID == "" {
			r.sessionID, _ = line["session_id"].(string)
		}
	}
	var first, last time.Duration
	n := 0
	for _, req := range w.model.Requests() {
		if req.At.After(start) {
			if n++; n == 1 {
				first = req.At.Sub(start)
			}
			last = req.At.Sub(start)
		}
	}
	requests := "no request to the model"
	if n > 0 {
		requests = fmt.Sprintf("%d requests to the model, the first after %.1f s, the last after %.1f s", n, first.Seconds(), last.Seconds())
	}
	t.Logf("claude -p %q: %.1f s (exit %d; %s)", prompt, r.elapsed.Seconds(), r.code, requests)
	if ctx.Err() != nil {
		t.Fatalf("claude did not finish within %s: killed its process group\n%s", claudeLimit, r)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MADEBOOK_CLAUDE_LOG") == "1" {
			t.Logf("claude -p %q:\n%s", prompt, r)
		}
	})
	return r
}

// String is everything a failing test shows of a run (each stream-json
// line cut at 3000 bytes).
func (r claudeRun) String() string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(r.stdout, "\n") {
		if len(line) > 3000 {
			line = line[:3000] + "…\n"
		}
		out.WriteString(line)
	}
	return fmt.Sprintf("exit %d after %s\n--- stdout (stream-json):\n%s\n--- stderr:\n%s\n--- the model's requests:\n%s",
		r.code, r.elapsed.Round(time.Millisecond), out.String(), r.stderr, r.w.model.Dump())
}

// result is the run's final "result" line.
func (r claudeRun) result() map[string]any {
	for i := len(r.lines) - 1; i >= 0; i-- {
		if r.lines[i]["type"] == "result" {
			return r.lines[i]
		}
	}
	return nil
}

// mustSucceed fails unless claude exited 0 with a successful result.
func (r claudeRun) mustSucceed() {
	r.w.t.Helper()
	res := r.result()
	if r.code != 0 || res == nil || res["subtype"] != "success" || res["is_error"] == true {
		r.w.t.Fatalf("claude did not succeed: exit %d, result %v", r.code, res)
	}
}

// hookResponses are the stream-json hook_response lines of the event
// (PreToolUse:Write, for one tool: the hook_name).
func (r claudeRun) hookResponses(name string) []map[string]any {
	var out []map[string]any
	for _, l := range r.lines {
		if l["type"] == "system" && l["subtype"] == "hook_response" && (l["hook_name"] == name || l["hook_event"] == name) {
			out = append(out, l)
		}
	}
	return out
}

// toolResult is the tool_result of the call id that claude reported in its
// stream-json output (a "user" line), and the agent_id of the line.
func (r claudeRun) toolResult(id string) (res anthropic.Block, agentID string, ok bool) {
	for _, l := range r.lines {
		if l["type"] != "user" {
			continue
		}
		raw, _ := json.Marshal(l["message"])
		var m anthropic.Message
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "tool_result" && b.ToolUseID == id {
				agentID, _ = l["agent_id"].(string)
				return b, agentID, true
			}
		}
	}
	return anthropic.Block{}, "", false
}

// resultSeen is the tool_result of the call id as the model received it,
// in the first request to the scripted model that holds it.
func (w *claudeWorld) resultSeen(id string) (anthropic.Block, bool) {
	for _, req := range w.model.Messages() {
		if b, ok := req.ToolResult(id); ok {
			return b, true
		}
	}
	return anthropic.Block{}, false
}

// wantDenied checks that the model got the call id back as an error whose
// text holds every one of want (the hook's reason).
func (w *claudeWorld) wantDenied(id string, want ...string) {
	w.t.Helper()
	b, ok := w.resultSeen(id)
	if !ok {
		w.t.Errorf("the model never got the result of %s", id)
		return
	}
	text := b.ResultText()
	if !b.IsError {
		w.t.Errorf("%s ran: its result is not an error: %q", id, text)
	}
	for _, s := range want {
		if !strings.Contains(text, s) {
			w.t.Errorf("the result of %s does not say %q: %q", id, s, text)
		}
	}
}

// wantRan checks that the model got the call id back as a success.
func (w *claudeWorld) wantRan(id string) string {
	w.t.Helper()
	b, ok := w.resultSeen(id)
	if !ok {
		w.t.Errorf("the model never got the result of %s", id)
		return ""
	}
	if b.IsError {
		w.t.Errorf("%s failed: %q", id, b.ResultText())
	}
	return b.ResultText()
}

// claudeSteps is a scenario that answers the main agent's n-th turn with
// replies[n] (then "Done.") and every subagent request with sub (nil: "Done.").
func claudeSteps(sub anthropic.Scenario, replies ...anthropic.Reply) anthropic.Scenario {
	return func(r *anthropic.Request) anthropic.Reply {
		if r.Subagent() {
			if sub != nil {
				return sub(r)
			}
			return anthropic.Say("Done.")
		}
		if n := r.Turn(); n < len(replies) {
			return replies[n]
		}
		return anthropic.Say("Done.")
	}
}

func claudeWrite(id, path, content string) anthropic.Reply {
	return anthropic.Call(id, "Write", map[string]any{"file_path": path, "content": content})
}

func claudeBash(id, command string) anthropic.Reply {
	return anthropic.Call(id, "Bash", map[string]any{"command": command, "description": "run " + command})
}

// claudeUUID is a random version 4 UUID, for claude --session-id.
func claudeUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// a. A gate blocks db/migrations; the model runs `cd db`, then Writes
// migrations/0042.sql relative to it and db/migrations/0043.sql by its
// absolute path: both are denied, with the reason the model reads; a
// Write elsewhere lands and is on the ledger.
func claudeCdThenWrite(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	session := w.openSession()
	ref := w.openGate(session, "Drop the legacy billing table?", "db/migrations")
	w.script(claudeSteps(nil,
		claudeBash("toolu_a1", "cd db"),
		claudeWrite("toolu_a2", "migrations/0042.sql", "DROP TABLE billing;\n"),
		claudeWrite("toolu_a3", w.abs("db/migrations/0043.sql"), "DROP TABLE billing;\n"),
		claudeWrite("toolu_a4", w.abs("web/allowed.js"), "console.log('allowed')\n"),
	))
	r := w.run("Drop the legacy billing table.", "--session-id", w.sid)
	r.mustSucceed()
	if r.sessionID != w.sid {
		t.Errorf("claude's session is %q, want %q (--session-id)", r.sessionID, w.sid)
	}
	for _, f := range []string{"db/migrations/0042.sql", "db/migrations/0043.sql", "db/db/migrations/0042.sql", "migrations/0042.sql"} {
		if w.exists(f) {
			t.Errorf("%s was written through the gate", f)
		}
	}
	if !w.exists("web/allowed.js") || w.readFile("web/allowed.js") != "console.log('allowed')\n" {
		t.Error("the allowed Write did not land")
	}
	w.wantRan("toolu_a1")
	w.wantDenied("toolu_a2", "db/migrations", ref)
	w.wantDenied("toolu_a3", "db/migrations", ref)
	w.wantRan("toolu_a4")
	if n := len(r.hookResponses("PreToolUse:Write")); n != 3 {
		t.Errorf("%d PreToolUse:Write hook responses in the stream, want 3", n)
	}
	denies := 0
	for _, h := range r.hookResponses("PreToolUse:Write") {
		if out, _ := h["output"].(string); strings.Contains(out, `"permissionDecision":"deny"`) {
			denies++
		}
	}
	if denies != 2 {
		t.Errorf("%d PreToolUse:Write hooks denied in the stream, want 2", denies)
	}
	if got := w.sessionOf(r.sessionID); got != session {
		t.Errorf("Claude's session re-attaches to %s, want %s", got, session)
	}
	calls := w.ledgerCalls(session)
	if c, ok := ledgerCall(calls, "toolu_a4"); !ok || c.Tool != "Write" || !slices.Contains(c.Paths, "web/allowed.js") {
		t.Errorf("the allowed Write is not on the ledger as Write web/allowed.js:\n%s", describeLedger(calls))
	}
	for _, id := range []string{"toolu_a2", "toolu_a3"} {
		if c, ok := ledgerCall(calls, id); ok {
			t.Errorf("the denied %s is on the ledger as a call that ran: %+v", id, c)
		}
	}
	refused := 0
	for _, e := range w.api.DetailOf(session).Timeline {
		if e.Kind == ledger.RefusedEvent && strings.Contains(e.Detail, "db/migrations") {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d tool_call.refused events naming db/migrations in the timeline, want 2:\n%s", refused, strings.Join(w.api.Timeline(session), "\n"))
	}
}

// b. A hook that cannot run ("onFailure": "block"): the madebook binary
// gone, every hook fails and Claude Code drops the prompt (nothing reaches
// the model); only the PreToolUse hook's command missing, the Write is
// blocked. Either way the file is not written.
func claudeHookMissing(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	missing := filepath.Join(w.tmp, "no-such-dir", "madebook")
	original := w.readFile(".claude/settings.json")
	w.editHooks(func(hooks map[string]any) {
		for ev := range hooks {
			setHookCommand(hooks, ev, missing)
		}
	})
	w.script(claudeSteps(nil, claudeWrite("toolu_b1", w.abs("web/b.js"), "b\n")))
	r := w.run("Write web/b.js.")
	if n := len(w.model.Messages()); n != 0 {
		t.Errorf("with every hook missing, %d requests reached the model, want none", n)
	}
	blocked := false
	for _, l := range r.lines {
		if c, _ := l["content"].(string); l["subtype"] == "informational" && strings.Contains(c, "UserPromptSubmit operation blocked by hook") {
			blocked = true
		}
	}
	if !blocked {
		t.Error("claude did not say the UserPromptSubmit hook blocked the prompt")
	}
	if w.exists("web/b.js") {
		t.Fatal("web/b.js was written though no hook could run")
	}

	if err := os.WriteFile(w.abs(".claude/settings.json"), []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	w.editHooks(func(hooks map[string]any) { setHookCommand(hooks, "PreToolUse", missing) })
	r = w.run("Write web/b.js.")
	r.mustSucceed()
	if w.exists("web/b.js") {
		t.Error("web/b.js was written though its PreToolUse hook could not run")
	}
	w.wantDenied("toolu_b1", "onFailure")
	hs := r.hookResponses("PreToolUse:Write")
	if len(hs) != 1 || hs[0]["outcome"] == "success" {
		t.Errorf("the PreToolUse:Write hook responses: %v", hs)
	}
}

// b. The real hook, with Madebook stopped: side-effecting calls are denied
// (fail closed), saying Madebook does not answer.
func claudeMadebookDown(t *testing.T, env claudeEnv) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() // nothing listens there once closed
	l.Close()
	w := newClaudeWorld(t, env, down)
	w.script(claudeSteps(nil,
		claudeWrite("toolu_b2", w.abs("web/b.js"), "b\n"),
		claudeBash("toolu_b3", "touch web/c.txt"),
		anthropic.Call("toolu_b4", "Read", map[string]any{"file_path": w.abs("web/app.js")}),
	))
	r := w.run("Write web/b.js.")
	r.mustSucceed()
	for _, f := range []string{"web/b.js", "web/c.txt"} {
		if w.exists(f) {
			t.Errorf("%s was written while Madebook was down", f)
		}
	}
	w.wantDenied("toolu_b2", "Madebook does not answer", down)
	w.wantDenied("toolu_b3", "Madebook does not answer")
	if got := w.wantRan("toolu_b4"); !strings.Contains(got, "console.log") {
		t.Errorf("Read, read-only, did not run while Madebook was down: %q", got)
	}
}

// c. A tool call that fails (Bash exits 3) still ran, and the ledger has
// it with its error (PostToolUseFailure).
func claudeFailedCall(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	w.script(claudeSteps(nil, claudeBash("toolu_c1", "echo x > out.txt; exit 3")))
	r := w.run("Make out.txt.")
	r.mustSucceed()
	if !w.exists("out.txt") || w.readFile("out.txt") != "x\n" {
		t.Error("the failing Bash did not run: no out.txt")
	}
	if b, ok := w.resultSeen("toolu_c1"); !ok || !b.IsError || !strings.Contains(b.ResultText(), "Exit code 3") {
		t.Errorf("the model got %+v for the failing Bash", b)
	}
	if hs := r.hookResponses("PostToolUseFailure"); len(hs) != 1 || hs[0]["exit_code"] != float64(0) {
		t.Errorf("PostToolUseFailure hook responses: %v", hs)
	}
	session := w.sessionOf(r.sessionID)
	calls := w.ledgerCalls(session)
	c, ok := ledgerCall(calls, "toolu_c1")
	if !ok || c.Tool != "Bash" || !c.SideEffecting {
		t.Fatalf("the failed Bash is not on the ledger:\n%s", describeLedger(calls))
	}
	if c.Error != "Exit code 3" {
		t.Errorf("the ledger's failed Bash has error %q, want \"Exit code 3\"", c.Error)
	}
}

// d. A paused session: ToolSearch (loading a Madebook MCP tool) and that
// tool run, a Write is denied.
func claudeToolSearchPaused(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	session := w.openSession()
	w.api.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+session+"/pause", w.api.LeadTok, map[string]any{"reason": "Billing incident in progress"})
	w.script(claudeSteps(nil,
		anthropic.Call("toolu_d1", "ToolSearch", map[string]any{"query": "select:mcp__madebook__brief", "max_results": 1}),
		anthropic.Call("toolu_d2", "mcp__madebook__brief", map[string]any{"session": session}),
		claudeWrite("toolu_d3", w.abs("web/d.js"), "d\n"),
	))
	r := w.run("Brief, then write web/d.js.", "--session-id", w.sid)
	r.mustSucceed()
	w.wantRan("toolu_d1")
	if got := w.wantRan("toolu_d2"); !strings.Contains(got, "BLOCKED") || !strings.Contains(got, "Billing incident in progress") {
		t.Errorf("mcp__madebook__brief answered %q, want the paused brief", got)
	}
	w.wantDenied("toolu_d3", "Billing incident in progress")
	if w.exists("web/d.js") {
		t.Error("web/d.js was written in a paused session")
	}
}

// e. A subagent (the Agent tool, in the foreground) Writes into a blocked
// scope (denied) and outside it (allowed): the ledger records the allowed
// call with the subagent's agent_id and agent_type.
func claudeSubagent(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	session := w.openSession()
	ref := w.openGate(session, "Drop the legacy billing table?", "db/migrations")
	const subPrompt = "Write the billing files."
	sub := func(r *anthropic.Request) anthropic.Reply {
		if r.Prompt() != subPrompt {
			return anthropic.Say("Not scripted: " + r.Prompt())
		}
		switch r.Turn() {
		case 0:
			return claudeWrite("toolu_e2", w.abs("db/migrations/0044.sql"), "x\n")
		case 1:
			return claudeWrite("toolu_e3", w.abs("web/sub.js"), "sub\n")
		}
		return anthropic.Say("Wrote web/sub.js; db/migrations is blocked.")
	}
	w.script(claudeSteps(sub, anthropic.Call("toolu_e1", "Agent", map[string]any{"subagent_type": "general-purpose",
		"description": "billing files", "prompt": subPrompt, "run_in_background": false})))
	r := w.run("Delegate the billing files.", "--session-id", w.sid)
	r.mustSucceed()
	subagentRequests := 0
	for _, req := range w.model.Messages() {
		if req.Subagent() {
			subagentRequests++
		}
	}
	if subagentRequests < 3 {
		t.Fatalf("%d subagent requests reached the model, want 3", subagentRequests)
	}
	if w.exists("db/migrations/0044.sql") {
		t.Error("the subagent wrote through the gate")
	}
	if !w.exists("web/sub.js") {
		t.Error("the subagent's allowed Write did not land")
	}
	w.wantDenied("toolu_e2", "db/migrations", ref)
	w.wantRan("toolu_e3")
	_, agentID, _ := r.toolResult("toolu_e3")
	if agentID == "" {
		t.Error("the stream-json line of the subagent's tool result has no agent_id")
	}
	if n := len(r.hookResponses("SubagentStart")); n != 1 {
		t.Errorf("%d SubagentStart hook responses, want 1", n)
	}
	calls := w.ledgerCalls(session)
	c, ok := ledgerCall(calls, "toolu_e3")
	if !ok || !slices.Contains(c.Paths, "web/sub.js") {
		t.Fatalf("the subagent's Write is not on the ledger:\n%s", describeLedger(calls))
	}
	if c.AgentID != agentID || c.AgentType != "general-purpose" {
		t.Errorf("the subagent's Write is on the ledger as agent %q (%q), want %q (general-purpose)", c.AgentID, c.AgentType, agentID)
	}
	if a, ok := ledgerCall(calls, "toolu_e1"); ok && a.AgentID != "" {
		t.Errorf("the main agent's Agent call is on the ledger as subagent %q's", a.AgentID)
	}
}

// f. Settings without the PreToolUse hook (Stop, SubagentStop and
// SessionEnd kept): a Bash writes a file unchecked, and `madebook audit
// ungoverned-tool-calls` lists it and exits 1.
func claudeUngovernedAudit(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	w.editHooks(func(hooks map[string]any) { delete(hooks, "PreToolUse") })
	w.script(claudeSteps(nil, claudeBash("toolu_f1", "echo f > f.txt")))
	r := w.run("Make f.txt.")
	r.mustSucceed()
	if !w.exists("f.txt") {
		t.Fatal("the Bash did not run")
	}
	// SessionEnd runs after claude's last stream-json line: the stream
	// shows only Stop.
	if len(r.hookResponses("Stop")) == 0 {
		t.Error("no Stop hook ran")
	}
	code, stdout, stderr := runBinary(t, env.bin, []string{"MADEBOOK_DB="}, "audit", "ungoverned-tool-calls", "--db", w.api.Kit.Path, "--format", "json")
	t.Logf("madebook audit ungoverned-tool-calls: exit %d\n%s%s", code, stdout, stderr)
	if code != 1 {
		t.Errorf("madebook audit ungoverned-tool-calls: exit %d, want 1", code)
	}
	if out := stdout.String(); !strings.Contains(out, `"toolu_f1"`) {
		t.Error("the audit does not list the unchecked Bash")
	}
}

// g. A lead resolves a gate between two prompts of one session (claude
// --resume): the resolution reaches the model once, also when a
// background subagent's <task-notification> submits a prompt after.
func claudeDeliveredOnce(t *testing.T, env claudeEnv) {
	w := newClaudeWorld(t, env)
	session := w.openSession()
	ref := w.openGate(session, "Which table do we drop?", "db/migrations")
	const instruction = "Drop billing_v1 only; keep a backup table for 30 days."
	const first, second, subPrompt = "Wait for the decision.", "Go on with the migration.", "Check the backups."
	var (
		mu                 sync.Mutex
		launched, notified bool
	)
	w.script(func(r *anthropic.Request) anthropic.Reply {
		if r.Subagent() {
			return anthropic.Say("The backups are fine.")
		}
		all := r.AllText()
		switch {
		case !strings.Contains(all, second):
			return anthropic.Say("Waiting for the decision on " + ref + ".")
		case !calledTool(r, "Agent"):
			mu.Lock()
			launched = true
			mu.Unlock()
			return anthropic.Call("toolu_g1", "Agent", map[string]any{"subagent_type": "general-purpose",
				"description": "backups", "prompt": subPrompt, "run_in_background": true})
		case strings.Contains(r.LastUserText(), "<task-notification>"):
			mu.Lock()
			notified = true
			mu.Unlock()
			return anthropic.Say("The subagent reported; done.")
		}
		return anthropic.Say("The subagent is checking the backups.")
	})
	r1 := w.run(first, "--session-id", w.sid)
	r1.mustSucceed()
	sent := len(w.model.Messages())
	for _, req := range w.model.Messages() {
		if n := req.Count(instruction); n != 0 {
			t.Fatalf("request #%d holds the instruction before it was given", req.N)
		}
	}
	w.api.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", w.api.LeadTok,
		map[string]any{"resolution": "Drop billing_v1", "instruction": instruction})
	r2 := w.run(second, "--resume", w.sid)
	r2.mustSucceed()
	if r2.sessionID != w.sid {
		t.Errorf("the resumed session is %q, want %q", r2.sessionID, w.sid)
	}
	mu.Lock()
	if !launched || !notified {
		t.Errorf("the scenario did not run through: subagent launched %v, its task-notification seen %v", launched, notified)
	}
	mu.Unlock()
	if n := len(r2.hookResponses("UserPromptSubmit")); n < 2 {
		t.Errorf("%d UserPromptSubmit hooks in the second run, want 2 (the prompt, the task-notification)", n)
	}
	// One hook of the second run hands the resolution over (SessionStart,
	// source resume, or the prompt's UserPromptSubmit); no other repeats it.
	var gave []string
	for _, l := range r2.lines {
		if l["type"] == "system" && l["subtype"] == "hook_response" {
			if out, _ := l["stdout"].(string); strings.Contains(out, instruction) {
				gave = append(gave, fmt.Sprint(l["hook_name"]))
			}
		}
	}
	if len(gave) != 1 {
		t.Errorf("the hooks that handed the resolution over in the second run: %v, want one", gave)
	}
	// Every main request of the second run has the instruction in its
	// context exactly once (delivered once, never again), and no subagent
	// request has it.
	reqs := w.model.Messages()
	mains := 0
	for _, req := range reqs[sent:] {
		n := req.Count(instruction)
		if req.Subagent() {
			if n != 0 {
				t.Errorf("the subagent's request #%d holds the instruction %d times: delivered again", req.N, n)
			}
			continue
		}
		mains++
		if n != 1 {
			t.Errorf("request #%d holds the instruction %d times, want 1", req.N, n)
		}
	}
	if mains < 3 {
		t.Errorf("%d main requests in the second run, want 3 (the prompt, the launch, the task-notification)", mains)
	}
	d := w.api.DetailOf(session)
	for _, dec := range d.Decisions {
		if dec.Ref == ref && dec.Status != "delivered" {
			t.Errorf("%s is %q after the second run, want delivered", ref, dec.Status)
		}
	}
}

// calledTool reports whether the conversation called the tool.
func calledTool(r *anthropic.Request, name string) bool {
	for _, b := range r.ToolUses() {
		if b.Name == name {
			return true
		}
	}
	return false
}
