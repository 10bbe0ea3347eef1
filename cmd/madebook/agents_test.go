package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/testkit/gemini"
	"github.com/madebook/madebook/internal/testkit/openai"
	"github.com/madebook/madebook/web/webtest"
)

// The releases of the other coding agents the end-to-end tests are
// written against (.ci/run installs them; docs/testing.md says how to
// install them locally).
const (
	codexVersion   = "0.171.0"
	geminiVersion  = "0.61.0"
	copilotVersion = "1.0.102"
)

// agentBinary finds a coding agent's real CLI: the environment variable
// env (the path of its binary), else name on PATH. Without it the test is
// skipped, or fails when the environment variable require is 1.
func agentBinary(t *testing.T, env, require, name, pkg, version string) string {
	t.Helper()
	path, missing := os.Getenv(env), ""
	if path == "" {
		path, _ = exec.LookPath(name)
	}
	if path == "" {
		missing = fmt.Sprintf("the %s CLI is not installed: set %s to its binary, or put %s on PATH "+
			"(npm install --prefix /tmp/agents %s@%s, then %s=/tmp/agents/node_modules/.bin/%s)", name, env, name, pkg, version, env, name)
	} else if _, err := os.Stat(path); err != nil {
		missing = fmt.Sprintf("%s=%s: %v", env, path, err)
	}
	if missing != "" {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s=1, but %s", require, missing)
		}
		t.Skip(missing)
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", path, err, out)
	}
	if v := strings.TrimSpace(string(out)); !strings.Contains(v, version) {
		t.Logf("%s --version says %q; this test is written against %s", name, v, version)
	}
	return path
}

// agentStep is one tool call the scripted model makes, in words every
// agent's tools can say: write a file, or run a shell command.
type agentStep struct {
	write, content string // a file to write (relative to the repository)
	shell          string // else a shell command to run
}

func writeStep(path, content string) agentStep { return agentStep{write: path, content: content} }

func shellStep(command string) agentStep { return agentStep{shell: command} }

// executorCLI is one coding agent under test: how `madebook init` sets it
// up, how a run is started, and how its scripted model makes a step.
type executorCLI struct {
	name, bin string
	// settings is the file init writes the hooks into, and check the
	// event there that checks a tool call before it runs.
	settings, check string
	// hookFailed is what the agent tells the model of a call its hook
	// could not check.
	hookFailed string
	// transcript: the hook reads the agent's transcript at a stop, which
	// finds the calls that ran unchecked.
	transcript bool
	// start runs the agent on the prompt in the world's repository,
	// scripted by steps; it returns the agent's output and what the model
	// was told of each step's call (its output, in order).
	start func(w *agentWorld, prompt string, steps []agentStep, before func(turn int)) agentRun
}

// agentRun is what one run of an agent did.
type agentRun struct {
	code    int
	output  string
	results []string // what the model was told of each step, in order
	context string   // all the model was sent in its last request
	dump    string   // the model's requests, for a failing test
}

// agentWorld is one scenario: a git repository set up by `madebook init
// AGENT`, a Madebook (a real server on a fresh database) with a mission,
// and a private home for the agent.
type agentWorld struct {
	t               *testing.T
	cli             executorCLI
	madebook        string
	api             *webtest.API
	mission         string
	repo, home, tmp string
	url             string
	// sid, when set, is the session id the agent is started with (an
	// agent that takes one: Gemini's --session-id).
	sid  string
	mu   sync.Mutex
	errs []string // what went wrong inside the scripted model
}

func newAgentWorld(t *testing.T, cli executorCLI, madebook string, url ...string) *agentWorld {
	t.Helper()
	a := webtest.NewAPI(t)
	w := &agentWorld{t: t, cli: cli, madebook: madebook, api: a, mission: a.Kit.Mission(a.Lead, false), repo: repository(t),
		home: t.TempDir(), tmp: t.TempDir(), url: a.Srv.URL}
	if len(url) > 0 {
		w.url = url[0]
	}
	code, stdout, stderr := runBinary(t, madebook, []string{"MADEBOOK_URL=", "MADEBOOK_MISSION="},
		"init", cli.name, "--dir", w.repo, "--url", w.url, "--mission", w.mission)
	if code != 0 {
		t.Fatalf("madebook init %s: exit %d\n%s%s", cli.name, code, stdout, stderr)
	}
	return w
}

