package shell

import (
	"path"
	"slices"
	"strings"
	"sync"
)

// cmd is a simple command after expansion, ready to be analyzed.
type cmd struct {
	st   *state
	args []field // args[0] is the command name
	env  []envVar
	// stdin is the text a here-document or here-string feeds the command,
	// when Madebook can tell it.
	stdin *string
	// noAlias is the alias being expanded, which is not expanded again.
	noAlias string
}

func (c *cmd) name() string { return c.args[0].lit }

// with is c running other arguments (a wrapper's command).
func (c *cmd) with(args []field) *cmd {
	d := *c
	d.args = args
	return &d
}

func litField(s string) field { return field{name: litName(s)} }

// run analyzes the simple command c.
func (a *analyzer) run(c *cmd) {
	if a.full || len(c.args) == 0 {
		return
	}
	f := c.args[0]
	switch {
	case f.why != "":
		command := f.lit
		if command == "" {
			command = f.src
		}
		a.undecidable(command, f.why)
		return
	case f.fd:
		a.undecidable("", "it runs a command named by a process substitution")
		return
	case f.glob:
		a.undecidable(f.pat, "the command name is a pattern, which Madebook cannot resolve")
		return
	case f.lit == "":
		return
	}
	name := f.lit
	st := c.st
	if fn := st.funcs[name]; fn != nil {
		a.callFunc(fn, c.args[1:], c.env, st)
		return
	}
	if text, ok := st.aliases[name]; ok && name != c.noAlias {
		a.alias(c, text)
		return
	}
	if strings.Contains(name, "/") {
		dir, base := path.Split(name)
		if !binDirs()[path.Clean(dir)] || base == "" {
			a.last = name
			a.script(c, f, c.args[1:], execScript)
			return
		}
		name = base
		c = c.with(append([]field{litField(base)}, c.args[1:]...))
	}
	if b := builtins()[name]; b != 0 {
		a.last = name
		a.builtin(c, b)
		return
	}
	if w, ok := wrappers()[name]; ok {
		a.wrap(c, w)
		return
	}
	if name == "xargs" {
		a.last = name
		a.xargs(c)
		return
	}
	a.last = name
	switch {
	case readOnly()[name]:
		return
	case conditional()[name]:
		a.conditional(c)
		return
	}
	if w, ok := writers()[name]; ok {
		a.writer(c, w)
		return
	}
	if ip, ok := interpreterOf(name); ok {
		a.interpret(c, ip)
		return
	}
	if shells()[name] {
		a.shell(c)
		return
	}
	a.unknown(c)
}

// interpreterOf finds the interpreter name runs, python3.12 being python.
func interpreterOf(name string) (interp, bool) {
	if ip, ok := interpreters()[name]; ok {
		return ip, true
	}
	base := strings.TrimRight(name, "0123456789.")
	if base != name {
		ip, ok := interpreters()[base]
		return ip, ok
	}
	return interp{}, false
}

// optSpec says how a command's options read.
type optSpec struct {
	// short are the short options that take a value, glued (-oFILE) or
	// apart (-o FILE).
	short string
	// glued are the short options whose value, optional, can only be
	// glued (sed -i.bak).
	glued string
	// long are the long options that take a value, --name=value or
	// --name value; an unambiguous abbreviation of one is it.
	long []string
	// gnu: options may follow operands, as GNU's tools allow; else they end
	// at the first operand.
	gnu bool
}

// shortNames are the names of the one-letter options, built once, on
// first use.
var shortNames = sync.OnceValue(func() (n *[256]string) {
	n = new([256]string)
	for i := range n {
		n[i] = "-" + string(rune(i))
	}
	return n
})

