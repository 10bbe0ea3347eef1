package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// stateStatus is the exit status the contract gives each next_action
// ("" for an answer that names none) for brief and --exit-on-state,
// written out here so that the test does not read it from the code under
// test. Every other successful call exits 0.
var stateStatus = map[string]int{"": 0, "CONTINUE": 0, "CONTINUE_WITH_WARNING": 0,
	"REMEDIATE": 3, "DECISION_REQUIRED": 4, "BLOCKED": 5, "HARD_STOP": 6}

// agentEnv is the environment of `madebook agent` on the test server as
// a's agent, on session.
func agentEnv(a *webtest.API, session string) func(string) string {
	return envOf(map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": session})
}

// ran is what one `madebook agent` run did: its stdout, and the exit
// status and stderr main would give it.
type ran struct {
	out, stderr string
	code        int
}

// agentCLI runs `madebook agent args…` through run, as main does.
func agentCLI(t *testing.T, getenv func(string) string, stdin string, args ...string) ran {
	t.Helper()
	out, err := cli(t, getenv, stdin, append([]string{"agent"}, args...)...)
	r := ran{out: out}
	if err != nil {
		r.code, r.stderr = outcome(err)
	}
	return r
}

// object decodes the run's stdout, which must be one JSON object.
func (r ran) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.out), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s (stderr %q)", err, webtest.Short([]byte(r.out)), r.stderr)
	}
	return m
}

// mustAgent runs an agent call that must succeed, and checks its exit
// status: the one its answer's next_action gives (0 for none) for brief
// and with --exit-on-state, else 0 whatever the state. It returns the
// answer.
func mustAgent(t *testing.T, getenv func(string) string, stdin string, args ...string) map[string]any {
	t.Helper()
	r := agentCLI(t, getenv, stdin, args...)
	if r.code == 1 || r.code == 2 {
		t.Fatalf("madebook agent %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	m := r.object(t)
	next, _ := m["next_action"].(string)
	want, ok := stateStatus[next]
	if !byState(args) {
		want = 0
	}
	if !ok || r.code != want {
		t.Errorf("madebook agent %s: exit %d for next_action %q, want %d", strings.Join(args, " "), r.code, next, want)
	}
	return m
}

// byState reports whether the agent command line exits by its answer's
// next_action: brief, unless --exit-on-state=false, and any command
// with --exit-on-state.
func byState(args []string) bool {
	by := len(args) > 0 && args[0] == "brief"
	for _, a := range args {
		switch a {
		case "--exit-on-state", "--exit-on-state=true":
			by = true
		case "--exit-on-state=false":
			by = false
		}
	}
	return by
}

// awsKeyID is AWS's documented example key id, split so that no secret
// scanner mistakes this file for a leak.
const awsKeyID = "AKIA" + "IOSFODNN7" + "EXAMPLE"

func TestAgentBriefExitsByTheState(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	remediation := func(severity string) func(string) {
		return func(s string) {
			a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/remediations", a.LeadTok,
				map[string]any{"severity": severity, "instruction": "Rename the helper.", "files": []string{"web/x.go"}})
		}
	}
	for _, c := range []struct {
		name     string
		highRisk bool
		setup    func(session string)
		state    string
		code     int
	}{
		{"a session with nothing in its way continues", false, func(string) {}, "CONTINUE", 0},
		{"an advisory remediation continues with a warning", false, remediation("advisory"), "CONTINUE_WITH_WARNING", 0},
		{"a lead's required remediation remediates", false, remediation("required"), "REMEDIATE", 3},
		{"an open decision requires a decision", false, func(s string) {
			a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/decisions", a.AgentKey,
				map[string]any{"title": "Drop the table?", "question": "May I drop it?", "blocked_scope": []string{"db/"}, "allowed_scope": []string{}})
		}, "DECISION_REQUIRED", 4},
		{"a paused session is blocked", false, func(s string) {
			a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/pause", a.LeadTok, map[string]any{"reason": "Hold on."})
		}, "BLOCKED", 5},
		{"a high-risk mission's plan awaiting approval is blocked", true, func(s string) {
			a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/plan", a.AgentKey, map[string]any{"summary": "Migrate."})
		}, "BLOCKED", 5},
		{"a secret in the change is a hard stop", false, func(s string) {
			a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/changes", a.AgentKey, map[string]any{
				"files": []map[string]string{{"path": "config.go", "content": "const key = \"" + awsKeyID + "\"\n"}}})
		}, "HARD_STOP", 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := a.Session(c.highRisk)
			c.setup(s)
			r := agentCLI(t, agentEnv(a, s), "", "brief")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, c.code, r.stderr)
			}
			b := r.object(t)
			if b["next_action"] != c.state || b["session"] != s || b["brief_id"] == "" || b["protocol"] == "" {
				t.Errorf("the brief printed is not the session's %s brief: %s", c.state, webtest.Short([]byte(r.out)))
			}
			if !strings.HasPrefix(r.out, "{\n  \"") {
				t.Errorf("the brief is not printed indented: %s", webtest.Short([]byte(r.out)))
			}
			if c.code != 0 && !strings.HasPrefix(r.stderr, "madebook agent: "+c.state+": ") {
				t.Errorf("stderr %q, want the state and its reason", r.stderr)
			}
			if c.code == 0 && r.stderr != "" {
				t.Errorf("stderr %q, want nothing", r.stderr)
			}
		})
	}
}