// env is the environment every agent run gets: a private home, and
// Madebook's key (the URL and mission are in the hook's arguments).
func (w *agentWorld) env() []string {
	return []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + w.tmp, "LANG=C.UTF-8",
		"MADEBOOK_KEY=" + w.api.AgentKey}
}

// fail notes, from the scripted model's goroutine, what went wrong: the
// test fails with it once the run is over.
func (w *agentWorld) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

// session is the one session the hook opened on the world's mission.
func (w *agentWorld) session() (map[string]any, error) {
	r := w.api.Do(http.MethodGet, "/api/v1/sessions?mission="+w.mission, w.api.LeadTok, nil)
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("GET /api/v1/sessions: %d %s", r.Status, r.Body)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
		return nil, err
	}
	if len(page.Items) != 1 {
		return nil, fmt.Errorf("%d sessions on the mission, want the one the hook opened: %s", len(page.Items), r.Body)
	}
	return page.Items[0], nil
}

// sessionID is the id of the session the hook opened.
func (w *agentWorld) sessionID() string {
	w.t.Helper()
	s, err := w.session()
	if err != nil {
		w.t.Fatal(err)
	}
	return s["id"].(string)
}

// onSession calls act, from the scripted model before its first step, on
// the session the hook opened at the agent's start.
func (w *agentWorld) onSession(act func(session string) error) func(turn int) {
	return func(turn int) {
		if turn != 0 {
			return
		}
		s, err := w.session()
		if err == nil {
			err = act(s["id"].(string))
		}
		if err != nil {
			w.fail("before the first step: %v", err)
		}
	}
}

// run runs the agent and fails the test on what went wrong inside the
// scripted model.
func (w *agentWorld) run(prompt string, steps []agentStep, before func(turn int)) agentRun {
	w.t.Helper()
	r := w.cli.start(w, prompt, steps, before)
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("%s run (exit %d):\n%s\nthe model's requests:\n%s", w.cli.name, r.code, r.output, r.dump)
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.errs {
		w.t.Error(e)
	}
	if len(r.results) != len(steps) {
		w.t.Fatalf("the model was told of %d of its %d calls: %q", len(r.results), len(steps), r.results)
	}
	return r
}

// runExecutor runs the agent's command in the repository, killing its
// process group after two minutes.
func runExecutor(t *testing.T, dir string, env []string, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v\n%s", bin, err, out.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within two minutes\n%s", bin, out.String())
	}
	return code, out.String()
}

// responsesModel is a scripted OpenAI Responses API making the steps,
// one a turn, each with the call its step names (call: write or shell,
// as the agent's tools say it), then saying it is done.
func responsesModel(t *testing.T, steps []agentStep, before func(int), call func(r *openai.Request, id string, s agentStep) openai.Reply) *openai.Server {
	return openai.New(t, func(r *openai.Request) openai.Reply {
		turn := r.Turn()
		if before != nil {
			before(turn)
		}
		if turn >= len(steps) {
			return openai.Say("Done.")
		}
		return call(r, fmt.Sprintf("call_%d", turn), steps[turn])
	})
}

// responsesRun is what the agent did, as its last request to srv shows it.
func responsesRun(srv *openai.Server, steps []agentStep, code int, out string) agentRun {
	r := agentRun{code: code, output: out, dump: srv.Dump()}
	if turns := srv.Responses(); len(turns) > 0 {
		last := turns[len(turns)-1]
		r.context = last.AllText()
		for i := range steps {
			if it, ok := last.ToolOutput(fmt.Sprintf("call_%d", i)); ok {
				r.results = append(r.results, it.OutputText())
			}
		}
	}
	return r
}

