package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// stmts analyzes a list of statements, one after the other, in st. The
// last is in tail position if the list is.
func (a *analyzer) stmts(list []*syntax.Stmt, st *state) {
	outer := a.tail
	for i, s := range list {
		if a.full {
			break
		}
		a.tail = outer && i == len(list)-1
		a.stmt(s, st)
	}
	a.tail = outer
}

// isolated analyzes list in a subshell of st whose state is dropped after
// it (a subshell, a command substitution): its last statement is in tail
// position.
func (a *analyzer) isolated(list []*syntax.Stmt, st *state) {
	outer := a.tail
	if !outer {
		st = st.subshell()
	}
	a.tail = true
	a.stmts(list, st)
	a.tail = outer
}

// isolatedStmt is isolated for one statement.
func (a *analyzer) isolatedStmt(s *syntax.Stmt, st *state) {
	outer := a.tail
	if !outer {
		st = st.subshell()
	}
	a.tail = true
	a.stmt(s, st)
	a.tail = outer
}

// stmt analyzes one statement. A background job (cmd &) runs in a
// subshell: what it changes of the shell does not last.
//
// When a.tail is set the statement is in tail position: nothing reads the
// shell's state after it, so the states a subshell or a failure would
// leave need not be kept apart.
func (a *analyzer) stmt(s *syntax.Stmt, st *state) {
	if s == nil || a.spend(1) {
		return
	}
	if (s.Background || s.Coprocess || s.Disown) && !a.tail {
		s2 := *s
		s2.Background, s2.Coprocess, s2.Disown = false, false, false
		a.isolatedStmt(&s2, st)
		return
	}
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		a.call(c, s.Redirs, st)
		return
	}
	a.redirects(s.Redirs, st)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.Block:
		a.stmts(c.Stmts, st)
	case *syntax.Subshell:
		a.isolated(c.Stmts, st)
	case *syntax.BinaryCmd:
		a.binary(c, st)
	case *syntax.IfClause:
		a.ifClause(c, st)
	case *syntax.WhileClause:
		a.loop(st, func(s *state) {
			a.stmts(c.Cond, s)
			a.stmts(c.Do, s)
		})
	case *syntax.ForClause:
		a.forClause(c, st)
	case *syntax.CaseClause:
		a.caseClause(c, st)
	case *syntax.FuncDecl:
		a.funcDecl(c, st)
	case *syntax.ArithmCmd:
		a.arith(c.X, st)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			a.arith(e, st)
		}
	case *syntax.TestClause:
		a.sideEffects(c.X, st)
	case *syntax.DeclClause:
		a.declClause(c, st)
	case *syntax.TimeClause:
		a.stmt(c.Stmt, st)
	case *syntax.CoprocClause:
		a.isolatedStmt(c.Stmt, st)
	case *syntax.TestDecl:
		a.isolatedStmt(c.Body, st)
	default:
		a.undecidable("", "it holds a command Madebook does not know")
	}
}

// binary analyzes a pipeline or an && / || list. Each command of a
// pipeline runs in a subshell. In a list, a command runs where the one
// before left the shell if that one succeeded (X && Y), or failed (X ||
// Y); what follows the list runs after any of them, succeeded or failed:
// the states merge.
func (a *analyzer) binary(c *syntax.BinaryCmd, st *state) {
	if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
		outer := a.tail
		a.tail = false
		a.isolatedStmt(c.X, st)
		a.tail = outer
		a.isolatedStmt(c.Y, st)
		return
	}
	tail := a.tail
	if fail := a.condCmd(c, st, !tail); fail != nil && !tail {
		st.merge(fail)
	}
}

// cond analyzes s as a condition: st becomes the state s leaves when it
// succeeds, and cond returns the state it leaves when it fails (nil if it
// cannot: it exits; or, when needFail is not set, if the caller does not
// need it). A command that fails is taken as changing nothing (a cd that
// fails stays).
func (a *analyzer) cond(s *syntax.Stmt, st *state, needFail bool) *state {
	if c, ok := s.Cmd.(*syntax.BinaryCmd); ok && c.Op != syntax.Pipe && c.Op != syntax.PipeAll &&
		len(s.Redirs) == 0 && !s.Background && !s.Negated {
		if a.spend(1) {
			return nil
		}
		return a.condCmd(c, st, needFail)
	}
	if !needFail || exits(s) {
		a.stmt(s, st)
		return nil
	}
	before := st.clone()
	a.stmt(s, st)
	return before
}

