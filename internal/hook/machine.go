package hook

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Machine is what only the agent's machine knows: where the project is,
// the agent's home, where a symlink leads, what a script says, what a glob
// matches, and what is on disk in a blocked scope. The command hook
// (`madebook hook claude-code`) runs on it (OS); the server's http hook
// has none (nil), and the server decides on the paths as written.
type Machine interface {
	// Root is the project root of a call made in cwd: the executor's
	// project directory (CLAUDE_PROJECT_DIR), else git's top level in cwd,
	// else cwd.
	Root(cwd string) string
	// Home is the agent's home directory ("" when not known).
	Home() string
	// Resolve returns the absolute path p with every symlink followed, as
	// far as the path exists (the longest existing prefix resolved, the
	// rest joined to it).
	Resolve(p string) string
	// Script returns the text of the script at the absolute path p, when
	// it is a readable file of at most MaxScript bytes.
	Script(p string) (string, bool)
	// Glob returns the paths the absolute pattern matches on disk.
	Glob(pattern string) []string
	// Snapshot returns the state of the files under each of the absolute
	// paths (a file or a directory): each file's size and modification
	// time, and git's word on it, at most MaxSnapshot files.
	Snapshot(root string, paths []string) map[string]string
}

// MaxScript is the largest script the hook reads and sends.
const MaxScript = 64 << 10

// MaxSnapshot is the most files a snapshot notes.
const MaxSnapshot = 20000

// OS is the Machine the command hook runs on: its environment (getenv)
// and its disk.
type OS struct {
	Getenv func(string) string
	// ProjectDir is the environment variable the executor sets to the
	// project root ("" reads none).
	ProjectDir string
}

// Root is the executor's project directory (ProjectDir:
// CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR) when set, else `git rev-parse
// --show-toplevel` run in cwd, else cwd.
func (m OS) Root(cwd string) string {
	if m.ProjectDir != "" {
		if d := strings.TrimSpace(m.Getenv(m.ProjectDir)); d != "" {
			return filepath.Clean(d)
		}
	}
	if cwd == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel")
	cmd.Dir = cwd
	if out, err := cmd.Output(); err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			return filepath.Clean(top)
		}
	}
	return cwd
}

// Home is $HOME.
func (m OS) Home() string { return strings.TrimSpace(m.Getenv("HOME")) }

// Resolve follows p's symlinks as far as p exists.
func (m OS) Resolve(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// Script reads a script file of at most MaxScript bytes.
func (m OS) Script(p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxScript {
		return "", false
	}
	b, err := os.ReadFile(p)
	return string(b), err == nil
}

// Glob is filepath.Glob, at most 1,000 matches.
func (m OS) Glob(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	if len(matches) > 1000 {
		matches = matches[:1000]
	}
	return matches
}

// errFull ends a snapshot's walk at MaxSnapshot files.
var errFull = errors.New("snapshot full")

// Snapshot notes size and mtime of every file under paths (symlinks not
// followed), and the lines of `git status --porcelain` on them, keyed by
// the path relative to root.
func (m OS) Snapshot(root string, paths []string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if len(out) >= MaxSnapshot {
				return errFull
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return nil
			}
			out[filepath.ToSlash(rel)] = fi.ModTime().UTC().Format(time.RFC3339Nano) + " " + fi.Mode().String() + " " + strconv.FormatInt(fi.Size(), 10)
			return nil
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--"}, paths...)...)
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		for _, line := range bytes.Split(b, []byte{0}) {
			if len(line) > 3 {
				out[string(line[3:])] += " git:" + string(line[:2])
			}
		}
	}
	return out
}
