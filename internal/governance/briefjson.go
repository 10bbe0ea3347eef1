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

// decided caches what a session's view decides to while the clock does
// not change it: the brief's encoding when nothing is due, and the
// executor gate's session. A brief is a pure function of its view and
// the clock, and the clock matters only where a gate's gate_ttl runs out;
// each cached value holds between two such instants (clockWindow). A
// write to the session replaces the view, and this cache with it. The
// common brief is then the cached bytes with a fresh brief_id and
// generated_at spliced in, not a decision and an encoding.
type decided struct {
	mu sync.Mutex
	// head is the brief up to `"brief_id":"` (included); the rest is the
	// id, generated_at and the protocol text. Valid at from ≤ now < until.
	head        []byte
	from, until time.Time
	// gate is the executor gate's session (GateView), valid at
	// gateFrom ≤ now < gateUntil.
	gate                *gate.Session
	gateFrom, gateUntil time.Time
}

// within reports whether now is in [from, until) (a zero until: no end).
func within(now, from, until time.Time) bool {
	return !now.Before(from) && (until.IsZero() || now.Before(until))
}

// gateSession is the executor gate's session decided from v at now,
// cached until the clock changes the decision: a hook asks a check before
// every tool call, and most find the session as the last one did.
func (d *decided) gateSession(v *sessionView, now time.Time) gate.Session {
	d.mu.Lock()
	g := d.gate
	ok := g != nil && within(now, d.gateFrom, d.gateUntil)
	d.mu.Unlock()
	if ok {
		return *g
	}
	s := gateSession(v, now)
	s.Plan, s.Released = v.plan, v.released
	from, until := v.clockWindow(now)
	d.mu.Lock()
	d.gate, d.gateFrom, d.gateUntil = &s, from, until
	d.mu.Unlock()
	return s
}

// The tail of every brief's encoding, after its permissions: what
// encoded splices.
var (
	briefIDKey   = []byte(`"brief_id":"`)
	briefTimeKey = []byte(`","generated_at":"`)
	briefTail    = append(append([]byte(`","protocol":`), protocolJSON...), '}')
)

// encoded returns the cached brief as at now with the id, or nil when none
// is valid at now: the cached head, shared and not copied, then the id and
// time, then the shared tail.
func (d *decided) encoded(now time.Time, id string) EncodedBrief {
	d.mu.Lock()
	head, ok := d.head, d.head != nil && within(now, d.from, d.until)
	d.mu.Unlock()
	if !ok {
		return nil
	}
	sp := new(splice)
	mid := append(sp.mid[:0], id...)
	mid = append(mid, briefTimeKey...)
	mid = now.UTC().AppendFormat(mid, time.RFC3339Nano)
	sp.parts = [3][]byte{head, mid, briefTail}
	return sp.parts[:]
}

// splice is a cached brief's parts and the fresh bytes between them,
// in one allocation.
type splice struct {
	parts [3][]byte
	mid   [MaxBriefID + 64]byte // the id, briefTimeKey and the time
}

// EncodedBrief is a brief's JSON in parts, to be written one after
// another: a cached brief is its shared bytes around a fresh id and
// time, not a copy of a few kilobytes on every brief. Nobody may change
// the parts.
type EncodedBrief [][]byte

// Bytes is the encoding in one new slice.
func (e EncodedBrief) Bytes() []byte { return bytes.Join(e, nil) }

// keep caches enc, the brief decided at now from v.
func (d *decided) keep(v *sessionView, enc []byte, now time.Time) {
	i := bytes.LastIndex(enc, briefIDKey)
	if i < 0 {
		return // not a brief's encoding: nothing to keep
	}
	from, until := v.clockWindow(now)
	d.mu.Lock()
	d.head, d.from, d.until = enc[:i+len(briefIDKey)], from, until
	d.mu.Unlock()
}

// clockWindow is the stretch of time around now in which the brief built
// from v stays the same but for its generated_at: between the instants
// its open gates' gate_ttl runs out (zero: no such instant that way).
func (v *sessionView) clockWindow(now time.Time) (from, until time.Time) {
	for _, d := range v.facts.Decisions {
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
// the session's cached encoding with a fresh id and time.
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

// encodedBrief answers the read-only brief from the view's cached
// encoding, or decides it and caches its encoding for the next.
func (s *BriefService) encodedBrief(inputs *sessionView, now time.Time, id string) (EncodedBrief, error) {
	if enc := inputs.decided.encoded(now, id); enc != nil {
		return enc, nil
	}
	b := assemble(inputs, nil, now)
	enc, err := b.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode the brief: %w", err)
	}
	inputs.decided.keep(inputs, enc, now)
	out := inputs.decided.encoded(now, id)
	if out == nil {
		return nil, fmt.Errorf("the brief of %s does not splice", inputs.state.ID)
	}
	return out, nil
}
