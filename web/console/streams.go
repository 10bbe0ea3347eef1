package console

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// The default bounds of the console's push streams, in one process.
const (
	DefaultStreamsPerUser = 8
	DefaultStreams        = 1000
)

// streamRetryAfter is how long a refused stream is told to wait.
const streamRetryAfter = 30 * time.Second

// StreamLimits bound the console's push streams (GET /attention/stream)
// in one process.
type StreamLimits struct {
	// PerUser is how many streams one person may hold open: opening one
	// more ends their oldest (0: DefaultStreamsPerUser).
	PerUser int
	// Total is how many may be open in all: past it a new one is refused,
	// 503 with Retry-After (0: DefaultStreams).
	Total int
}

// withDefaults fills what is left zero.
func (l StreamLimits) withDefaults() StreamLimits {
	if l.PerUser <= 0 {
		l.PerUser = DefaultStreamsPerUser
	}
	if l.Total <= 0 {
		l.Total = DefaultStreams
	}
	return l
}

// endReason is why the hub ended a stream.
type endReason int

const (
	// replaced: its person opened one stream more than PerUser; the page
	// is told to stop reconnecting (it polls instead).
	replaced endReason = iota + 1
	// failed: counting the queue failed; the page reconnects.
	failed
)

// subscriber is one open stream.
type subscriber struct {
	user int64
	// updates holds the latest counts the stream has not taken yet.
	updates chan governance.AttentionCounts
	// ended is closed when the hub ends the stream; why says why.
	ended chan struct{}
	why   endReason
}

// streamHub is every push stream of one console and the broadcaster
// behind them: while any stream is open, one goroutine watches the
// store's writes, lets a burst settle, counts the queue once and hands
// the counts to every stream, so that a write costs one count however
// many streams are open. A stream that opens while it runs starts from
// its last counts; the first stream starts it, the last one stops it.
type streamHub struct {
	limits StreamLimits
	count  func(context.Context) (governance.AttentionCounts, error)
	watch  func() (<-chan struct{}, func())
	settle time.Duration
	logger *slog.Logger

	mu     sync.Mutex
	byUser map[int64][]*subscriber // each person's streams, oldest first
	total  int
	// running says a broadcaster runs; gen tells its successor from it,
	// stop stops it, latest is what it counted last (nil before its first
	// count).
	running bool
	gen     int
	stop    context.CancelFunc
	latest  *governance.AttentionCounts
}

// newStreamHub returns a hub that counts with count and hears of writes
// from watch.
func newStreamHub(limits StreamLimits, count func(context.Context) (governance.AttentionCounts, error),
	watch func() (<-chan struct{}, func()), settle time.Duration, logger *slog.Logger) *streamHub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &streamHub{limits: limits.withDefaults(), count: count, watch: watch, settle: settle, logger: logger,
		byUser: map[int64][]*subscriber{}}
}

// join opens a stream for the person: at their PerUser-th stream their
// oldest ends (replaced). Errors: too_many_streams (Total are open).
func (h *streamHub) join(user int64) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if mine := h.byUser[user]; len(mine) >= h.limits.PerUser {
		h.end(mine[0], replaced)
	}
	if h.total >= h.limits.Total {
		return nil, errs.E(errs.Unavailable, "too_many_streams", "The server holds as many live views as it takes (%d); "+
			"this page checks for changes every few seconds instead, and will try again.", h.limits.Total).
			With("retry_after", int(streamRetryAfter.Seconds()))
	}
	s := &subscriber{user: user, updates: make(chan governance.AttentionCounts, 1), ended: make(chan struct{})}
	h.byUser[user] = append(h.byUser[user], s)
	h.total++
	switch {
	case !h.running:
		h.start()
	case h.latest != nil:
		offer(s, *h.latest)
	}
	return s, nil
}

// leave closes a stream; the last one stops the broadcaster.
func (h *streamHub) leave(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
	if h.total == 0 && h.running {
		h.halt()
	}
}

// open is how many streams are open.
func (h *streamHub) open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// end ends a stream for why (the hub's lock held).
func (h *streamHub) end(s *subscriber, why endReason) {
	if h.remove(s) {
		s.why = why
		close(s.ended)
	}
}

// remove takes a stream out of the hub, reporting whether it was in (the
// hub's lock held).
func (h *streamHub) remove(s *subscriber) bool {
	mine := h.byUser[s.user]
	for i, o := range mine {
		if o == s {
			mine = append(mine[:i:i], mine[i+1:]...)
			if len(mine) == 0 {
				delete(h.byUser, s.user)
			} else {
				h.byUser[s.user] = mine
			}
			h.total--
			return true
		}
	}
	return false
}

// start starts a broadcaster (the hub's lock held).
func (h *streamHub) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.gen++
	h.running, h.stop, h.latest = true, cancel, nil
	go h.broadcast(ctx, h.gen)
}

// halt stops the broadcaster (the hub's lock held).
func (h *streamHub) halt() {
	h.stop()
	h.running, h.latest = false, nil
}

// broadcast counts the queue now and after every write (once a burst has
// settled) and hands the counts to every stream, until ctx is done.
func (h *streamHub) broadcast(ctx context.Context, gen int) {
	changes, stop := h.watch()
	defer stop()
	if !h.publish(ctx, gen) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			select {
			case <-ctx.Done():
				return
			case <-time.After(h.settle):
			}
			// Writes heard while settling are in the count that follows.
			select {
			case <-changes:
			default:
			}
			if !h.publish(ctx, gen) {
				return
			}
		}
	}
}

// publish counts the queue once and offers the counts to every stream,
// reporting whether the broadcaster goes on. When counting fails, every
// stream ends (failed: the pages reconnect) and the broadcaster stops.
func (h *streamHub) publish(ctx context.Context, gen int) bool {
	counts, err := h.count(ctx)
	if ctx.Err() != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running || h.gen != gen {
		return false
	}
	if err != nil {
		h.logger.Error("attention stream", "error", err)
		for _, mine := range h.byUser {
			for _, s := range mine {
				h.end(s, failed)
			}
		}
		h.halt()
		return false
	}
	h.latest = &counts
	for _, mine := range h.byUser {
		for _, s := range mine {
			offer(s, counts)
		}
	}
	return true
}

// offer puts counts in a stream's mailbox, in place of any it has not
// taken (the hub's lock held: the hub is the only sender).
func offer(s *subscriber, counts governance.AttentionCounts) {
	select {
	case <-s.updates:
	default:
	}
	s.updates <- counts
}