// codexCLI is Codex CLI, offline against internal/testkit/openai.
func codexCLI(bin string) executorCLI {
	return executorCLI{name: "codex", bin: bin, settings: ".codex/hooks.json", check: "PreToolUse", hookFailed: "madebook hook failed", transcript: true,
		start: func(w *agentWorld, prompt string, steps []agentStep, before func(int)) agentRun {
			t := w.t
			t.Helper()
			srv := responsesModel(t, steps, before, func(r *openai.Request, id string, s agentStep) openai.Reply {
				if s.write != "" {
					return r.Patch(id, "*** Begin Patch\n*** Add File: "+s.write+"\n+"+strings.TrimSuffix(s.content, "\n")+"\n*** End Patch\n")
				}
				return openai.Call(id, "exec_command", map[string]string{"cmd": s.shell})
			})
			codexHome := filepath.Join(w.home, ".codex")
			if err := os.MkdirAll(codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(srv.CodexConfig(w.repo)), 0o644); err != nil {
				t.Fatal(err)
			}
			env := append(w.env(), "CODEX_HOME="+codexHome, openai.KeyEnv+"=sk-mock")
			code, out := runExecutor(t, w.repo, env, bin, openai.CodexArgs(prompt)...)
			return responsesRun(srv, steps, code, out)
		}}
}

// geminiCLI is Gemini CLI, offline against internal/testkit/gemini.
func geminiCLI(bin string) executorCLI {
	return executorCLI{name: "gemini", bin: bin, settings: ".gemini/settings.json", check: "BeforeTool", hookFailed: "madebook hook failed", transcript: true,
		start: func(w *agentWorld, prompt string, steps []agentStep, before func(int)) agentRun {
			t := w.t
			t.Helper()
			srv := gemini.New(t, func(r *gemini.Request) gemini.Reply {
				turn := r.Turn()
				if before != nil {
					before(turn)
				}
				if turn >= len(steps) {
					return gemini.Say("Done.")
				}
				if s := steps[turn]; s.write != "" {
					return gemini.Call("write_file", map[string]string{"file_path": s.write, "content": s.content})
				} else {
					return gemini.Call("run_shell_command", map[string]string{"command": s.shell})
				}
			})
			home := gemini.Home(t, w.repo)
			w.home = home
			// GITHUB_SHA makes Gemini strip variables from its hooks'
			// environment as on a CI runner: MADEBOOK_KEY reaches the hook
			// because init lets it through.
			env := append(append(w.env(), srv.Env(home)...), "GITHUB_SHA=0123abcd")
			args := []string{"-p", prompt, "-m", "gemini-2.5-flash", "--output-format", "stream-json", "--approval-mode", "yolo"}
			if w.sid != "" {
				args = append(args, "--session-id", w.sid)
			}
			code, out := runExecutor(t, w.repo, env, bin, args...)
			r := agentRun{code: code, output: out, dump: srv.Dump()}
			if turns := srv.Turns(); len(turns) > 0 {
				r.context = turns[len(turns)-1].AllText()
				for _, fr := range turns[len(turns)-1].FunctionResponses() {
					r.results = append(r.results, fr.Output())
				}
			}
			return r
		}}
}

// copilotCLI is GitHub Copilot CLI, offline against
// internal/testkit/openai (Copilot's model provider on the Responses API),
// with the gpt-4.1 tool set (create, edit, bash).
func copilotCLI(bin string) executorCLI {
	return executorCLI{name: "copilot", bin: bin, settings: ".github/hooks/madebook.json", check: "preToolUse",
		hookFailed: "hook exited with code 2", // Copilot shows no hook's stderr
		start: func(w *agentWorld, prompt string, steps []agentStep, before func(int)) agentRun {
			t := w.t
			t.Helper()
			srv := responsesModel(t, steps, before, func(_ *openai.Request, id string, s agentStep) openai.Reply {
				if s.write != "" {
					return openai.Call(id, "create", map[string]string{"path": filepath.Join(w.repo, s.write), "file_text": s.content})
				}
				return openai.Call(id, "bash", map[string]string{"command": s.shell, "description": "run it"})
			})
			env := append(w.env(), "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+srv.BaseURL(), "COPILOT_MODEL=gpt-4.1",
				"COPILOT_PROVIDER_WIRE_API=responses")
			code, out := runExecutor(t, w.repo, env, bin, "-p", prompt, "--allow-all-tools", "--trust-folder")
			return responsesRun(srv, steps, code, out)
		}}
}

