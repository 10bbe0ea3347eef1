// Package shell is the Bash command analyzer of the executor gate: given
// the command an agent's Bash tool call runs, it says what paths the
// command touches and how, so that the gate can hold the call against the
// scopes a plan blocks.
//
// The analysis is static and pure. It parses the command with the real
// shell grammar (mvdan.cc/sh, as Bash), then walks every simple command
// wherever it sits (lists, pipelines, subshells, blocks, command and
// process substitutions, if, for, while, until and case bodies, functions,
// and the strings sh -c, eval and trap run), following cd, pushd and popd,
// literal variable assignments and loop variables. It never touches the
// file system, the environment or the clock: whatever it would need from
// outside (the agent's home directory, the text of a script) comes through
// Options, and whatever it cannot know it reports as Undecidable, with the
// reason, rather than guessing.
//
// The analysis errs one way: where a command may or may not touch a path,
// it says it may. A command Madebook does not know writes every path it
// names; a directory that depends on which branch ran is every directory it
// may be; a code string handed to an interpreter writes every path-like
// token in it.
package shell

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Options is what the caller knows beyond the command.
type Options struct {
	// Home expands ~ and $HOME (and ~/x); "" leaves them undecidable (the server cannot know the agent's home).
	Home string
	// Script returns the text of a shell script the command runs (bash x.sh, sh x.sh, ./x.sh, scripts/x.sh,
	// source x.sh, . x.sh), given its path as the command names it joined with the directory it runs in
	// (relative to the start directory, or absolute). nil, or false: the script is undecidable.
	Script func(path string) (string, bool)
}

// Kind is how a command touches the paths of an Effect.
type Kind uint8

const (
	Read        Kind = iota + 1 // the command only reads Paths
	Write                       // it may create, change, delete or move Paths (or it is a command Madebook does not know, and names them)
	Undecidable                 // Madebook cannot tell what it touches
)

// String names the kind as the reasons an agent reads do.
func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	case Undecidable:
		return "undecidable"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Effect is one thing the command does to the file system.
type Effect struct {
	Kind Kind
	// Command names what does it, for the reasons an agent reads: the command word(s) after quote removal
	// ("rm", "git checkout", "sed -i", "find -delete"), or the redirection operator (">", ">>", "2>", "&>") for a redirection.
	Command string
	// Paths are the paths, for Read and Write (may be empty for Undecidable).
	Paths []Path
	// Why says, for Undecidable, what cannot be decided, as a phrase that fits "Madebook cannot tell what the command touches: <Why>":
	// "it expands the variable $D, which comes from the environment", "eval runs a string as a command",
	// "the path is built by $(…)", "xargs takes its arguments from its input", "it runs the script x.py, in another language",
	// "it runs the script x.sh, which Madebook cannot read here", "~ is the agent's home directory, which Madebook cannot know here",
	// "the command does not parse: <parser message>", "the directory cd changed to comes from $X".
	Why string
}

// Path is one path an Effect touches.
type Path struct {
	// Name is the path as the command names it, quotes and escapes removed, joined (path.Join) with the directory
	// the command runs in when relative (cd followed): `cd db && echo x > migrations/3.sql` names "db/migrations/3.sql".
	// Relative names stay relative to the directory the whole command started in; absolute ones stay absolute; "~" is expanded when Options.Home is set.
	Name string
	// Glob: Name holds unquoted glob metacharacters (*, ?, [...]) and is a pattern, which the caller matches as such.
	// In a pattern, a metacharacter the command quoted is escaped with a backslash (`rm 'a*'b*` names the pattern `a\*b*`),
	// as path.Match reads it.
	Glob bool
}

// The limits of one analysis. Past each, the analysis says Undecidable
// rather than spend more: the gate answers before every tool call, and a
// command an agent writes is far smaller than any of them.
const (
	// MaxEffects is the most effects Analyze returns; the last of them is
	// then an Undecidable "the command is too large to analyze".
	MaxEffects = 1000
	// maxCommand is the longest command (or script, or string sh -c runs)
	// analyzed, in bytes.
	maxCommand = 100_000
	// maxDepth bounds how deeply sh -c strings, eval, trap, scripts,
	// functions and aliases may nest.
	maxDepth = 8
	// maxLoopWords is the most words a for loop's list may expand to for
	// its variable to be followed.
	maxLoopWords = 64
	// maxFields is the most fields one word may expand to (brace
	// expansion, a variable with several values).
	maxFields = 256
	// maxDirs is the most directories the analysis keeps as where a
	// command may run (after branches that cd differently).
	maxDirs = 16
	// maxWord is the longest word (a path, a variable's value) followed,
	// in bytes; a variable that doubles itself in a loop would grow past
	// any memory.
	maxWord = 16 << 10
	// maxWork bounds the statements and words one analysis walks, counting
	// loop bodies and functions once per pass or call.
	maxWork = 50_000
)

