package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// field is one word of a command after expansion: what the command sees
// as one argument, or a redirection's target.
type field struct {
	name
	// why, when set, says why Madebook cannot tell the word (it expands a
	// variable from the environment, a command substitution, …); src
	// names what it comes from in a few characters ("$X", "$(…)", "~").
	why, src string
	// anchored: the name is already resolved against the directory (it
	// comes from $PWD, ~ or $HOME) and is not joined with it again.
	anchored bool
	// fd: the word is a process substitution, /dev/fd/N, which names no
	// file.
	fd bool
	// group, when not 0, is shared by the fields that are the values one
	// word may have (a loop's variable, a variable set in branches): they
	// are one argument, whichever value it takes.
	group uint32
}

// same reports whether f and g are the same value; two undecidable values
// are the same when the same thing makes them undecidable.
func (f field) same(g field) bool {
	if f.why != "" || g.why != "" {
		return f.why == g.why
	}
	return f.name == g.name && f.anchored == g.anchored && f.fd == g.fd
}

// known reports whether Madebook can tell the word.
func (f field) known() bool { return f.why == "" && !f.fd }

// reason says why Madebook cannot tell the word f (f.known() is false).
func (f field) reason() string {
	if f.why != "" {
		return f.why
	}
	return "it names a process substitution, which is no file Madebook can follow"
}

// trim is f without its first n bytes (an option's name before its glued
// value: the value of -oFILE, of=FILE). The bytes trimmed hold no
// metacharacters, so the pattern loses as many characters as the text.
func (f field) trim(n int) field {
	if n >= len(f.lit) {
		n = len(f.lit)
	}
	g := f
	g.lit = f.lit[n:]
	if !f.glob {
		g.pat = escapeMeta(g.lit)
		return g
	}
	i := 0
	for k := 0; k < n && i < len(f.pat); k++ {
		if f.pat[i] == '\\' && i+1 < len(f.pat) {
			i++
		}
		i++
	}
	g.pat = f.pat[i:]
	g.glob = hasMeta(g.pat)
	if !g.glob {
		g.pat = escapeMeta(g.lit)
	}
	if f.anchored && n > 0 {
		g.anchored = false
	}
	return g
}

// mode is how a word is expanded, which depends on where it stands.
type mode uint8

const (
	// modeArgs is for command arguments, loop lists and redirection
	// targets: brace expansion, field splitting of unquoted expansions,
	// and unquoted metacharacters make patterns.
	modeArgs mode = iota
	// modeAssign is for assignment values and the words inside ${x:-…}: no
	// splitting, no patterns, but ~ expands.
	modeAssign
	// modePattern is for the patterns of ${x%…} and its like: unquoted
	// metacharacters make patterns, nothing is split.
	modePattern
	// modeDoc is for here-documents, here-strings and the words of tests:
	// only the expansions inside matter.
	modeDoc
)

// quoting is the quoting a literal stands in, which decides what its
// backslashes escape.
type quoting uint8

const (
	unquoted quoting = iota
	doubleQuoted
	hereDoc
)

// words expands ws as a command's arguments.
func (a *analyzer) words(ws []*syntax.Word, st *state) []field {
	out := make([]field, 0, len(ws))
	for _, w := range ws {
		out = a.appendWord(out, w, st, modeArgs)
	}
	return out
}

// word expands w in st the way m says. The command substitutions in it
// are analyzed as it goes.
func (a *analyzer) word(w *syntax.Word, st *state, m mode) []field {
	return a.appendWord(nil, w, st, m)
}

// appendWord appends the fields of w to dst.
func (a *analyzer) appendWord(dst []field, w *syntax.Word, st *state, m mode) []field {
	cost := 1
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			cost += len(l.Value) >> 9
		}
	}
	if a.spend(cost) {
		return append(dst, field{why: whyTooLarge})
	}
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && plainLit(l.Value) {
			return append(dst, field{name: name{lit: l.Value, pat: l.Value}})
		}
	}
	if m == modeArgs && hasBrace(w) {
		if out, ok := a.braces(w, st, m); ok {
			return append(dst, out...)
		}
	}
	return append(dst, a.expandParts(w.Parts, st, m)...)
}

