package gate

import (
	"path"
	"strings"

	"github.com/madebook/madebook/internal/glob"
)

// Where is where a tool call stands: the project root its session works
// in and the directory the executor ran the call in. Both are absolute
// (a POSIX path, or a Windows one with a drive letter or backslashes), or
// "" when not known. The scopes a gate blocks name paths relative to the
// root, never to the cwd: an agent that ran `cd db` is still in the
// project, and `migrations/x.sql` there is `db/migrations/x.sql`.
type Where struct {
	Root string
	Cwd  string
}

// Place is a path as the gate compares it with a scope.
type Place struct {
	// Path is the path relative to the project root, cleaned ("db/x.sql";
	// "." is the root itself), in the case it was written in.
	Path string
	// Unanchored: the path was absolute and no root or cwd was known, so
	// where the project starts in it is not known; Path is the whole path
	// without its leading "/", and any tail of it (from a segment on) may
	// be the project-relative path (In and Holds try every one).
	Unanchored bool
}

// Resolve returns where the path p, as a tool call names it, lies in the
// project: joined with the call's cwd when relative (with the root when
// there is no cwd), cleaned (".", "..", repeated and trailing separators;
// "\" read as a separator; a Windows drive prefix understood), then made
// relative to the root. ok is false for an empty path and for one outside
// the root, which lies outside every scope.
//
// The root's own prefix is compared case-insensitively, and a drive letter
// counts only when both the path and the root have one: reading more
// paths as inside the project can only refuse more. With no root, the cwd
// is the root (a session takes the first cwd it is sent as its root); with
// neither, a relative path is read from the root and an absolute one is
// Unanchored.
func (w Where) Resolve(p string) (pl Place, ok bool) {
	p = strings.TrimSpace(p)
	if p == "" {
		return Place{}, false
	}
	root, cwd := w.Root, w.Cwd
	if root == "" {
		root = cwd
	}
	pdrive, pp := splitDrive(p)
	absolute := strings.HasPrefix(pp, "/")
	if !absolute {
		base := cwd
		if base == "" {
			base = root
		}
		if base == "" {
			c := path.Clean(pp)
			if c == ".." || strings.HasPrefix(c, "../") {
				return Place{}, false
			}
			return Place{Path: c}, true
		}
		pdrive, pp = splitDrive(base + "/" + pp)
	}
	pp = path.Clean("/" + pp)
	if root == "" {
		if pp == "/" {
			return Place{Path: ".", Unanchored: true}, true
		}
		return Place{Path: pp[1:], Unanchored: true}, true
	}
	rdrive, rp := splitDrive(root)
	rp = path.Clean("/" + rp)
	if pdrive != "" && rdrive != "" && pdrive != rdrive {
		return Place{}, false
	}
	if rp == "/" {
		if pp == "/" {
			return Place{Path: "."}, true
		}
		return Place{Path: pp[1:]}, true
	}
	switch {
	case strings.EqualFold(pp, rp):
		return Place{Path: "."}, true
	case len(pp) > len(rp) && pp[len(rp)] == '/' && strings.EqualFold(pp[:len(rp)], rp):
		return Place{Path: pp[len(rp)+1:]}, true
	}
	return Place{}, false
}

// join is the directory dir names, as a call's cwd: dir itself when
// absolute, else joined with the cwd (the root when there is none); ""
// when there is neither (the call is read from the root).
func (w Where) join(dir string) string {
	dir = strings.TrimSpace(dir)
	if IsAbs(dir) {
		return dir
	}
	base := w.Cwd
	if base == "" {
		base = w.Root
	}
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/\\") + "/" + dir
}

// splitDrive reads "\" as "/" and takes a Windows drive prefix ("C:") off
// p, returning it lowercased ("c") and the rest ("C:\w\x" is "c", "/w/x").
func splitDrive(p string) (drive, rest string) {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') {
		return strings.ToLower(p[:1]), p[2:]
	}
	return "", p
}

// IsAbs reports whether p is an absolute path, POSIX or Windows
// ("/w/x", `C:\w\x`, `\w\x`).
func IsAbs(p string) bool {
	_, rest := splitDrive(strings.TrimSpace(p))
	return strings.HasPrefix(rest, "/")
}

