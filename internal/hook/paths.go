package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
)

// siteOf is what the hook tells Madebook of a call the executor e makes: its input, cwd and
// project root, and, on the agent's machine m (nil: none), what only it
// knows: the agent's home, the scripts a Bash command runs, and the paths
// the call writes to as the disk resolves them. The call is read as the
// gate reads it (gate.TouchesOf) to find those.
func siteOf(m Machine, e *Executor, in Input, root string) Site {
	s := Site{Input: in.ToolInput, Cwd: in.Cwd, Root: root}
	if m == nil || root == "" {
		return s
	}
	fields, err := input.ParseObject(in.ToolInput)
	if err != nil {
		return s
	}
	s.Home = m.Home()
	r := gate.Reading{Where: gate.Where{Root: root, Cwd: in.Cwd}, Home: s.Home, Guess: !e.ReadOnly(in.ToolName)}
	r.Script = func(p string) (string, bool) {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(in.Cwd, p)
		}
		text, ok := m.Script(abs)
		if ok && len(s.Scripts) < 8 {
			if s.Scripts == nil {
				s.Scripts = map[string]string{}
			}
			s.Scripts[p] = text
		}
		return text, ok
	}
	// The paths the call writes to, as the disk has them: a symlink
	// mig -> db/migrations makes mig/x.sql db/migrations/x.sql, and a glob
	// names what it matches. The root may be a symlink itself (/tmp on
	// macOS): a target inside the resolved root is sent inside the root as
	// written.
	realRoot := m.Resolve(root)
	inRoot := func(res string) string {
		if rel, err := filepath.Rel(realRoot, res); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Join(root, rel)
		}
		return res
	}
	for _, t := range gate.TouchesOf(e.Tool(in), fields, r).Paths {
		if !t.Writes || t.Unanchored {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(t.Path))
		names := []string{abs}
		if t.Glob {
			names = m.Glob(abs)
		}
		for _, n := range names {
			if res := inRoot(m.Resolve(n)); (res != abs || t.Glob) && !slices.Contains(s.Paths, res) && len(s.Paths) < gate.MaxPaths {
				s.Paths = append(s.Paths, res)
			}
		}
	}
	return s
}

// watched is what the hook notes of the blocked scope before an allowed
// call, kept in Config.StateDir until the call has run.
type watched struct {
	Root  string            `json:"root"`
	Scope []string          `json:"scope"`
	Dirs  []string          `json:"dirs"`
	Files map[string]string `json:"files"`
}

// stateFile is where the note on a call is kept.
func stateFile(dir string, in Input) string {
	sum := sha256.Sum256([]byte(in.SessionID + "\x00" + in.ToolUseID))
	return filepath.Join(dir, "watch-"+hex.EncodeToString(sum[:12])+".json")
}

// watchBefore notes, in the state directory dir, the state on m's disk
// of the blocked scope's paths before an allowed call runs, when the check
// named some to watch.
func watchBefore(m Machine, dir string, in Input, root string, scope []string) {
	if dir == "" || root == "" || in.ToolUseID == "" || len(scope) == 0 {
		return
	}
	w := watched{Root: root, Scope: scope}
	for _, e := range scope {
		// A glob entry is watched from its literal directory on.
		lit := e
		if i := strings.IndexAny(e, "*?["); i >= 0 {
			lit = lit[:strings.LastIndex(lit[:i], "/")+1]
		}
		w.Dirs = append(w.Dirs, filepath.Join(root, filepath.FromSlash(lit)))
	}
	w.Files = m.Snapshot(root, w.Dirs)
	b, err := json.Marshal(w)
	if err != nil || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	forgetOld(dir)
	_ = os.WriteFile(stateFile(dir, in), b, 0o600)
}

// forgetOld removes notes on calls that never reported back (a call the
// user's own permission prompt refused), and transcripts' read marks,
// after a day.
func forgetOld(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && (strings.HasPrefix(e.Name(), "watch-") || strings.HasPrefix(e.Name(), "transcript-")) &&
			time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// watchAfter compares the blocked scope on m's disk with what
// watchBefore noted in dir and returns the breach when files in it
// changed (nil when none, or nothing was noted).
func watchAfter(m Machine, e *Executor, dir string, in Input) *Breach {
	if dir == "" || in.ToolUseID == "" {
		return nil
	}
	file := stateFile(dir, in)
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	_ = os.Remove(file)
	var w watched
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	now := m.Snapshot(w.Root, w.Dirs)
	var changed []string
	for p, st := range now {
		if w.Files[p] != st {
			changed = append(changed, p)
		}
	}
	for p := range w.Files {
		if _, ok := now[p]; !ok {
			changed = append(changed, p)
		}
	}
	var files []string
	for _, p := range changed {
		if slices.ContainsFunc(w.Scope, func(e string) bool { return gate.Place{Path: p}.In(e, false) }) {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if len(files) > gate.MaxPaths {
		files = files[:gate.MaxPaths]
	}
	tool := e.Tool(in)
	br := &Breach{Tool: tool, ToolUseID: in.ToolUseID, Files: files, Scope: w.Scope}
	if b, ok := gate.BuiltinOf(gate.SplitTool(tool)); ok && b.Class == gate.Shell {
		fields, _ := input.ParseObject(in.ToolInput)
		var v [1]json.RawMessage
		fields.Lookup(b.Fields, v[:])
		if cmd, ok := input.String(v[0]); ok {
			br.Command = cmd
		}
	}
	return br
}
