package governance

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/gate"
)

// briefMemo keeps the encoded brief of a session with nothing to hand
// over, for the cached inputs it hangs on: the common brief is then the
// stored bytes with a fresh brief_id and generated_at spliced in, not a
// decision and an encoding. A brief is a pure function of its inputs and
// the clock, and the clock matters only where a gate's gate_ttl runs out;
// the memo holds between two such instants. A write to the session
// replaces the inputs, and so the memo with them.
type briefMemo struct {
	mu sync.Mutex
	// head is the brief up to `"brief_id":"` (included); the rest is the
	// id, generated_at and the protocol text.
	head        []byte
	from, until time.Time // valid at from ≤ now < until (zero: unbounded)
	// gate is what the executor gate reads of the same decision
	// (GateSession), valid at gateFrom ≤ now < gateUntil.
	gate                *gate.Session
	gateFrom, gateUntil time.Time
}

// within reports whether now is in [from, until) (a zero until: no end).
func within(now, from, until time.Time) bool {
	return !now.Before(from) && (until.IsZero() || now.Before(until))
}

// gateSession is the executor gate's view of the brief decided from in at
// now, remembered until the clock changes the decision (a gate's gate_ttl
// runs out): a hook asks a check before every tool call, and most find
// the session as the last one did.
func (m *briefMemo) gateSession(in *briefInputs, now time.Time) gate.Session {
	m.mu.Lock()
	g := m.gate
	ok := g != nil && within(now, m.gateFrom, m.gateUntil)
	m.mu.Unlock()
	if ok {
		return *g
	}
	s := gateSession(in, now)
	from, until := in.clockWindow(now)
	m.mu.Lock()
	m.gate, m.gateFrom, m.gateUntil = &s, from, until
	m.mu.Unlock()
	return s
}

// The tail of every brief's encoding, after its permissions: what the
// memo splices.
var (
	memoIDKey   = []byte(`"brief_id":"`)
	memoTimeKey = []byte(`","generated_at":"`)
	memoEnd     = append(append([]byte(`","protocol":`), protocolJSON...), '}')
)

// encoded returns the memo's brief as at now with the id, or nil when it
// holds none valid at now: the remembered head, shared and not copied,
// then the id and time, then the shared tail.
func (m *briefMemo) encoded(now time.Time, id string) EncodedBrief {
	m.mu.Lock()
	head, ok := m.head, m.head != nil && within(now, m.from, m.until)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	sp := new(splice)
	mid := append(sp.mid[:0], id...)
	mid = append(mid, memoTimeKey...)
	mid = now.UTC().AppendFormat(mid, time.RFC3339Nano)
	sp.parts = [3][]byte{head, mid, memoEnd}
	return sp.parts[:]
}

// splice is a remembered brief's parts and the fresh bytes between them,
// in one allocation.
type splice struct {
	parts [3][]byte
	mid   [MaxBriefID + 64]byte // the id, memoTimeKey and the time
}

// EncodedBrief is a brief's JSON in parts, to be written one after
// another: a remembered brief is its shared bytes around a fresh id and
// time, not a copy of a few kilobytes on every brief. Nobody may change
// the parts.
type EncodedBrief [][]byte

// Bytes is the encoding in one new slice.
func (e EncodedBrief) Bytes() []byte { return bytes.Join(e, nil) }

// keep stores enc, the brief decided at now from in, as the memo.
func (m *briefMemo) keep(in *briefInputs, enc []byte, now time.Time) {
	i := bytes.LastIndex(enc, memoIDKey)
	if i < 0 {
		return // not a brief's encoding: nothing to keep
	}
	from, until := in.clockWindow(now)
	m.mu.Lock()
	m.head, m.from, m.until = enc[:i+len(memoIDKey)], from, until
	m.mu.Unlock()
}

// clockWindow is the stretch of time around now in which the brief built
// from in stays the same but for its generated_at: between the instants
// its open gates' gate_ttl runs out (zero: no such instant that way).
func (in *briefInputs) clockWindow(now time.Time) (from, until time.Time) {
	for _, d := range in.facts.Decisions {
		if d.TTL <= 0 {
			continue
		}
		at := d.OpenedAt.Add(d.TTL)
		if !now.Before(at) {
			if at.After(from) {
				from = at
			}
		} else if until.IsZero() || at.Before(until) {
			until = at
		}
	}
	return from, until
}

// BriefJSON is Brief encoded as /brief answers it (Brief.MarshalJSON).
// A brief with nothing to hand over or acknowledge is, most of the time,
// the session's remembered encoding with a fresh id and time.
func (s *BriefService) BriefJSON(ctx context.Context, actor auth.Actor, in BriefRequest) (EncodedBrief, error) {
	b, enc, err := s.brief(ctx, actor, in, true)
	if err != nil || enc != nil {
		return enc, err
	}
	out, err := b.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return EncodedBrief{out}, nil
}

// memoBrief answers the read-only brief from the memo, or decides it and
// keeps its encoding for the next. Inputs come from inputsFrom, which
// gives each its memo.
func (s *BriefService) memoBrief(inputs *briefInputs, now time.Time, id string) (EncodedBrief, error) {
	if enc := inputs.memo.encoded(now, id); enc != nil {
		return enc, nil
	}
	b := assemble(inputs, nil, now)
	enc, err := b.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode the brief: %w", err)
	}
	inputs.memo.keep(inputs, enc, now)
	out := inputs.memo.encoded(now, id)
	if out == nil {
		return nil, fmt.Errorf("the brief of %s does not splice", inputs.state.ID)
	}
	return out, nil
}