// condCmd is cond for an && or || list.
func (a *analyzer) condCmd(c *syntax.BinaryCmd, st *state, needFail bool) *state {
	outer := a.tail
	a.tail = false
	if c.Op == syntax.AndStmt {
		failX := a.cond(c.X, st, needFail)
		a.tail = outer
		failY := a.cond(c.Y, st, needFail)
		return mergeFail(failX, failY)
	}
	failX := a.cond(c.X, st, true)
	a.tail = outer
	if failX == nil {
		return nil // X cannot fail: Y never runs
	}
	failY := a.cond(c.Y, failX, needFail)
	if !outer {
		st.merge(failX)
	}
	return failY
}

// mergeFail is either failure state.
func mergeFail(x, y *state) *state {
	switch {
	case x == nil:
		return y
	case y == nil:
		return x
	}
	x.merge(y)
	return x
}

// exits reports whether s always ends the shell (or the function): exit,
// return, or a block or subshell whose last command does.
func exits(s *syntax.Stmt) bool {
	if s == nil || s.Negated || s.Background {
		return false
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		switch c.Args[0].Lit() {
		case "exit", "return":
			return true
		}
	case *syntax.Block:
		return len(c.Stmts) > 0 && exits(c.Stmts[len(c.Stmts)-1])
	}
	return false
}

// ifClause analyzes an if: its body runs where its condition succeeded,
// its else (or elif) where it failed; the if ends in either.
func (a *analyzer) ifClause(c *syntax.IfClause, st *state) {
	var fail *state
	outer := a.tail
	a.tail = false
	if n := len(c.Cond); n > 0 {
		a.stmts(c.Cond[:n-1], st)
		fail = a.cond(c.Cond[n-1], st, true)
	} else {
		fail = st.clone()
	}
	a.tail = outer
	a.stmts(c.Then, st)
	if fail == nil {
		return
	}
	if c.Else != nil {
		if c.Else.ThenPos.IsValid() {
			a.ifClause(c.Else, fail)
		} else {
			a.stmts(c.Else.Then, fail)
		}
	}
	st.merge(fail)
}

// loop analyzes a loop whose body is pass. The body may run any number of
// times: it is analyzed again, from the states it may start in merged,
// until a pass finds nothing new; past three passes, what still changes is
// made undecidable. The loop ends in any of those states.
func (a *analyzer) loop(st *state, pass func(*state)) {
	outer := a.tail
	a.tail = false
	defer func() { a.tail = outer }()
	cur := st.clone()
	for i := 0; ; i++ {
		s := cur.clone()
		pass(s)
		if a.full {
			break
		}
		next := cur.clone()
		next.merge(s)
		if next.same(cur) {
			break
		}
		if i == 2 {
			next.widen(cur)
			s := next.clone()
			pass(s)
			next.merge(s)
			cur = next
			break
		}
		cur = next
	}
	*st = *cur.clone()
}

func (a *analyzer) forClause(c *syntax.ForClause, st *state) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var vals []field
		if !l.InPos.IsValid() {
			vals = a.positional(st)
		} else {
			for _, w := range l.Items {
				vals = a.appendWord(vals, w, st, modeArgs)
			}
		}
		if len(vals) > maxLoopWords {
			vals = []field{{why: "it expands the variable $" + l.Name.Value + ", which a loop gives more than 64 values", src: "$" + l.Name.Value}}
		}
		if len(vals) == 0 {
			vals = []field{{}}
		}
		n := l.Name.Value
		a.loop(st, func(s *state) {
			s.setVar(n, &variable{alts: vals})
			a.stmts(c.Do, s)
		})
	case *syntax.CStyleLoop:
		a.arith(l.Init, st)
		a.loop(st, func(s *state) {
			a.arith(l.Cond, s)
			a.stmts(c.Do, s)
			a.arith(l.Post, s)
		})
	}
}

// positional is the values "$@" has in st, each one a value a loop over it
// takes.
func (a *analyzer) positional(st *state) []field {
	if !st.argsKnown {
		return []field{{why: "it expands $@, the arguments, which Madebook cannot see", src: "$@"}}
	}
	return st.args
}

