package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// scriptHow is how a script runs, which decides whether its #! line
// matters and whether it shares the shell.
type scriptHow uint8

const (
	// execScript is a script run as a command (./x.sh): its #! line names
	// what runs it.
	execScript scriptHow = iota
	// shellScript is a script a shell runs (bash x.sh), whatever its #!
	// line says.
	shellScript
	// sourceScript is a script source (or .) runs in the same shell: what
	// it changes (cd, variables) lasts.
	sourceScript
)

// script analyzes the script f names, run with the arguments args. Its
// text comes from Options.Script, asked with the script's path joined with
// the directory it runs in; without it the script is undecidable, and so
// is one whose #! line names another language.
func (a *analyzer) script(c *cmd, f field, args []field, how scriptHow) {
	command := c.name()
	if !f.known() {
		a.undecidable(command, f.reason())
		return
	}
	if f.glob {
		a.undecidable(command, "it runs the script "+f.pat+", a pattern, which Madebook cannot read here")
		return
	}
	var paths []string
	switch d := c.st.dir; {
	case f.anchored || path.IsAbs(f.lit):
		paths = []string{path.Clean(f.lit)}
	case d.why != "":
		a.undecidable(command, d.why)
		return
	default:
		for _, dir := range d.list() {
			if dir.glob {
				a.undecidable(command, "it runs the script "+f.lit+" in a directory named by a pattern, which Madebook cannot read here")
				return
			}
			paths = append(paths, path.Join(dir.lit, f.lit))
		}
	}
	for _, p := range paths {
		if a.full {
			return
		}
		text, ok := "", false
		if a.o.Script != nil {
			text, ok = a.o.Script(p)
		}
		if !ok {
			a.undecidable(command, "it runs the script "+f.lit+", which Madebook cannot read here")
			continue
		}
		if how == execScript {
			if lang := shebang(text); lang != "" && !shells()[lang] {
				a.undecidable(command, "it runs the script "+f.lit+", in another language")
				continue
			}
		}
		if c.st.depth >= maxDepth {
			a.undecidable(command, whyTooDeep)
			continue
		}
		what := "the script " + f.lit
		if how == sourceScript {
			st := c.st
			saved, known := st.args, st.argsKnown
			if len(args) > 0 {
				st.args, st.argsKnown = args, true
			}
			st.depth++
			a.source(text, st, what, false)
			st.depth--
			if len(args) > 0 {
				st.args, st.argsKnown = saved, known
			}
			st.dead = false
			continue
		}
		st := c.st.child(c.env)
		st.args, st.argsKnown = args, true
		a.source(text, st, what, true)
	}
}

// shebang is the base name of the program a script's #! line runs (with
// env, the program env runs), or "".
func shebang(text string) string {
	if !strings.HasPrefix(text, "#!") {
		return ""
	}
	line, _, _ := strings.Cut(text[2:], "\n")
	fs := strings.Fields(line)
	if len(fs) == 0 {
		return ""
	}
	prog := path.Base(fs[0])
	if prog != "env" {
		return prog
	}
	for _, f := range fs[1:] {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue
		}
		return path.Base(f)
	}
	return ""
}