// TestExecutorCLIs runs the real Codex CLI, Gemini CLI and Copilot CLI,
// offline against scripted models (internal/testkit/openai,
// internal/testkit/gemini), in real git repositories governed by
// `madebook hook codex|gemini|copilot` through the configuration
// `madebook init codex|gemini|copilot` writes: a write
// and a shell command in a blocked scope are denied and absent on disk, a
// write outside it is done and recorded, the brake stops every write, and
// when Madebook does not answer or the hook cannot run, writes are denied.
func TestExecutorCLIs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Parallel()
	bin := buildMadebook(t)
	for _, c := range []struct {
		name string
		cli  func(t *testing.T) executorCLI
	}{
		{"codex", func(t *testing.T) executorCLI {
			return codexCLI(agentBinary(t, "MADEBOOK_CODEX", "MADEBOOK_REQUIRE_AGENTS", "codex", "@openai/codex", codexVersion))
		}},
		{"gemini", func(t *testing.T) executorCLI {
			return geminiCLI(agentBinary(t, "MADEBOOK_GEMINI", "MADEBOOK_REQUIRE_AGENTS", "gemini", "@google/gemini-cli", geminiVersion))
		}},
		{"copilot", func(t *testing.T) executorCLI {
			return copilotCLI(agentBinary(t, "MADEBOOK_COPILOT", "MADEBOOK_REQUIRE_AGENTS", "copilot", "@github/copilot", copilotVersion))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cli := c.cli(t)
			t.Run("blocked-scope", func(t *testing.T) { t.Parallel(); agentBlockedScope(t, cli, bin) })
			t.Run("brake", func(t *testing.T) { t.Parallel(); agentBrake(t, cli, bin) })
			t.Run("madebook-down", func(t *testing.T) { t.Parallel(); agentMadebookDown(t, cli, bin) })
			t.Run("hook-missing", func(t *testing.T) { t.Parallel(); agentHookMissing(t, cli, bin) })
			if cli.transcript {
				t.Run("ungoverned-audit", func(t *testing.T) { t.Parallel(); agentUngovernedAudit(t, cli, bin) })
			}
			if cli.name == "gemini" {
				t.Run("delivered-once", func(t *testing.T) { t.Parallel(); agentDeliveredOnce(t, cli, bin) })
			}
		})
	}
}

// wantDenied fails unless the model was told Madebook denied step i.
func wantDenied(t *testing.T, r agentRun, i int, want ...string) {
	t.Helper()
	got := r.results[i]
	for _, w := range append([]string{"Madebook"}, want...) {
		if !strings.Contains(got, w) {
			t.Errorf("call %d: the model was told %q, want it to say %q", i, got, w)
		}
	}
}

// absent fails when the repository holds rel.
func absent(t *testing.T, repo, rel string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(repo, filepath.FromSlash(rel))); err == nil {
		t.Errorf("%s was written: the gate gave way", rel)
	}
}

