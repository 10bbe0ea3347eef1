// Package policy checks a session's change against the organisation's
// policies: compile a set once, evaluate many changes against it.
//
// It is pure: no database, no network, no clock. A policy is a row the
// caller read; a finding is a value the caller stores as a violation.
//
// There are three kinds of policy:
//
//   - content_regex: a Go (RE2) regular expression run over the text of each
//     changed file (its content, or the lines its diff adds). The pattern
//     sees the file's whole text, so `^` and `$` are the text's start and
//     end unless the pattern turns on (?m). Binary files are skipped.
//   - path_glob: a glob over each changed file's path, where `*` stays
//     inside one path segment and `**` spans segments (`vendor/**`).
//   - dependency: a dependency name the change must not add, matched
//     exactly (`left-pad`), or by prefix when it ends in `*` (`@types/*`;
//     as in a glob, the `*` may match nothing). Names are compared as
//     reported, trimmed of spaces; a version is not stripped, so `left-pad`
//     does not match `left-pad@1.3.0`.
//
// A finding never holds a secret value: its Match names what matched (see
// Finding.Match).
package policy

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/protocol"
)

// Kind is what a policy's pattern is matched against.
type Kind string

// The policy kinds.
const (
	KindContentRegex Kind = "content_regex"
	KindPathGlob     Kind = "path_glob"
	KindDependency   Kind = "dependency"
)

// Action is what a finding does to the session.
type Action string

// The policy actions. A violation stops or redirects the agent according to
// the policy's severity; block_merge lets the agent keep writing the code,
// which will not ship until the policy's conditions are met.
const (
	ActionViolation  Action = "violation"
	ActionBlockMerge Action = "block_merge"
)

// Policy is one rule the organisation set.
type Policy struct {
	ID       int64
	Name     string
	Severity protocol.Severity
	Kind     Kind
	Pattern  string
	Action   Action
}

// Finding is one policy that a change breaks, and where.
type Finding struct {
	PolicyID int64             `json:"policy_id"`
	Policy   string            `json:"policy"`
	Severity protocol.Severity `json:"severity"`
	Action   Action            `json:"action"`
	// Match names what matched, never the matched text when that could be a
	// secret. For content_regex it is the label of the first named group
	// that took part in the match (see below), or else the matched text
	// redacted by Redact. For path_glob it is the policy's pattern; for
	// dependency, the dependency the change adds.
	//
	// A group name reads as a label: a name with a lower-case letter has
	// its underscores turned into spaces (`(?P<PRIVATE_KEY_block>…)` reads
	// "PRIVATE KEY block"), and a name without one is kept as written, as
	// an identifier (`(?P<AWS_SECRET_ACCESS_KEY>…)` reads
	// "AWS_SECRET_ACCESS_KEY").
	Match string `json:"match"`
	// File is the changed file's path; empty for a dependency.
	File string `json:"file,omitempty"`
	// Line is the 1-based line of the first match for content_regex: the
	// line in the file's content, or for a diff the line in the new file
	// that its hunk header gives (the position among the added lines when
	// the diff has no hunk header). It is 0 for the other kinds.
	Line int `json:"line,omitempty"`
}

// Validate reports, as one sentence a person can act on, what is wrong with
// a policy. The error is an errs.Invalid carrying the field it is about:
// invalid_policy, or pattern_too_long (over MaxPattern characters) or
// pattern_too_costly (a content_regex over MaxProgram or MaxCost).
func Validate(p Policy) error {
	_, err := compileOne(p)
	return err
}

func invalid(field, format string, args ...any) error {
	return errs.E(errs.Invalid, "invalid_policy", format, args...).In(field)
}

func oneOf(field, value, allowed string) error {
	if strings.TrimSpace(value) == "" {
		return invalid(field, "A policy needs a %s: %s.", field, allowed)
	}
	return invalid(field, "Policy %s %q is not one of %s.", field, value, allowed)
}

// Set is a compiled list of policies. It is immutable and safe for
// concurrent use.
type Set struct {
	content []*compiled // content_regex
	paths   []*compiled // path_glob
	deps    []*compiled // dependency
	scan    *scanner    // the literal prefilter for content
}