// scan sorts args (the arguments after a command name) into options and
// operands, calling opt (which may be nil) for each option with its value.
// Options are read as getopt does: -abc is -a -b -c unless one of them
// takes a value, which is then the rest of the argument or the next one;
// -- ends the options. A word Madebook cannot tell is an operand.
func scan(args []field, sp optSpec, opt func(name string, val field, has bool)) []field {
	if opt == nil {
		opt = func(string, field, bool) {}
	}
	var ops []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.lit
		if !f.known() || len(s) < 2 || s[0] != '-' {
			ops = append(ops, f)
			if !sp.gnu {
				return append(ops, args[i+1:]...)
			}
			continue
		}
		if s == "--" {
			return append(ops, args[i+1:]...)
		}
		if strings.HasPrefix(s, "--") {
			n, _, eq := strings.Cut(s[2:], "=")
			full := longName(n, sp.long)
			switch {
			case eq:
				if full == "" {
					full = n
				}
				opt("--"+full, f.trim(len(n)+3), true)
			case full != "" && i+1 < len(args):
				i++
				opt("--"+full, args[i], true)
			default:
				opt(s, field{}, false)
			}
			continue
		}
		for j := 1; j < len(s); j++ {
			ch := s[j]
			if strings.IndexByte(sp.short, ch) >= 0 {
				switch {
				case j+1 < len(s):
					opt(shortNames()[ch], f.trim(j+1), true)
				case i+1 < len(args):
					i++
					opt(shortNames()[ch], args[i], true)
				default:
					opt(shortNames()[ch], field{}, false)
				}
				break
			}
			if strings.IndexByte(sp.glued, ch) >= 0 {
				opt(shortNames()[ch], f.trim(j+1), j+1 < len(s))
				break
			}
			opt(shortNames()[ch], field{}, false)
		}
	}
	return ops
}

// longName is the long option of names n is, or abbreviates, or "".
func longName(n string, names []string) string {
	full := ""
	for _, m := range names {
		if m == n {
			return m
		}
		if len(n) >= 3 && strings.HasPrefix(m, n) {
			if full != "" {
				return ""
			}
			full = m
		}
	}
	return full
}

// is reports whether the option name is one of names.
func is(name string, names []string) bool { return slices.Contains(names, name) }

// unknown is the rule for a command Madebook does not know: it writes
// every operand, the value of every --name=value (and -name=value), and the
// glued value of every short option (-xVALUE: VALUE); everything after --
// is an operand.
// The caller decides which of those lie in a scope it guards: `make test`
// writes "test", and `go build ./...` writes "..." (./... joined with the
// directory). A URL (with ://) names no local file and is left out.
func (a *analyzer) unknown(c *cmd) {
	fs := make([]field, 0, len(c.args)-1)
	dash := false
	for _, f := range c.args[1:] {
		s := f.lit
		switch {
		case !f.known() || dash:
			fs = append(fs, f)
			continue
		case s == "--":
			dash = true
			continue
		case strings.HasPrefix(s, "--"):
			if i := strings.IndexByte(s, '='); i >= 0 {
				f = f.trim(i + 1)
			} else {
				continue
			}
		case len(s) > 2 && s[0] == '-':
			if i := strings.IndexByte(s, '='); i >= 0 {
				f = f.trim(i + 1) // -count=1, as Go's tools write it
			} else {
				f = f.trim(2)
			}
		case len(s) >= 1 && s[0] == '-':
			continue
		}
		if strings.Contains(f.lit, "://") {
			continue
		}
		fs = append(fs, f)
	}
	a.touch(Write, c.name(), c.st.dir, fs...)
}

