package policy

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The prefilter. Running a hundred regular expressions over every file is
// most of the cost of Evaluate, and almost every policy needs some literal
// text to match: "AKIA" or "ASIA", "-----BEGIN", "password". Compile works
// out, for each content_regex, a set of literals one of which every match
// must contain, and Evaluate scans each file once for all of them together,
// noting where each occurs. A regular expression then runs only on the
// files that hold one of its literals, and only around them: on each line
// that holds one when its matches cannot span lines, or, when its matches
// have a bounded length, in a window of whole lines around each occurrence
// (see searchMode). Either way it finds the same first match as a run over
// the whole text: the windows are whole lines, so \b, \B and (?m)^ and $
// see the same neighbours, and an expression that looks at the text's own
// start or end (\A, \z, ^ and $ without (?m)) runs over the whole text.
//
// Literals are compared with ASCII letters folded to lower case, which
// over-approximates both case-sensitive and case-insensitive literals. A
// case-insensitive letter whose fold orbit leaves ASCII (k and K, the
// Kelvin sign; s and ſ, the long s) contributes each member of its orbit,
// so the prefilter never drops a file the expression would match.

const (
	maxExact = 64 // the most strings an exact set may hold
	minLit   = 2  // the shortest literal the scanner can look for
	maxClass = 16 // the most characters a class may match to join an exact set
)

// lower folds ASCII upper-case letters; every other byte is itself.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower[c]
	}
	return string(b)
}

// info is what the analysis knows of a regular expression: exact, when set,
// is every string it can match (lower-cased); match, when set, is a set of
// literals one of which every match contains.
type info struct {
	exact   []string
	isExact bool
	match   []string
}

func exactInfo(ss ...string) info {
	slices.Sort(ss)
	return info{exact: slices.Compact(ss), isExact: true}
}

func usable(set []string) bool {
	if len(set) == 0 {
		return false
	}
	for _, s := range set {
		if len(s) < minLit {
			return false
		}
	}
	return true
}

// better returns the better of two literal sets for the prefilter: longer
// literals are rarer, and fewer of them are cheaper to look for. A set that
// is not usable loses.
func better(a, b []string) []string {
	if !usable(b) {
		if usable(a) {
			return a
		}
		return nil
	}
	if !usable(a) {
		return b
	}
	score := func(set []string) int {
		n := len(set[0])
		for _, s := range set {
			n = min(n, len(s))
		}
		return min(n, 8)
	}
	if sa, sb := score(a), score(b); sa != sb {
		if sa > sb {
			return a
		}
		return b
	}
	if len(b) < len(a) {
		return b
	}
	return a
}

// required returns the best literal set every match contains, or nil.
func (i info) required() []string {
	var e []string
	if i.isExact {
		e = i.exact
	}
	return better(e, i.match)
}

func cross(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runeSet is every lower-cased encoding of the runes r matches.
func runeSet(r rune, fold bool) []string {
	ss := []string{lowerASCII(string(r))}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			ss = append(ss, lowerASCII(string(f)))
		}
	}
	return ss
}

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo("")
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		parts := make([]info, len(re.Rune))
		for i, r := range re.Rune {
			parts[i] = exactInfo(runeSet(r, fold)...)
		}
		return concat(parts)
	case syntax.OpCharClass:
		var ss []string
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > maxExact {
				return info{}
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				ss = append(ss, lowerASCII(string(r)))
			}
		}
		if i := exactInfo(ss...); len(i.exact) <= maxClass {
			return i
		}
		return info{}
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpPlus:
		return info{match: analyze(re.Sub[0]).required()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return info{match: analyze(re.Sub[0]).required()}
		}
		return info{}
	case syntax.OpQuest:
		if s := analyze(re.Sub[0]); s.isExact && len(s.exact) < maxExact {
			return exactInfo(append(slices.Clone(s.exact), "")...)
		}
		return info{}
	case syntax.OpConcat:
		var parts []info
		for _, s := range flatten(re.Sub, nil) {
			parts = append(parts, analyze(s))
		}
		return concat(parts)
	case syntax.OpAlternate:
		var union, match []string
		allExact, allRequired := true, true
		for _, s := range re.Sub {
			si := analyze(s)
			if si.isExact {
				union = append(union, si.exact...)
			} else {
				allExact = false
			}
			if r := si.required(); r != nil {
				match = append(match, r...)
			} else {
				allRequired = false
			}
		}
		if allExact {
			if e := exactInfo(union...); len(e.exact) <= maxExact {
				return e
			}
		}
		if !allRequired {
			return info{}
		}
		slices.Sort(match)
		return info{match: slices.Compact(match)}
	}
	// OpNoMatch, OpAnyChar, OpAnyCharNotNL, OpStar: nothing is required.
	return info{}
}

