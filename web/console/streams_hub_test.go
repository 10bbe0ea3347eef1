package console

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// fakeQueue is what a hub counts and watches: a total that the test sets,
// a count that can be made to fail, and the writes the test announces.
type fakeQueue struct {
	mu      sync.Mutex
	total   int
	fail    bool
	counts  atomic.Int64
	watched atomic.Int64
	subs    []chan struct{}
}

func (q *fakeQueue) count(context.Context) (governance.AttentionCounts, error) {
	q.counts.Add(1)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return governance.AttentionCounts{}, errors.New("the database is gone")
	}
	return governance.AttentionCounts{ByKind: map[string]int{governance.ItemDecision: q.total}}, nil
}

func (q *fakeQueue) watch() (<-chan struct{}, func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{}, 1)
	q.subs = append(q.subs, ch)
	q.watched.Add(1)
	return ch, func() { q.watched.Add(-1) }
}

// write sets the total and tells every watcher.
func (q *fakeQueue) write(total int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.total = total
	for _, ch := range q.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func receive(t *testing.T, s *subscriber) int {
	t.Helper()
	select {
	case c := <-s.updates:
		return c.Total()
	case <-time.After(5 * time.Second):
		t.Fatal("no counts within 5 s")
		return 0
	}
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}

func TestStreamLimitsDefaultToEightAndAThousand(t *testing.T) {
	t.Parallel()
	if l := (StreamLimits{}).withDefaults(); l.PerUser != 8 || l.Total != 1000 {
		t.Errorf("the defaults are %+v, want 8 per person and 1,000 in all", l)
	}
	if l := (StreamLimits{PerUser: 2, Total: 3}).withDefaults(); l.PerUser != 2 || l.Total != 3 {
		t.Errorf("set limits became %+v", l)
	}
}

// The first stream starts one broadcaster, which counts once per burst of
// writes for all streams; the last stream to leave stops it, and the next
// stream starts a new one.
func TestTheHubCountsOncePerBurstAndStopsWhenIdle(t *testing.T) {
	t.Parallel()
	q := &fakeQueue{total: 1}
	h := newStreamHub(StreamLimits{}, q.count, q.watch, 200*time.Millisecond, nil)
	a, err := h.join(1)
	if err != nil {
		t.Fatal(err)
	}
	if n := receive(t, a); n != 1 {
		t.Fatalf("the first counts say %d", n)
	}
	b, _ := h.join(2)
	if n := receive(t, b); n != 1 || q.counts.Load() != 1 {
		t.Fatalf("a second stream got %d after %d counts, want 1 after 1", n, q.counts.Load())
	}
	q.write(2)
	q.write(3)
	q.write(4)
	if x, y := receive(t, a), receive(t, b); x != 4 || y != 4 {
		t.Fatalf("after a burst the streams got %d and %d, want 4", x, y)
	}
	if n := q.counts.Load(); n != 2 {
		t.Errorf("a burst of three writes within the settling time counted %d times in all, want 2", n)
	}
	h.leave(a)
	h.leave(b)
	eventually(t, "the broadcaster stops watching", func() bool { return q.watched.Load() == 0 })
	c, _ := h.join(3)
	if n := receive(t, c); n != 4 || q.counts.Load() != 3 {
		t.Fatalf("a stream after idleness got %d after %d counts, want 4 after 3", n, q.counts.Load())
	}
	if h.open() != 1 {
		t.Errorf("%d streams open, want 1", h.open())
	}
}

// A person's stream past PerUser ends their oldest (replaced); past Total
// a new one is too_many_streams, and ending one makes room.
func TestTheHubBoundsStreams(t *testing.T) {
	t.Parallel()
	q := &fakeQueue{}
	h := newStreamHub(StreamLimits{PerUser: 2, Total: 3}, q.count, q.watch, time.Millisecond, nil)
	a1, _ := h.join(1)
	a2, _ := h.join(1)
	b1, _ := h.join(2)
	if _, err := h.join(3); errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("the 4th stream: %v, want too_many_streams", err)
	}
	a3, err := h.join(1)
	if err != nil {
		t.Fatalf("a person at their own limit: %v", err)
	}
	select {
	case <-a1.ended:
		if a1.why != replaced {
			t.Errorf("the oldest ended for %v, want replaced", a1.why)
		}
	default:
		t.Fatal("the person's oldest stream did not end")
	}
	for _, s := range []*subscriber{a2, a3, b1} {
		select {
		case <-s.ended:
			t.Fatal("another stream ended")
		default:
		}
	}
	h.leave(a1) // its handler leaves too: nothing happens twice
	h.leave(b1)
	if _, err := h.join(3); err != nil {
		t.Fatalf("after one left: %v", err)
	}
	if h.open() != 3 {
		t.Errorf("%d open, want 3", h.open())
	}
}

// When counting fails, every stream ends (failed: the pages reconnect)
// and the broadcaster stops; the next stream starts a new one.
func TestTheHubEndsStreamsWhenCountingFails(t *testing.T) {
	t.Parallel()
	q := &fakeQueue{total: 1}
	h := newStreamHub(StreamLimits{}, q.count, q.watch, time.Millisecond, nil)
	a, _ := h.join(1)
	receive(t, a)
	q.mu.Lock()
	q.fail = true
	q.mu.Unlock()
	q.write(2)
	select {
	case <-a.ended:
		if a.why != failed {
			t.Errorf("ended for %v, want failed", a.why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end")
	}
	h.leave(a)
	eventually(t, "the broadcaster stops watching", func() bool { return q.watched.Load() == 0 })
	q.mu.Lock()
	q.fail = false
	q.mu.Unlock()
	b, _ := h.join(1)
	if n := receive(t, b); n != 2 {
		t.Fatalf("after a failure a new stream got %d, want 2", n)
	}
}