// builtin analyzes a shell builtin of the builtins table.
func (a *analyzer) builtin(c *cmd, b builtin) {
	st := c.st
	args := c.args[1:]
	switch b {
	case bCd:
		ops := scan(args, optSpec{}, nil)
		var to dirs
		switch {
		case len(ops) == 0:
			to = a.homeDir(st)
		case ops[0].known() && ops[0].lit == "-":
			to = st.old
		default:
			to = st.dir.joinAll(operands(ops)[0], "cd")
		}
		st.old, st.dir = st.dir, to
	case bPushd:
		ops := scan(args, optSpec{}, nil)
		switch {
		case len(ops) == 0:
			if n := len(st.stack); n > 0 {
				stack := slices.Clone(st.stack)
				stack[n-1], st.dir = st.dir, stack[n-1]
				st.stack = stack
			}
		case ops[0].known() && rotation(ops[0].lit):
			st.dir = unknownDir("pushd rotates the directory stack, which Madebook does not follow")
			st.stack, st.stackWhy = nil, "pushd rotated the directory stack"
		default:
			to := st.dir.joinAll(operands(ops)[0], "pushd")
			st.stack = append(slices.Clip(st.stack), st.dir)
			st.old, st.dir = st.dir, to
		}
	case bPopd:
		ops := scan(args, optSpec{}, nil)
		switch {
		case len(ops) > 0:
			st.stack, st.stackWhy = nil, "popd removed an entry of the directory stack"
		case len(st.stack) > 0:
			n := len(st.stack)
			st.old, st.dir = st.dir, st.stack[n-1]
			st.stack = slices.Clip(st.stack[:n-1])
		case st.stackWhy != "":
			st.old, st.dir = st.dir, unknownDir("the directory popd returns to is not known: "+st.stackWhy)
		}
	case bEval:
		text, ok := fieldsText(args)
		if !ok {
			a.undecidable("eval", "eval runs a string as a command")
			return
		}
		a.inline(c, text, "the string eval runs", "eval")
	case bTrap:
		ops := scan(args, optSpec{}, nil)
		if len(ops) < 2 {
			return
		}
		act := ops[0]
		if act.known() && (act.lit == "" || act.lit == "-" || isFD(act.lit)) {
			return
		}
		if !act.known() || act.glob {
			a.undecidable("trap", "trap runs a string as a command that Madebook cannot tell")
			return
		}
		// The trap runs later, where the shell then is: analyzed here,
		// in a copy of the state, as the nearest Madebook can tell.
		a.inline(c.with(c.args[:1]).withState(st.clone()), act.lit, "the string trap runs", "trap")
	case bSource:
		if len(args) == 0 {
			return
		}
		a.script(c, args[0], args[1:], sourceScript)
	case bAlias:
		for _, f := range args {
			if !f.known() {
				continue
			}
			if n, v, ok := strings.Cut(f.lit, "="); ok && n != "" {
				st.setAlias(n, v)
			}
		}
	case bRead:
		names := scan(args, optSpec{short: "adinNptu"}, func(n string, v field, has bool) {
			if n == "-a" && has && v.known() {
				st.undecidableVar(v.lit, "it expands the array $"+v.lit+", which read takes from the input")
			}
		})
		if len(names) == 0 {
			names = []field{litField("REPLY")}
		}
		for _, n := range names {
			if n.known() {
				st.undecidableVar(n.lit, "it expands the variable $"+n.lit+", which read takes from the input")
			}
		}
	case bMapfile:
		ops := scan(args, optSpec{short: "dnOsuCc"}, nil)
		n := "MAPFILE"
		if len(ops) > 0 && ops[len(ops)-1].known() {
			n = ops[len(ops)-1].lit
		}
		st.undecidableVar(n, "it expands the array $"+n+", which mapfile takes from the input")
	case bGetopts:
		if len(args) >= 2 && args[1].known() {
			st.undecidableVar(args[1].lit, "it expands the variable $"+args[1].lit+", which getopts takes from the arguments")
		}
	case bPrintf:
		scan(args, optSpec{short: "v"}, func(n string, v field, has bool) {
			if n == "-v" && has && v.known() {
				st.undecidableVar(v.lit, "it expands the variable $"+v.lit+", which printf -v formats")
			}
		})
	case bUnset:
		funcs := false
		ops := scan(args, optSpec{}, func(n string, _ field, _ bool) {
			if n == "-f" {
				funcs = true
			}
		})
		for _, n := range ops {
			if !n.known() {
				continue
			}
			if funcs {
				st.setFunc(n.lit, nil)
				continue
			}
			st.setVar(n.lit, &variable{alts: []field{{}}})
		}
	case bShift:
		if !st.argsKnown {
			return
		}
		k := 1
		if len(args) > 0 {
			k = atoi(args[0].lit)
		}
		if k < 0 || k > len(st.args) {
			k = len(st.args)
		}
		st.args = st.args[k:]
	case bSet:
		for i, f := range args {
			if f.known() && f.lit == "--" {
				st.args, st.argsKnown = args[i+1:], true
				return
			}
		}
		if len(args) > 0 && args[0].known() && args[0].lit != "" && args[0].lit[0] != '-' && args[0].lit[0] != '+' {
			st.args, st.argsKnown = args, true
		}
	case bExit:
		st.dead = true
	}
}

func (c *cmd) withState(st *state) *cmd {
	d := *c
	d.st = st
	return &d
}

// rotation reports whether s is a +N or -N of pushd and popd.
func rotation(s string) bool {
	return len(s) > 1 && (s[0] == '+' || s[0] == '-') && atoi(s[1:]) >= 0
}