// braces expands the brace expansions of w, and each word they give; ok is
// false when w holds none.
func (a *analyzer) braces(w *syntax.Word, st *state, m mode) (out []field, ok bool) {
	c := *w
	if !syntax.SplitBraces(&c) {
		return nil, false
	}
	for bw, err := range expand.BracesSeq(nil, &c) {
		if err != nil || len(out) >= maxFields {
			return []field{{why: "the word expands to too many paths", src: "{…}"}}, true
		}
		out = append(out, a.expandParts(bw.Parts, st, m)...)
	}
	return out, true
}

// hasBrace reports whether a literal of w holds {, which may open a brace
// expansion.
func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// plainLit reports whether the literal s means itself wherever it stands.
func plainLit(s string) bool {
	if s == "" || s[0] == '~' {
		return false
	}
	return !strings.ContainsAny(s, "\\*?[{")
}

func (a *analyzer) expandParts(ps []syntax.WordPart, st *state, m mode) []field {
	x := expander{a: a, st: st, mode: m, cur: []builder{{}}}
	x.parts(ps, unquoted, true)
	for _, b := range x.cur {
		if b.keep || b.started || m != modeArgs {
			x.done = append(x.done, b.field())
		}
	}
	if len(x.done) > maxFields {
		return []field{{why: "the word expands to too many paths", src: "{…}"}}
	}
	if x.alternatives && len(x.done) > 1 {
		a.groups++
		for i := range x.done {
			x.done[i].group = a.groups
		}
	}
	return x.done
}

// builder is one field being built.
type builder struct {
	lit, pat string
	meta     bool // pat may hold metacharacters that are not escaped
	keep     bool // the field stands even when empty: it was quoted
	started  bool // something was added to it
	why, src string
	anchored bool
	fd       bool
}

// tooLong makes b a word too long to analyze.
func (b *builder) tooLong() {
	if b.why == "" {
		b.why, b.src = whyLongWord, "…"
	}
	b.lit, b.pat, b.meta = "", "", false
	b.keep, b.started = true, true
}

func (b *builder) field() field {
	f := field{name: name{lit: b.lit, pat: b.pat}, why: b.why, src: b.src, anchored: b.anchored, fd: b.fd}
	if b.meta {
		f.pat, f.glob = finishPattern(b.pat)
		if !f.glob {
			f.pat = escapeMeta(f.lit)
		}
	}
	return f
}

// finishPattern escapes the brackets of pat that open no class, and
// reports whether pat is a pattern.
func finishPattern(pat string) (string, bool) {
	glob := false
	var fix []int
	// open is how far (the end of the segment) a bracket is known to close
	// no class: once one does not, none after it in the segment does.
	open := -1
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '*', '?':
			glob = true
		case '/':
			open = -1
		case '[':
			if open > i+2 {
				fix = append(fix, i)
				continue
			}
			j := classEnd(pat, i)
			if j < 0 {
				fix = append(fix, i)
				open = segmentEnd(pat, i)
				continue
			}
			glob = true
			i = j
		}
	}
	if len(fix) == 0 {
		return pat, glob
	}
	var b strings.Builder
	last := 0
	for _, i := range fix {
		b.WriteString(pat[last:i])
		b.WriteByte('\\')
		last = i
	}
	b.WriteString(pat[last:])
	return b.String(), glob
}

// segmentEnd is the index of the / that ends the segment of pat[i], or
// len(pat).
func segmentEnd(pat string, i int) int {
	if j := strings.IndexByte(pat[i:], '/'); j >= 0 {
		return i + j
	}
	return len(pat)
}

// classEnd returns the index of the ] that closes the class opened at
// pat[i], or -1.
func classEnd(pat string, i int) int {
	j := i + 1
	if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
		j++
	}
	if j < len(pat) && pat[j] == ']' {
		j++
	}
	for ; j < len(pat); j++ {
		switch pat[j] {
		case '\\':
			j++
		case ']':
			return j
		case '/':
			return -1
		}
	}
	return -1
}

// hasMeta reports whether the pattern pat holds a metacharacter that is not
// escaped.
func hasMeta(pat string) bool {
	_, glob := finishPattern(pat)
	return glob
}