func (a *analyzer) caseClause(c *syntax.CaseClause, st *state) {
	a.word(c.Word, st, modeDoc)
	start := st.clone()
	matched := false
	first := true
	for _, item := range c.Items {
		for _, p := range item.Patterns {
			a.word(p, start, modeDoc)
			if p.Lit() == "*" {
				matched = true
			}
		}
		s := start.clone()
		a.stmts(item.Stmts, s)
		if first {
			*st = *s
			first = false
		} else {
			st.merge(s)
		}
	}
	if !matched && !first {
		st.merge(start)
	}
}

// funcDecl defines a function: its body is analyzed where it is called,
// with the arguments of the call, and at the end if it never is.
func (a *analyzer) funcDecl(c *syntax.FuncDecl, st *state) {
	names := c.Names
	if c.Name != nil {
		names = append(names, c.Name)
	}
	for _, n := range names {
		fn := &function{name: n.Value, body: c.Body, src: a.src}
		fn.def = st.clone()
		st.setFunc(n.Value, fn)
		a.funcs = append(a.funcs, fn)
	}
}

// callFunc analyzes a call of the function fn with the arguments args,
// in the same shell: what it changes (cd, variables) lasts.
func (a *analyzer) callFunc(fn *function, args []field, env []envVar, st *state) {
	fn.called = true
	if st.depth >= maxDepth {
		a.undecidable(fn.name, whyTooDeep)
		return
	}
	outer := a.tail
	a.tail = false
	defer func() { a.tail = outer }()
	savedArgs, savedKnown := st.args, st.argsKnown
	saved := map[string]*variable{}
	for _, e := range env {
		saved[e.name] = st.vars[e.name]
		st.setVar(e.name, &variable{alts: e.alts, exported: true})
	}
	st.args, st.argsKnown = args, true
	st.depth++
	a.callBody(fn, st)
	st.depth--
	st.args, st.argsKnown = savedArgs, savedKnown
	for n, v := range saved {
		st.restoreVar(n, v)
	}
	st.dead = false
}

func (a *analyzer) callBody(fn *function, st *state) {
	old := a.src
	a.src = fn.src
	a.stmt(fn.body, st)
	a.src = old
}

// declClause analyzes declare, local, export, readonly and typeset: the
// assignments they make, and export's marking of variables.
func (a *analyzer) declClause(c *syntax.DeclClause, st *state) {
	export := c.Variant.Value == "export"
	for _, as := range c.Args {
		if as.Naked {
			if as.Name == nil {
				if as.Value != nil {
					a.word(as.Value, st, modeDoc)
				}
				continue
			}
			if export {
				if v := st.vars[as.Name.Value]; v != nil {
					st.setVar(as.Name.Value, &variable{alts: v.alts, exported: true})
				}
			}
			continue
		}
		a.assign(as, st, export)
	}
}

// assign makes the assignment as in st.
func (a *analyzer) assign(as *syntax.Assign, st *state, export bool) {
	if as.Name == nil {
		return
	}
	n := as.Name.Value
	vals := a.assignValue(as, st)
	if old := st.vars[n]; old != nil {
		export = export || old.exported
	}
	st.setVar(n, &variable{alts: vals, exported: export})
}

// assignValue is the values the assignment as gives its variable.
func (a *analyzer) assignValue(as *syntax.Assign, st *state) []field {
	n := as.Name.Value
	if as.Array != nil || as.Index != nil {
		if as.Array != nil {
			a.sideEffects(as.Array, st)
		}
		if as.Value != nil {
			a.word(as.Value, st, modeAssign)
		}
		return []field{{why: "it expands the array $" + n + ", which Madebook does not follow", src: "$" + n}}
	}
	vals := []field{{}}
	if as.Value != nil {
		vals = a.word(as.Value, st, modeAssign)
	}
	if as.Append {
		old, ok := st.lookup(n)
		if !ok {
			old = []field{envField(n)}
		}
		if len(old)*len(vals) > maxLoopWords {
			return []field{{why: "it expands the variable $" + n + ", which may hold too many values", src: "$" + n}}
		}
		var out []field
		for _, o := range old {
			for _, v := range vals {
				out = addField(out, concat(o, v))
			}
		}
		vals = out
	}
	if len(vals) > maxLoopWords {
		vals = []field{{why: "it expands the variable $" + n + ", which may hold too many values", src: "$" + n}}
	}
	return vals
}

