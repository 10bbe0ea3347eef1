package gate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/madebook/madebook/internal/gate/shell"
	"github.com/madebook/madebook/internal/input"
)

// Touch is a path a tool call touches.
type Touch struct {
	Place
	// Glob: Path is a shell glob the command wrote (db/mig*/x.sql), which
	// the gate matches against the scope as a pattern.
	Glob bool
	// Writes: the call may create, change, delete or move the path (so an
	// ancestor of a blocked scope touches the scope). False: it only reads
	// it (`cat db/x.sql`), which no scope blocks.
	Writes bool
	// By is what touches it, for the reason an agent reads: the input
	// field ("file_path"), or the shell command ("rm", ">"); "" for a path
	// the agent's machine resolved or the agent reported.
	By string
}

// Touches is what a tool call touches.
type Touches struct {
	Paths []Touch
	// Undecidable says why Madebook cannot tell everything the call
	// touches (a shell variable from the environment, eval, a script it
	// cannot read): while the session blocks a path, the call is refused.
	// "" when it can tell.
	Undecidable string
	// Guessed: the tool names no path fields, so every string of its input
	// was taken for a path (fail safe), which the refusal says.
	Guessed bool
	// Outside are the paths the call names outside the project, as named:
	// in no scope, but on the record (a Write to /etc/hosts).
	Outside []string
}