// expander expands one word into fields. cur are the fields being built:
// several when a part has several values (a loop's variable); done are
// those finished (by field splitting).
type expander struct {
	a    *analyzer
	st   *state
	mode mode
	cur  []builder
	done []field
	// alternatives is set once a part had several values.
	alternatives bool
}

func (x *expander) parts(ps []syntax.WordPart, q quoting, top bool) {
	for i, p := range ps {
		if x.a.full {
			return
		}
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if top && i == 0 && q == unquoted && x.mode != modeDoc && strings.HasPrefix(v, "~") {
				v = x.tilde(v, len(ps) == 1)
			}
			x.lit(v, q)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v = ansiC(v)
			}
			x.add(v, escapeMeta(v), false, true)
		case *syntax.DblQuoted:
			if !(len(p.Parts) == 1 && isAt(p.Parts[0])) {
				x.add("", "", false, true)
			}
			x.parts(p.Parts, doubleQuoted, false)
		case *syntax.ParamExp:
			x.param(p, q != unquoted)
		case *syntax.CmdSubst:
			x.cmdSubst(p)
		case *syntax.ArithmExp:
			x.a.arith(p.X, x.st)
			x.unknown("the path is built by $((…))", "$((…))")
		case *syntax.ProcSubst:
			x.a.substitution(p.Stmts, x.st)
			for i := range x.cur {
				x.cur[i].fd, x.cur[i].keep = true, true
			}
		case *syntax.ExtGlob:
			text := p.Op.String() + p.Pattern.Value + ")"
			if q == unquoted && (x.mode == modeArgs || x.mode == modePattern) {
				x.add(text, "*", true, true)
			} else {
				x.add(text, escapeMeta(text), false, true)
			}
		case *syntax.BraceExp:
			// Not expanded where it stands (an assignment): its text.
			x.lit(braceText(p), q)
		default:
			x.unknown("it holds a word Madebook does not know", "")
		}
	}
}

func isAt(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == "@" && pe.Exp == nil && pe.Index == nil && !pe.Length && !pe.Excl
}

// braceText is the text of a brace expansion left unexpanded.
func braceText(b *syntax.BraceExp) string {
	sep := ","
	if b.Sequence {
		sep = ".."
	}
	var s strings.Builder
	s.WriteByte('{')
	for i, e := range b.Elems {
		if i > 0 {
			s.WriteString(sep)
		}
		for _, p := range e.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				s.WriteString(l.Value)
			}
		}
	}
	s.WriteByte('}')
	return s.String()
}

// add appends text to every field being built; pat is the text as a
// pattern. keep makes the field stand even if empty.
func (x *expander) add(lit, pat string, meta, keep bool) {
	for i := range x.cur {
		b := &x.cur[i]
		if len(b.lit)+len(lit) > maxWord {
			b.tooLong()
			continue
		}
		b.lit += lit
		b.pat += pat
		b.meta = b.meta || meta
		b.keep = b.keep || keep
		if lit != "" {
			b.started = true
		}
	}
}

// unknown makes every field being built one Madebook cannot tell.
func (x *expander) unknown(why, src string) {
	for i := range x.cur {
		b := &x.cur[i]
		if b.why == "" {
			b.why, b.src = why, src
		}
		b.keep, b.started = true, true
	}
}

// lit adds the literal v, removing the backslashes that quote.
func (x *expander) lit(v string, q quoting) {
	glob := q == unquoted && (x.mode == modeArgs || x.mode == modePattern)
	if !strings.ContainsAny(v, `\*?[`) {
		x.add(v, v, false, false)
		return
	}
	var lit, pat strings.Builder
	meta := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			n := v[i+1]
			escapes := q == unquoted || n == '$' || n == '`' || n == '\\' || n == '\n' || (q == doubleQuoted && n == '"')
			if escapes {
				i++
				if n == '\n' {
					continue
				}
				lit.WriteByte(n)
				pat.WriteString(escapeMeta(string(n)))
				continue
			}
		}
		if glob && (c == '*' || c == '?' || c == '[') {
			lit.WriteByte(c)
			pat.WriteByte(c)
			meta = true
			continue
		}
		lit.WriteByte(c)
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			pat.WriteByte('\\')
		}
		pat.WriteByte(c)
	}
	x.add(lit.String(), pat.String(), meta, false)
}