// flatten appends the parts of a concatenation to out, looking into nested
// concatenations and groups (x{3} simplifies to a concatenation of its own),
// so that exact parts next to each other are multiplied out together.
func flatten(subs []*syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	for _, s := range subs {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpConcat {
			out = flatten(s.Sub, out)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// concat combines the parts of a concatenation: adjacent exact parts are
// multiplied out into longer literals while the product stays small, and
// the best literal set of any part is required of the whole.
func concat(parts []info) info {
	cur := []string{""}
	allExact := true
	var best []string
	for _, p := range parts {
		if p.isExact {
			if len(cur)*len(p.exact) <= maxExact {
				cur = cross(cur, p.exact)
				continue
			}
			allExact = false
			best = better(best, cur)
			cur = p.exact
			continue
		}
		allExact = false
		best = better(best, cur)
		best = better(best, p.required())
		cur = []string{""}
	}
	if allExact {
		return exactInfo(cur...)
	}
	return info{match: better(best, cur)}
}

// canMatchNewline reports whether re may match a "\n".
func canMatchNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
		return false
	}
	return slices.ContainsFunc(re.Sub, canMatchNewline)
}

// usesTextEdges reports whether re looks at the start or the end of the
// text (\A, \z, or ^ and $ without (?m)), which a search over part of the
// text would move.
func usesTextEdges(re *syntax.Regexp) bool {
	return re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText || slices.ContainsFunc(re.Sub, usesTextEdges)
}

// unbounded is maxLen's answer for a match with no length limit (or one
// too long for a window search to pay).
const unbounded = -1

// maxLen is the most bytes a match of re can span, or unbounded.
func maxLen(re *syntax.Regexp) int {
	n := 0
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			m := utf8.RuneLen(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					m = max(m, utf8.RuneLen(f))
				}
			}
			n += max(m, 1)
		}
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			n = max(utf8.RuneLen(re.Rune[len(re.Rune)-1]), 1) // the ranges are sorted
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		n = utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		n = maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		m := maxLen(re.Sub[0])
		switch {
		case m == 0:
			n = 0
		case m == unbounded || re.Op != syntax.OpRepeat || re.Max < 0:
			return unbounded
		default:
			n = m * re.Max
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			m := maxLen(s)
			if m == unbounded {
				return unbounded
			}
			n += m
		}
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			m := maxLen(s)
			if m == unbounded {
				return unbounded
			}
			n = max(n, m)
		}
	}
	if n > maxWindow {
		return unbounded
	}
	return n
}

// maxWindow is the longest match a window search is used for.
const maxWindow = 4096

// How a regular expression with prefilter literals is searched.
type searchMode int

const (
	// searchWhole runs the expression over the whole text of a file that
	// holds one of its literals.
	searchWhole searchMode = iota
	// searchLine runs it over each line that holds one of its literals:
	// its matches can neither span lines nor look at the text's edges.
	searchLine
	// searchWindow runs it around each occurrence of a literal, as far as
	// the longest match reaches, widened to whole lines: its matches are
	// at most maxLen bytes long and do not look at the text's edges.
	searchWindow
)