func agentBlockedScope(t *testing.T, cli executorCLI, bin string) {
	w := newAgentWorld(t, cli, bin)
	steps := []agentStep{
		writeStep("db/migrations/0002.sql", "DROP TABLE billing;\n"),
		shellStep("cd db && echo 'DROP TABLE billing;' > migrations/0003.sql"),
		writeStep("web/ok.txt", "outside the blocked scope\n"),
	}
	r := w.run("Change the schema, then note it.", steps, w.onSession(func(session string) error {
		res := w.api.Do(http.MethodPost, "/api/v1/sessions/"+session+"/decisions", w.api.AgentKey,
			map[string]any{"title": "Schema", "question": "Drop the billing table?", "blocked_scope": []string{"db/migrations"}})
		if res.Status != http.StatusCreated {
			return fmt.Errorf("open the gate: %d %s", res.Status, res.Body)
		}
		return nil
	}))
	// The brief is in the agent's context from its session start on.
	for _, want := range []string{"session is governed by Madebook", "Madebook's next action: CONTINUE", "The Madebook execution protocol"} {
		if !strings.Contains(r.context, want) {
			t.Errorf("the model's context does not hold %q", want)
		}
	}
	wantDenied(t, r, 0, "db/migrations")
	wantDenied(t, r, 1, "db/migrations")
	absent(t, w.repo, "db/migrations/0002.sql")
	absent(t, w.repo, "db/migrations/0003.sql")
	if b, err := os.ReadFile(filepath.Join(w.repo, "web/ok.txt")); err != nil || string(b) != "outside the blocked scope\n" {
		t.Errorf("web/ok.txt, outside the blocked scope: %q, %v; want it written", b, err)
	}
	s, err := w.session()
	if err != nil {
		t.Fatal(err)
	}
	if s["executor"] != cli.name {
		t.Errorf("the session's executor is %v, want %s", s["executor"], cli.name)
	}
	// Every call that ran was checked: the stop's transcript report finds
	// none ungoverned, and the gate still decides the session.
	if s["next_action"] != "DECISION_REQUIRED" {
		t.Errorf("the session's next action is %v after the run, want DECISION_REQUIRED", s["next_action"])
	}
	if code, stdout, stderr := runBinary(t, bin, []string{"MADEBOOK_DB="}, "audit", "ungoverned-tool-calls", "--db", w.api.Kit.Path); code != 0 {
		t.Errorf("madebook audit ungoverned-tool-calls: exit %d, want 0 (every call was checked)\n%s%s", code, stdout, stderr)
	}
	// The ledger holds the call that ran, under the executor's name; the
	// refused attempts are in the timeline, not among the calls.
	calls := sessionLedger(t, w.api, s["id"].(string))
	if len(calls) != 1 || calls[0].Server != cli.name || !strings.Contains(strings.Join(calls[0].Paths, " "), "web/ok.txt") {
		t.Errorf("the ledger holds %d calls, want the one write to web/ok.txt on server %s:\n%s", len(calls), cli.name, describeLedger(calls))
	}
}

func agentBrake(t *testing.T, cli executorCLI, bin string) {
	w := newAgentWorld(t, cli, bin)
	steps := []agentStep{writeStep("web/after-brake.txt", "x\n"), shellStep("touch web/touched.txt")}
	r := w.run("Write two files.", steps, w.onSession(func(session string) error {
		res := w.api.Do(http.MethodPost, "/api/v1/sessions/"+session+"/pause", w.api.LeadTok, map[string]any{"reason": "Stop: review first."})
		if res.Status != http.StatusOK {
			return fmt.Errorf("pull the brake: %d %s", res.Status, res.Body)
		}
		return nil
	}))
	wantDenied(t, r, 0, "BLOCKED")
	wantDenied(t, r, 1, "BLOCKED")
	absent(t, w.repo, "web/after-brake.txt")
	absent(t, w.repo, "web/touched.txt")
}

func agentMadebookDown(t *testing.T, cli executorCLI, bin string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	w := newAgentWorld(t, cli, bin, down)
	r := w.run("Write a file.", []agentStep{writeStep("web/while-down.txt", "x\n")}, nil)
	wantDenied(t, r, 0, "does not answer")
	absent(t, w.repo, "web/while-down.txt")
}