// tilde expands the tilde prefix of v, the first literal of a word, and
// returns what is left of v. whole says v is the whole word.
func (x *expander) tilde(v string, whole bool) string {
	prefix, rest, found := strings.Cut(v, "/")
	if !found && !whole {
		return v
	}
	if found {
		rest = "/" + rest
	}
	switch prefix {
	case "~":
		x.value(x.home("~", whyHome), true, false)
	case "~+":
		x.value(dirFields(x.st.dir), true, false)
	case "~-":
		x.value(dirFields(x.st.old), true, false)
	default:
		x.unknown(prefix+" is the home directory of another user, which Madebook cannot know here", prefix)
	}
	return rest
}

// home is the value of ~ or $HOME: the variable HOME if the command set it,
// else Options.Home.
func (x *expander) home(src, why string) []field {
	if v, ok := x.st.lookup("HOME"); ok {
		return v
	}
	if x.a.o.Home == "" {
		return []field{{why: why, src: src}}
	}
	h := x.a.o.Home
	return []field{{name: litName(h), anchored: strings.HasPrefix(h, "/")}}
}

// dirFields are the values of $PWD in the directories d.
func dirFields(d dirs) []field {
	if d.why != "" {
		return []field{{why: d.why, src: "$PWD"}}
	}
	l := d.list()
	out := make([]field, len(l))
	for i, n := range l {
		out[i] = field{name: n, anchored: true}
	}
	return out
}

// value adds a value that may be any of alts (each one field when
// separate, as "$@" is). quoted says whether the expansion is quoted.
func (x *expander) value(alts []field, quoted, separate bool) {
	var next []builder
	if separate {
		for _, b := range x.cur {
			for i, v := range alts {
				nb := b
				if i > 0 {
					nb = builder{}
				}
				if i < len(alts)-1 {
					x.finish(x.append(nb, v, quoted)...)
					continue
				}
				next = append(next, x.append(nb, v, quoted)...)
			}
			if len(alts) == 0 {
				next = append(next, b)
			}
		}
	} else {
		if len(alts) > 1 {
			x.alternatives = true
		}
		if len(x.cur)*len(alts) > maxFields {
			x.cur = []builder{{why: "the word expands to too many paths", src: "{…}", keep: true}}
			return
		}
		for _, b := range x.cur {
			for _, v := range alts {
				next = append(next, x.append(b, v, quoted)...)
			}
		}
	}
	if len(next)+len(x.done) > maxFields {
		next = []builder{{why: "the word expands to too many paths", src: "{…}", keep: true}}
	}
	x.cur = next
}

// finish ends the fields bs.
func (x *expander) finish(bs ...builder) {
	for _, b := range bs {
		if b.keep || b.started {
			x.done = append(x.done, b.field())
		}
	}
}

