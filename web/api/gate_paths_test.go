package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// TestTheCheckHoldsWhereverTheAgentStands asks the check, over HTTP, every
// probe that found the gate porous, in a session whose gate blocks
// db/migrations and whose project root the agent named when it opened it:
// each is denied, and the allowed scope still works.
func TestTheCheckHoldsWhereverTheAgentStands(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	mission := a.Kit.Mission(a.Lead, false)
	s := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": mission,
		"title": "probes", "root": "/w/repo"})
	sess := s["id"].(string)
	if s["root"] != "/w/repo" {
		t.Fatalf("the session's root: %v", s["root"])
	}
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/decisions", a.AgentKey, map[string]any{
		"title": "Schema", "question": "Drop the legacy billing table?", "blocked_scope": []string{"db/migrations"}})
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/fs/write", a.AdminTok, map[string]any{"side_effecting": true, "path_fields": []string{"destination"}})
	write := func(cwd, p string) map[string]any {
		return map[string]any{"tool": "Write", "cwd": cwd, "input": map[string]any{"file_path": p, "content": "x"}}
	}
	bash := func(cmd string) map[string]any {
		return map[string]any{"tool": "Bash", "cwd": "/w/repo", "input": map[string]any{"command": cmd}}
	}
	denied := map[string]map[string]any{
		"cd db, then Write":         write("/w/repo/db", "migrations/0001.sql"),
		"an absolute path from web": write("/w/repo/web", "/w/repo/db/migrations/x.sql"),
		"../ from web":              write("/w/repo/web", "../db/migrations/x.sql"),
		"../repo from the root":     write("/w/repo", "../repo/db/migrations/x.sql"),
		"another case":              write("/w/repo", "DB/Migrations/x.sql"),
		"backslashes":               write("/w/repo", `db\migrations\x.sql`),
		"a Windows drive":           write("/w/repo", `C:\w\repo\db\migrations\x.sql`),
		"an absolute path, no cwd":  {"tool": "Write", "input": map[string]any{"file_path": "/w/repo/db/migrations/x.sql"}},
		"a symlink the hook resolved": {"tool": "Edit", "cwd": "/w/repo", "input": map[string]any{"file_path": "/w/repo/mig/x.sql"},
			"paths": []string{"/w/repo/db/migrations/x.sql"}},
		"move_file's destination": {"tool": "mcp__filesystem__move_file", "input": map[string]any{"source": "a", "destination": "db/migrations/x.sql"}},
		"git_add's files":         {"tool": "mcp__git__git_add", "input": map[string]any{"files": []string{"db/migrations/x.sql"}}},
		"filePath":                {"tool": "mcp__ide__write", "input": map[string]any{"filePath": "db/migrations/x.sql"}},
		"a path array":            {"tool": "mcp__fs__touch", "input": map[string]any{"path": []string{"db/migrations/x.sql"}}},
		"a declared path field":   {"tool": "mcp__fs__write", "input": map[string]any{"destination": "db/migrations/x.sql", "content": "hi"}},
		"a script the hook read": {"tool": "Bash", "cwd": "/w/repo", "input": map[string]any{"command": "sh scripts/m.sh"},
			"scripts": map[string]string{"scripts/m.sh": "rm -f db/migrations/*.sql\n"}},
		"~ expanded from the home sent": {"tool": "Bash", "cwd": "/w/repo", "home": "/w", "input": map[string]any{"command": "rm ~/repo/db/migrations/x.sql"}},
	}
	for _, cmd := range []string{"cd db && echo x > migrations/3.sql", "for d in db/mig*; do touch $d/7.sql; done", "rm -rf db",
		"mv db old_db", `rm "db"/migrations/x.sql`, `rm db\/migrations/x.sql`, "sort -odb/migrations/x.sql web/a",
		"rm ~/repo/db/migrations/x.sql", "rm ../repo/db/migrations/x.sql", "git checkout -- .", "rm $TARGET"} {
		denied["Bash: "+cmd] = bash(cmd)
	}
	for name, body := range denied {
		t.Run("denied/"+name, func(t *testing.T) {
			a.T = t
			got := checkCall(a, sess, body)
			if got["allow"] != false || got["code"] != "session_blocked" || !strings.Contains(got["reason"].(string), "db/migrations") {
				t.Errorf("%v", got)
			}
		})
	}
	allowed := map[string]map[string]any{
		"a Write outside the scope":      write("/w/repo", "/w/repo/web/app.js"),
		"a declared field outside":       {"tool": "mcp__fs__write", "input": map[string]any{"destination": "web/x", "content": "db/migrations"}},
		"cat in the scope":               bash("cat db/migrations/x.sql"),
		"git diff":                       bash("git diff"),
		"make test":                      bash("make test"),
		"a script that writes elsewhere": {"tool": "Bash", "input": map[string]any{"command": "sh t.sh"}, "scripts": map[string]string{"t.sh": "go test ./...\n"}},
	}
	for name, body := range allowed {
		t.Run("allowed/"+name, func(t *testing.T) {
			a.T = t
			got := checkCall(a, sess, body)
			if got["allow"] != true {
				t.Errorf("%v", got)
			}
			if w, _ := got["watch"].([]any); len(w) != 1 || w[0] != "db/migrations" {
				t.Errorf("an allowed side effect under a blocked path names no scope to watch: %v", got)
			}
		})
	}
	a.T = t
	// Bad inputs are refused, naming the field.
	for _, tc := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"tool": "Edit", "root": "w/repo"}, "invalid_root"},
		{map[string]any{"tool": "Edit", "root": strings.Repeat("/x", 600)}, "root_too_long"},
		{map[string]any{"tool": "Edit", "home": strings.Repeat("/x", 600)}, "home_too_long"},
		{map[string]any{"tool": "Edit", "scripts": map[string]string{"a": strings.Repeat("x", 70000)}}, "scripts_too_long"},
	} {
		a.Refused(sess, http.StatusUnprocessableEntity, tc.code, http.MethodPost, checkPath(sess), a.AgentKey, tc.body)
	}
	a.Refused("", http.StatusUnprocessableEntity, "invalid_root", http.MethodPost, "/api/v1/sessions", a.AgentKey,
		map[string]any{"mission": mission, "root": "relative/dir"})
	a.Refused("", http.StatusUnprocessableEntity, "invalid_path_fields", http.MethodPut, "/api/v1/tools/fs/bad", a.AdminTok,
		map[string]any{"side_effecting": true, "path_fields": []string{"a..b"}})
}

