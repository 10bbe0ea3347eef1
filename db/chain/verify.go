package chain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLine is the longest JSON line Verify reads.
const MaxLine = 16 << 20

// Tally is what a verification saw of one chain.
type Tally struct {
	Chain string
	// Rows is how many rows of the chain verified.
	Rows int
	// FirstID and LastID are the ids of its first and last row.
	FirstID, LastID int64
	// FirstPrev is the first row's prev_hash: Genesis when the rows start
	// at the beginning of the chain; otherwise (an export --since) the
	// hash of a row before them, taken as given.
	FirstPrev string
	// LastHash is the last row's hash: keep it, and check later exports
	// against it (Verifier.Anchor).
	LastHash string
}

// FromGenesis reports whether the rows start at the chain's first row.
func (t Tally) FromGenesis() bool { return t.FirstPrev == Genesis }

// Break is the first row that does not verify: its own hash does not
// match its content (the row, or its hash, was changed after it was
// written), or its link to the row before it in its chain is wrong (a row
// was removed, added or reordered there, or the link was changed), or
// both.
type Break struct {
	// Line is the row's line in the input, from 1.
	Line  int
	Chain string
	ID    int64
	// HashWrong says the row's hash is not the hash of its content.
	HashWrong bool
	// LinkWrong says its prev_hash is not the hash of the row before it
	// (PrevID), or its id does not come after that row's (OutOfOrder).
	LinkWrong  bool
	OutOfOrder bool
	PrevID     int64
}

func (b *Break) Error() string {
	var why []string
	if b.HashWrong {
		why = append(why, "its hash does not match its content (the row or its hash was changed after it was written)")
	}
	switch {
	case b.OutOfOrder:
		why = append(why, fmt.Sprintf("its id does not come after that of %s row %d before it (rows were reordered or repeated)", b.Chain, b.PrevID))
	case b.LinkWrong:
		why = append(why, fmt.Sprintf("its prev_hash is not the hash of %s row %d before it (a row was removed, added or reordered between them, or the link was changed)", b.Chain, b.PrevID))
	}
	return fmt.Sprintf("line %d: %s row %d does not verify: %s", b.Line, b.Chain, b.ID, strings.Join(why, ", and "))
}

// LineError is a line that is not a row of a chain.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d is not a row of the audit chain: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// AnchorError is an anchor (a hash kept from an earlier export) that no
// row verified has: the record was rewritten up to past it, or the input
// does not reach back to it.
type AnchorError struct{ Hash string }

func (e *AnchorError) Error() string {
	return fmt.Sprintf("no row has the hash %s: the record was rewritten since that hash was kept, or the export does not reach back to it (export without --since)", e.Hash)
}

// Verifier checks rows in the order they were written, each against the
// row before it in its chain. The chains may be interleaved. The first
// row of each chain is taken as given: its prev_hash is Genesis for a
// chain read from its beginning, any hash for one read from the middle.
type Verifier struct {
	tallies map[string]*Tally
	order   []string
	anchors map[string]bool
	rows    int
}

// NewVerifier returns a verifier that has seen no row.
func NewVerifier() *Verifier {
	return &Verifier{tallies: map[string]*Tally{}, anchors: map[string]bool{}}
}

// Anchor asks that some row verified have the hash h (Check says whether
// one did): a hash kept from an earlier export proves that the rows up to
// it were not rewritten since.
func (v *Verifier) Anchor(h string) { v.anchors[strings.ToLower(h)] = false }

// Add checks the next row, read at line. The error is a *Break.
func (v *Verifier) Add(line int, r Row) error {
	t := v.tallies[r.Chain]
	b := &Break{Line: line, Chain: r.Chain, ID: r.ID, HashWrong: !r.HashHolds()}
	if t != nil {
		b.PrevID = t.LastID
		b.OutOfOrder = r.ID <= t.LastID
		b.LinkWrong = b.OutOfOrder || r.PrevHash != t.LastHash
	}
	if b.HashWrong || b.LinkWrong {
		return b
	}
	if t == nil {
		t = &Tally{Chain: r.Chain, FirstID: r.ID, FirstPrev: r.PrevHash}
		v.tallies[r.Chain] = t
		v.order = append(v.order, r.Chain)
	}
	t.Rows++
	t.LastID, t.LastHash = r.ID, r.Hash
	v.rows++
	if _, ok := v.anchors[r.Hash]; ok {
		v.anchors[r.Hash] = true
	}
	return nil
}

// Rows is how many rows verified.
func (v *Verifier) Rows() int { return v.rows }

// Tallies is each chain seen, in the order its first row came.
func (v *Verifier) Tallies() []Tally {
	out := make([]Tally, 0, len(v.order))
	for _, c := range v.order {
		out = append(out, *v.tallies[c])
	}
	return out
}

// Check returns nil when every anchor was the hash of a row verified, and
// otherwise an *AnchorError naming one that was not (the least, so that
// the error is the same on every run).
func (v *Verifier) Check() error {
	var missing []string
	for h, found := range v.anchors {
		if !found {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	first := missing[0]
	for _, h := range missing[1:] {
		first = min(first, h)
	}
	return &AnchorError{Hash: first}
}

// Verify reads JSON lines (AppendLine's; blank lines are skipped) from r
// and checks each row. It returns the verifier, which says what verified,
// and the first failure: a *LineError, a *Break, an *AnchorError (after
// the last line, for an anchor no row had), or the reader's error.
func Verify(r io.Reader, anchors ...string) (*Verifier, error) {
	v := NewVerifier()
	for _, a := range anchors {
		v.Anchor(a)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		row, err := ParseLine(text)
		if err != nil {
			return v, &LineError{Line: line, Err: err}
		}
		if err := v.Add(line, row); err != nil {
			return v, err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return v, &LineError{Line: line + 1, Err: fmt.Errorf("longer than %d MiB", MaxLine>>20)}
	} else if err != nil {
		return v, fmt.Errorf("read line %d: %w", line+1, err)
	}
	return v, v.Check()
}