// scanner finds, in one pass over a text, where each literal occurs.
// Literals are indexed by a pair of adjacent bytes in them (their key): the
// pair least likely to be common in source code, so that few places in a
// text make the scanner look further.
type scanner struct {
	lits    []string
	at      []int                // by literal: the offset of its key in it
	present [1 << 16 / 64]uint64 // the keys that start a literal
	slot    []uint32             // by key: 1 + the index of its bucket in buckets
	buckets [][]int32            // literal indexes by key
}

type scannerBuilder struct {
	s     *scanner
	index map[string]int32
}

func newScannerBuilder() *scannerBuilder {
	return &scannerBuilder{s: &scanner{}, index: map[string]int32{}}
}

func key(a, b byte) uint16 { return uint16(lower[a])<<8 | uint16(lower[b]) }

// add analyses a compiled regular expression and registers its literals:
// it returns the indexes of the literals one of which every match contains
// (nil when none is known), how to search it, and its longest match.
func (b *scannerBuilder) add(expr string) (lits []int32, mode searchMode, longest int) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, searchWhole, unbounded // cannot happen: regexp.Compile parsed it
	}
	re = re.Simplify()
	set := analyze(re).required()
	if set == nil {
		return nil, searchWhole, unbounded
	}
	if b.s.slot == nil {
		b.s.slot = make([]uint32, 1<<16)
	}
	for _, l := range set {
		i, ok := b.index[l]
		if !ok {
			i = int32(len(b.s.lits))
			b.index[l] = i
			b.s.lits = append(b.s.lits, l)
			at := rarestPair(l)
			b.s.at = append(b.s.at, at)
			k := key(l[at], l[at+1])
			b.s.present[k/64] |= 1 << (k % 64)
			if b.s.slot[k] == 0 {
				b.s.buckets = append(b.s.buckets, nil)
				b.s.slot[k] = uint32(len(b.s.buckets))
			}
			b.s.buckets[b.s.slot[k]-1] = append(b.s.buckets[b.s.slot[k]-1], i)
		}
		lits = append(lits, i)
	}
	longest = maxLen(re)
	switch {
	case usesTextEdges(re):
		mode = searchWhole
	case !canMatchNewline(re):
		mode = searchLine
	case longest != unbounded:
		mode = searchWindow
	}
	return lits, mode, longest
}

// scan appends to occ[i] every offset in text where the i-th literal
// occurs, in order, after emptying each occ[i].
func (s *scanner) scan(text string, occ [][]int) {
	for i := range occ {
		occ[i] = occ[i][:0]
	}
	if len(s.lits) == 0 {
		return
	}
	if len(text) < 2 {
		return
	}
	prev := uint16(lower[text[0]])
	for i := 1; i < len(text); i++ {
		cur := uint16(lower[text[i]])
		k := prev<<8 | cur
		prev = cur
		if s.present[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		for _, l := range s.buckets[s.slot[k]-1] {
			// The key is at i-1 in the text and at s.at[l] in the literal.
			if start := i - 1 - s.at[l]; start >= 0 && hasPrefixFold(text[start:], s.lits[l]) {
				occ[l] = append(occ[l], start)
			}
		}
	}
}

// rarestPair returns the offset in lit of the pair of adjacent bytes that
// is least likely to be common in source code, by a rough weight of each
// byte: upper-case letters are folded, and other bytes weigh alike.
func rarestPair(lit string) int {
	best, bestScore := 0, -1
	for i := 0; i+1 < len(lit); i++ {
		if score := byteWeight(lit[i]) * byteWeight(lit[i+1]); bestScore < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

func byteWeight(c byte) int {
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		return 12
	case strings.IndexByte("etaoinsr", c) >= 0:
		return 10
	case strings.IndexByte("lcdhupmfgbyw", c) >= 0:
		return 6
	case strings.IndexByte("().,;:=_\"'{}/-*", c) >= 0:
		return 5
	case '0' <= c && c <= '9':
		return 3
	case strings.IndexByte("kvxjqz", c) >= 0:
		return 2
	}
	return 1
}

// hasPrefixFold reports whether s starts with lit, a lower-cased literal,
// folding ASCII letters in s.
func hasPrefixFold(s, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if lower[s[j]] != lit[j] {
			return false
		}
	}
	return true
}