// Why phrases used in more than one place.
const (
	whyTooLarge = "the command is too large to analyze"
	whyTooDeep  = "it nests shells, scripts, eval or functions more than 8 deep"
	whyInternal = "Madebook failed to analyze it"
	whyLongWord = "the word is too long to analyze"
	whyHome     = "~ is the agent's home directory, which Madebook cannot know here"
	whyHomeVar  = "$HOME is the agent's home directory, which Madebook cannot know here"
)

// Analyze returns what cmd does to the file system, in the order it appears. It never panics, and returns at most MaxEffects effects
// (past that, one last Undecidable "the command is too large to analyze").
//
// Within one simple command, what its words' command substitutions do
// comes first, then its redirections (the shell opens them before the
// command runs), then what the command itself does. Identical effects are
// reported once.
func Analyze(cmd string, o Options) (effects []Effect) {
	if len(cmd) > maxCommand {
		return []Effect{{Kind: Undecidable, Why: "the command is too long to analyze (more than 100000 bytes)"}}
	}
	a := &analyzer{o: o}
	defer func() {
		// A bug must not take the gate down with it: what was found so far
		// stands, and the rest is undecidable.
		if r := recover(); r != nil {
			effects = append(a.effects, Effect{Kind: Undecidable, Why: whyInternal})
		}
	}()
	st := newState()
	a.source(cmd, st, "the command", true)
	a.uncalled()
	return a.effects
}

// analyzer holds one analysis: what it found and what it has spent.
type analyzer struct {
	o       Options
	effects []Effect
	// full is set once MaxEffects or maxWork is reached: the analysis
	// stops.
	full bool
	work int
	// funcs are the functions defined anywhere in the analysis, so that
	// those never called are analyzed at the end.
	funcs []*function
	// src is the text the nodes being walked were parsed from, for the
	// reasons that quote it.
	src string
	// last is the command the last simple command led to, through
	// wrappers: the probe analyzer that tells whether a command xargs or
	// find -exec runs is read-only reads it.
	last string
	// groups counts the groups of fields given out (field.group).
	groups uint32
	// tail is set while the statement analyzed is in tail position:
	// nothing reads the shell's state after it (see analyzer.stmt).
	tail bool
}

// source parses text (the command, a script, the string sh -c runs) and
// analyzes it in st. what names the text in the reason a parse error
// gives ("the command", "the script x.sh"); tail says whether the state
// the text leaves is dropped (the text runs in a shell of its own, or is
// the whole command).
func (a *analyzer) source(text string, st *state, what string, tail bool) {
	if a.full {
		return
	}
	if len(text) > maxCommand {
		a.undecidable("", what+" is too long to analyze (more than 100000 bytes)")
		return
	}
	f, err := parse(text)
	if err != nil {
		a.undecidable("", what+" does not parse: "+err.Error())
		return
	}
	old, outer := a.src, a.tail
	a.src, a.tail = text, tail
	a.stmts(f.Stmts, st)
	a.src, a.tail = old, outer
}

// parser is a Bash parser and the reader it reads from, reused across
// analyses (neither is safe for concurrent use; one taken from the pool is
// used by one analysis at a time).
type parser struct {
	p *syntax.Parser
	r strings.Reader
}

var parsers = sync.Pool{New: func() any { return &parser{p: syntax.NewParser(syntax.Variant(syntax.LangBash))} }}

// parse parses text as Bash.
func parse(text string) (*syntax.File, error) {
	p := parsers.Get().(*parser)
	p.r.Reset(text)
	f, err := p.p.Parse(&p.r, "")
	p.r.Reset("")
	parsers.Put(p)
	return f, err
}