type compiled struct {
	Policy
	order int // the index in the list given to Compile

	// content_regex
	re     *regexp.Regexp
	labels []string // by capture group: its label, or ""
	lits   []int32  // prefilter literals, one of which every match contains; nil: none known
	mode   searchMode
	maxLen int // the longest match in bytes, for searchWindow

	// path_glob: what every matching path has, a quick test before
	// glob.Match
	first  string // its first segment, when the pattern's is a plain name
	suffix string // how it ends, when the pattern's last segment ends in plain text

	// dependency
	dep    string
	prefix bool
}

// Compile validates and compiles policies. The error names the first
// policy that does not validate.
func Compile(ps []Policy) (*Set, error) {
	s := &Set{}
	b := newScannerBuilder()
	for i, p := range ps {
		c, err := compileOne(p)
		if err != nil {
			return nil, fmt.Errorf("policy %d (%q): %w", p.ID, p.Name, err)
		}
		c.order = i
		switch c.Kind {
		case KindContentRegex:
			c.lits, c.mode, c.maxLen = b.add(c.re.String())
			s.content = append(s.content, c)
		case KindPathGlob:
			s.paths = append(s.paths, c)
		case KindDependency:
			s.deps = append(s.deps, c)
		}
	}
	s.scan = b.s
	return s, nil
}

func compileOne(p Policy) (*compiled, error) {
	if strings.TrimSpace(p.Name) == "" {
		return nil, invalid("name", "A policy needs a name.")
	}
	switch p.Severity {
	case protocol.SeverityCritical, protocol.SeverityHigh, protocol.SeverityMedium, protocol.SeverityLow:
	default:
		return nil, oneOf("severity", string(p.Severity), "critical, high, medium or low")
	}
	switch p.Action {
	case ActionViolation, ActionBlockMerge:
	default:
		return nil, oneOf("action", string(p.Action), "violation or block_merge")
	}
	if n := utf8.RuneCountInString(p.Pattern); n > MaxPattern {
		return nil, errs.E(errs.Invalid, "pattern_too_long", "The pattern is %d characters; at most %d are allowed.", n, MaxPattern).In("pattern")
	}
	c := &compiled{Policy: p}
	switch p.Kind {
	case KindContentRegex:
		if p.Pattern == "" {
			return nil, invalid("pattern", "A content_regex policy needs a pattern: a Go (RE2) regular expression.")
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, invalid("pattern", "The content_regex pattern is not a valid Go (RE2) regular expression: %v.", err)
		}
		if cost, size := Cost(p.Pattern); size > MaxProgram {
			return nil, errs.E(errs.Invalid, "pattern_too_costly",
				"The content_regex pattern is too costly to run over every change: it compiles to %d instructions; at most %d are allowed. Make it shorter, or repeat less (a{1000} is 1,000 instructions).",
				size, MaxProgram).In("pattern")
		} else if cost > MaxCost {
			return nil, errs.E(errs.Invalid, "pattern_too_costly",
				"The content_regex pattern is too costly to run over every change: it keeps more than %d matches in progress at each character of ordinary source code. Bound what its repetitions match, e.g. [A-Za-z0-9]{40} rather than .{40}.",
				MaxCost).In("pattern")
		}
		if re.MatchString("") {
			return nil, invalid("pattern", "The content_regex pattern %q matches empty text, so it would fire on every file: make it require at least one character.", p.Pattern)
		}
		c.re = re
		c.labels = make([]string, re.NumSubexp()+1)
		for i, name := range re.SubexpNames() {
			c.labels[i] = groupLabel(name)
		}
	case KindPathGlob:
		if err := glob.Valid(p.Pattern); err != nil {
			return nil, invalid("pattern", "The path_glob pattern is not valid: %v.", err)
		}
		c.first, c.suffix = globHints(p.Pattern)
	case KindDependency:
		pat := p.Pattern
		switch {
		case strings.TrimSpace(pat) == "":
			return nil, invalid("pattern", "A dependency policy needs a pattern: a dependency name such as left-pad, or a prefix ending in * such as @types/*.")
		case strings.IndexFunc(pat, unicode.IsSpace) >= 0:
			return nil, invalid("pattern", "The dependency pattern %q contains a space: name one dependency, such as left-pad, or a prefix ending in *, such as @types/*.", pat)
		case strings.Contains(strings.TrimSuffix(pat, "*"), "*"):
			return nil, invalid("pattern", "The dependency pattern %q has a * that is not at its end: only a trailing * is supported, as in @types/*.", pat)
		case pat == "*":
			return nil, invalid("pattern", "The dependency pattern %q names no dependency: put a name prefix before the *, as in @types/*.", pat)
		}
		c.prefix = strings.HasSuffix(pat, "*")
		c.dep = strings.TrimSuffix(pat, "*")
	default:
		return nil, oneOf("kind", string(p.Kind), "content_regex, path_glob or dependency")
	}
	return c, nil
}