// TestASessionTakesItsFirstCwdAsItsRoot: a session opened with no root
// takes the first cwd a check sends, and keeps it when the agent moves.
func TestASessionTakesItsFirstCwdAsItsRoot(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/decisions", a.AgentKey, map[string]any{
		"title": "Schema", "question": "Drop it?", "blocked_scope": []string{"db/migrations"}})
	edit := func(cwd, p string) map[string]any {
		return map[string]any{"tool": "Edit", "cwd": cwd, "input": map[string]any{"file_path": p}}
	}
	if got := a.Must(http.StatusOK, http.MethodPost, checkPath(sess), a.AgentKey, edit("/w/repo", "web/a.js")); got["allow"] != true {
		t.Fatalf("%v", got)
	}
	if root := a.DetailOf(sess).Root; root != "/w/repo" {
		t.Fatalf("the session's root is %q, want the first cwd", root)
	}
	if got := a.Must(http.StatusOK, http.MethodPost, checkPath(sess), a.AgentKey, edit("/w/repo/db", "migrations/x.sql")); got["allow"] != false {
		t.Fatalf("after cd db: %v", got)
	}
	if n := webtest.CountOf(a.Timeline(sess), "session.root"); n != 1 {
		t.Errorf("%d session.root events, want 1", n)
	}
}
