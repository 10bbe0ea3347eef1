package governance

import (
	"context"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
)

// stateCache remembers each session's brief state (GetBriefState) so that
// the common brief — nothing to deliver, nothing open — reads no database.
//
// It is exact for writes made through this service: every use case that
// changes a session's facts records a timeline event, and write (below)
// forgets every session whose events a transaction recorded, after it
// commits. A reader takes the session's generation before it queries and
// stores its row only if no write forgot the session meanwhile, so a row
// read before a commit can never outlive it. Entries also expire after
// stateTTL, which bounds what a write from outside this process (an
// operator's sqlite3 shell) could leave stale.
type stateCache struct {
	mu      sync.Mutex
	gens    map[string]uint64
	entries map[string]stateEntry
}

type stateEntry struct {
	row db.GetBriefStateRow
	gen uint64
	at  time.Time
}

const (
	stateTTL = time.Minute
	stateMax = 200_000
)

func newStateCache() *stateCache {
	return &stateCache{gens: map[string]uint64{}, entries: map[string]stateEntry{}}
}

// generation returns the session's generation; take it before the query.
func (c *stateCache) generation(id string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[id]
}

func (c *stateCache) get(id string, now time.Time) (db.GetBriefStateRow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || e.gen != c.gens[id] || now.Sub(e.at) > stateTTL {
		return db.GetBriefStateRow{}, false
	}
	return e.row, true
}

// put stores a row read at generation gen, unless the session was
// forgotten since.
func (c *stateCache) put(id string, gen uint64, row db.GetBriefStateRow, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[id] != gen {
		return
	}
	if len(c.entries) >= stateMax {
		c.entries = map[string]stateEntry{}
	}
	c.entries[id] = stateEntry{row: row, gen: gen, at: now}
}

// forget invalidates the sessions' entries and any read in flight.
func (c *stateCache) forget(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.gens[id]++
		delete(c.entries, id)
	}
}

// briefState returns the session's brief state from the cache or the read
// pool.
func (s *Service) briefState(ctx context.Context, id string, now time.Time) (db.GetBriefStateRow, error) {
	if row, ok := s.cache.get(id, now); ok {
		return row, nil
	}
	gen := s.cache.generation(id)
	row, err := s.store.Reader().GetBriefState(ctx, id)
	if err != nil {
		return row, err
	}
	s.cache.put(id, gen, row, now)
	return row, nil
}

// write runs fn in one write transaction and then forgets the cached state
// of every session the transaction recorded an event for.
func (s *Service) write(ctx context.Context, fn func(db.Querier) error) error {
	t := &eventTracker{Querier: nil}
	err := s.store.Write(ctx, func(q db.Querier) error {
		t.Querier = q
		return fn(t)
	})
	s.cache.forget(t.sessions)
	return err
}

// eventTracker notes the sessions whose timeline a transaction writes to.
type eventTracker struct {
	db.Querier
	sessions []string
}

// AddEvent records the event and notes its session.
func (t *eventTracker) AddEvent(ctx context.Context, arg db.AddEventParams) error {
	t.sessions = append(t.sessions, arg.SessionID)
	return t.Querier.AddEvent(ctx, arg)
}
