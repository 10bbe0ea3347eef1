package governance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
)

// touches holds the last brief time of sessions briefed since the last
// flush. A brief is a read; stamping last_brief_at on every one would make
// every brief a write, so the stamps are kept here and written in batches.
type touches struct {
	mu sync.Mutex
	// pending holds each time by pointer: a session that briefs again
	// moves its time with one lookup.
	pending map[string]*time.Time
}

func (t *touches) record(id string, at time.Time) {
	t.mu.Lock()
	if p := t.pending[id]; p == nil {
		p = new(time.Time) // not &at, which would put every call's at on the heap
		*p = at
		t.pending[id] = p
	} else if at.After(*p) {
		*p = at
	}
	t.mu.Unlock()
}

func (t *touches) last(id string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.pending[id]; p != nil {
		return *p, true
	}
	return time.Time{}, false
}

// FlushTimes writes the pending last-brief times in one transaction.
// On failure they stay pending for the next flush.
func (s *BriefService) FlushTimes(ctx context.Context) error {
	s.touches.mu.Lock()
	batch := s.touches.pending
	s.touches.pending = make(map[string]*time.Time, len(batch))
	s.touches.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := s.core.write(ctx, func(q db.Querier) error {
		for _, id := range slices.Sorted(maps.Keys(batch)) {
			if err := q.TouchSessionBrief(ctx, db.TouchSessionBriefParams{ID: id, At: db.NullTime(*batch[id])}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for id, at := range batch {
			s.touches.record(id, *at)
		}
		return fmt.Errorf("flush brief times: %w", err)
	}
	return nil
}

// RunTimes flushes the last-brief times every interval until ctx is
// done, then once more. Flush errors go to report.
func (s *BriefService) RunTimes(ctx context.Context, interval time.Duration, report func(error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := s.FlushTimes(context.WithoutCancel(ctx)); err != nil {
				report(err)
			}
			return
		case <-tick.C:
			if err := s.FlushTimes(ctx); err != nil {
				report(err)
			}
		}
	}
}
