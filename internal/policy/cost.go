package policy

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// The bounds of a policy. Go's regular expressions run in time linear in
// the text, but the factor is the work the expression does at each
// character: the automaton's threads still alive there, up to its program
// size. A 900,000-character pattern took over a minute per change report.
// So a pattern is bounded in length, and a content_regex also in its
// compiled program and in the threads it keeps alive over a fixed sample
// of source text (its cost, see Cost). Both checks are deterministic: the
// same pattern is accepted or refused on every machine.
const (
	// MaxPattern is the most characters (runes) of any policy's pattern:
	// a regular expression, a glob or a dependency name.
	MaxPattern = 1000
	// MaxProgram is the most instructions of a content_regex's compiled
	// program (regexp/syntax, after Simplify): "[a-z]{40}" has 42.
	MaxProgram = 2000
	// MaxCost is the most threads a content_regex may keep alive, on
	// average, at each character of the cost sample (see Cost). The
	// shipped secret patterns cost under 2; "(?s).{900}x" costs about
	// 900, and took 26 s over one MiB.
	MaxCost = 32
)

// costSample is the text Cost runs a pattern over: lines of source code in
// several languages, configuration, prose, every printable ASCII
// character, digits, base64 and hex runs, and a few non-ASCII letters, so
// that an expression whose threads multiply on ordinary text does so here.
var costSample = func() string {
	lines := []string{
		`package billing // Package billing computes invoices.`,
		`func (s *Store) Get(ctx context.Context, id int64) (*Invoice, error) {`,
		`	row := s.db.QueryRowContext(ctx, "SELECT id, total FROM invoices WHERE id = ?", id)`,
		`	if err := row.Scan(&inv.ID, &inv.Total); err != nil { return nil, fmt.Errorf("get %d: %w", id, err) }`,
		`export function CustomerList({ teamId }: { teamId: number }) { const [q, setQ] = useState(""); }`,
		`<li key={c.id}><a href={"/customers/" + c.id}>{c.name}</a></li>`,
		`apiVersion: apps/v1  kind: Deployment  metadata: { name: reporting-1, labels: { app: reporting } }`,
		`DATABASE_URL=postgres://user@db.internal:5432/app?sslmode=require  # the primary`,
		`token = "c2VjcmV0LXZhbHVlLW5vdC1yZWFsbHktYS1zZWNyZXQ="  sha = 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b`,
		`The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 0123456789.`,
		"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
		`		for i := 0; i < len(xs); i++ { total += xs[i] * 2 } // naïve café Grüße Ωμέγα 東京 ✓`,
		`aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`,
		`                                                                                                    `,
		`0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000`,
		`xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`,
	}
	var b strings.Builder
	for range 3 {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}()

// Cost is the work a regular expression does over the cost sample: the
// average number of threads of its automaton alive at each character, as
// Go's NFA runs it to find every match (an upper bound of what the
// backtracker and the one-pass matcher do). It returns the program's size
// too. A pattern that does not parse costs nothing: Validate reports it.
func Cost(pattern string) (cost float64, program int) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, 0
	}
	n := utf8.RuneCountInString(costSample)
	steps := threadSteps(prog, costSample, MaxCost*n+1)
	return float64(steps) / float64(n), len(prog.Inst)
}

// threadSteps runs prog over text as an unanchored Pike VM without
// captures and returns how many threads it stepped, stopping once it
// passes limit.
func threadSteps(prog *syntax.Prog, text string, limit int) int {
	cur, next := newPCSet(len(prog.Inst)), newPCSet(len(prog.Inst))
	steps := 0
	prev := rune(-1)
	for i := 0; i <= len(text) && steps <= limit; {
		r, w := rune(-1), 0
		if i < len(text) {
			r, w = utf8.DecodeRuneInString(text[i:])
		}
		flag := syntax.EmptyOpContext(prev, r)
		cur.add(prog, uint32(prog.Start), flag) // a match may start here
		next.clear()
		for _, pc := range cur.dense {
			steps++
			in := &prog.Inst[pc]
			switch in.Op {
			case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				if r >= 0 && in.MatchRune(r) {
					next.add(prog, in.Out, 0)
				}
			}
		}
		if r < 0 {
			break
		}
		// The threads added for the next character follow empty-width
		// assertions with that character's context.
		nr := rune(-1)
		if i+w < len(text) {
			nr, _ = utf8.DecodeRuneInString(text[i+w:])
		}
		cur.clear()
		nflag := syntax.EmptyOpContext(r, nr)
		for _, pc := range next.dense {
			cur.add(prog, pc, nflag)
		}
		prev = r
		i += w
	}
	return steps
}

// pcSet is a sparse set of program counters, the threads alive at one
// character, holding only instructions that consume a rune.
type pcSet struct {
	dense []uint32
	seen  []uint32 // every pc add visited, consuming or not
	mark  []bool
}

func newPCSet(n int) *pcSet {
	return &pcSet{mark: make([]bool, n)}
}

func (s *pcSet) clear() {
	s.dense = s.dense[:0]
	for _, pc := range s.seen {
		s.mark[pc] = false
	}
	s.seen = s.seen[:0]
}

// add follows pc through alternations, captures, no-ops and the
// empty-width assertions flag satisfies (flag 0: record pc as given, to be
// followed later), adding the rune instructions it reaches.
func (s *pcSet) add(prog *syntax.Prog, pc uint32, flag syntax.EmptyOp) {
	stack := []uint32{pc}
	deferred := flag == 0
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.mark[pc] {
			continue
		}
		s.mark[pc] = true
		s.seen = append(s.seen, pc)
		if deferred {
			s.dense = append(s.dense, pc)
			continue
		}
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flag == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			s.dense = append(s.dense, pc)
		}
	}
}
