package gate_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/protocol"
)

// gated is a session whose open gate blocks db/migrations.
var gated = gate.Session{ID: "ses_1", Root: "/w/repo", NextAction: protocol.DecisionRequired,
	Reason: "DEC-001 is waiting on a person: Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}

// checked decides a call in gated as the check endpoint does.
func checked(t *testing.T, tool, in string, r gate.Reading) gate.Verdict {
	t.Helper()
	if r.Where.Root == "" {
		r.Where.Root = gated.Root
	}
	r.Guess = true
	c := gate.Call{Tool: tool, SideEffecting: true, Touches: gate.TouchesOf(tool, object(t, false, in), r)}
	return gate.Decide(gated, nil, c)
}

func bash(cmd string) string { return `{"command":` + strconv.Quote(cmd) + `,"description":"x"}` }

func TestTheGateHoldsWhereverTheAgentStands(t *testing.T) {
	root := gate.Where{Root: "/w/repo", Cwd: "/w/repo"}
	db := gate.Where{Root: "/w/repo", Cwd: "/w/repo/db"}
	web := gate.Where{Root: "/w/repo", Cwd: "/w/repo/web"}
	denied := []struct {
		name, tool, in string
		r              gate.Reading
	}{
		{"cd db, then Write its absolute path", "Write", `{"file_path":"/w/repo/db/migrations/0001.sql","content":"x"}`, gate.Reading{Where: db}},
		{"cd db, then Write a relative path", "Write", `{"file_path":"migrations/0001.sql","content":"x"}`, gate.Reading{Where: db}},
		{"an absolute path from web", "Write", `{"file_path":"/w/repo/db/migrations/x.sql"}`, gate.Reading{Where: web}},
		{"../ from web", "Edit", `{"file_path":"../db/migrations/x.sql"}`, gate.Reading{Where: web}},
		{"../repo from the root", "Edit", `{"file_path":"../repo/db/migrations/x.sql"}`, gate.Reading{Where: root}},
		{"a symlink mig -> db/migrations, resolved by the hook", "Edit", `{"file_path":"/w/repo/mig/x.sql"}`,
			gate.Reading{Where: root, Resolved: []string{"/w/repo/db/migrations/x.sql"}}},
		{"another case", "Write", `{"file_path":"DB/Migrations/x.sql"}`, gate.Reading{Where: root}},
		{"backslashes", "Write", `{"file_path":"db\\migrations\\x.sql"}`, gate.Reading{Where: root}},
		{"a Windows drive path", "Write", `{"file_path":"C:\\w\\repo\\db\\migrations\\x.sql"}`, gate.Reading{Where: root}},
		{"an absolute path with no cwd: the session's root", "Write", `{"file_path":"/w/repo/db/migrations/x.sql"}`, gate.Reading{}},
		{"an absolute path with no root or cwd at all", "Write", `{"file_path":"/w/repo/db/migrations/x.sql"}`, gate.Reading{Where: gate.Where{Root: "-"}}},
		{"move_file's destination", "mcp__filesystem__move_file", `{"source":"web/a.sql","destination":"db/migrations/x.sql"}`, gate.Reading{Where: root}},
		{"git_add's files", "mcp__git__git_add", `{"repo_path":"web","files":["web/a","db/migrations/x.sql"]}`, gate.Reading{Where: root}},
		{"filePath", "mcp__ide__write", `{"filePath":"db/migrations/x.sql","text":"x"}`, gate.Reading{Where: root}},
		{"a path array", "mcp__fs__touch", `{"path":["web/a","db/migrations/x.sql"]}`, gate.Reading{Where: root}},
		{"a nested path", "mcp__fs__batch", `{"ops":[{"op":"rm","target":{"p":"/w/repo/db/migrations"}}]}`, gate.Reading{Where: root}},
		{"a tool naming the root", "mcp__git__git_reset", `{"repo_path":"/w/repo","mode":"hard"}`, gate.Reading{Where: root}},
		{"a declared path field", "mcp__fs__write", `{"destination":"db/migrations/x.sql","content":"hello"}`,
			gate.Reading{Where: root, PathFields: []string{"destination"}}},
		{"a declared array field", "mcp__git__git_add", `{"files":["web/a","db/migrations/x.sql"]}`,
			gate.Reading{Where: root, PathFields: []string{"files[]"}}},
		{"a declared nested field", "mcp__fs__edits", `{"edits":[{"file_path":"web/a"},{"file_path":"db/migrations/1.sql"}]}`,
			gate.Reading{Where: root, PathFields: []string{"edits[].file_path"}}},
		{"a NotebookEdit", "NotebookEdit", `{"notebook_path":"db/migrations/n.ipynb"}`, gate.Reading{Where: root}},
		{"an unknown built-in naming a path", "Frobnicate", `{"target":"db/migrations/x.sql"}`, gate.Reading{Where: root}},
	}
	for _, cmd := range []string{
		"cd db && echo x > migrations/3.sql",
		"for d in db/mig*; do touch $d/7.sql; done",
		"rm -rf db",
		"mv db old_db",
		`rm "db"/migrations/x.sql`,
		`rm db\/migrations/x.sql`,
		"sort -odb/migrations/x.sql web/a",
		"rm ../repo/db/migrations/x.sql",
		"git checkout -- .",
		"git reset --hard",
		"git clean -fdx",
		"git stash",
		"rm -rf .",
		"echo x >> DB/MIGRATIONS/x.sql",
		"touch db/{migrations,seeds}/x.sql",
		"D=db/migrations; rm $D/x.sql",
		"(cd db; rm -r migrations)",
		"bash -c 'rm db/migrations/x.sql'",
		"sed -i s/a/b/ db/migrations/0001.sql",
		"find db -name '*.sql' -delete",
		"cp web/a.sql db/migrations/",
		"dd if=web/a of=db/migrations/x.sql",
		"cat web/a | tee db/migrations/x.sql",
		`python3 -c "open('db/migrations/x.sql','w').write('x')"`,
		"chmod -R 777 db",
		"ln -s /tmp/x db/migrations/y.sql",
		"ls db && rm db/migrations/x.sql",
	} {
		denied = append(denied, struct {
			name, tool, in string
			r              gate.Reading
		}{"Bash: " + cmd, "Bash", bash(cmd), gate.Reading{Where: root}})
	}
	for _, tc := range denied {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.Where.Root == "-" {
				r.Where = gate.Where{}
			}
			var v gate.Verdict
			if r.Where.Root == "" && r.Where.Cwd == "" && tc.r.Where.Root == "-" {
				c := gate.Call{Tool: tc.tool, SideEffecting: true, Touches: gate.TouchesOf(tc.tool, object(t, false, tc.in), r)}
				v = gate.Decide(gate.Session{ID: "ses_1", NextAction: protocol.DecisionRequired, Reason: gated.Reason, BlockedScope: gated.BlockedScope}, nil, c)
			} else {
				v = checked(t, tc.tool, tc.in, r)
			}
			if v.Allow || v.Code != gate.CodeSessionBlocked || !strings.Contains(v.Reason, "db/migrations") {
				t.Fatalf("allowed, or refused without naming the scope: %+v", v)
			}
		})
	}
}