// Names returns the paths touched as the ledger records them: the
// project-relative ones, then those outside the project as named; each
// once, at most MaxPaths of at most MaxPath bytes.
func (t Touches) Names() []string {
	out := []string{}
	add := func(p string) {
		if len(out) < MaxPaths && len(p) <= MaxPath && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range t.Paths {
		add(p.Path)
	}
	for _, p := range t.Outside {
		add(p)
	}
	return out
}

// Reading is what the gate needs beyond a call's tool and input to tell
// what it touches.
type Reading struct {
	// Where is the project root and the call's cwd.
	Where Where
	// Home is the agent's home directory, which expands ~ and $HOME in a
	// shell command; "" leaves them undecidable.
	Home string
	// Script returns the text of a shell script a command runs, by the
	// path the command names it by (joined with the directory it runs it
	// in), as the agent's machine reads it; nil, or false: the command is
	// undecidable.
	Script func(path string) (string, bool)
	// PathFields are the input fields the tool registry says name the
	// tool's paths ("destination", "files[]", "edits[].file_path"); nil
	// when it names none.
	PathFields []string
	// Guess takes every string of the input for a path when the tool has
	// no known or registered path fields: set it for a side-effecting call.
	Guess bool
	// Resolved are more paths the call touches, as the agent's machine
	// resolved them (symlinks followed); each is taken as written to.
	Resolved []string
}

// MaxStrings is the most strings of an input Guess takes for paths; an
// input with more is undecidable.
const MaxStrings = 1000

// TouchesOf returns what the call of tool (as Madebook names it, see
// ToolName) with input in touches: for an executor's shell tool (Bash,
// run_shell_command), what its command does (shell.Analyze: the paths it
// writes and reads, or why Madebook cannot tell), run in the directory
// its Dir field names when it names one; for a patch tool (apply_patch),
// the files the patch adds, updates, deletes or moves to; for another
// tool, the paths in its registered path fields, else in the fields the
// executor's built-in names them in, else, with r.Guess, every string of
// the input. Each path is resolved (Where.Resolve); one outside the
// project is dropped. r.Resolved are added as written to.
func TouchesOf(tool string, in input.Object, r Reading) Touches {
	var t Touches
	add := func(p, by string, writes, glob bool) {
		if pl, ok := r.Where.Resolve(p); ok {
			t.Paths = append(t.Paths, Touch{Place: pl, Glob: glob, Writes: writes, By: by})
		} else if p = strings.TrimSpace(p); p != "" && !t.Guessed {
			t.Outside = append(t.Outside, p)
		}
	}
	b, builtin := BuiltinOf(SplitTool(tool))
	switch {
	case builtin && b.Class == Shell && r.PathFields == nil:
		var v [2]json.RawMessage
		in.Lookup([]string{b.Fields[0], b.Dir}, v[:])
		if dir, ok := input.String(v[1]); ok && b.Dir != "" && strings.TrimSpace(dir) != "" {
			r.Where.Cwd = r.Where.join(dir)
		}
		if cmd, ok := input.String(v[0]); ok {
			t.Undecidable = shellTouches(cmd, r, add)
		}
	case builtin && b.Class == Patch && r.PathFields == nil:
		var v [1]json.RawMessage
		in.Lookup(b.Fields, v[:])
		if patch, ok := input.String(v[0]); ok {
			for _, p := range PatchPaths(patch) {
				add(p, "apply_patch", true, false)
			}
		}
	case r.PathFields != nil:
		fieldTouches(in, r.PathFields, func(p, field string) { add(p, field, true, false) })
	case builtin:
		// Taken as written to: a read-only tool is not checked unless the
		// registry makes it side-effecting, and then its paths count.
		fieldTouches(in, b.Fields, func(p, field string) { add(p, field, true, false) })
	case r.Guess:
		t.Guessed = true
		if !everyString(in, func(p string) { add(p, "input", true, false) }) {
			t.Undecidable = fmt.Sprintf("its input holds more than %d strings", MaxStrings)
		}
	}
	for _, p := range r.Resolved {
		add(p, "", true, false)
	}
	return t
}

// Named returns the touches of the paths a call reports, each taken as
// written to, resolved where w places them; a path outside the project is
// dropped.
func Named(paths []string, w Where) Touches {
	var t Touches
	for _, p := range paths {
		if pl, ok := w.Resolve(p); ok {
			t.Paths = append(t.Paths, Touch{Place: pl, Writes: true})
		}
	}
	return t
}

// shellTouches adds what the command touches and returns why Madebook
// cannot tell all of it ("" when it can).
func shellTouches(cmd string, r Reading, add func(p, by string, writes, glob bool)) string {
	o := shell.Options{Home: r.Home, Script: r.Script}
	undecidable := ""
	for _, e := range shell.Analyze(cmd, o) {
		switch e.Kind {
		case shell.Undecidable:
			if undecidable == "" {
				undecidable = e.Why
			}
		case shell.Write, shell.Read:
			for _, p := range e.Paths {
				add(p.Name, e.Command, e.Kind == shell.Write, p.Glob)
			}
		}
	}
	return undecidable
}

// fieldTouches calls add for each path the input's fields name. A field
// is a member name, "a.b" for a member of an object member, "files[]" for
// each element of an array member ("edits[].file_path"); a field whose
// value is a string names it, an array names each string in it.
func fieldTouches(in input.Object, fields []string, add func(p, field string)) {
	var flat [1]json.RawMessage
	var whole map[string]json.RawMessage
	for _, f := range fields {
		first, rest, nested := strings.Cut(f, ".")
		key := strings.TrimSuffix(first, "[]")
		var raw json.RawMessage
		if !nested && key == first {
			in.Lookup([]string{key}, flat[:])
			raw = flat[0]
		} else {
			if whole == nil {
				whole = in.Map()
			}
			raw = whole[key]
		}
		if raw == nil {
			continue
		}
		if s, ok := input.String(raw); ok {
			add(s, f)
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		var path []string
		if nested {
			path = strings.Split(rest, ".")
		}
		walkField(v, path, func(s string) { add(s, f) })
	}
}

// walkField calls add for each string the value holds at the path of
// member names (each "[]" suffix, or an array met on the way, is walked
// element by element).
func walkField(v any, path []string, add func(string)) {
	switch x := v.(type) {
	case string:
		if len(path) == 0 {
			add(x)
		}
	case []any:
		for _, e := range x {
			walkField(e, path, add)
		}
	case map[string]any:
		if len(path) > 0 {
			walkField(x[strings.TrimSuffix(path[0], "[]")], path[1:], add)
		}
	}
}

// everyString calls add for every string in the input, nested objects and
// arrays included, that could be a path (one line, at most MaxPath
// bytes); false when the input holds more than MaxStrings strings.
func everyString(in input.Object, add func(string)) bool {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			if n++; n > MaxStrings {
				return false
			}
			if x != "" && len(x) <= MaxPath && !strings.ContainsAny(x, "\n\r\t\x00") {
				add(x)
			}
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if !walk(x[k]) {
					return false
				}
			}
		}
		return true
	}
	m := in.Map()
	for _, k := range sortedKeys(m) {
		var v any
		if json.Unmarshal(m[k], &v) == nil && !walk(v) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