// In reports whether the place lies in the blocked scope entry (a
// project-relative path or glob): in the entry's directory itself or under
// it, compared case-insensitively (a gate on db/migrations also holds
// DB/Migrations: refusing one extra file on a case-sensitive disk is
// cheap; letting one through on a case-insensitive one is not). A glob
// entry (with *, ? or [; ** spans segments) holds what it matches and
// everything under that. A pattern place (glob: a shell glob the agent
// wrote, `db/mig*/x.sql`) is in the scope when it can match a path in it.
func (pl Place) In(entry string, pattern bool) bool {
	return pl.test(entry, pattern, false)
}

// Holds reports whether the place is the scope entry, lies in it, or is an
// ancestor of it (the root ".", or "db" for db/migrations): a call that
// deletes, moves or rewrites the place touches the scope. For a glob entry
// the ancestors are those of its literal segments before the first
// pattern (and the root).
func (pl Place) Holds(entry string, pattern bool) bool {
	return pl.test(entry, pattern, true)
}

func (pl Place) test(entry string, pattern, ancestors bool) bool {
	e, ok := cleanEntry(entry)
	if !ok {
		return false
	}
	if !pl.Unanchored {
		return covers(e, strings.ToLower(pl.Path), pattern, ancestors)
	}
	p := strings.ToLower(pl.Path)
	for {
		if covers(e, p, pattern, ancestors) {
			return true
		}
		_, rest, more := strings.Cut(p, "/")
		if !more {
			return false
		}
		p = rest
	}
}

// cleanEntry is a blocked scope entry as covers compares it: cleaned,
// relative, lowercased; ok false for an entry that names nothing, the root
// or outside it.
func cleanEntry(entry string) (string, bool) {
	e := strings.TrimSpace(strings.ReplaceAll(entry, `\`, "/"))
	if e == "" {
		return "", false
	}
	e = strings.TrimLeft(path.Clean(e), "/")
	if e == "" || e == "." || e == ".." || strings.HasPrefix(e, "../") {
		return "", false
	}
	return strings.ToLower(e), true
}

// covers decides a lowercased, cleaned entry against a lowercased,
// project-relative path p (a pattern when pattern is set).
func covers(e, p string, pattern, ancestors bool) bool {
	if p == "" || p == ".." || strings.HasPrefix(p, "../") {
		return false
	}
	if p == "." {
		return ancestors
	}
	es, ps := strings.Split(e, "/"), strings.Split(p, "/")
	if !hasMeta(e) {
		// A plain entry is a directory prefix: the path is in it when the
		// entry's segments start the path's, an ancestor when the path's
		// segments start the entry's.
		n := min(len(es), len(ps))
		for i := range n {
			if pattern && ps[i] == "**" {
				return true // spans any segments: it can reach into the entry
			}
			if !segment(ps[i], es[i], pattern) {
				return false
			}
		}
		return len(ps) >= len(es) || ancestors
	}
	if pattern {
		// Two patterns: in scope when they can meet on the entry's
		// literal prefix (a conservative reading).
		lit := literal(es)
		for i := range min(len(lit), len(ps)) {
			if !segment(ps[i], lit[i], true) {
				return false
			}
		}
		return len(ps) >= len(lit) || ancestors
	}
	for i := len(ps); i > 0; i-- {
		if glob.Match(e, strings.Join(ps[:i], "/")) {
			return true
		}
	}
	if !ancestors {
		return false
	}
	lit := literal(es)
	if len(ps) > len(lit) {
		return false
	}
	for i := range ps {
		if ps[i] != lit[i] {
			return false
		}
	}
	return true
}

// literal is the segments of a glob entry before its first pattern.
func literal(es []string) []string {
	for i, s := range es {
		if hasMeta(s) {
			return es[:i]
		}
	}
	return es
}

// segment compares one lowercased segment of a path with one of an
// entry: equal, or, when the path is a pattern and its segment holds one,
// matched by it.
func segment(p, e string, pattern bool) bool {
	if p == e {
		return true
	}
	if !pattern || !hasMeta(p) {
		return false
	}
	if p == "**" {
		return true
	}
	ok, err := path.Match(p, e)
	return ok || err != nil // a malformed pattern is read as matching: fail safe
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// InScope reports whether the path p, relative to the project root, lies
// in the scope entry (Place.In): "web/../db/migrations/x.sql" lies in
// db/migrations, "../x" in nothing.
func InScope(entry, p string) bool {
	pl, ok := Where{}.Resolve(p)
	return ok && pl.In(entry, false)
}