func TestTheAllowedScopeStillWorks(t *testing.T) {
	root := gate.Where{Root: "/w/repo", Cwd: "/w/repo"}
	for _, tc := range []struct{ name, tool, in string }{
		{"a Write outside the scope", "Write", `{"file_path":"/w/repo/web/app.js","content":"db/migrations"}`},
		{"a Write to a sibling of the scope", "Write", `{"file_path":"/w/repo/db/migrations_old/x.sql"}`},
		{"a Write outside the project", "Write", `{"file_path":"/tmp/db/migrations/x.sql"}`},
		{"a declared path field outside the scope, whatever the content", "mcp__fs__write", `{"destination":"web/x","content":"db/migrations"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gate.Reading{Where: root}
			if strings.HasPrefix(tc.tool, "mcp__") {
				r.PathFields = []string{"destination"}
			}
			if v := checked(t, tc.tool, tc.in, r); !v.Allow {
				t.Fatalf("refused: %s", v.Reason)
			}
		})
	}
	for _, cmd := range []string{
		"cat db/migrations/x.sql",
		"git diff",
		"git diff -- db/migrations",
		"git log -p db/migrations | head -50",
		"make test",
		"npm test",
		"go build ./...",
		"go test ./web/...",
		"ls -la db db/migrations",
		"grep -rn DROP db/migrations > web/drops.txt",
		"find db -name '*.sql'",
		"wc -l db/migrations/*.sql",
		"cd db && cat migrations/0001.sql",
		"rm db/migrations_old/x.sql",
		"rm 'db/mig*'",
		"echo $HOME",
		"cd web && npm run build 2>&1 | tail -20",
		"cp db/migrations/0001.sql web/copy.sql",
	} {
		t.Run("Bash: "+cmd, func(t *testing.T) {
			if v := checked(t, "Bash", bash(cmd), gate.Reading{Where: root}); !v.Allow {
				t.Fatalf("refused: %s", v.Reason)
			}
		})
	}
}

func TestWhatTheGateCannotTellIsRefused(t *testing.T) {
	root := gate.Where{Root: "/w/repo", Cwd: "/w/repo"}
	for _, cmd := range []string{
		"rm $TARGET/x.sql",
		`eval "$CMD"`,
		"rm $(cat list.txt)",
		"xargs rm < list.txt",
		"python3 scripts/migrate.py",
		"bash scripts/migrate.sh",
		"rm ~/repo/db/migrations/x.sql",
		"cd $DIR && rm x",
		"echo 'unterminated",
	} {
		t.Run(cmd, func(t *testing.T) {
			v := checked(t, "Bash", bash(cmd), gate.Reading{Where: root})
			if v.Allow || !strings.Contains(v.Reason, "cannot tell") || !strings.Contains(v.Reason, "name the paths") {
				t.Fatalf("not refused as undecidable: %+v", v)
			}
		})
	}
	// What the agent's machine knows decides: its home, and the script.
	home := gate.Reading{Where: root, Home: "/w"}
	if v := checked(t, "Bash", bash("rm ~/repo/db/migrations/x.sql"), home); v.Allow {
		t.Error("rm ~/repo/db/migrations/x.sql with the home known: allowed")
	}
	if v := checked(t, "Bash", bash("rm ~/notes.txt"), home); !v.Allow {
		t.Errorf("rm ~/notes.txt with the home known: %s", v.Reason)
	}
	scripts := func(text string) gate.Reading {
		return gate.Reading{Where: root, Script: func(p string) (string, bool) { return text, p == "scripts/migrate.sh" }}
	}
	if v := checked(t, "Bash", bash("bash scripts/migrate.sh"), scripts("rm -f db/migrations/*.sql\n")); v.Allow {
		t.Error("a script that writes into the scope: allowed")
	}
	if v := checked(t, "Bash", bash("bash scripts/migrate.sh"), scripts("go test ./...\n")); !v.Allow {
		t.Errorf("a script that writes nothing there: %s", v.Reason)
	}
	// Outside a blocked path, nothing is undecidable: only the tool scope
	// and the brief's state decide.
	free := gate.Session{ID: "ses_1", NextAction: protocol.Continue}
	c := gate.Call{Tool: "Bash", SideEffecting: true, Touches: gate.TouchesOf("Bash", object(t, true, bash(`eval "$CMD"`)), gate.Reading{Where: root})}
	if v := gate.Decide(free, nil, c); !v.Allow || free.BlocksPaths() || !gated.BlocksPaths() {
		t.Errorf("CONTINUE refused an undecidable command: %+v", v)
	}
}

func TestAGuessedPathSaysHowToBePrecise(t *testing.T) {
	v := checked(t, "mcp__fs__write", `{"destination":"db/migrations/x.sql"}`, gate.Reading{Where: gate.Where{Root: "/w/repo"}})
	if v.Allow || !strings.Contains(v.Reason, "path_fields") {
		t.Fatalf("the refusal does not say how to declare path fields: %+v", v)
	}
	v = checked(t, "Bash", bash("rm db/migrations/x.sql"), gate.Reading{Where: gate.Where{Root: "/w/repo"}})
	if v.Allow || !strings.Contains(v.Reason, `"db/migrations/x.sql" (rm)`) {
		t.Fatalf("the refusal does not name the path and the command: %+v", v)
	}
}

func TestTouchesAreRecordedProjectRelative(t *testing.T) {
	w := gate.Where{Root: "/w/repo", Cwd: "/w/repo/db"}
	got := gate.TouchesOf("Bash", object(t, true, bash("cat ../web/a.go > migrations/x.sql && rm /w/repo/web/b /tmp/c")), gate.Reading{Where: w}).Names()
	if want := []string{"db/migrations/x.sql", "web/b", "/tmp/c"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	got = gate.TouchesOf("Edit", object(t, true, `{"file_path":"/w/repo/db/x.sql","old_string":"a"}`), gate.Reading{Where: w}).Names()
	if want := []string{"db/x.sql"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	// A read-only tool's input is never guessed at.
	if got := gate.TouchesOf("mcp__x__y", object(t, true, `{"q":"db/migrations"}`), gate.Reading{Where: w}).Paths; len(got) != 0 {
		t.Errorf("an unguessed tool touches %v", got)
	}
}