// atoi is the decimal s, or -1.
func atoi(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// homeDir is where cd alone goes: the home directory.
func (a *analyzer) homeDir(st *state) dirs {
	x := expander{a: a, st: st}
	h := x.home("~", whyHome)
	if len(h) != 1 || !h[0].known() {
		return unknownDir("the directory cd changed to is the agent's home directory, which Madebook cannot know here")
	}
	return st.dir.join(h[0], "cd")
}

// inline analyzes text (eval's string, trap's) in the same shell.
func (a *analyzer) inline(c *cmd, text, what, command string) {
	st := c.st
	if st.depth >= maxDepth {
		a.undecidable(command, whyTooDeep)
		return
	}
	st.depth++
	a.source(text, st, what, false)
	st.depth--
}

// alias analyzes a call of an alias the command defined: its text with
// the call's arguments after it.
func (a *analyzer) alias(c *cmd, text string) {
	name := c.name()
	st := c.st
	if st.depth >= maxDepth {
		a.undecidable(name, whyTooDeep)
		return
	}
	if words, ok := aliasWords(text); ok {
		st.depth++
		old := a.src
		a.src = text
		args := a.words(words, st)
		a.src = old
		d := c.with(append(args, c.args[1:]...))
		d.noAlias = name
		a.run(d)
		st.depth--
		return
	}
	a.inline(c, text, "the alias "+name, name)
}

// xargs runs its command with arguments it reads: read-only if the
// command is, else undecidable.
func (a *analyzer) xargs(c *cmd) {
	ops := scan(c.args[1:], optSpec{short: "aEdILnPs", glued: "eil", long: list("arg-file delimiter eof replace max-lines max-args max-procs max-chars process-slot-var")},
		func(n string, v field, has bool) {
			if (n == "-a" || n == "--arg-file") && has {
				a.touch(Read, "xargs", c.st.dir, v)
			}
		})
	if len(ops) == 0 {
		return
	}
	if a.readOnlyCall(c, ops, true) {
		return
	}
	a.undecidable("xargs "+ops[0].lit, "xargs takes its arguments from its input")
}

// readOnlyCall reports whether the command args (which xargs or find -exec
// runs with arguments Madebook cannot see; input adds two of them) only
// reads: it leads, through wrappers, to a read-only command, and a probe
// analysis finds nothing but reads.
func (a *analyzer) readOnlyCall(c *cmd, args []field, input bool) bool {
	if c.st.depth >= maxDepth {
		return false
	}
	in := slices.Clone(args)
	if input {
		in = append(in, litField("{}"), litField("{}"))
	}
	p := &analyzer{o: a.o, src: a.src, work: a.work}
	p.run(&cmd{st: c.st.child(c.env), args: in})
	if a.spend(p.work - a.work) {
		return false
	}
	if !readOnly()[p.last] && !conditional()[p.last] {
		return false
	}
	for _, e := range p.effects {
		if e.Kind != Read {
			return false
		}
	}
	return true
}

// wrap analyzes a wrapper: its own options, then the command it runs.
func (a *analyzer) wrap(c *cmd, w wrapper) {
	st := c.st
	d := st.dir
	noCmd, edit, shell := false, false, false
	env := c.env
	var out []field
	ops := scan(c.args[1:], w.opts, func(n string, v field, has bool) {
		switch {
		case is(n, w.dir) && has:
			d = d.join(v, c.name())
		case is(n, w.noCmd):
			noCmd = true
		case is(n, w.edit):
			edit = true
		case is(n, w.shell):
			shell = true
		case is(n, w.split):
			a.undecidable(c.name()+" "+n, c.name()+" "+n+" splits a string into a command, which Madebook does not follow")
			noCmd = true
		case is(n, w.out) && has:
			out = append(out, v)
		}
	})
	a.touch(Write, c.name(), st.dir, out...)
	if noCmd {
		return
	}
	if edit {
		a.touch(Write, c.name()+" -e", d, ops...)
		return
	}
	if w.assigns {
		for len(ops) > 0 && ops[0].known() && isAssignment(ops[0].lit) {
			n, _, _ := strings.Cut(ops[0].lit, "=")
			env = append(slices.Clip(env), envVar{name: n, alts: []field{ops[0].trim(len(n) + 1)}})
			ops = ops[1:]
		}
	}
	if w.skip > 0 {
		ops = ops[min(w.skip, len(ops)):]
	}
	if len(ops) == 0 {
		if shell {
			a.shell(c.with([]field{litField(c.name())}))
		}
		return
	}
	if st.depth >= maxDepth {
		a.undecidable(c.name(), whyTooDeep)
		return
	}
	inner := c.with(ops)
	inner.env = env
	if !sameDirs(d, st.dir) {
		s := st.clone()
		s.dir = d
		inner.st = s
	}
	st.depth++
	a.run(inner)
	st.depth--
	if w.ends {
		st.dead = true
	}
}

// isAssignment reports whether s is NAME=value.
func isAssignment(s string) bool {
	n, _, ok := strings.Cut(s, "=")
	if !ok || n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !isNameByte(n[i]) {
			return false
		}
	}
	return true
}