// uncalled analyzes the functions the command defines but never calls, in
// the state they were defined in: a function may be called in ways the
// analysis does not see.
func (a *analyzer) uncalled() {
	for i := 0; i < len(a.funcs) && !a.full; i++ {
		fn := a.funcs[i]
		if fn.called {
			continue
		}
		fn.called = true
		st := fn.def.clone()
		st.args, st.argsKnown = nil, false
		a.callBody(fn, st)
	}
}

// spend counts n units of work and reports whether the analysis must stop.
func (a *analyzer) spend(n int) bool {
	if a.full {
		return true
	}
	a.work += n
	if a.work > maxWork {
		a.stopWith()
		return true
	}
	return false
}

// stopWith ends the analysis with the Undecidable that says it is too
// large.
func (a *analyzer) stopWith() {
	if !a.full {
		a.effects = append(a.effects, Effect{Kind: Undecidable, Why: whyTooLarge})
		a.full = true
	}
}

// emit records e unless the same effect is already recorded.
func (a *analyzer) emit(e Effect) {
	if a.full {
		return
	}
	for i := range a.effects {
		if sameEffect(&a.effects[i], &e) {
			return
		}
	}
	if len(a.effects) >= MaxEffects-1 {
		a.stopWith()
		return
	}
	if a.effects == nil {
		a.effects = make([]Effect, 0, 4)
	}
	a.effects = append(a.effects, e)
}

func sameEffect(x, y *Effect) bool {
	if x.Kind != y.Kind || x.Command != y.Command || x.Why != y.Why || len(x.Paths) != len(y.Paths) {
		return false
	}
	for i := range x.Paths {
		if x.Paths[i] != y.Paths[i] {
			return false
		}
	}
	return true
}

// undecidable records that command does something Madebook cannot tell.
func (a *analyzer) undecidable(command, why string) {
	a.emit(Effect{Kind: Undecidable, Command: command, Why: why})
}

// touch records that command reads or writes the paths fs name, resolved
// against the directories d. Fields Madebook cannot decide make an
// Undecidable each (for a write: a read of an unknown path changes
// nothing).
func (a *analyzer) touch(kind Kind, command string, d dirs, fs ...field) {
	if len(fs) == 0 {
		return
	}
	paths := make([]Path, 0, len(fs))
	var whys []string
	var seen map[Path]bool
	add := func(n name) {
		if len(paths) < 16 {
			paths = addPath(paths, n)
			return
		}
		if seen == nil {
			seen = make(map[Path]bool, len(fs))
			for _, p := range paths {
				seen[p] = true
			}
		}
		if p := n.path(); !seen[p] && !isDevice(p.Name) {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, f := range fs {
		if f.fd {
			continue
		}
		if f.why != "" {
			if len(whys) < 16 {
				whys = appendNew(whys, f.why)
			}
			continue
		}
		if f.lit == "" {
			continue // an empty argument names no file
		}
		if f.anchored || path.IsAbs(f.lit) {
			add(cleanName(f.name))
			continue
		}
		if d.why != "" {
			whys = appendNew(whys, d.why)
			continue
		}
		for _, dir := range d.list() {
			add(joinName(dir, f.name))
		}
	}
	if len(paths) > 0 {
		a.emit(Effect{Kind: kind, Command: command, Paths: slices.Clip(paths)})
	}
	if kind == Read {
		return
	}
	for _, why := range whys {
		a.undecidable(command, why)
	}
}

// addPath adds n to paths unless it is already there or names a device
// that holds no file (/dev/null, /dev/stdout, …).
func addPath(paths []Path, n name) []Path {
	p := n.path()
	if isDevice(p.Name) {
		return paths
	}
	for _, q := range paths {
		if q == p {
			return paths
		}
	}
	return append(paths, p)
}

// isDevice reports whether name is a device that writing to or reading
// from touches no file.
func isDevice(name string) bool {
	if devices()[name] {
		return true
	}
	return strings.HasPrefix(name, "/dev/fd/") || strings.HasPrefix(name, "/proc/self/fd/")
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// snippet returns the source text of node, for a reason that quotes it,
// or def when the text is not at hand.
func (a *analyzer) snippet(node syntax.Node, def string) string {
	start, end := int(node.Pos().Offset()), int(node.End().Offset())
	if start < 0 || end > len(a.src) || start >= end || end-start > 40 {
		return def
	}
	return a.src[start:end]
}
