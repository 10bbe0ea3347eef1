package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/hook"
	"github.com/madebook/madebook/web/webtest"
)

// payload reads a recorded Claude Code hook payload from testdata and sets
// its session_id to sid.
func payload(t *testing.T, name, sid string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude-code", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m["session_id"] = sid
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// hookRun is what one run of the hook binary did.
type hookRun struct {
	code           int
	stdout, stderr string
}

// answer decodes the hook's stdout: Claude Code's hook answer.
func (r hookRun) answer(t *testing.T) (event, context, decision, reason string) {
	t.Helper()
	var out struct {
		Specific struct {
			HookEventName            string `json:"hookEventName"`
			AdditionalContext        string `json:"additionalContext"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("stdout is not a hook answer: %v: %q (stderr %q)", err, r.stdout, r.stderr)
	}
	s := out.Specific
	return s.HookEventName, s.AdditionalContext, s.PermissionDecision, s.PermissionDecisionReason
}

// runHook runs the built binary's `madebook hook claude-code` on stdin with the environment env
// (MADEBOOK_* not named there are empty).
func runHook(t *testing.T, bin string, env map[string]string, stdin string) hookRun {
	t.Helper()
	vars := []string{"MADEBOOK_URL=", "MADEBOOK_KEY=", "MADEBOOK_MISSION=", "MADEBOOK_FAIL_OPEN=", "MADEBOOK_DB="}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	code, stdout, stderr := runBinaryIn(t, bin, vars, stdin, "hook", "claude-code")
	return hookRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestHookAgainstARealServer runs recorded payloads through the built hook
// against a real Madebook.
func TestHookAgainstARealServer(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	a := webtest.NewAPI(t)
	ctx := context.Background()
	mission := a.Kit.Mission(a.Lead, false)
	env := map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": mission}
	const sid = "abc123de-f456-7890-abcd-real-server"
	reattach := func() string {
		s := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": mission, "external_id": sid})
		return s["id"].(string)
	}

	r := runHook(t, bin, env, payload(t, "session_start", sid))
	if r.code != 0 {
		t.Fatalf("SessionStart exit %d, stderr %q", r.code, r.stderr)
	}
	event, text, _, _ := r.answer(t)
	session := reattach()
	if event != "SessionStart" || !strings.Contains(text, session) || !strings.Contains(text, "Madebook's next action: CONTINUE") ||
		!strings.Contains(text, "HARD_STOP") {
		t.Fatalf("SessionStart answered %s with %q: want the session, its brief and the protocol", event, text)
	}

	t.Run("SessionStart on resume re-attaches to the same session", func(t *testing.T) {
		r := runHook(t, bin, env, payload(t, "session_start_resume", sid))
		if _, text, _, _ := r.answer(t); r.code != 0 || !strings.Contains(text, session) {
			t.Fatalf("resume: exit %d, context %q; want session %s", r.code, text, session)
		}
		if got := reattach(); got != session {
			t.Fatalf("resume opened %s, want %s", got, session)
		}
	})
	t.Run("UserPromptSubmit delivers a lead's resolution once", func(t *testing.T) {
		d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, session, governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Kit.Gov.Decisions.Resolve(ctx, a.Lead, d.Ref, "Keep the table.", "Archive it instead of dropping it."); err != nil {
			t.Fatal(err)
		}
		r := runHook(t, bin, env, payload(t, "user_prompt_submit", sid))
		event, text, _, _ := r.answer(t)
		if r.code != 0 || event != "UserPromptSubmit" || !strings.Contains(text, "Resolved "+d.Ref) ||
			!strings.Contains(text, "Archive it instead of dropping it.") {
			t.Fatalf("exit %d, %s context %q: want the resolution", r.code, event, text)
		}
		r = runHook(t, bin, env, payload(t, "user_prompt_submit", sid))
		if _, text, _, _ := r.answer(t); strings.Contains(text, "Archive it instead") {
			t.Fatalf("the resolution is delivered twice: %q", text)
		}
		// The hook acknowledged the brief Claude was shown: it will not come back.
		if got := a.DetailOf(session).Decisions; len(got) != 1 || got[0].AckedAt == nil {
			t.Fatalf("the resolution the hook showed is not acknowledged: %+v", got)
		}
	})
	t.Run("PostToolUse records the calls, and prints nothing", func(t *testing.T) {
		for _, name := range []string{"post_tool_use_edit", "post_tool_use_read"} {
			if r := runHook(t, bin, env, payload(t, name, sid)); r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
			}
		}
		var calls []string
		rows, err := a.Kit.SQL().Query(`SELECT t.server || ' ' || t.tool || ' ' || CASE WHEN t.is_side_effecting THEN '1' ELSE '0' END || ' ' || t.paths
			FROM tool_calls t JOIN runs r ON r.id = t.run_id WHERE r.session_id = ? AND r.external_id = ? ORDER BY t.id`, session, sid)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, c)
		}
		if strings.Join(calls, ", ") != `claude-code Edit 1 ["web/billing.go"], claude-code Read 0 ["web/billing.go"]` {
			t.Fatalf("the ledger holds %q, want the Edit (side-effecting) and the Read, on one run, with their paths relative to cwd", calls)
		}
	})
}

// contractServer is a Madebook that answers the hook's calls as the API
// contract says, its check from the state of the session: HARD_STOP and
// BLOCKED refuse every side-effecting tool, DECISION_REQUIRED a path in
// db/migrations. It records the check requests.
type contractServer struct {
	*httptest.Server
	mu       sync.Mutex
	state    string
	checks   []map[string]any
	recorded []map[string]any // the tool calls the hook reported
}

func newContractServer(t *testing.T) *contractServer {
	s := &contractServer{state: "CONTINUE"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"ses_contract","mission":"billing","agent":"claude-code","title":"","lifecycle":"IDLE","paused":false}`))
	})
	mux.HandleFunc("POST /api/v1/sessions/{id}/runs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"run_contract","session":"ses_contract","name":"claude-code","status":"running"}`))
	})
	mux.HandleFunc("POST /api/v1/runs/{id}/tool-calls", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.PathValue("id") != "run_contract" {
			http.Error(w, `{"error":{"code":"invalid_body","message":"Not the contract's tool call."}}`, http.StatusUnprocessableEntity)
			return
		}
		s.mu.Lock()
		s.recorded = append(s.recorded, in)
		state := s.state
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if state == "HARD_STOP" || state == "BLOCKED" || state == "DECISION_REQUIRED" {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":{"code":"session_blocked","message":"Refused, and kept."}}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`))
	})
	mux.HandleFunc("POST /api/v1/sessions/{id}/tool-calls/check", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Tool  string         `json:"tool"`
			Input map[string]any `json:"input"`
			Cwd   string         `json:"cwd"`
			Run   string         `json:"run"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.PathValue("id") != "ses_contract" || in.Tool == "" {
			http.Error(w, `{"error":{"code":"invalid_body","message":"Not the contract's check."}}`, http.StatusUnprocessableEntity)
			return
		}
		s.mu.Lock()
		s.checks = append(s.checks, map[string]any{"tool": in.Tool, "input": in.Input, "cwd": in.Cwd, "run": in.Run})
		state := s.state
		s.mu.Unlock()
		writes := !map[string]bool{"Read": true, "Grep": true, "Glob": true}[in.Tool]
		path, _ := in.Input["file_path"].(string)
		path = strings.TrimPrefix(path, in.Cwd+"/")
		v := map[string]any{"allow": true, "side_effecting": writes, "next_action": state}
		switch {
		case !writes:
		case state == "HARD_STOP" || state == "BLOCKED":
			v["allow"], v["reason"] = false, "A lead paused this session: the migration waits for the DBA."
		case state == "DECISION_REQUIRED" && strings.HasPrefix(path, "db/migrations/"):
			v["allow"], v["reason"] = false, "DEC-002 is waiting on a person: Drop the legacy billing table? db/migrations is its blocked scope."
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
	// The hook's one request per event, answered as the server answers it
	// (web/api's POST /hooks/claude-code): hook.Handle, its calls made to
	// the routes above.
	mux.HandleFunc("POST /hooks/claude-code", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		in, err := hook.ParseInput(body)
		if err != nil {
			http.Error(w, `{"error":{"code":"invalid_body","message":"Not a hook's input."}}`, http.StatusUnprocessableEntity)
			return
		}
		mb := hook.Client{API: &apiclient.Client{Base: s.URL, Key: "mbk_test"}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(hook.Handle(r.Context(), mb, hook.Config{Mission: r.URL.Query().Get("mission")}, in))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestHookPreToolUseFollowsTheCheck runs the recorded PreToolUse payloads
// through the built hook in every state of the brief, against a server
// that answers the check as the contract says.
func TestHookPreToolUseFollowsTheCheck(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	srv := newContractServer(t)
	env := map[string]string{"MADEBOOK_URL": srv.URL, "MADEBOOK_KEY": "mbk_test", "MADEBOOK_MISSION": "billing"}
	// denied lists the payloads each state denies; the others run.
	denied := map[string][]string{
		"HARD_STOP":             {"bash", "edit", "write", "multiedit", "mcp"},
		"BLOCKED":               {"bash", "edit", "write", "multiedit", "mcp"},
		"DECISION_REQUIRED":     {"edit", "multiedit"},
		"REMEDIATE":             nil,
		"CONTINUE_WITH_WARNING": nil,
		"CONTINUE":              nil,
	}
	for _, state := range []string{"HARD_STOP", "BLOCKED", "DECISION_REQUIRED", "REMEDIATE", "CONTINUE_WITH_WARNING", "CONTINUE"} {
		for _, tool := range []string{"bash", "edit", "write", "multiedit", "read", "mcp"} {
			deny := strings.Contains(" "+strings.Join(denied[state], " ")+" ", " "+tool+" ")
			t.Run(fmt.Sprintf("%s %s is denied: %v", state, tool, deny), func(t *testing.T) {
				srv.mu.Lock()
				srv.state, srv.recorded = state, nil
				srv.mu.Unlock()
				r := runHook(t, bin, env, payload(t, "pre_tool_use_"+tool, "abc123de-contract"))
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				srv.mu.Lock()
				recorded := len(srv.recorded)
				srv.mu.Unlock()
				if !deny {
					if r.stdout != "" || recorded != 0 {
						t.Fatalf("an allowed call printed %q and reported %d calls, want nothing", r.stdout, recorded)
					}
					return
				}
				event, _, decision, reason := r.answer(t)
				if event != "PreToolUse" || decision != "deny" || !strings.HasPrefix(reason, "Madebook denied this ") ||
					(!strings.Contains(reason, "A lead paused this session") && !strings.Contains(reason, "DEC-002")) {
					t.Fatalf("answer %s %s %q: want a denial with the check's reason", event, decision, reason)
				}
				if recorded != 1 {
					t.Errorf("the denied call was reported %d times, want once (the ledger keeps the refusal)", recorded)
				}
			})
		}
	}
	t.Run("the check gets the tool, its input, Claude's cwd and the hook run", func(t *testing.T) {
		srv.mu.Lock()
		srv.checks, srv.state = nil, "CONTINUE"
		srv.mu.Unlock()
		runHook(t, bin, env, payload(t, "pre_tool_use_edit", "abc123de-contract"))
		runHook(t, bin, env, payload(t, "pre_tool_use_mcp", "abc123de-contract"))
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if len(srv.checks) != 2 {
			t.Fatalf("checks %v", srv.checks)
		}
		in := srv.checks[0]["input"].(map[string]any)
		if srv.checks[0]["tool"] != "Edit" || in["file_path"] != "/home/dev/billing/db/migrations/0042_drop_legacy_billing.sql" ||
			in["new_string"] != "DROP TABLE legacy_billing;" || srv.checks[0]["cwd"] != "/home/dev/billing" || srv.checks[0]["run"] != "run_contract" {
			t.Fatalf("the Edit was checked as %v", srv.checks[0])
		}
		if srv.checks[1]["tool"] != "mcp__github__create_pull_request" {
			t.Fatalf("the MCP tool was checked as %v", srv.checks[1])
		}
	})
}

// TestHookWhenMadebookDoesNotAnswer: side-effecting tools are denied,
// read-only ones run, and MADEBOOK_FAIL_OPEN=1 lets all run.
func TestHookWhenMadebookDoesNotAnswer(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	env := map[string]string{"MADEBOOK_URL": closed, "MADEBOOK_KEY": "mbk_test", "MADEBOOK_MISSION": "billing"}
	for _, tool := range []string{"bash", "edit", "write", "multiedit", "mcp"} {
		t.Run(tool+" is denied", func(t *testing.T) {
			r := runHook(t, bin, env, payload(t, "pre_tool_use_"+tool, "abc123de-down"))
			_, _, decision, reason := r.answer(t)
			if r.code != 0 || decision != "deny" || !strings.Contains(reason, "Madebook does not answer at "+closed) {
				t.Fatalf("exit %d, %s %q", r.code, decision, reason)
			}
		})
	}
	t.Run("read runs", func(t *testing.T) {
		if r := runHook(t, bin, env, payload(t, "pre_tool_use_read", "abc123de-down")); r.code != 0 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
		}
	})
	t.Run("MADEBOOK_FAIL_OPEN=1 lets an edit run", func(t *testing.T) {
		open := map[string]string{"MADEBOOK_FAIL_OPEN": "1"}
		for k, v := range env {
			open[k] = v
		}
		if r := runHook(t, bin, open, payload(t, "pre_tool_use_edit", "abc123de-down")); r.code != 0 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
		}
	})
	t.Run("a server that does not answer in 3 s is no answer", func(t *testing.T) {
		stop := make(chan struct{})
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		}))
		defer hang.Close()
		defer close(stop) // before Close, which waits for the handler
		slow := map[string]string{"MADEBOOK_URL": hang.URL, "MADEBOOK_KEY": "mbk_test", "MADEBOOK_MISSION": "billing"}
		start := time.Now()
		r := runHook(t, bin, slow, payload(t, "pre_tool_use_write", "abc123de-slow"))
		_, _, decision, reason := r.answer(t)
		if took := time.Since(start); took > 6*time.Second || decision != "deny" || !strings.Contains(reason, "Madebook does not answer") {
			t.Fatalf("took %v, %s %q", took, decision, reason)
		}
	})
	t.Run("no MADEBOOK_KEY denies an edit and says to set it", func(t *testing.T) {
		r := runHook(t, bin, map[string]string{"MADEBOOK_URL": closed, "MADEBOOK_MISSION": "billing"}, payload(t, "pre_tool_use_edit", "abc123de-down"))
		if _, _, decision, reason := r.answer(t); decision != "deny" || !strings.Contains(reason, "MADEBOOK_KEY is not set") {
			t.Fatalf("%s %q", decision, reason)
		}
	})
}

// TestHookCommandLine: help, a malformed stdin, and no database opened.
func TestHookCommandLine(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	t.Run("--help prints the usage and exits 0", func(t *testing.T) {
		code, stdout, _ := runBinary(t, bin, nil, "hook", "claude-code", "--help")
		if code != 0 || !strings.Contains(stdout.String(), "MADEBOOK_FAIL_OPEN") {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
	})
	for _, in := range []string{"", "not json", `["PreToolUse"]`, `{"hook_event_name":"PreToolUse"}`} {
		t.Run(fmt.Sprintf("stdin %q is a blocking error: exit 2, a message on stderr", in), func(t *testing.T) {
			r := runHook(t, bin, map[string]string{"MADEBOOK_KEY": "mbk_test", "MADEBOOK_MISSION": "billing"}, in)
			if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "madebook hook claude-code: The hook input") {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
	t.Run("the hook opens no database", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "madebook.db")
		r := runHook(t, bin, map[string]string{"MADEBOOK_DB": db, "MADEBOOK_URL": "http://127.0.0.1:1", "MADEBOOK_KEY": "mbk_test",
			"MADEBOOK_MISSION": "billing"}, payload(t, "pre_tool_use_read", "abc123de-nodb"))
		if r.code != 0 {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("the hook touched %s: %v", db, err)
		}
	})
}

// TestHookPreToolUseAgainstTheRealCheck runs the recorded PreToolUse
// payloads through the built hook against a real Madebook, its session in
// each state of the brief: what Claude Code would be allowed and denied.
func TestHookPreToolUseAgainstTheRealCheck(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	a := webtest.NewAPI(t)
	ctx := context.Background()
	mission := a.Kit.Mission(a.Lead, false)
	env := map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": mission}
	// decide runs one payload and answers "deny: <reason>" or "allow".
	decide := func(t *testing.T, env map[string]string, sid, name string) string {
		t.Helper()
		r := runHook(t, bin, env, payload(t, name, sid))
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", name, r.code, r.stderr)
		}
		if r.stdout == "" {
			return "allow"
		}
		_, _, decision, reason := r.answer(t)
		return decision + ": " + reason
	}
	// session opens a fresh Claude session through the hook and returns
	// Claude's id and Madebook's session.
	n := 0
	session := func(t *testing.T, env map[string]string) (string, string) {
		t.Helper()
		n++
		sid := fmt.Sprintf("abc123de-f456-7890-abcd-check%07d", n)
		if r := runHook(t, bin, env, payload(t, "session_start", sid)); r.code != 0 {
			t.Fatalf("SessionStart: exit %d %q", r.code, r.stderr)
		}
		s := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": env["MADEBOOK_MISSION"], "external_id": sid})
		return sid, s["id"].(string)
	}
	secret := "AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY\n" // spelt in parts: no secret in the source
	remediation := func(severity string) func(t *testing.T, s string) {
		return func(t *testing.T, s string) {
			if _, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, s, governance.RemediationInput{Severity: severity,
				Instruction: "Add the missing index.", Files: []string{"db/schema.sql"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name     string
		highRisk bool
		setup    func(t *testing.T, session string)
		state    string
		// want per payload: "allow" or a word the denial must contain.
		want map[string]string
	}{
		{"CONTINUE", false, func(*testing.T, string) {}, "CONTINUE", map[string]string{"pre_tool_use_edit": "allow",
			"pre_tool_use_read": "allow", "pre_tool_use_bash": "allow", "pre_tool_use_multiedit": "allow"}},
		{"HARD_STOP (a secret in source)", false, func(t *testing.T, s string) {
			r := a.Do(http.MethodPost, "/api/v1/sessions/"+s+"/changes", a.AgentKey, map[string]any{
				"files": []map[string]any{{"path": "config/deploy.sh", "content": "#!/bin/sh\n" + secret}}})
			if r.Status != http.StatusOK {
				t.Fatalf("the secret change: %d %s", r.Status, r.Body)
			}
		}, "HARD_STOP", map[string]string{"pre_tool_use_edit": "until a person clears it: tell the user", "pre_tool_use_multiedit": "HARD_STOP",
			"pre_tool_use_write": "Secrets in source", "pre_tool_use_bash": "HARD_STOP", "pre_tool_use_mcp": "HARD_STOP",
			"pre_tool_use_read": "allow", "pre_tool_use_madebook": "allow"}},
		{"BLOCKED (paused)", false, func(t *testing.T, s string) {
			if _, err := a.Kit.Gov.Sessions.Pause(ctx, a.Lead, s, "Legal is reviewing the schema."); err != nil {
				t.Fatal(err)
			}
		}, "BLOCKED", map[string]string{"pre_tool_use_edit": "Legal is reviewing the schema", "pre_tool_use_write": "deny",
			"pre_tool_use_bash": "deny", "pre_tool_use_mcp": "deny", "pre_tool_use_multiedit": "deny", "pre_tool_use_read": "allow",
			"pre_tool_use_madebook": "allow"}},
		{"BLOCKED (plan not approved on a high-risk mission)", true, func(*testing.T, string) {}, "BLOCKED", map[string]string{
			"pre_tool_use_edit": "propose or revise the plan", "pre_tool_use_multiedit": "BLOCKED", "pre_tool_use_bash": "deny",
			"pre_tool_use_read": "allow", "pre_tool_use_madebook": "allow"}},
		{"DECISION_REQUIRED on db/migrations", false, func(t *testing.T, s string) {
			if _, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, s, governance.DecisionInput{Title: "Schema",
				Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}); err != nil {
				t.Fatal(err)
			}
		}, "DECISION_REQUIRED", map[string]string{"pre_tool_use_edit": "Work outside the blocked scope", "pre_tool_use_multiedit": "db/migrations",
			"pre_tool_use_edit_dotdot": "blocked scope", "pre_tool_use_bash_migrations": "blocked scope", "pre_tool_use_bash": "allow",
			"pre_tool_use_write": "allow", "pre_tool_use_read": "allow", "pre_tool_use_madebook": "allow"}},
		{"REMEDIATE", false, remediation("required"), "REMEDIATE", map[string]string{"pre_tool_use_edit": "allow",
			"pre_tool_use_multiedit": "allow", "pre_tool_use_bash": "allow", "pre_tool_use_read": "allow"}},
		{"CONTINUE_WITH_WARNING", false, remediation("advisory"), "CONTINUE_WITH_WARNING", map[string]string{"pre_tool_use_edit": "allow",
			"pre_tool_use_multiedit": "allow", "pre_tool_use_mcp": "allow", "pre_tool_use_read": "allow"}},
	}
	risky := a.Kit.Mission(a.Lead, true)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := env
			if c.highRisk {
				env = map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": risky}
			}
			sid, s := session(t, env)
			c.setup(t, s)
			if got := a.DetailOf(s).Brief.NextAction.String(); got != c.state {
				t.Fatalf("the session is %s, want %s", got, c.state)
			}
			denied := 0
			for name, want := range c.want {
				got := decide(t, env, sid, name)
				if (want == "allow") != (got == "allow") || (want != "allow" && !strings.Contains(got, want)) {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
				if got != "allow" {
					denied++
				}
			}
			// Every denial is on the record: the hook reported the call,
			// the ledger refused it and kept it in the timeline.
			if n := webtest.CountOf(a.Timeline(s), "tool_call.refused"); n != denied {
				t.Errorf("%d tool_call.refused events in the timeline, want %d (one per denial)", n, denied)
			}
		})
	}
}

// TestHookHoldsAStepUntilItsStoppingPointIsAnswered: a Claude Code session
// whose approved plan saves a reading (Vodou-Recall's memory_store) only
// after stopping point 1 is answered "Save". The hook denies the call,
// saying how to get the stopping point answered; the agent asks it on a
// run of its own under the hook run (as the MCP tools start_run and ask
// would), a lead answers, and the call runs and is recorded as the plan's
// step.
func TestHookHoldsAStepUntilItsStoppingPointIsAnswered(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	a := webtest.NewAPI(t)
	mission := a.Kit.Mission(a.Lead, false)
	env := map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": mission}
	const sid = "abc123de-f456-7890-abcd-stoppingpnt"
	start := runHook(t, bin, env, payload(t, "session_start", sid))
	if start.code != 0 {
		t.Fatalf("SessionStart: exit %d %q", start.code, start.stderr)
	}
	s := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": mission, "external_id": sid})["id"].(string)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/get_cpu_info", a.AdminTok, map[string]any{"side_effecting": false})
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/plan", a.AgentKey, map[string]any{
		"summary":       "Probe, then ask before saving.",
		"initial_steps": []any{map[string]any{"id": "cpu", "server": "mcp-monitor", "tool": "get_cpu_info", "side_effecting": false}},
		"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Save this reading?", "options": map[string]any{
			"1": map[string]any{"label": "Save", "steps": []any{map[string]any{"id": "store", "server": "Vodou-Recall", "tool": "memory_store"}}},
			"2": map[string]any{"label": "Discard", "steps": []any{map[string]any{"id": "discard", "server": "fs", "tool": "rm"}}},
		}}},
	})
	r := runHook(t, bin, env, payload(t, "pre_tool_use_memory_store", sid))
	_, _, decision, reason := r.answer(t)
	run := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/runs", a.AgentKey, map[string]any{"name": "claude-code", "external_id": sid})["id"].(string)
	if _, text, _, _ := start.answer(t); !strings.Contains(text, "on run "+run) || !strings.Contains(text, `start_run with "parent": "`+run+`"`) {
		t.Errorf("SessionStart does not say how to ask a stopping point under the hook run %s: %q", run, text)
	}
	for _, says := range []string{`step "store"`, "stopping point 1", "Save this reading?", "option 1 (Save)", `"parent": "` + run + `"`, "start_run", "ask", "wait for the answer"} {
		if decision != "deny" || !strings.Contains(reason, says) {
			t.Errorf("%s %q does not say %q", decision, reason, says)
		}
	}
	if n := webtest.CountOf(a.Timeline(s), "tool_call.refused"); n != 1 {
		t.Errorf("%d tool_call.refused events, want the denial on the record", n)
	}
	asking := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/runs", a.AgentKey,
		map[string]any{"name": "stopping point 1", "parent": run})["id"].(string)
	ask := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+asking+"/asks", a.AgentKey, map[string]any{
		"prompt": "Save this reading?", "options": map[string]string{"1": "Save", "2": "Discard"}, "stopping_point": 1})
	if r := runHook(t, bin, env, payload(t, "pre_tool_use_memory_store", sid)); !strings.Contains(r.stdout, "step_not_released") &&
		!strings.Contains(r.stdout, "lies behind stopping point 1") {
		t.Errorf("while the question waits: %q", r.stdout)
	}
	if r := runHook(t, bin, env, payload(t, "pre_tool_use_write", sid)); r.stdout != "" {
		t.Errorf("while the question waits, other work goes on: %q", r.stdout)
	}
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})
	if r := runHook(t, bin, env, payload(t, "pre_tool_use_memory_store", sid)); r.code != 0 || r.stdout != "" {
		t.Fatalf("after Save: exit %d, %q", r.code, r.stdout)
	}
	post := strings.Replace(payload(t, "pre_tool_use_memory_store", sid), `"PreToolUse"`, `"PostToolUse"`, 1)
	if r := runHook(t, bin, env, post); r.code != 0 || r.stdout != "" {
		t.Fatalf("PostToolUse: exit %d, %q", r.code, r.stdout)
	}
	var step string
	if err := a.Kit.SQL().QueryRow("SELECT step FROM tool_calls WHERE run_id = ? AND tool = 'memory_store'", run).Scan(&step); err != nil || step != "store" {
		t.Errorf("the call is recorded as step %q (%v), want store", step, err)
	}
}
