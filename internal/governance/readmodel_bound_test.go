package governance

import (
	"fmt"
	"testing"
	"time"
)

// The read model's bookkeeping is bounded by the sessions it holds: invalidating
// sessions it never held (every write to a session no brief reads) keeps
// no count for each of them for ever, and what it holds stays exact.
func TestTheReadModelForgetsWhatItNoLongerHolds(t *testing.T) {
	c := newReadModel(nil, time.Now)
	now := time.Now()
	held := []string{"ses_held1", "ses_held2"}
	for _, id := range held {
		c.put(id, c.generation(id), sessionView{}, now)
	}
	inFlight := "ses_reading"
	stale := c.generation(inFlight) // a read that began before the writes below
	for i := range 100_000 {
		c.invalidate([]string{fmt.Sprintf("ses_%d", i)})
		if n := len(c.gens); n > 2*len(c.entries)+gensSlack {
			t.Fatalf("after %d invalidations the cache counts %d sessions, holding %d", i+1, n, len(c.entries))
		}
	}
	for _, id := range held {
		if _, ok, _ := c.get(id, now); !ok {
			t.Errorf("%s: an entry no write outdated was dropped", id)
		}
	}
	c.put(inFlight, stale, sessionView{}, now)
	if _, ok, _ := c.get(inFlight, now); ok {
		t.Error("a read that began before the bookkeeping was compacted stored its row: it may predate a write")
	}
	// A session forgotten after the compaction still outdates a read that
	// began before its write.
	gen := c.generation("ses_7")
	c.invalidate([]string{"ses_7"})
	c.put("ses_7", gen, sessionView{}, now)
	if _, ok, _ := c.get("ses_7", now); ok {
		t.Error("a read from before an invalidation stored its row")
	}
	c.put("ses_7", c.generation("ses_7"), sessionView{}, now)
	if _, ok, _ := c.get("ses_7", now); !ok {
		t.Error("a read after the forget did not store its row")
	}
}

// No generation handed out before a compaction is handed out again after
// it: a reader holding an old one can never match a session's new one.
func TestACompactionNeverRepeatsAGeneration(t *testing.T) {
	c := newReadModel(nil, time.Now)
	for range 50 {
		c.invalidate([]string{"ses_busy"}) // a high count for one session
	}
	old := c.generation("ses_busy")
	c.compact()
	for i := range 200 {
		for _, id := range []string{"ses_busy", "ses_other"} {
			if g := c.generation(id); g <= old {
				t.Fatalf("after %d invalidations %s is at generation %d, not past %d, handed out before", i, id, g, old)
			}
		}
		c.invalidate([]string{"ses_busy"})
	}
}
