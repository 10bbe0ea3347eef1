package shell

import (
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// name is a path, or a part of one, spelled twice: as it is, and as a
// pattern. The two differ only where the text holds glob metacharacters.
type name struct {
	lit  string // the text, quotes and escapes removed
	pat  string // the text as a pattern: metacharacters that are literal escaped with `\`
	glob bool   // pat holds metacharacters that are not escaped: the name is a pattern
}

// litName is the name of the literal text s.
func litName(s string) name { return name{lit: s, pat: escapeMeta(s)} }

// path is n as an Effect reports it.
func (n name) path() Path {
	if n.glob {
		return Path{Name: n.pat, Glob: true}
	}
	return Path{Name: n.lit}
}

func cleanName(n name) name {
	lit := path.Clean(n.lit)
	pat := lit
	if n.pat != n.lit {
		pat = path.Clean(n.pat)
	}
	return name{lit: lit, pat: pat, glob: n.glob}
}

// joinName is n relative to the directory dir.
func joinName(dir, n name) name {
	if dir.lit == "." {
		return cleanName(n)
	}
	lit := path.Join(dir.lit, n.lit)
	pat := lit
	if dir.pat != dir.lit || n.pat != n.lit {
		pat = path.Join(dir.pat, n.pat)
	}
	return name{lit: lit, pat: pat, glob: dir.glob || n.glob}
}

// escapeMeta escapes the characters path.Match gives a meaning to.
func escapeMeta(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '[' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dirs is the directory a command runs in: one of alts, all relative to
// the start directory or absolute, or, when why is set, a directory
// Madebook cannot tell (why says why). After branches that cd differently
// there are several alternatives, and a relative path is each of them
// joined with it.
type dirs struct {
	alts []name // nil is the start directory alone
	why  string
}

// startDir is the list of the start directory; it is never changed.
var startDir = []name{{lit: ".", pat: "."}}

func (d dirs) list() []name {
	if d.alts == nil {
		return startDir
	}
	return d.alts
}

// unknownDir is a directory Madebook cannot tell, for why.
func unknownDir(why string) dirs { return dirs{why: why} }

// join is the directory f names, relative to d: where cd f goes. what
// names the command ("cd", "git -C") in the reason an undecidable f gives.
func (d dirs) join(f field, what string) dirs {
	if f.why != "" {
		if f.src == "" {
			return unknownDir("the directory " + what + " changed to cannot be told: " + f.why)
		}
		return unknownDir("the directory " + what + " changed to comes from " + f.src)
	}
	if f.fd {
		return unknownDir("the directory " + what + " changed to is a process substitution")
	}
	if f.anchored || path.IsAbs(f.lit) {
		return dirs{alts: []name{cleanName(f.name)}}
	}
	if d.why != "" {
		return d
	}
	var alts []name
	for _, dir := range d.list() {
		alts = addName(alts, joinName(dir, f.name))
	}
	return dirs{alts: alts}
}

// joinAll is the directory cd goes to when its operand may be any of fs
// (the values of a loop's variable).
func (d dirs) joinAll(fs []field, what string) dirs {
	to := d.join(fs[0], what)
	if len(fs) == 1 {
		return to
	}
	for _, f := range fs[1:] {
		to = mergeDirs(to, d.join(f, what))
	}
	return to
}

func addName(list []name, n name) []name {
	if slices.Contains(list, n) {
		return list
	}
	return append(list, n)
}

// mergeDirs is the directory after one of two branches ran, one ending in
// x and the other in y.
func mergeDirs(x, y dirs) dirs {
	switch {
	case x.why != "":
		return x
	case y.why != "":
		return y
	case sameDirs(x, y):
		return x
	}
	alts := slices.Clone(x.list())
	for _, n := range y.list() {
		alts = addName(alts, n)
	}
	if len(alts) > maxDirs {
		return unknownDir("the directory it runs in depends on which of too many branches ran")
	}
	return dirs{alts: alts}
}

func sameDirs(x, y dirs) bool {
	if x.why != "" || y.why != "" {
		return x.why == y.why
	}
	xs, ys := x.list(), y.list()
	if len(xs) != len(ys) {
		return false
	}
	for _, n := range xs {
		if !slices.Contains(ys, n) {
			return false
		}
	}
	return true
}

// variable is a shell variable the command set: the values it may hold
// (one, unless it is a loop's variable or set differently in branches).
type variable struct {
	alts     []field
	exported bool
}

// function is a shell function the command defines.
type function struct {
	name   string
	body   *syntax.Stmt
	src    string // the text body was parsed from
	def    *state // the state it was defined in, for when it is never called
	called bool
}

// state is what the analysis knows of the shell at one point of the
// command: the directory, the variables and functions, the positional
// parameters. Branches and subshells work on clones; the maps are shared
// between clones until one of them changes (own says which it may change).
type state struct {
	dir dirs
	old dirs // where cd - returns to
	// stack is pushd's directory stack, top last; stackWhy, when set, says
	// why its entries cannot be told.
	stack    []dirs
	stackWhy string
	vars     map[string]*variable
	funcs    map[string]*function
	aliases  map[string]string
	own      uint8
	// args are the positional parameters, when argsKnown: in a function, a
	// script or the string sh -c runs, their arguments.
	args      []field
	argsKnown bool
	// depth counts the nested shells, scripts, eval strings and function
	// calls the state is in.
	depth int
	// dead is set after exit or return: what follows does not run, and a
	// branch that ends dead does not count where branches merge.
	dead bool
}

// The maps a state owns (may change in place).
const (
	ownVars uint8 = 1 << iota
	ownFuncs
	ownAliases
)

func newState() *state {
	return &state{old: unknownDir("cd - returns to $OLDPWD, which comes from the environment")}
}

// clone is a copy of st whose changes do not reach st.
func (st *state) clone() *state {
	c := *st
	c.own = 0
	st.own = 0
	return &c
}

// subshell is the state a subshell, a pipeline's command or a background
// job starts in.
func (st *state) subshell() *state { return st.clone() }

// child is the state a new shell starts in (sh -c, bash x.sh, ./x.sh): the
// same directory, the exported variables and those env sets, no
// functions. A variable the shell set without exporting it reaches the
// child only if it came from the environment: the child sees it or
// nothing.
func (st *state) child(env []envVar) *state {
	c := &state{dir: st.dir, old: st.old, depth: st.depth + 1}
	for n, v := range st.vars {
		if v.exported {
			c.setVar(n, v)
			continue
		}
		alts := slices.Clone(v.alts)
		alts = addField(alts, field{})
		c.setVar(n, &variable{alts: alts})
	}
	for _, e := range env {
		c.setVar(e.name, &variable{alts: e.alts, exported: true})
	}
	return c
}

func (st *state) setVar(n string, v *variable) {
	if st.own&ownVars == 0 {
		st.vars = maps.Clone(st.vars)
		if st.vars == nil {
			st.vars = map[string]*variable{}
		}
		st.own |= ownVars
	}
	st.vars[n] = v
}

func (st *state) setFunc(n string, f *function) {
	if st.own&ownFuncs == 0 {
		st.funcs = maps.Clone(st.funcs)
		if st.funcs == nil {
			st.funcs = map[string]*function{}
		}
		st.own |= ownFuncs
	}
	st.funcs[n] = f
}

func (st *state) setAlias(n, text string) {
	if st.own&ownAliases == 0 {
		st.aliases = maps.Clone(st.aliases)
		if st.aliases == nil {
			st.aliases = map[string]string{}
		}
		st.own |= ownAliases
	}
	st.aliases[n] = text
}

// restoreVar sets the variable n back to v (nil: unset by the command,
// from the environment).
func (st *state) restoreVar(n string, v *variable) {
	if v != nil {
		st.setVar(n, v)
		return
	}
	if _, ok := st.vars[n]; ok {
		st.setVar(n, nil)
		delete(st.vars, n)
	}
}

// undecidableVar makes the variable n one Madebook cannot tell, for why.
func (st *state) undecidableVar(n, why string) {
	old := st.vars[n]
	st.setVar(n, &variable{alts: []field{{why: why, src: "$" + n}}, exported: old != nil && old.exported})
}

// lookup returns the values the variable n may hold, and whether the
// command set it (false: it comes from the environment).
func (st *state) lookup(n string) ([]field, bool) {
	if v := st.vars[n]; v != nil {
		return v.alts, true
	}
	return nil, false
}

// envField is the value of a variable that comes from the environment.
func envField(n string) field {
	return field{why: "it expands the variable $" + n + ", which comes from the environment", src: "$" + n}
}

// merge makes st the state after one of two branches ran, one ending in st
// and the other in o.
func (st *state) merge(o *state) {
	if o.dead {
		return
	}
	if st.dead {
		*st = *o.clone()
		return
	}
	st.dir = mergeDirs(st.dir, o.dir)
	st.old = mergeDirs(st.old, o.old)
	switch {
	case st.stackWhy != "":
	case o.stackWhy != "":
		st.stack, st.stackWhy = nil, o.stackWhy
	case len(st.stack) != len(o.stack):
		st.stack, st.stackWhy = nil, "the directory stack depends on which branch ran"
	default:
		var stack []dirs
		for i := range st.stack {
			stack = append(stack, mergeDirs(st.stack[i], o.stack[i]))
		}
		st.stack = stack
	}
	st.mergeVars(o)
	for n, f := range o.funcs {
		if st.funcs[n] == nil {
			st.setFunc(n, f)
		}
	}
	for n, t := range o.aliases {
		if _, ok := st.aliases[n]; !ok {
			st.setAlias(n, t)
		}
	}
	if st.argsKnown && o.argsKnown && !sameFields(st.args, o.args) || st.argsKnown != o.argsKnown {
		st.args, st.argsKnown = nil, false
	}
}

func (st *state) mergeVars(o *state) {
	if len(st.vars) == 0 && len(o.vars) == 0 {
		return
	}
	names := map[string]bool{}
	for n := range st.vars {
		names[n] = true
	}
	for n := range o.vars {
		names[n] = true
	}
	for n := range names {
		x, y := st.vars[n], o.vars[n]
		if x == y {
			continue
		}
		xa, ya := alts(n, x), alts(n, y)
		if sameFields(xa, ya) {
			continue
		}
		merged := slices.Clone(xa)
		for _, f := range ya {
			merged = addField(merged, f)
		}
		if len(merged) > maxLoopWords {
			merged = []field{{why: "it expands the variable $" + n + ", which may hold too many values", src: "$" + n}}
		}
		st.setVar(n, &variable{alts: merged, exported: x != nil && x.exported || y != nil && y.exported})
	}
}

// alts is the values of v, the variable n (nil: from the environment).
func alts(n string, v *variable) []field {
	if v == nil {
		return []field{envField(n)}
	}
	return v.alts
}

// same reports whether st and o know the same of the shell, for a loop's
// analysis to tell when another pass would find nothing new.
func (st *state) same(o *state) bool {
	if !sameDirs(st.dir, o.dir) || !sameDirs(st.old, o.old) || st.stackWhy != o.stackWhy || len(st.stack) != len(o.stack) {
		return false
	}
	for i := range st.stack {
		if !sameDirs(st.stack[i], o.stack[i]) {
			return false
		}
	}
	if len(st.vars) != len(o.vars) {
		return false
	}
	for n, v := range st.vars {
		w := o.vars[n]
		if w == nil || (v != w && !sameFields(v.alts, w.alts)) {
			return false
		}
	}
	return true
}

// widen makes what changed between the passes prev and st of a loop
// undecidable, so that one more pass settles it.
func (st *state) widen(prev *state) {
	if !sameDirs(st.dir, prev.dir) {
		st.dir = unknownDir("the directory changes with each pass of a loop")
	}
	if !sameDirs(st.old, prev.old) {
		st.old = unknownDir("the directory cd - returns to changes with each pass of a loop")
	}
	if len(st.stack) != len(prev.stack) {
		st.stack, st.stackWhy = nil, "the directory stack changes with each pass of a loop"
	}
	for n, v := range st.vars {
		if w := prev.vars[n]; w == nil || (v != w && !sameFields(v.alts, w.alts)) {
			st.undecidableVar(n, "it expands the variable $"+n+", which changes with each pass of a loop")
		}
	}
}

// sameFields reports whether xs and ys hold the same values, in any order.
func sameFields(xs, ys []field) bool {
	if len(xs) != len(ys) {
		return false
	}
	for _, x := range xs {
		found := false
		for _, y := range ys {
			if x.same(y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func addField(list []field, f field) []field {
	for _, g := range list {
		if g.same(f) {
			return list
		}
	}
	return append(list, f)
}