// agentHookMissing points the hook that checks a call before it runs at
// a binary that is not there: the call is blocked, with the fallback's
// words (init's command line exits 2 when the hook cannot run).
func agentHookMissing(t *testing.T, cli executorCLI, bin string) {
	w := newAgentWorld(t, cli, bin)
	p := filepath.Join(w.repo, filepath.FromSlash(cli.settings))
	var doc map[string]any
	if err := json.Unmarshal([]byte(readText(t, p)), &doc); err != nil {
		t.Fatal(err)
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if _, ok := hooks[cli.check]; !ok {
		t.Fatalf("%s has no %s hook", cli.settings, cli.check)
	}
	gone := filepath.Join(t.TempDir(), "gone", "madebook")
	for _, g := range hooks[cli.check].([]any) {
		entries := []any{g} // Copilot's: a flat list of hooks
		if inner, ok := g.(map[string]any)["hooks"].([]any); ok {
			entries = inner // Codex's and Gemini's: matcher groups
		}
		for _, h := range entries {
			h := h.(map[string]any)
			h["command"] = strings.ReplaceAll(h["command"].(string), bin, gone)
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := w.run("Write a file.", []agentStep{writeStep("web/no-hook.txt", "x\n")}, nil)
	if !strings.Contains(r.results[0], cli.hookFailed) {
		t.Errorf("the model was told %q, want the hook's failure", r.results[0])
	}
	absent(t, w.repo, "web/no-hook.txt")
}

// agentUngovernedAudit takes the hook that checks a call before it runs
// out: the write runs unchecked, and at the stop the hook's report of the
// transcript makes it an ungoverned call, in the audit.
func agentUngovernedAudit(t *testing.T, cli executorCLI, bin string) {
	w := newAgentWorld(t, cli, bin)
	p := filepath.Join(w.repo, filepath.FromSlash(cli.settings))
	var doc map[string]any
	if err := json.Unmarshal([]byte(readText(t, p)), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["hooks"].(map[string]any), cli.check)
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w.run("Write a file.", []agentStep{writeStep("web/unchecked.txt", "x\n")}, nil)
	if _, err := os.Stat(filepath.Join(w.repo, "web", "unchecked.txt")); err != nil {
		t.Fatalf("the unchecked write did not run: %v", err)
	}
	code, stdout, stderr := runBinary(t, bin, []string{"MADEBOOK_DB="}, "audit", "ungoverned-tool-calls", "--db", w.api.Kit.Path, "--format", "json")
	if code != 1 || !strings.Contains(stdout.String(), "web/unchecked.txt") {
		t.Errorf("madebook audit ungoverned-tool-calls: exit %d, want 1 and the unchecked write of web/unchecked.txt\n%s%s", code, stdout, stderr)
	}
	s, err := w.session()
	if err != nil {
		t.Fatal(err)
	}
	if s["next_action"] != "HARD_STOP" {
		t.Errorf("the session's next action is %v, want HARD_STOP until a person reviews the ungoverned call", s["next_action"])
	}
}

// agentDeliveredOnce resolves a gate before the agent starts, on the
// session its id will re-attach to (Gemini takes its session id from the
// command line): the lead's instruction is in the model's context from the
// session start on, and the hook acknowledged it, so no later brief
// delivers it again.
func agentDeliveredOnce(t *testing.T, cli executorCLI, bin string) {
	w := newAgentWorld(t, cli, bin)
	w.sid = claudeUUID(t)
	s := w.api.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", w.api.AgentKey,
		map[string]any{"mission": w.mission, "external_id": w.sid, "root": w.repo, "agent": cli.name})
	id := s["id"].(string)
	d := w.api.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", w.api.AgentKey,
		map[string]any{"title": "Schema", "question": "Drop the billing table?", "blocked_scope": []string{"db/migrations"}})
	const instruction = "Keep billing_v1 and add billing_v2 beside it."
	w.api.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+d["ref"].(string)+"/resolve", w.api.LeadTok,
		map[string]any{"resolution": "Keep it", "instruction": instruction})
	r := w.run("Go on with the schema.", []agentStep{writeStep("db/migrations/0002.sql", "CREATE TABLE billing_v2 (id int);\n")}, nil)
	if n := strings.Count(r.context, instruction); n != 1 {
		t.Errorf("the model's context holds the lead's instruction %d times, want once", n)
	}
	if b, err := os.ReadFile(filepath.Join(w.repo, "db/migrations/0002.sql")); err != nil || len(b) == 0 {
		t.Errorf("the write the resolved gate no longer blocks: %q, %v", b, err)
	}
	if got := w.sessionID(); got != id {
		t.Errorf("the hook worked on session %s, want the one it re-attached to, %s", got, id)
	}
	brief := w.api.Must(http.StatusOK, http.MethodPost, "/brief", w.api.AgentKey, map[string]any{"session": id})
	if res, _ := brief["resolutions"].([]any); len(res) != 0 {
		t.Errorf("a later brief delivers the resolution again: %v", res)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