// concat is the value x followed by y.
func concat(x, y field) field {
	if !x.known() {
		return x
	}
	if !y.known() {
		return y
	}
	if len(x.lit)+len(y.lit) > maxWord {
		return field{why: whyLongWord, src: "…"}
	}
	return field{name: name{lit: x.lit + y.lit, pat: x.pat + y.pat, glob: x.glob || y.glob}, anchored: x.anchored}
}

// envVar is an assignment a command runs with (D=db cmd, env D=db cmd):
// it reaches the shells and scripts the command runs.
type envVar struct {
	name string
	alts []field
}

// call analyzes a simple command: its words are expanded (their command
// substitutions analyzed), its redirections opened, and then the command
// itself analyzed. Assignments before a command word last only for that
// command, and do not change how its words expand (D=db rm $D expands the
// D of before).
func (a *analyzer) call(c *syntax.CallExpr, redirs []*syntax.Redirect, st *state) {
	var env []envVar
	for _, as := range c.Assigns {
		if as.Name == nil {
			continue
		}
		if len(c.Args) == 0 {
			a.assign(as, st, false)
			continue
		}
		env = append(env, envVar{name: as.Name.Value, alts: a.assignValue(as, st)})
	}
	args := a.words(c.Args, st)
	stdin := a.redirects(redirs, st)
	if len(args) == 0 || a.full {
		return
	}
	a.run(&cmd{st: st, args: args, env: env, stdin: stdin})
}

// redirects analyzes a command's redirections, and returns the text a
// here-document or here-string feeds it, when Madebook can tell it (for
// bash, python and their like, which run what they read).
func (a *analyzer) redirects(rs []*syntax.Redirect, st *state) *string {
	var stdin *string
	for _, r := range rs {
		if a.full {
			return nil
		}
		op := r.Op.String()
		if r.N != nil {
			op = r.N.Value + op
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			stdin = a.hereDoc(r, st)
			continue
		case syntax.WordHdoc:
			fs := a.word(r.Word, st, modeDoc)
			stdin = nil
			if len(fs) == 1 && fs[0].known() {
				s := fs[0].lit + "\n"
				stdin = &s
			}
			continue
		case syntax.DplIn, syntax.DplOut:
			if l := r.Word.Lit(); l != "" && isFD(l) {
				continue // 2>&1, >&2, <&-: a copy of a descriptor
			}
			fs := a.word(r.Word, st, modeArgs)
			if len(fs) == 1 && fs[0].known() && isFD(fs[0].lit) {
				continue // 2>&1, >&2, <&-: a copy of a descriptor
			}
			if r.Op == syntax.DplIn || r.N != nil {
				continue
			}
			a.touch(Write, op, st.dir, fs...) // >&file is &>file
			continue
		}
		fs := a.word(r.Word, st, modeArgs)
		if r.Op == syntax.RdrIn {
			a.touch(Read, op, st.dir, fs...)
			if r.N == nil || r.N.Value == "0" {
				stdin = nil
			}
			continue
		}
		a.touch(Write, op, st.dir, fs...)
	}
	return stdin
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hereDoc analyzes the body of a here-document, and returns its text when
// Madebook can tell it.
func (a *analyzer) hereDoc(r *syntax.Redirect, st *state) *string {
	if r.Hdoc == nil {
		s := ""
		return &s
	}
	if quotedWord(r.Word) {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
		s := b.String()
		return &s
	}
	x := expander{a: a, st: st, mode: modeDoc, cur: []builder{{}}}
	for _, p := range r.Hdoc.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			x.lit(l.Value, hereDoc)
			continue
		}
		x.parts([]syntax.WordPart{p}, hereDoc, false)
	}
	if len(x.cur) != 1 || !x.cur[0].known() {
		return nil
	}
	s := x.cur[0].lit
	return &s
}

func (b *builder) known() bool { return b.why == "" && !b.fd }

// quotedWord reports whether any of w is quoted (a here-document whose
// delimiter is quoted is not expanded).
func quotedWord(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}