func TestAgentSubcommandsRoundTrip(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	mission := a.Kit.Mission(a.Lead, false)
	env := agentEnv(a, "")

	open := mustAgent(t, env, "", "session", "open", "--mission", mission, "--title", "Shell work", "--agent", "sh")
	s, _ := open["id"].(string)
	if s == "" || open["mission"] != mission || open["title"] != "Shell work" || open["agent"] != a.Agent.KeyName || open["agent_label"] != "sh" {
		t.Fatalf("session open printed %v", open)
	}
	env = agentEnv(a, s)

	t.Run("event moves the lifecycle, with a payload", func(t *testing.T) {
		mustAgent(t, env, "", "event", "user.message.created")
		ev := mustAgent(t, env, "", "event", "IntentClassified", "--payload", `{"intent":"task"}`)
		if ev["lifecycle"] != "DELEGATING" {
			t.Errorf("lifecycle %v, want DELEGATING: %v", ev["lifecycle"], ev)
		}
	})
	t.Run("plan proposes the summary, approved on a mission that is not high-risk", func(t *testing.T) {
		p := mustAgent(t, env, "", "plan", "--summary", "Add the endpoint.")
		if p["status"] != "approved" {
			t.Errorf("plan %v", p)
		}
		p = mustAgent(t, env, `{"summary":"Add it, in steps.","initial_steps":[{"id":"read","tool":"Read"}]}`, "plan", "--file", "-")
		if p["status"] != "approved" {
			t.Errorf("plan from stdin %v", p)
		}
	})
	var run string
	t.Run("run start, call, ask and run finish keep the ledger", func(t *testing.T) {
		r := mustAgent(t, env, "", "run", "start", "--name", "build")
		run, _ = r["id"].(string)
		if run == "" || r["status"] != "running" {
			t.Fatalf("run start printed %v", r)
		}
		child := mustAgent(t, env, "", "run", "start", "--name", "lint", "--parent", run)
		if child["id"] == "" || child["id"] == run {
			t.Errorf("child run %v", child)
		}
		askFile := filepath.Join(t.TempDir(), "ask.json")
		if err := os.WriteFile(askFile, []byte(`{"prompt":"Lint the tests too?","options":{"1":"Yes","2":"No"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if parked := mustAgent(t, env, "", "ask", child["id"].(string), "--file", askFile); parked["run_status"] != "parked" {
			t.Errorf("ask from a file printed %v", parked)
		}
		call := mustAgent(t, env, "", "call", run, "--tool", "Read", "--server", "claude-code", "--side-effecting=false",
			"--started-at", "2026-11-29T12:00:00Z")
		if call["tool"] != "Read" || call["side_effecting"] != false {
			t.Errorf("call printed %v", call)
		}
		ask := mustAgent(t, env, "", "ask", run, "--prompt", "Deploy now?", "--option", "Yes", "--option", "No")
		if ask["run_status"] != "parked" {
			t.Fatalf("ask printed %v", ask)
		}
		id, _ := ask["id"].(string)
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+id+"/answer", a.LeadTok, map[string]any{"option": "1"})
		done := mustAgent(t, env, "", "run", "finish", run, "--status", "complete")
		if done["status"] != "complete" {
			t.Errorf("run finish printed %v", done)
		}
	})
	t.Run("change reports files named on the command line, or JSON from stdin", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "handler.go")
		if err := os.WriteFile(path, []byte("package web\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ch := mustAgent(t, env, "", "change", path)
		if _, ok := ch["risk"].(map[string]any); !ok {
			t.Errorf("change printed %v", ch)
		}
		ch = mustAgent(t, env, `{"files":[{"path":"web/x.go","content":"package web\n"}],"dependencies":["github.com/x/y"]}`, "change", "--file", "-")
		if _, ok := ch["violations"]; !ok {
			t.Errorf("change from stdin printed %v", ch)
		}
	})
	t.Run("evidence and complete answer the evidence gate", func(t *testing.T) {
		ev := mustAgent(t, env, "", "evidence", "--kind", "tests", "--passed", "--detail", "go test ./...")
		if ev["kind"] != "tests" || ev["passed"] != true {
			t.Errorf("evidence printed %v", ev)
		}
		done := mustAgent(t, env, "", "complete")
		if done["evidence_gate"] != "satisfied" && done["evidence_gate"] != "unsatisfied" {
			t.Errorf("complete printed %v", done)
		}
	})
	t.Run("decide opens a gate the next brief requires", func(t *testing.T) {
		d := mustAgent(t, env, "", "decide", "--title", "Drop the table?", "--question", "May I drop legacy_billing?",
			"--proposal", "Drop it.", "--blocked-scope", "db/migrations", "--blocked-scope", "db/schema.sql", "--allowed-scope", "web/")
		if d["status"] != "open" || !strings.HasPrefix(d["ref"].(string), "DEC-") {
			t.Fatalf("decide printed %v", d)
		}
		r := agentCLI(t, env, "", "brief")
		if r.code != 4 {
			t.Fatalf("brief exit %d, want 4 (DECISION_REQUIRED); stderr %q", r.code, r.stderr)
		}
		if got := r.object(t)["blocked_scope"]; len(got.([]any)) != 2 {
			t.Errorf("blocked scope %v, want the two paths given", got)
		}
	})
	t.Run("brief --ack acknowledges what the brief before delivered", func(t *testing.T) {
		s := a.Session(false)
		d, err := a.Kit.Gov.Decisions.Open(t.Context(), a.Agent, s, governance.DecisionInput{Title: "T", Question: "Q?"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Kit.Gov.Decisions.Resolve(t.Context(), a.Lead, d.Ref, "Yes", "Go on."); err != nil {
			t.Fatal(err)
		}
		first := mustAgent(t, env, "", "brief", "--session", s)
		if len(first["resolutions"].([]any)) != 1 {
			t.Fatalf("the first brief delivers %v", first["resolutions"])
		}
		mustAgent(t, env, "", "brief", "--session", s, "--ack", first["brief_id"].(string))
		if got := a.DetailOf(s).Decisions[0]; got.AckedAt == nil {
			t.Fatalf("the resolution is not acknowledged: %+v", got)
		}
		if r := agentCLI(t, env, "", "brief", "--session", s, "--ack", "DEC-001"); r.code != 1 || !strings.Contains(r.stderr, "invalid_ack") {
			t.Fatalf("a bad ack: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("the session flag overrides MADEBOOK_SESSION", func(t *testing.T) {
		other := a.Session(false)
		b := mustAgent(t, env, "", "brief", "--session", other)
		if b["session"] != other {
			t.Errorf("brief of %v, want %s", b["session"], other)
		}
	})
}

func TestAgentFailures(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := a.Session(false)

	t.Run("an API error exits 1 with its code and message", func(t *testing.T) {
		r := agentCLI(t, agentEnv(a, s), "", "event", "task.completed", "--payload", `{"task":"t1"}`)
		direct := a.Do(http.MethodPost, "/api/v1/sessions/"+s+"/events", a.AgentKey,
			map[string]any{"name": "task.completed", "payload": map[string]string{"task": "t1"}})
		var env struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(direct.Body, &env); err != nil || env.Error.Code == "" {
			t.Fatalf("the API did not refuse the event: %d %s", direct.Status, direct.Body)
		}
		if r.code != 1 || r.stderr != "madebook agent: "+env.Error.Code+": "+env.Error.Message {
			t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, env.Error.Code)
		}
		var printed, sent any
		if err := json.Unmarshal([]byte(r.out), &printed); err != nil {
			t.Fatalf("stdout is not the API's error JSON: %q", r.out)
		}
		if err := json.Unmarshal(direct.Body, &sent); err != nil {
			t.Fatal(err)
		}
		if p, q := fmt.Sprint(printed), fmt.Sprint(sent); p != q {
			t.Errorf("stdout %s, the API sent %s", p, q)
		}
	})
	t.Run("another key's session is refused", func(t *testing.T) {
		env := envOf(map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.OtherKey, "MADEBOOK_SESSION": s})
		if r := agentCLI(t, env, "", "brief"); r.code != 1 || !strings.HasPrefix(r.stderr, "madebook agent: ") {
			t.Errorf("exit %d, stderr %q; want 1 and the API's error", r.code, r.stderr)
		}
	})
	t.Run("a wrong key is refused", func(t *testing.T) {
		env := envOf(map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": "mbk_wrong", "MADEBOOK_SESSION": s})
		if r := agentCLI(t, env, "", "brief"); r.code != 1 || !strings.Contains(r.stderr, "madebook agent: ") {
			t.Errorf("exit %d, stderr %q; want 1 and the API's error", r.code, r.stderr)
		}
	})
	t.Run("an unreachable Madebook exits 1 saying so", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		env := envOf(map[string]string{"MADEBOOK_URL": "http://" + addr, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": s})
		r := agentCLI(t, env, "", "brief")
		if r.code != 1 || !strings.Contains(r.stderr, "Madebook does not answer at http://"+addr) {
			t.Errorf("exit %d, stderr %q; want 1 and the URL", r.code, r.stderr)
		}
		if e, _ := r.object(t)["error"].(map[string]any); e["code"] != "not_answered" || !strings.Contains(e["message"].(string), addr) {
			t.Errorf("stdout %q, want the error's JSON", r.out)
		}
	})
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		code string
		want string
	}{
		{"no MADEBOOK_KEY", map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_SESSION": s}, []string{"brief"}, "key_missing", "MADEBOOK_KEY is not set"},
		{"no session", map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey}, []string{"complete"}, "session_missing", "no session"},
		{"a URL that is not http", map[string]string{"MADEBOOK_URL": "ftp://x", "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": s}, []string{"brief"}, "invalid_url", "is not an http://"},
		{"a plan file that is not JSON", map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": s},
			[]string{"plan", "--file", "-"}, "malformed_json", "--file - does not hold one JSON object"},
		{"a plan file that is not there", map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": s},
			[]string{"plan", "--file", "no/such/plan.json"}, "unreadable_file", "read --file no/such/plan.json"},
		{"a changed file that is not there", map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_SESSION": s},
			[]string{"change", "no/such/file.go"}, "unreadable_file", "read no/such/file.go"},
	} {
		t.Run(c.name+" is an error, not a usage mistake: exit 1", func(t *testing.T) {
			r := agentCLI(t, envOf(c.env), "not json", c.args...)
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "Usage:") {
				t.Errorf("exit %d, stderr %q; want 1 and %q without the usage", r.code, r.stderr, c.want)
			}
			if e, _ := r.object(t)["error"].(map[string]any); e["code"] != c.code || !strings.Contains(e["message"].(string), c.want) {
				t.Errorf("stdout %q, want the error's JSON with %s", r.out, c.code)
			}
		})
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"a missing operand", nil, []string{"run", "finish", "--status", "complete"}, "needs the RUN id"},
		{"a stray operand", nil, []string{"brief", "extra"}, "unexpected argument \"extra\""},
		{"a required flag left out", nil, []string{"decide", "--title", "T"}, "decide needs --title and --question"},
		{"a call names its server", nil, []string{"call", "run_1", "--tool", "Edit"}, "call needs --server and --tool"},
		{"evidence says passed or failed", nil, []string{"evidence", "--kind", "tests"}, "--passed or --passed=false"},
		{"a payload that is not JSON", nil, []string{"event", "x", "--payload", "{"}, "--payload is not JSON"},
		{"a required flag left out comes before the environment", map[string]string{}, []string{"session", "open"}, "session open needs --mission"},
		{"a bad flag value comes before the environment", map[string]string{}, []string{"call", "run_1", "--server", "s", "--tool", "t", "--started-at", "now"}, "--started-at \"now\""},
		{"an unknown sub-command", nil, []string{"frobnicate"}, "unknown command \"frobnicate\""},
		{"no sub-command", nil, nil, "agent needs a sub-command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := agentEnv(a, s)
			if c.env != nil {
				env = envOf(c.env)
			}
			r := agentCLI(t, env, "not json", c.args...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "Usage:") {
				t.Errorf("exit %d, stderr %q; want 2, %q and the usage", r.code, r.stderr, c.want)
			}
		})
	}
}

// TestAgentReadsAnyAnswer checks the answers no Madebook of today gives
// but a proxy, or a later Madebook, may: each reply's next_action decides.
func TestAgentReadsAnyAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		status int
		body   string
		flags  []string // after evidence's own
		code   int
		stderr string
	}{
		{"a success that names no next_action exits 0", 201, `{"kind":"tests"}`, nil, 0, ""},
		{"a reply's CONTINUE_WITH_WARNING exits 0", 200, `{"next_action":"CONTINUE_WITH_WARNING","reason":"Risk is high."}`, nil, 0, ""},
		{"a reply's REMEDIATE exits 0: the call succeeded", 201, `{"ref":"DEC-001","next_action":"REMEDIATE","reason":"Fix it."}`, nil, 0, ""},
		{"a reply's HARD_STOP exits 0: the call succeeded", 200, `{"next_action":"HARD_STOP","reason":"Stop."}`, nil, 0, ""},
		{"with --exit-on-state a reply's REMEDIATE exits 3", 201, `{"ref":"DEC-001","next_action":"REMEDIATE","reason":"Fix it."}`,
			[]string{"--exit-on-state"}, 3, "madebook agent: REMEDIATE: Fix it."},
		{"with --exit-on-state a reply's HARD_STOP exits 6", 200, `{"next_action":"HARD_STOP","reason":"Stop."}`,
			[]string{"--exit-on-state"}, 6, "madebook agent: HARD_STOP: Stop."},
		{"with --exit-on-state a reply's CONTINUE_WITH_WARNING exits 0", 200, `{"next_action":"CONTINUE_WITH_WARNING","reason":"Risk."}`,
			[]string{"--exit-on-state"}, 0, ""},
		{"a next_action that is no state is an error", 200, `{"next_action":"PANIC"}`, nil, 1, "none of the six states"},
		{"an answer that is not the API's is an error", 502, "<html>Bad gateway</html>", nil, 1, "HTTP 502, not an answer of Madebook's API"},
		{"a success that is not JSON is an error", 200, "ok", nil, 1, "the answer is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			requests := make(chan *http.Request, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests <- r
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			env := envOf(map[string]string{"MADEBOOK_URL": srv.URL + "/", "MADEBOOK_KEY": "mbk_k", "MADEBOOK_SESSION": "s 1"})
			r := agentCLI(t, env, "", append([]string{"evidence", "--kind", "tests", "--passed=false"}, c.flags...)...)
			if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || (c.stderr == "" && r.stderr != "") {
				t.Errorf("exit %d, stderr %q; want %d, %q", r.code, r.stderr, c.code, c.stderr)
			}
			got := <-requests
			if got.URL.EscapedPath() != "/api/v1/sessions/s%201/evidence" || got.Header.Get("Authorization") != "Bearer mbk_k" ||
				got.Header.Get("Content-Type") != "application/json" {
				t.Errorf("the request was not the call: %+v", got)
			}
		})
	}
}

// TestAgentExitsByStateOnlyWhenAsked: on a paused session every answer
// says BLOCKED; brief exits 5 for it, the other calls 0 (the state is in
// their JSON) unless given --exit-on-state, and brief exits 0 with
// --exit-on-state=false.
func TestAgentExitsByStateOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := a.Session(false)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/pause", a.LeadTok, map[string]any{"reason": "Hold on."})
	env := agentEnv(a, s)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"brief"}, 5},
		{[]string{"brief", "--exit-on-state=false"}, 0},
		{[]string{"complete"}, 0},
		{[]string{"complete", "--exit-on-state"}, 5},
		{[]string{"evidence", "--kind", "tests", "--passed"}, 0},
		{[]string{"evidence", "--kind", "tests", "--passed", "--exit-on-state"}, 5},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := agentCLI(t, env, "", c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, c.code, r.stderr)
			}
			if next := r.object(t)["next_action"]; next != "BLOCKED" {
				t.Errorf("next_action %v, want BLOCKED in the JSON either way", next)
			}
			if want := "madebook agent: BLOCKED: "; (c.code == 5) != strings.HasPrefix(r.stderr, want) || (c.code == 0 && r.stderr != "") {
				t.Errorf("stderr %q; want %q only for exit 5", r.stderr, want)
			}
		})
	}
}

// TestAgentExitStatusesFromTheBinary runs the built binary: main turns
// the outcomes into exit statuses and stderr.
func TestAgentExitStatusesFromTheBinary(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	bin := buildMadebook(t)
	s := a.Session(false)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/pause", a.LeadTok, map[string]any{"reason": "Hold on."})
	for _, c := range []struct {
		args   []string
		key    string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"agent", "--help"}, "", 0, "Exit status:", ""},
		{[]string{"agent", "brief"}, a.AgentKey, 5, `"next_action": "BLOCKED"`, "madebook agent: BLOCKED: "},
		{[]string{"agent", "complete"}, a.AgentKey, 0, `"next_action": "BLOCKED"`, ""},
		{[]string{"agent", "complete", "--exit-on-state"}, a.AgentKey, 5, `"next_action": "BLOCKED"`, "madebook agent: BLOCKED: "},
		{[]string{"agent", "brief"}, "", 1, `"code": "key_missing"`, "madebook agent: MADEBOOK_KEY is not set"},
		{[]string{"agent", "brief", "--bogus"}, a.AgentKey, 2, "", "Usage:"},
		{[]string{"agent", "brief", "--session", "nope"}, a.AgentKey, 1, `"code": "session_not_found"`, "madebook agent: session_not_found: "},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := runBinary(t, bin, []string{"MADEBOOK_URL=" + a.Srv.URL, "MADEBOOK_KEY=" + c.key, "MADEBOOK_SESSION=" + s}, c.args...)
			if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, webtest.Short([]byte(stdout.String())), stderr.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestAgentRunsAPlanStepByStep drives the executor gate from a shell: a
// run of the approved plan, a call naming its step and paths, an ask that
// is the plan's stopping point, and a step refused until it is answered.
func TestAgentRunsAPlanStepByStep(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	s := a.Session(false)
	env := agentEnv(a, s)
	if r := agentCLI(t, env, "", "run", "start", "--name", "p", "--plan"); r.code != 1 || !strings.Contains(r.stderr, "no_approved_plan") {
		t.Fatalf("a plan run with no plan: exit %d, stderr %q", r.code, r.stderr)
	}
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+s+"/plan", a.AgentKey, map[string]any{"summary": "Probe, then ask.",
		"initial_steps": []any{map[string]any{"id": "cpu", "side_effecting": false}},
		"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Save it?", "options": map[string]any{
			"1": map[string]any{"label": "Save", "steps": []any{map[string]any{"id": "store"}}}}}}})
	run := mustAgent(t, env, "", "run", "start", "--name", "graph-ask-demo", "--plan")["id"].(string)
	call := mustAgent(t, env, "", "call", run, "--server", "claude-code", "--tool", "Edit", "--step", "cpu", "--path", "web/app.js")
	if call["step"] != "cpu" || fmt.Sprint(call["paths"]) != "[web/app.js]" {
		t.Errorf("call printed %v", call)
	}
	if r := agentCLI(t, env, "", "call", run, "--server", "fs", "--tool", "write", "--step", "store"); r.code != 1 ||
		!strings.Contains(r.stderr, "step_not_released") {
		t.Errorf("a step behind its stopping point: exit %d, stderr %q", r.code, r.stderr)
	}
	ask := mustAgent(t, env, "", "ask", run, "--prompt", "Save it?", "--option", "Save", "--stopping-point", "1")
	if ask["stopping_point"] != float64(1) {
		t.Fatalf("ask printed %v", ask)
	}
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask["id"].(string)+"/answer", a.LeadTok, map[string]any{"option": "1"})
	mustAgent(t, env, "", "call", run, "--server", "fs", "--tool", "write", "--step", "store")
}

// TestAgentReattachesByExternalID: session open and run start take
// --external-id, and the same id answers what it opened.
func TestAgentReattachesByExternalID(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	slug := a.Kit.Mission(a.Lead, false)
	env := agentEnv(a, "")
	first := mustAgent(t, env, "", "session", "open", "--mission", slug, "--external-id", "cc-42")
	again := mustAgent(t, env, "", "session", "open", "--mission", slug, "--external-id", "cc-42")
	if first["id"] == nil || again["id"] != first["id"] {
		t.Fatalf("the same external id opened %v, then %v", first["id"], again["id"])
	}
	if other := mustAgent(t, env, "", "session", "open", "--mission", slug); other["id"] == first["id"] {
		t.Fatal("a session without an external id re-attached")
	}
	env = agentEnv(a, first["id"].(string))
	run := mustAgent(t, env, "", "run", "start", "--name", "sub", "--external-id", "sub-1")
	runAgain := mustAgent(t, env, "", "run", "start", "--name", "sub", "--external-id", "sub-1")
	if run["id"] == nil || runAgain["id"] != run["id"] {
		t.Fatalf("the same external id started run %v, then %v", run["id"], runAgain["id"])
	}
	r := agentCLI(t, env, "", "run", "start", "--name", "sub", "--plan", "--external-id", "sub-2")
	if e, _ := r.object(t)["error"].(map[string]any); r.code != 1 || e["code"] != "plan_with_external_id" {
		t.Errorf("exit %d, stdout %q; want 1 and plan_with_external_id", r.code, r.out)
	}
}