// groupLabel turns a capture group's name into a finding's label.
func groupLabel(name string) string {
	if strings.IndexFunc(name, unicode.IsLower) < 0 {
		return strings.Trim(name, "_")
	}
	return strings.TrimSpace(strings.ReplaceAll(name, "_", " "))
}

// Redact names a matched text without revealing it: at most its first 4
// characters (and never more than a quarter of it, nor a non-printable
// character), then "…" and its length, e.g. "AKIA… (20 chars)".
func Redact(s string) string {
	n := utf8.RuneCountInString(s)
	keep := min(4, n/4)
	var b strings.Builder
	for _, r := range s {
		if keep == 0 || !unicode.IsPrint(r) {
			break
		}
		b.WriteRune(r)
		keep--
	}
	b.WriteString("…")
	if n == 1 {
		b.WriteString(" (1 char)")
	} else {
		fmt.Fprintf(&b, " (%d chars)", n)
	}
	return b.String()
}

// found is a finding with the index of its policy in the compiled list,
// which orders policies with the same id.
type found struct {
	order int
	Finding
}

func (c *compiled) finding(match, file string, line int) found {
	return found{c.order, Finding{PolicyID: c.ID, Policy: c.Name, Severity: c.Severity, Action: c.Action,
		Match: match, File: file, Line: line}}
}

// Evaluate returns the findings of the set's policies in a change, one per
// policy and file (at the first match in the file) or per policy and
// dependency, ordered by policy id, then file, then line.
func (s *Set) Evaluate(c change.Change) []Finding {
	fs, _ := s.evaluate(c, nil)
	return fs
}

// Meter watches one evaluation (see EvaluateMetered).
type Meter struct {
	// Now is read before and after each content_regex's run over a file
	// (not when the prefilter rules the file out: that run does nothing).
	Now func() time.Time
	// Stop is asked before each run, with the policy about to run; when it
	// answers true the evaluation ends with a *StoppedError.
	Stop func(next Policy) bool
	// Costs is what the evaluation spent running each content_regex, by
	// policy id; EvaluateMetered adds to it.
	Costs map[int64]time.Duration
}

// StoppedError is the end of an evaluation its Meter stopped: the policy
// that had cost it most so far, and what it cost.
type StoppedError struct {
	Policy Policy
	Cost   time.Duration
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("evaluation stopped; policy %d (%q) had cost it most: %s", e.Policy.ID, e.Policy.Name, e.Cost)
}

// EvaluateMetered is Evaluate, timing each content_regex with m.Now and
// asking m.Stop before each run. A run over one file is not interrupted:
// the pattern bounds (MaxPattern, MaxProgram, MaxCost) keep it short.
func (s *Set) EvaluateMetered(c change.Change, m *Meter) ([]Finding, error) {
	if m.Costs == nil {
		m.Costs = map[int64]time.Duration{}
	}
	return s.evaluate(c, m)
}

