package gate_test

import (
	"testing"

	"github.com/madebook/madebook/internal/gate"
)

func TestResolve(t *testing.T) {
	repo := gate.Where{Root: "/w/repo", Cwd: "/w/repo"}
	inDB := gate.Where{Root: "/w/repo", Cwd: "/w/repo/db"}
	inWeb := gate.Where{Root: "/w/repo", Cwd: "/w/repo/web"}
	win := gate.Where{Root: `C:\w\repo`, Cwd: `C:\w\repo\web`}
	for _, tc := range []struct {
		name string
		w    gate.Where
		p    string
		want string // "" outside the project
		any  bool   // unanchored
	}{
		{"a relative path from the root", repo, "db/migrations/x.sql", "db/migrations/x.sql", false},
		{"after cd db, a relative path is joined with the cwd", inDB, "migrations/0001.sql", "db/migrations/0001.sql", false},
		{"an absolute path is made relative to the root, not the cwd", inWeb, "/w/repo/db/migrations/x.sql", "db/migrations/x.sql", false},
		{"../ from web", inWeb, "../db/migrations/x.sql", "db/migrations/x.sql", false},
		{"../repo from the root comes back in", repo, "../repo/db/migrations/x.sql", "db/migrations/x.sql", false},
		{"../ out of the root is outside", repo, "../other/x.sql", "", false},
		{"a sibling whose name starts like the root is outside", repo, "/w/repository/x", "", false},
		{"the root itself", inWeb, "..", ".", false},
		{"dots and repeated and trailing separators", repo, "./db//./migrations/", "db/migrations", false},
		{"backslashes are separators", repo, `db\migrations\x.sql`, "db/migrations/x.sql", false},
		{"a Windows drive path on a POSIX root", repo, `C:\w\repo\db\migrations\x.sql`, "db/migrations/x.sql", false},
		{"a Windows root and cwd", win, `..\db\migrations\x.sql`, "db/migrations/x.sql", false},
		{"a Windows absolute path on a Windows root, other case", win, `c:\W\Repo\db\x.sql`, "db/x.sql", false},
		{"another drive is outside", win, `D:\w\repo\db\x.sql`, "", false},
		{"the root's prefix matches in any case", repo, "/W/Repo/db/x.sql", "db/x.sql", false},
		{"no root: the cwd is the root", gate.Where{Cwd: "/w/repo"}, "/w/repo/db/x.sql", "db/x.sql", false},
		{"no root and no cwd: a relative path is the project's", gate.Where{}, "db/x.sql", "db/x.sql", false},
		{"no root and no cwd: .. leaves it", gate.Where{}, "../x", "", false},
		{"no root and no cwd: an absolute path is unanchored", gate.Where{}, "/w/repo/db/x.sql", "w/repo/db/x.sql", true},
		{"an empty path names nothing", repo, "  ", "", false},
		{"a root of /", gate.Where{Root: "/"}, "/db/x.sql", "db/x.sql", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl, ok := tc.w.Resolve(tc.p)
			if got := map[bool]string{true: pl.Path}[ok]; got != tc.want || pl.Unanchored != tc.any {
				t.Errorf("Resolve(%q) in %+v = %+v, %v; want %q (unanchored %v)", tc.p, tc.w, pl, ok, tc.want, tc.any)
			}
		})
	}
}

func TestPlaceInScope(t *testing.T) {
	for _, tc := range []struct {
		entry, path  string
		pattern, any bool
		in, holds    bool
	}{
		{entry: "db/migrations", path: "db/migrations/0001.sql", in: true, holds: true},
		{entry: "db/migrations/", path: "db/migrations", in: true, holds: true},
		{entry: "db/migrations", path: "DB/Migrations/x.sql", in: true, holds: true},
		{entry: "DB/migrations", path: "db/MIGRATIONS/x.sql", in: true, holds: true},
		{entry: "db/migrations", path: "db/migrations_old/x.sql"},
		{entry: "db/migrations", path: "web/db/migrations/x.sql"},
		{entry: "db/migrations", path: "db", holds: true},
		{entry: "db/migrations", path: "Db", holds: true},
		{entry: "db/migrations", path: ".", holds: true},
		{entry: "db/migrations", path: "web"},
		{entry: "db/migrations", path: "db/mig*/7.sql", pattern: true, in: true, holds: true},
		{entry: "db/migrations", path: "db/*", pattern: true, in: true, holds: true},
		{entry: "db/migrations", path: "d?", pattern: true, holds: true},
		{entry: "db/migrations", path: "db/[lm]igrations/x", pattern: true, in: true, holds: true},
		{entry: "db/migrations", path: "web/*.js", pattern: true},
		{entry: "db/migrations", path: "**/x.sql", pattern: true, in: true, holds: true},
		{entry: "db/migrations", path: "db/mig*", in: false}, // a quoted * is a name
		{entry: "**/*.sql", path: "db/migrations/0001.sql", in: true, holds: true},
		{entry: "**/*.sql", path: "web/app.js"},
		{entry: "**/*.sql", path: ".", holds: true},
		{entry: "web/*.js", path: "web/app.js", in: true, holds: true},
		{entry: "web/*.js", path: "web/lib/app.js"},
		{entry: "web/*.js", path: "web", holds: true},
		{entry: "src/*/generated", path: "src/a/generated/x.go", in: true, holds: true},
		{entry: "web/*.js", path: "web/*", pattern: true, in: true, holds: true},
		{entry: "", path: "web/app.js"},
		{entry: ".", path: "web/app.js"},
		{entry: "..", path: "x"},
		{entry: "db/migrations", path: "w/repo/db/migrations/x.sql", any: true, in: true, holds: true},
		{entry: "db/migrations", path: "w/repo/db", any: true, holds: true},
		{entry: "db/migrations", path: "w/repo/web/x", any: true},
	} {
		pl := gate.Place{Path: tc.path, Unanchored: tc.any}
		if got := pl.In(tc.entry, tc.pattern); got != tc.in {
			t.Errorf("%+v.In(%q, pattern %v) = %v, want %v", pl, tc.entry, tc.pattern, got, tc.in)
		}
		if got := pl.Holds(tc.entry, tc.pattern); got != tc.holds {
			t.Errorf("%+v.Holds(%q, pattern %v) = %v, want %v", pl, tc.entry, tc.pattern, got, tc.holds)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"db/x", "../x", `C:\w\x`, "/w/repo/../repo/db", "~/x", "", "a//b/./c/..", "\\\\srv\\share"} {
		f.Add("/w/repo", "/w/repo/db", s, "db/migrations")
	}
	f.Fuzz(func(t *testing.T, root, cwd, p, entry string) {
		w := gate.Where{Root: root, Cwd: cwd}
		pl, ok := w.Resolve(p)
		if !ok {
			return
		}
		if pl.Path == "" || (pl.Path != "." && (pl.Path[0] == '/' || pl.Path == ".." || len(pl.Path) > 2 && pl.Path[:3] == "../")) {
			t.Fatalf("Resolve(%q) in %+v = %+v: not a clean project-relative path", p, w, pl)
		}
		// Resolving the project-relative path again from the root gives it back.
		if !pl.Unanchored {
			again, ok := gate.Where{}.Resolve(pl.Path)
			if !ok || again.Path != pl.Path {
				t.Fatalf("Resolve(%q) = %q, and again %q, %v", p, pl.Path, again.Path, ok)
			}
		}
		// A path in a scope is held by it.
		if pl.In(entry, false) && !pl.Holds(entry, false) {
			t.Fatalf("%+v is in %q but not held by it", pl, entry)
		}
	})
}
