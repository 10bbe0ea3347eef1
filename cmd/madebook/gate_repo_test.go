package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// repository makes a git repository on disk as the gate's probes found it
// porous: db/migrations (to be blocked), web, a symlink mig ->
// db/migrations, and two scripts, one writing into the scope.
func repository(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	for name, text := range map[string]string{
		"db/migrations/0001.sql":   "CREATE TABLE billing (id int);\n",
		"web/app.js":               "console.log('hi')\n",
		"scripts/migrate.sh":       "#!/bin/sh\nrm -f db/migrations/0001.sql\n",
		"scripts/test.sh":          "#!/bin/sh\ngo test ./...\n",
		"Makefile":                 "test:\n\techo ok\n",
		"db/migrations_old/x.sql":  "old\n",
		"docs/notes.md":            "notes\n",
		"web/fixtures/.gitkeep":    "",
		"db/migrations/README.txt": "migrations\n",
	} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("db/migrations", filepath.Join(repo, "mig")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@x", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return repo
}

// toolEvent is a Claude Code PreToolUse or PostToolUse payload, shaped as
// 2.1.328 sends it.
func toolEvent(t *testing.T, event, sid, cwd, tool string, in map[string]any, id string) string {
	t.Helper()
	m := map[string]any{"session_id": sid, "transcript_path": "/tmp/" + sid + ".jsonl", "cwd": cwd, "permission_mode": "acceptEdits",
		"hook_event_name": event, "tool_name": tool, "tool_input": in, "tool_use_id": id}
	if event != "PreToolUse" {
		m["tool_response"] = map[string]any{"stdout": "", "stderr": "", "interrupted": false}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHookGateHoldsInARealRepository runs the built hook, with Claude
// Code's payloads and environment, over a real repository whose
// db/migrations an open gate blocks: every probe that got through before
// is denied, the allowed scope still works, and a write into the scope by a
// command the parser allowed is caught as a breach.
func TestHookGateHoldsInARealRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Parallel()
	bin := buildMadebook(t)
	a := webtest.NewAPI(t)
	repo := repository(t)
	home := filepath.Dir(repo)
	mission := a.Kit.Mission(a.Lead, false)
	env := map[string]string{"MADEBOOK_URL": a.Srv.URL, "MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": mission,
		"CLAUDE_PROJECT_DIR": repo, "HOME": home, "TMPDIR": t.TempDir()}
	sid := "5e551011-0000-4000-8000-00000000ga7e"
	start := payload(t, "session_start", sid)
	start = strings.ReplaceAll(start, `"cwd":"/home/dev/billing"`, `"cwd":`+quote(repo))
	if r := runHook(t, bin, env, start); r.code != 0 {
		t.Fatalf("SessionStart: exit %d %q", r.code, r.stderr)
	}
	s := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": mission, "external_id": sid})
	session := s["id"].(string)
	if got := a.DetailOf(session).Root; got != repo {
		t.Fatalf("the session's root is %q, want %q (CLAUDE_PROJECT_DIR)", got, repo)
	}
	if _, err := a.Kit.Gov.Decisions.Open(t.Context(), a.Agent, session, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	pre := func(t *testing.T, cwd, tool string, in map[string]any) string {
		t.Helper()
		n++
		r := runHook(t, bin, env, toolEvent(t, "PreToolUse", sid, cwd, tool, in, fmt.Sprintf("toolu_%04d", n)))
		if r.code != 0 {
			t.Fatalf("PreToolUse: exit %d %q", r.code, r.stderr)
		}
		if r.stdout == "" {
			return "allow"
		}
		_, _, decision, reason := r.answer(t)
		return decision + ": " + reason
	}
	db, web := filepath.Join(repo, "db"), filepath.Join(repo, "web")
	sh := func(cmd string) map[string]any { return map[string]any{"command": cmd, "description": "probe"} }
	denied := []struct {
		name, cwd, tool string
		in              map[string]any
	}{
		{"cd db, then Write", db, "Write", map[string]any{"file_path": filepath.Join(db, "migrations/0002.sql"), "content": "x"}},
		{"cd db, then Write relative", db, "Write", map[string]any{"file_path": "migrations/0002.sql", "content": "x"}},
		{"an absolute path from web", web, "Edit", map[string]any{"file_path": filepath.Join(repo, "db/migrations/0001.sql"), "old_string": "a", "new_string": "b"}},
		{"../ from web", web, "Edit", map[string]any{"file_path": "../db/migrations/0001.sql", "old_string": "a", "new_string": "b"}},
		{"../repo from the root", repo, "Write", map[string]any{"file_path": "../repo/db/migrations/x.sql", "content": "x"}},
		{"through the symlink mig", repo, "Edit", map[string]any{"file_path": filepath.Join(repo, "mig/0001.sql"), "old_string": "a", "new_string": "b"}},
		{"another case", repo, "Write", map[string]any{"file_path": filepath.Join(repo, "DB/Migrations/x.sql"), "content": "x"}},
		{"backslashes", repo, "Write", map[string]any{"file_path": `db\migrations\x.sql`, "content": "x"}},
		{"move_file's destination", repo, "mcp__filesystem__move_file", map[string]any{"source": "web/app.js", "destination": "db/migrations/x.sql"}},
		{"git_add's files", repo, "mcp__git__git_add", map[string]any{"repo_path": repo, "files": []string{"db/migrations/x.sql"}}},
		{"filePath", repo, "mcp__ide__write", map[string]any{"filePath": "db/migrations/x.sql"}},
		{"a path array", repo, "mcp__fs__touch", map[string]any{"path": []string{"db/migrations/x.sql"}}},
		{"Bash: cd db && echo > migrations", repo, "Bash", sh("cd db && echo x > migrations/3.sql")},
		{"Bash: after cd db", db, "Bash", sh("echo x > migrations/3.sql")},
		{"Bash: a loop over a glob", repo, "Bash", sh("for d in db/mig*; do touch $d/7.sql; done")},
		{"Bash: rm -rf db", repo, "Bash", sh("rm -rf db")},
		{"Bash: mv db old_db", repo, "Bash", sh("mv db old_db")},
		{"Bash: quotes", repo, "Bash", sh(`rm "db"/migrations/x.sql`)},
		{"Bash: escapes", repo, "Bash", sh(`rm db\/migrations/x.sql`)},
		{"Bash: a glued -o", repo, "Bash", sh("sort -odb/migrations/x.sql web/app.js")},
		{"Bash: ~", repo, "Bash", sh("rm ~/repo/db/migrations/0001.sql")},
		{"Bash: $HOME", repo, "Bash", sh("rm $HOME/repo/db/migrations/0001.sql")},
		{"Bash: ../repo", repo, "Bash", sh("rm ../repo/db/migrations/0001.sql")},
		{"Bash: git checkout -- .", repo, "Bash", sh("git checkout -- .")},
		{"Bash: through the symlink", repo, "Bash", sh("rm mig/0001.sql")},
		{"Bash: a glob through the symlink", repo, "Bash", sh("rm mi?/*.sql")},
		{"Bash: a script that writes into the scope", repo, "Bash", sh("bash scripts/migrate.sh")},
		{"Bash: an environment variable", repo, "Bash", sh("rm -f $TARGET")},
	}
	for _, tc := range denied {
		t.Run("denied/"+tc.name, func(t *testing.T) {
			if got := pre(t, tc.cwd, tc.tool, tc.in); !strings.HasPrefix(got, "deny: ") || !strings.Contains(got, "db/migrations") {
				t.Errorf("%q", got)
			}
		})
	}
	allowed := []struct {
		name, cwd, tool string
		in              map[string]any
	}{
		{"a Write outside the scope", repo, "Write", map[string]any{"file_path": filepath.Join(repo, "web/new.js"), "content": "x"}},
		{"a Write after cd db, outside the scope", db, "Write", map[string]any{"file_path": "migrations_old/y.sql", "content": "x"}},
		{"cat in the scope", repo, "Bash", sh("cat db/migrations/0001.sql")},
		{"git diff", repo, "Bash", sh("git diff")},
		{"make test", repo, "Bash", sh("make test")},
		{"a script that writes nothing there", repo, "Bash", sh("sh scripts/test.sh")},
		{"rm outside the scope", repo, "Bash", sh("rm -f docs/notes.md")},
		{"Read in the scope", repo, "Read", map[string]any{"file_path": filepath.Join(repo, "db/migrations/0001.sql")}},
	}
	for _, tc := range allowed {
		t.Run("allowed/"+tc.name, func(t *testing.T) {
			if got := pre(t, tc.cwd, tc.tool, tc.in); got != "allow" {
				t.Errorf("%q", got)
			}
		})
	}
	if t.Failed() {
		return
	}
	// A command the parser allowed writes into the scope anyway (a make
	// target, say): the hook noted the scope before, and compares after.
	t.Run("breach", func(t *testing.T) {
		cmd := sh("make fixtures")
		if got := pre(t, repo, "Bash", cmd); got != "allow" {
			t.Fatalf("make fixtures: %q", got)
		}
		id := fmt.Sprintf("toolu_%04d", n)
		if err := os.WriteFile(filepath.Join(repo, "db/migrations/0099_fixture.sql"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runHook(t, bin, env, toolEvent(t, "PostToolUse", sid, repo, "Bash", cmd, id))
		if r.code != 0 {
			t.Fatalf("PostToolUse: exit %d %q", r.code, r.stderr)
		}
		if _, ctx, _, _ := r.answer(t); !strings.Contains(ctx, "db/migrations/0099_fixture.sql") || !strings.Contains(ctx, "breach") {
			t.Errorf("PostToolUse said %q", ctx)
		}
		d := a.DetailOf(session)
		if d.Brief.NextAction.String() != "HARD_STOP" || !strings.Contains(d.Brief.Reason, "db/migrations/0099_fixture.sql") {
			t.Errorf("after the breach the brief is %s: %q", d.Brief.NextAction, d.Brief.Reason)
		}
		audit := a.Must(http.StatusOK, http.MethodGet, "/api/v1/audit/premature-side-effects", a.AdminTok, nil)
		if b, _ := json.Marshal(audit); !strings.Contains(string(b), "0099_fixture.sql") {
			t.Errorf("the premature-side-effects audit does not hold the breach: %s", b)
		}
		// The recorded call names what it touched, project-relative.
		var calls []string
		for _, e := range d.Timeline {
			calls = append(calls, e.Kind+" "+e.Detail)
		}
		if joined := strings.Join(calls, "\n"); !strings.Contains(joined, "0099_fixture.sql") {
			t.Errorf("the timeline does not name the breach:\n%s", joined)
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
