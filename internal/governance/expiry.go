package governance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/protocol"
)

// Gates that expire: a mission's gate_ttl (MissionInput.GateTTL) bounds
// how long its gates wait on a person. The rule is protocol.GateExpiry,
// read against the clock wherever a gate is shown (the brief, the session,
// the Attention view); the sweep (ExpireDue, RunExpiry) records each
// expiry once, which is what escalates it.

// expireAt settles whether the gate is expired at now on a mission whose
// gate_ttl is ttl (protocol.GateExpiry's rule). Only an open gate is
// expired; a resolved one keeps the sweep's stamp, if any, as history.
func (d *Decision) expireAt(ttl GateTTL, now time.Time) {
	if d.Status != DecisionOpen {
		return
	}
	var stamped time.Time
	if d.ExpiredAt != nil {
		stamped = *d.ExpiredAt
	}
	at, expired := protocol.GateExpiry(d.OpenedAt, time.Duration(ttl), stamped, now)
	d.Expired, d.ExpiredAt = expired, nil
	if expired {
		d.ExpiredAt = &at
	}
}

// settleExpiry settles whether an open gate read alone is expired at now,
// reading its mission's gate_ttl.
func settleExpiry(ctx context.Context, q db.Querier, d *Decision, now time.Time) error {
	s, err := q.GetSession(ctx, d.Session)
	if err != nil {
		return fmt.Errorf("session of %s: %w", d.Ref, err)
	}
	d.expireAt(gateTTLOf(s.MissionGateTtl), now)
	return nil
}

// SweepActor is who records gates expired in timelines: Madebook's own
// sweep, "system:gate-expiry".
var SweepActor = auth.System("gate-expiry")

// ExpireDue records as expired every open gate that has been open for its
// mission's gate_ttl or longer and is not recorded yet, and returns how
// many it recorded. In one write transaction it stamps expired_at on them
// (`UPDATE … WHERE resolved_at IS NULL AND expired_at IS NULL … RETURNING`)
// and records one "decision.expired" event per gate on its session's
// timeline (ref the gate's, detail its question, by SweepActor), which
// is what escalates it. The guard makes each gate's record happen once
// however many sweeps run, concurrently, on several replicas or after a
// restart. A gate is expired by the clock whether or not it is recorded:
// the brief, the session and the Attention view read the clock.
func (s *DecisionService) ExpireDue(ctx context.Context) (int, error) {
	now := s.core.now()
	n := 0
	err := s.core.write(ctx, func(q db.Querier) error {
		n = 0
		ttls, err := q.ListGateTTLs(ctx)
		if err != nil {
			return err
		}
		var due []db.ExpireDecisionsRow
		for _, secs := range ttls {
			cutoff := now.Add(-time.Duration(gateTTLOf(secs)))
			rows, err := q.ExpireDecisions(ctx, db.ExpireDecisionsParams{Now: db.NullTime(now), Cutoff: db.FormatTime(cutoff), GateTtl: secs})
			if err != nil {
				return err
			}
			due = append(due, rows...)
		}
		slices.SortFunc(due, func(a, b db.ExpireDecisionsRow) int { return strings.Compare(a.Ref, b.Ref) })
		for _, d := range due {
			if err := s.core.event(ctx, q, d.SessionID, SweepActor, now, "decision.expired", d.Ref, d.Question); err != nil {
				return err
			}
		}
		n = len(due)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expire gates: %w", err)
	}
	return n, nil
}

// DefaultExpirySweep is how often serve records the gates that expired.
const DefaultExpirySweep = 30 * time.Second

// RunExpiry records expired gates (ExpireDue) at once, then every
// interval until ctx is done. Each sweep's count and error go to report.
func (s *DecisionService) RunExpiry(ctx context.Context, interval time.Duration, report func(n int, err error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		n, err := s.ExpireDue(ctx)
		if ctx.Err() != nil {
			return
		}
		report(n, err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