// writer analyzes a command of the writers table.
func (a *analyzer) writer(c *cmd, w writer) {
	name := c.name()
	d := c.st.dir
	switch w.rule {
	case rOperands, rCopy, rLink:
		var targets, reads []field
		dirMode, removeSources := false, false
		w.opts.gnu = true
		ops := scan(c.args[1:], w.opts, func(n string, v field, has bool) {
			switch {
			case is(n, w.writes) && has:
				targets = append(targets, v)
			case is(n, w.reads) && has:
				reads = append(reads, v)
			case name == "install" && (n == "-d" || n == "--directory"):
				dirMode = true
			case n == "--remove-source-files":
				removeSources = true
			}
		})
		a.touch(Read, name, d, reads...)
		if w.rule == rOperands || dirMode {
			a.touch(Write, name, d, append(ops, targets...)...)
			break
		}
		sources := ops
		args := operands(ops)
		if len(targets) == 0 && len(args) >= 2 {
			targets = args[len(args)-1]
			sources = ops[:len(ops)-len(targets)]
		}
		if name == "rsync" || name == "scp" {
			// Another host's files are not the local file system's.
			sources, targets = local(sources), local(targets)
			if removeSources {
				a.touch(Write, name+" --remove-source-files", d, sources...)
			}
		}
		switch {
		case len(targets) > 0:
			if w.rule == rCopy {
				a.touch(Read, name, d, sources...)
			}
			a.touch(Write, name, d, targets...)
		case len(args) == 1 && w.rule == rLink:
			// ln -s /x/y makes ./y.
			for _, f := range ops {
				if f.known() {
					f = litField(path.Base(f.lit))
				}
				a.touch(Write, name, d, f)
			}
		case len(args) == 1 && name != "rsync" && name != "scp":
			a.touch(Write, name, d, ops...)
		}
	case rMode:
		a.touch(Write, name, d, modeOperands(c.args[1:], "cfvR", true)...)
	case rOwner:
		a.touch(Write, name, d, modeOperands(c.args[1:], "cfvRhHLP", false)...)
	case rDd:
		for _, f := range c.args[1:] {
			switch {
			case strings.HasPrefix(f.lit, "of="):
				a.touch(Write, "dd", d, f.trim(3))
			case strings.HasPrefix(f.lit, "if="):
				a.touch(Read, "dd", d, f.trim(3))
			case !f.known():
				a.undecidable("dd", f.reason())
			}
		}
	case rTar:
		a.tar(c)
	case rUnzip:
		a.unzip(c)
	case rPatch:
		a.patch(c)
	case rCurl:
		a.curl(c)
	case rWget:
		a.wget(c)
	}
}

// local drops the operands of rsync and scp that name another host
// (host:path), which hold no local file.
func local(fs []field) []field {
	out := fs[:0:0]
	for _, f := range fs {
		if f.known() {
			i := strings.IndexByte(f.lit, ':')
			j := strings.IndexByte(f.lit, '/')
			if i > 0 && (j < 0 || i < j) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// modeOperands are the files of chmod (mode) or chown and chgrp (an owner):
// the operands but the first, which is the mode or the owner unless
// --reference names a file to take it from. chmod's mode may look like an
// option (-x, -w).
func modeOperands(args []field, flags string, mode bool) []field {
	var ops []field
	seen := false
	for i, f := range args {
		s := f.lit
		switch {
		case !f.known():
			ops = append(ops, f)
			continue
		case s == "--":
			rest := args[i+1:]
			if !seen && len(rest) > 0 {
				rest = rest[1:]
			}
			return append(ops, rest...)
		case strings.HasPrefix(s, "--reference="):
			seen = true
			continue
		case strings.HasPrefix(s, "--"):
			continue
		case len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], flags) == "":
			continue
		case len(s) > 1 && s[0] == '-' && mode && !seen:
			seen = true
			continue
		case !seen:
			seen = true
			continue
		}
		ops = append(ops, f)
	}
	return ops
}