func (s *Set) evaluate(c change.Change, m *Meter) ([]Finding, error) {
	if s == nil {
		return nil, nil
	}
	var fs []found
	var occ [][]int // by prefilter literal: its offsets in the file
	var buf []int
	if len(s.content) > 0 {
		occ = make([][]int, len(s.scan.lits))
	}
	for _, f := range c.Files {
		path := strings.TrimPrefix(f.Path, "./") // as glob.Match reads it
		for _, p := range s.paths {
			if p.mayMatch(path) && glob.Match(p.Pattern, f.Path) {
				fs = append(fs, p.finding(p.Pattern, f.Path, 0))
			}
		}
		if len(s.content) == 0 {
			continue
		}
		text := f.Text()
		if text == "" || change.Binary(text) {
			continue
		}
		s.scan.scan(text, occ)
		for _, p := range s.content {
			var loc []int
			if m == nil || p.idle(occ) {
				loc, buf = p.search(text, occ, buf)
			} else {
				if m.Stop(p.Policy) {
					return nil, s.stopped(m)
				}
				start := m.Now()
				loc, buf = p.search(text, occ, buf)
				m.Costs[p.ID] += m.Now().Sub(start)
			}
			if loc == nil {
				continue
			}
			line := strings.Count(text[:loc[0]], "\n") + 1
			if f.Diff != "" {
				line = newFileLine(f.Diff, line)
			}
			fs = append(fs, p.finding(p.label(text, loc), f.Path, line))
		}
	}
	for _, d := range c.Dependencies {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		for _, p := range s.deps {
			if d == p.dep || p.prefix && strings.HasPrefix(d, p.dep) {
				fs = append(fs, p.finding(d, "", 0))
			}
		}
	}
	slices.SortFunc(fs, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.PolicyID, b.PolicyID), cmp.Compare(a.order, b.order),
			strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), strings.Compare(a.Match, b.Match))
	})
	// One finding per policy and file (a path may be listed twice), or per
	// policy and dependency: keep the first, which has the lowest line.
	out := make([]Finding, 0, len(fs))
	for i, f := range fs {
		if i > 0 && fs[i-1].order == f.order && fs[i-1].File == f.File && (f.File != "" || fs[i-1].Match == f.Match) {
			continue
		}
		out = append(out, f.Finding)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// stopped names the content_regex that cost the stopped evaluation most.
func (s *Set) stopped(m *Meter) error {
	e := &StoppedError{}
	for _, p := range s.content {
		if d := m.Costs[p.ID]; e.Policy.Name == "" || d > e.Cost {
			e.Policy, e.Cost = p.Policy, d
		}
	}
	return e
}

// globHints returns what every path a glob matches has: its first segment,
// when the pattern's first segment is a plain name, and the plain text its
// last segment ends in (after its last *, ? or ]). A pattern with an
// escape gives none.
func globHints(pattern string) (first, suffix string) {
	if strings.Contains(pattern, `\`) {
		return "", ""
	}
	segs := strings.Split(pattern, "/")
	if s := segs[0]; !strings.ContainsAny(s, "*?[") {
		first = s
	}
	if s := segs[len(segs)-1]; s != "**" {
		suffix = s[strings.LastIndexAny(s, "*?]")+1:]
	}
	return first, suffix
}

// mayMatch is false when the path cannot match the policy's glob.
func (p *compiled) mayMatch(path string) bool {
	if p.first != "" && !(strings.HasPrefix(path, p.first) && (len(path) == len(p.first) || path[len(p.first)] == '/')) {
		return false
	}
	return strings.HasSuffix(path, p.suffix)
}

// idle is true when the prefilter knows the policy cannot match the file,
// so that search does no work worth timing.
func (p *compiled) idle(occ [][]int) bool {
	if p.lits == nil {
		return false
	}
	for _, l := range p.lits {
		if len(occ[l]) > 0 {
			return false
		}
	}
	return true
}

// search returns the submatch offsets of the policy's first match in text,
// or nil. occ holds, by prefilter literal, the offsets where it occurs; buf
// is scratch space, returned for reuse.
func (p *compiled) search(text string, occ [][]int, buf []int) ([]int, []int) {
	if p.lits == nil {
		return p.find(text, 0, len(text)), buf
	}
	at := buf[:0]
	for _, l := range p.lits {
		at = append(at, occ[l]...)
	}
	if len(at) == 0 {
		return nil, at // no match can exist without one of the literals
	}
	if len(p.lits) > 1 {
		slices.Sort(at)
	}
	switch p.mode {
	case searchLine:
		// A match lies within one line and holds a literal: the first
		// line with a literal and a match has the first match.
		end := -1
		for _, a := range at {
			if a < end {
				continue // on the line just searched
			}
			start := lineStart(text, a)
			end = lineEnd(text, a)
			if loc := p.find(text, start, end); loc != nil {
				return loc, at
			}
		}
		return nil, at
	case searchWindow:
		// A match holding the literal at a lies within maxLen bytes of it.
		// The window is widened to whole lines, so that \b and (?m)^ and $
		// see the same neighbours as in the whole text.
		end := -1
		for _, a := range at {
			if a+p.maxLen <= end {
				continue // its window lies within the one just searched
			}
			start := lineStart(text, max(0, a-p.maxLen))
			end = lineEnd(text, min(len(text), a+p.maxLen))
			if loc := p.find(text, start, end); loc != nil {
				// An earlier match may hold a later literal and run past
				// the window: it lies within maxLen bytes of this one.
				if e := lineEnd(text, min(len(text), loc[0]+p.maxLen)); e > end {
					loc = p.find(text, start, e)
				}
				return loc, at
			}
		}
		return nil, at
	}
	return p.find(text, 0, len(text)), at
}

// find runs the policy's expression over text[from:to] and returns the
// submatch offsets in text, or nil.
func (p *compiled) find(text string, from, to int) []int {
	loc := p.re.FindStringSubmatchIndex(text[from:to])
	if loc == nil {
		return nil
	}
	for i, x := range loc {
		if x >= 0 {
			loc[i] = x + from
		}
	}
	return loc
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(text string, i int) int {
	return strings.LastIndexByte(text[:i], '\n') + 1
}

// lineEnd is the offset of the "\n" that ends the line holding offset i,
// or the text's length.
func lineEnd(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// label names a match: the label of the first named group that took part
// in it, or else the matched text, redacted.
func (p *compiled) label(text string, loc []int) string {
	for g := 1; g < len(p.labels); g++ {
		if p.labels[g] != "" && loc[2*g] >= 0 {
			return p.labels[g]
		}
	}
	return Redact(text[loc[0]:loc[1]])
}

// newFileLine returns the line, in the new file, of the k-th line (1-based)
// that change.File.Text takes from diff, reading the hunk headers. Without a
// hunk header before that line it returns k.
func newFileLine(diff string, k int) int {
	added, next, inHunk := 0, 0, false
	start := 0
	for i := 0; i <= len(diff); i++ {
		if i < len(diff) && diff[i] != '\n' {
			continue
		}
		line := diff[start:i]
		start = i + 1
		switch {
		case strings.HasPrefix(line, "@@"):
			next, inHunk = hunkNewStart(line)
		case len(line) > 0 && line[0] == '+' && !strings.HasPrefix(line, "+++"):
			// The same test change.File.Text makes.
			added++
			if added == k {
				if inHunk {
					return next
				}
				return k
			}
			next++
		case len(line) > 0 && (line[0] == '-' || line[0] == '\\'):
			// A removed line, a file header or "\ No newline at end of
			// file": not in the new file.
		default:
			// A context line, or an added line Text skips ("+++…").
			next++
		}
	}
	return k
}

// hunkNewStart reads the new file's first line from a hunk header,
// "@@ -l[,s] +l[,s] @@".
func hunkNewStart(h string) (int, bool) {
	i := strings.Index(h, " +")
	if i < 0 {
		return 0, false
	}
	n, digits := 0, 0
	for _, c := range []byte(h[i+2:]) {
		if c < '0' || c > '9' || n > 1e8 {
			break
		}
		n = n*10 + int(c-'0')
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	return n, true
}