// shell analyzes a shell: sh -c STR analyzes STR (its arguments after it
// are $0, $1, …), sh x.sh the script x.sh, and sh alone (or sh -s) what it
// reads, when a here-document gives it.
func (a *analyzer) shell(c *cmd) {
	name := c.name()
	args := c.args[1:]
	hasC, input := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		f := args[i]
		s := f.lit
		switch {
		case f.known() && (s == "-" || s == "--"):
			i++
			break options
		case !f.known() || len(s) < 2 || (s[0] != '-' && s[0] != '+'):
			break options
		case strings.HasPrefix(s, "--"):
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			continue
		}
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case 'c':
				hasC = true
			case 's':
				input = true
			case 'o', 'O':
				i++
			}
		}
	}
	ops := args[min(i, len(args)):]
	if c.st.depth >= maxDepth {
		a.undecidable(name, whyTooDeep)
		return
	}
	switch {
	case hasC:
		if len(ops) == 0 {
			return
		}
		code := ops[0]
		if !code.known() || code.glob {
			why := code.why
			if why == "" {
				why = name + " -c runs a string Madebook cannot tell"
			}
			a.undecidable(name+" -c", why)
			return
		}
		st := c.st.child(c.env)
		st.args, st.argsKnown = nil, true
		if len(ops) > 2 {
			st.args = ops[2:]
		}
		a.source(code.lit, st, "the string "+name+" -c runs", true)
	case len(ops) == 0 || input:
		if c.stdin == nil {
			a.undecidable(name, "it runs shell commands from its input")
			return
		}
		st := c.st.child(c.env)
		st.args, st.argsKnown = ops, true
		a.source(*c.stdin, st, "the input "+name+" reads", true)
	default:
		a.script(c, ops[0], ops[1:], shellScript)
	}
}

// interpret analyzes an interpreter of another language. With code on the
// command line (python -c CODE, node -e CODE, perl -e CODE), it writes the
// path-like tokens of the code and the arguments after it (the code may
// take them as paths); with -i (perl, ruby) it writes the files it edits;
// with -n or -p and no -i it reads them. With code from a here-document it
// writes the tokens of that code. With a script, a module, or code from an
// input Madebook cannot read, it is undecidable.
func (a *analyzer) interpret(c *cmd, ip interp) {
	name := c.name()
	d := c.st.dir
	args := c.args[1:]
	var code []string
	codeOpt, codeWhy := "", ""
	inplace, loops, stdin := false, false, false
	addCode := func(opt string, v field) {
		if codeOpt == "" {
			codeOpt = opt
		}
		if !v.known() {
			if codeWhy == "" {
				codeWhy = v.why
				if codeWhy == "" {
					codeWhy = "it runs code Madebook cannot tell"
				}
			}
			return
		}
		code = append(code, v.lit)
	}
	i := 0
options:
	for ; i < len(args); i++ {
		f := args[i]
		s := f.lit
		switch {
		case !f.known():
			break options
		case s == "-":
			stdin = true
			i++
			break options
		case s == "--":
			i++
			break options
		case len(s) < 2 || s[0] != '-':
			break options
		case is(s, ip.info) && codeOpt == "":
			return
		case strings.HasPrefix(s, "--"):
			n, _, eq := strings.Cut(s[2:], "=")
			switch {
			case is(n, ip.long) && eq:
				addCode("--"+n, f.trim(len(n)+3))
			case is(n, ip.long) && i+1 < len(args):
				i++
				addCode("--"+n, args[i])
			case is(n, ip.longValues) && !eq:
				i++
			}
			continue
		}
		for j := 1; j < len(s); j++ {
			ch := s[j]
			value := func() field {
				if j+1 < len(s) {
					return f.trim(j + 1)
				}
				if i+1 < len(args) {
					i++
					return args[i]
				}
				return field{}
			}
			switch {
			case strings.IndexByte(ip.code, ch) >= 0:
				addCode(shortNames()[ch], value())
				continue options
			case strings.IndexByte(ip.module, ch) >= 0:
				a.undecidable(name+" "+shortNames()[ch], "it runs the module "+value().lit+", in another language")
				return
			case strings.IndexByte(ip.script, ch) >= 0:
				a.undecidable(name, "it runs the script "+value().lit+", in another language")
				return
			case strings.IndexByte(ip.server, ch) >= 0:
				a.undecidable(name+" "+shortNames()[ch], "it runs a server, which may touch any file")
				return
			case strings.IndexByte(ip.inplace, ch) >= 0:
				inplace = true
				continue options
			case strings.IndexByte(ip.values, ch) >= 0:
				value()
				continue options
			case strings.IndexByte(ip.glued, ch) >= 0:
				continue options
			case strings.IndexByte(ip.digits, ch) >= 0:
				for j+1 < len(s) && (s[j+1] >= '0' && s[j+1] <= '9' || s[j+1] == 'x') {
					j++
				}
			case strings.IndexByte(ip.loops, ch) >= 0:
				loops = true
			}
		}
	}
	rest := args[min(i, len(args)):]
	switch {
	case codeOpt != "":
		command := name + " " + codeOpt
		if codeWhy != "" {
			a.undecidable(command, codeWhy)
		}
		a.codeWrites(c, command, strings.Join(code, "\n"))
		switch {
		case inplace:
			a.touch(Write, name+" -i", d, rest...)
		case loops:
			a.touch(Read, name, d, rest...)
		default:
			a.touch(Write, command, d, rest...)
		}
	case ip.subcommands && len(rest) > 0 && !stdin:
		a.subcommand(c, rest)
	case len(rest) == 0 || stdin:
		if c.stdin == nil {
			a.undecidable(name, "it runs "+name+" code from its input")
			return
		}
		a.codeWrites(c, name, *c.stdin)
		a.touch(Write, name, d, rest...)
	default:
		a.runsScript(name, rest[0])
	}
}