// append returns b with the value v added: one builder, or, when the value
// is split into fields, the last of them (the others are finished).
func (x *expander) append(b builder, v field, quoted bool) []builder {
	if v.why != "" {
		if b.why == "" {
			b.why, b.src = v.why, v.src
		}
		b.keep, b.started = true, true
		return []builder{b}
	}
	if len(b.lit)+len(v.lit) > maxWord || len(b.pat)+len(v.pat) > 2*maxWord {
		b.tooLong()
		return []builder{b}
	}
	x.a.work += len(v.lit) >> 9
	if v.fd {
		b.fd, b.keep = true, true
	}
	if v.anchored && !b.started {
		b.anchored = true
	}
	if quoted || x.mode == modeAssign || x.mode == modeDoc || v.glob {
		b.lit += v.lit
		if v.glob {
			b.pat += v.pat
			b.meta = true
		} else {
			b.pat += escapeMeta(v.lit)
		}
		if v.lit != "" {
			b.started = true
		}
		if quoted {
			b.keep = true
		}
		return []builder{b}
	}
	// Unquoted: the value's metacharacters make a pattern, and in
	// arguments its blanks split it into fields.
	raw := func(b *builder, s string) {
		b.lit += s
		b.pat += strings.ReplaceAll(s, `\`, `\\`)
		if strings.ContainsAny(s, "*?[") {
			b.meta = true
		}
		if s != "" {
			b.started = true
		}
	}
	if x.mode != modeArgs || !strings.ContainsAny(v.lit, " \t\n") {
		raw(&b, v.lit)
		return []builder{b}
	}
	segs := strings.FieldsFunc(v.lit, isBlank)
	if isBlank(rune(v.lit[0])) {
		x.finish(b)
		b = builder{}
	}
	for i, s := range segs {
		if i > 0 {
			x.finish(b)
			b = builder{}
		}
		raw(&b, s)
	}
	if isBlank(rune(v.lit[len(v.lit)-1])) && len(segs) > 0 {
		x.finish(b)
		b = builder{}
	}
	return []builder{b}
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

// param adds the value of the parameter expansion pe.
func (x *expander) param(pe *syntax.ParamExp, quoted bool) {
	if pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.IsSet || pe.Index != nil || pe.Slice != nil ||
		pe.Repl != nil || pe.Names != 0 || pe.Flags != nil || len(pe.Modifiers) > 0 || pe.NestedParam != nil {
		x.a.sideEffects(pe, x.st)
		text := x.a.snippet(pe, "${…}")
		x.unknown("it expands "+text+", which Madebook does not evaluate", text)
		return
	}
	n := pe.Param.Value
	vals, separate := x.lookup(n, quoted)
	if pe.Exp != nil {
		vals = x.operate(n, pe, vals)
		separate = false
	}
	x.value(vals, quoted, separate)
}

// lookup returns the values the parameter n may have; separate says they
// are separate fields ("$@").
func (x *expander) lookup(n string, quoted bool) (vals []field, separate bool) {
	if v, ok := x.st.lookup(n); ok {
		return v, false
	}
	st := x.st
	switch {
	case n == "":
		return []field{{why: "it expands a parameter Madebook cannot tell", src: "$"}}, false
	case n == "HOME":
		return x.home("$HOME", whyHomeVar), false
	case n == "PWD":
		return dirFields(st.dir), false
	case n == "OLDPWD":
		return dirFields(st.old), false
	case n == "@" || n == "*":
		if !st.argsKnown {
			return []field{{why: "it expands $" + n + ", the arguments, which Madebook cannot see", src: "$" + n}}, false
		}
		if n == "*" && quoted {
			return []field{joinFields(st.args)}, false
		}
		return st.args, true
	case n == "#":
		if !st.argsKnown {
			return []field{{why: "it expands $#, which Madebook cannot know", src: "$#"}}, false
		}
		return []field{{name: litName(strconv.Itoa(len(st.args)))}}, false
	case n == "0":
		return []field{{why: "it expands $0, the name of the shell or script", src: "$0"}}, false
	case n[0] >= '1' && n[0] <= '9':
		if !st.argsKnown {
			return []field{{why: "it expands $" + n + ", an argument Madebook cannot see", src: "$" + n}}, false
		}
		i, err := strconv.Atoi(n)
		if err != nil || i > len(st.args) {
			return []field{{}}, false
		}
		return []field{st.args[i-1]}, false
	case len(n) == 1 && !isNameByte(n[0]):
		return []field{{why: "it expands $" + n + ", which Madebook cannot know", src: "$" + n}}, false
	}
	return []field{envField(n)}, false
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// joinFields is "$*": the fields joined with blanks.
func joinFields(fs []field) field {
	var lits, pats []string
	glob := false
	for _, f := range fs {
		if f.why != "" {
			return f
		}
		lits = append(lits, f.lit)
		pats = append(pats, f.pat)
		glob = glob || f.glob
	}
	if !glob {
		return field{name: litName(strings.Join(lits, " "))}
	}
	return field{name: name{lit: strings.Join(lits, " "), pat: strings.Join(pats, " "), glob: true}}
}

// operate applies the operator of ${n<op>word} to the values vals.
func (x *expander) operate(n string, pe *syntax.ParamExp, vals []field) []field {
	e := pe.Exp
	text := x.a.snippet(pe, "${"+n+"…}")
	cannot := []field{{why: "it expands " + text + ", which Madebook does not evaluate", src: text}}
	m := modeAssign
	if e.Op >= syntax.RemSmallSuffix && e.Op <= syntax.RemLargePrefix {
		m = modePattern
	}
	word := []field{{}}
	if e.Word != nil {
		word = x.a.word(e.Word, x.st, m)
	}
	var out []field
	switch e.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		null := e.Op == syntax.DefaultUnsetOrNull || e.Op == syntax.AssignUnsetOrNull
		for _, v := range vals {
			if v.known() && v.lit == "" && null {
				out = append(out, word...)
				continue
			}
			out = append(out, v)
		}
		if e.Op == syntax.AssignUnset || e.Op == syntax.AssignUnsetOrNull {
			if _, set := x.st.lookup(n); set {
				x.st.setVar(n, &variable{alts: out})
			}
		}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		for _, v := range vals {
			switch {
			case !v.known():
				out = append(out, v)
			case v.lit == "" && e.Op == syntax.AlternateUnsetOrNull:
				out = append(out, field{})
			default:
				out = append(out, word...)
			}
		}
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		out = vals
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if len(word) != 1 || !word[0].known() {
			return cannot
		}
		suffix := e.Op == syntax.RemSmallSuffix || e.Op == syntax.RemLargeSuffix
		longest := e.Op == syntax.RemLargeSuffix || e.Op == syntax.RemLargePrefix
		pat := word[0]
		for _, v := range vals {
			if !v.known() {
				out = append(out, v)
				continue
			}
			r, ok := remove(v, pat, suffix, longest)
			if !ok {
				return cannot
			}
			out = append(out, r)
		}
	case syntax.UpperAll, syntax.LowerAll:
		if e.Word != nil {
			return cannot
		}
		for _, v := range vals {
			if v.known() && !v.glob {
				s := strings.ToLower(v.lit)
				if e.Op == syntax.UpperAll {
					s = strings.ToUpper(v.lit)
				}
				v.name = litName(s)
			} else if v.known() {
				return cannot
			}
			out = append(out, v)
		}
	default:
		return cannot
	}
	return out
}

// remove is v without the shortest (or longest) suffix (or prefix)
// matching pat. ok is false when it cannot be told: v is a pattern, which
// stands for file names, and what the names lose is not the same for all
// of them.
func remove(v, pat field, suffix, longest bool) (field, bool) {
	if v.glob {
		if pat.glob {
			return field{}, false
		}
		has := strings.HasSuffix
		cut := strings.TrimSuffix
		if !suffix {
			has, cut = strings.HasPrefix, strings.TrimPrefix
		}
		lit := pat.lit
		if !has(v.pat, escapeMeta(lit)) || !has(v.lit, lit) || lit == "" {
			return field{}, false
		}
		r := v
		r.lit = cut(v.lit, lit)
		r.pat = cut(v.pat, escapeMeta(lit))
		r.glob = hasMeta(r.pat)
		if !r.glob {
			r.pat = escapeMeta(r.lit)
		}
		return r, true
	}
	s := v.lit
	n := len(s)
	if n > 1024 || len(pat.pat) > 256 {
		return field{}, false // too long to search
	}
	try := func(i int) bool {
		if suffix {
			return shellMatch(pat.pat, s[i:])
		}
		return shellMatch(pat.pat, s[:i])
	}
	best := -1
	if suffix {
		for i := n; i >= 0; i-- {
			if try(i) {
				best = i
				if !longest {
					break
				}
			}
		}
		if best >= 0 {
			s = s[:best]
		}
	} else {
		for i := 0; i <= n; i++ {
			if try(i) {
				best = i
				if !longest {
					break
				}
			}
		}
		if best >= 0 {
			s = s[best:]
		}
	}
	r := v
	r.name = litName(s)
	return r, true
}

// shellMatch reports whether s matches the shell pattern pat, where * and
// ? match any character, / included (as in ${x%pattern}). It backtracks to
// the last * only, which keeps it linear in len(pat)*len(s).
func shellMatch(pat, s string) bool {
	px, sx := 0, 0
	starPx, starSx := -1, -1
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					px++
					sx++
					continue
				}
			case '[':
				if j := classEnd(pat, px); j >= 0 {
					if sx < len(s) && inClass(pat[px+1:j], s[sx]) {
						px, sx = j+1, sx+1
						continue
					}
					break
				}
				if sx < len(s) && s[sx] == '[' {
					px++
					sx++
					continue
				}
			default:
				lit := c
				n := 1
				if c == '\\' && px+1 < len(pat) {
					lit, n = pat[px+1], 2
				}
				if sx < len(s) && s[sx] == lit {
					px += n
					sx++
					continue
				}
			}
		}
		if starPx >= 0 && starSx < len(s) {
			starSx++
			px, sx = starPx+1, starSx
			continue
		}
		return false
	}
	return true
}

// inClass reports whether c is in the class body (the text between [ and ]).
func inClass(body string, c byte) bool {
	neg := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		neg, body = true, body[1:]
	}
	in := false
	for i := 0; i < len(body); i++ {
		lo := body[i]
		if lo == '\\' && i+1 < len(body) {
			i++
			lo = body[i]
		}
		hi := lo
		if i+2 < len(body) && body[i+1] == '-' {
			hi = body[i+2]
			i += 2
		}
		if lo <= c && c <= hi {
			in = true
		}
	}
	return in != neg
}

// substitution analyzes the commands of a command or process
// substitution, in a subshell: the command around it goes on in st.
func (a *analyzer) substitution(list []*syntax.Stmt, st *state) {
	outer := a.tail
	a.tail = false
	a.isolated(list, st)
	a.tail = outer
}

// cmdSubst analyzes the commands of a command substitution and adds its
// output, which Madebook cannot tell (but $(pwd), which is the directory).
func (x *expander) cmdSubst(cs *syntax.CmdSubst) {
	if isPwd(cs) {
		x.value(dirFields(x.st.dir), true, false)
		return
	}
	x.a.substitution(cs.Stmts, x.st)
	if cs.Backquotes {
		x.unknown("the path is built by `…`", "`…`")
		return
	}
	x.unknown("the path is built by $(…)", "$(…)")
}

func isPwd(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return false
	}
	c, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	return ok && len(c.Assigns) == 0 && len(c.Args) == 1 && c.Args[0].Lit() == "pwd"
}

// ansiC is the value of $'…', whose backslash escapes are C's.
func ansiC(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	s, _, _ := expand.Format(&expand.Config{Env: expand.ListEnviron()}, v, nil)
	s, _, _ = strings.Cut(s, "\x00")
	return s
}

// sideEffects analyzes the command substitutions anywhere inside node (a
// parameter expansion's words, an arithmetic expression, a test), whose
// value does not matter.
func (a *analyzer) sideEffects(node syntax.Node, st *state) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if a.full {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.substitution(n.Stmts, st)
			return false
		case *syntax.ProcSubst:
			a.substitution(n.Stmts, st)
			return false
		}
		return true
	})
}

// arith analyzes the command substitutions inside an arithmetic
// expression, and makes the variables it assigns undecidable.
func (a *analyzer) arith(expr syntax.ArithmExpr, st *state) {
	if expr == nil {
		return
	}
	a.sideEffects(expr, st)
	syntax.Walk(expr, func(n syntax.Node) bool {
		var target syntax.ArithmExpr
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			if isAssignOp(n.Op) {
				target = n.X
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				target = n.X
			}
		}
		if w, ok := target.(*syntax.Word); ok {
			if v := w.Lit(); v != "" {
				st.undecidableVar(v, "it expands the variable $"+v+", which arithmetic computes")
			}
		}
		return true
	})
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// operands collapses fields into the arguments they are: the fields of one
// group (the values one word may have) are one argument.
func operands(fs []field) [][]field {
	var out [][]field
	for i := 0; i < len(fs); {
		j := i + 1
		if g := fs[i].group; g != 0 {
			for j < len(fs) && fs[j].group == g {
				j++
			}
		}
		out = append(out, fs[i:j])
		i = j
	}
	return out
}

// fieldsText is the text of fields joined with blanks (for eval and
// alias), and whether Madebook can tell all of it.
func fieldsText(fs []field) (string, bool) {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		if !f.known() || f.glob {
			return "", false
		}
		parts = append(parts, f.lit)
	}
	return strings.Join(parts, " "), true
}