func (a *analyzer) runsScript(command string, f field) {
	if !f.known() {
		a.undecidable(command, f.reason())
		return
	}
	a.undecidable(command, "it runs the script "+f.lit+", in another language")
}

// subcommand analyzes deno's and bun's subcommands: eval runs code, run
// and a file with a script's extension run a script, and any other
// (fmt, test, install, …) is as a command Madebook does not know.
func (a *analyzer) subcommand(c *cmd, rest []field) {
	name := c.name()
	sub := rest[0]
	after := scan(rest[1:], optSpec{}, nil)
	switch {
	case !sub.known():
		a.undecidable(name, sub.reason())
	case sub.lit == "eval" && name == "deno":
		if len(after) == 0 {
			return
		}
		if !after[0].known() {
			a.undecidable(name+" eval", after[0].reason())
			return
		}
		a.codeWrites(c, name+" eval", after[0].lit)
		a.touch(Write, name+" eval", c.st.dir, after[1:]...)
	case sub.lit == "run":
		if len(after) == 0 {
			return
		}
		a.runsScript(name+" run", after[0])
	case scriptLike(sub.lit):
		a.runsScript(name, sub)
	default:
		a.unknown(c)
	}
}

// scriptLike reports whether s names a script of JavaScript's family.
func scriptLike(s string) bool {
	switch path.Ext(s) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
		return true
	}
	return strings.Contains(s, "/")
}

// codeWrites records that the code an interpreter runs writes the
// path-like tokens in it.
func (a *analyzer) codeWrites(c *cmd, command, code string) {
	var fs []field
	for _, t := range codeTokens(code) {
		if t == "~" || strings.HasPrefix(t, "~/") {
			x := expander{a: a, st: c.st}
			h := x.home("~", whyHome)
			if len(h) != 1 || !h[0].known() {
				fs = append(fs, field{why: whyHome, src: "~"})
				continue
			}
			fs = append(fs, field{name: litName(path.Join(h[0].lit, t[1:])), anchored: true})
			continue
		}
		f := litField(t)
		if strings.ContainsAny(t, "*?") {
			f.pat = strings.NewReplacer(`\`, `\\`, "[", `\[`).Replace(t)
			f.glob = true
		}
		fs = append(fs, f)
	}
	a.touch(Write, command, c.st.dir, fs...)
}

// aliasWords returns the words of an alias's text when it is one simple
// command, which the call's arguments follow.
func aliasWords(text string) ([]*syntax.Word, bool) {
	f, err := parse(text)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) == 0 || s.Background || s.Negated {
		return nil, false
	}
	return c.Args, true
}
