package governance

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/protocol"
)

// stateCache remembers what each session's brief is built from (its
// GetBriefState row and its open gates and remediations), so that a brief
// with nothing to deliver reads no database.
//
// It is exact for writes made through these services: every use case that
// changes a session's facts records a timeline event, and the write
// path's Commit (core.go) invalidates every session whose events a
// transaction recorded, after it ends. A reader takes the session's generation before it queries and
// stores its row only if no write forgot the session meanwhile, so a row
// read before a commit can never outlive it. On PostgreSQL, other
// replicas' writes reach it the same way: the schema's trigger on the
// timeline announces the session, and heard forgets it (db.Store.Listen).
// Entries also expire after stateTTL, which bounds what a write from
// outside Madebook (an operator's sqlite3 or psql shell) could leave stale.
// An entry older than stateRefresh that a brief still finds (or older
// than gateRefresh, a check) is read again in the background while it
// serves, so a busy session never waits on the database for the entry's
// age.
type stateCache struct {
	mu   sync.Mutex
	gens map[string]uint64
	// epoch counts forgetAll: a session's generation is its own count of
	// forgets plus the epoch, so either kind of forget changes it.
	epoch   uint64
	entries map[string]*stateEntry
	// refreshes are the background reads under way, inFlight of them.
	refreshes sync.WaitGroup
	inFlight  int
}

// briefInputs is what a brief is built from, read in one snapshot: the
// session's state, the engine's facts, and the open gates and remediations
// the brief lists. They are shared by every brief the cache serves:
// nothing may change them.
type briefInputs struct {
	state        db.GetBriefStateRow
	facts        protocol.Facts
	decisions    []Decision
	remediations []Remediation
	// memo is the encoded brief these inputs give while nothing is due
	// (briefjson.go); it is the one part that fills in after loading.
	memo *briefMemo
}

// loadInputs reads what the session's brief is built from in q's
// snapshot, reading each list only when the state says it is not empty.
func loadInputs(ctx context.Context, q db.Querier, id string) (briefInputs, error) {
	st, err := q.GetBriefState(ctx, id)
	if err != nil {
		return briefInputs{}, err
	}
	var r rows
	if st.OpenDecisions > 0 {
		if r.decisions, err = q.ListOpenDecisions(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.OpenRemediations > 0 {
		if r.remediations, err = q.ListOpenRemediations(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.OpenViolations > 0 {
		if r.violations, err = q.ListOpenViolations(ctx, id); err != nil {
			return briefInputs{}, err
		}
		if slices.ContainsFunc(r.violations, func(v db.Violation) bool { return v.BreachID.Valid }) {
			if r.scopeBreaches, err = q.ListOpenScopeBreaches(ctx, id); err != nil {
				return briefInputs{}, err
			}
		}
	}
	if st.OpenDeviations > 0 {
		if r.deviations, err = q.ListOpenDeviations(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.OpenBreaches > 0 {
		if r.breaches, err = q.ListOpenBreaches(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.OpenCollisions > 0 {
		if r.collisions, err = q.ListOpenCollisions(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.OpenPermissions > 0 {
		if r.prompts, err = q.ListOpenPermissionPrompts(ctx, id); err != nil {
			return briefInputs{}, err
		}
	}
	if st.HasChange > 0 {
		ch, err := q.GetChange(ctx, id)
		if err != nil {
			return briefInputs{}, err
		}
		r.change = &ch
	}
	return inputsFrom(st, r)
}

type stateEntry struct {
	in briefInputs
	at time.Time // when in was read
	// refreshing: a background read of the session is under way (guarded
	// by the cache's mu).
	refreshing bool
}

// stateTTL is how long an entry is believed, stateRefresh the age past
// which a brief that finds it has it read again in the background, and
// maxRefreshes how many such reads run at once (past that, an entry is
// served as it is and refreshed by a later brief, or read when it
// expires). The executor's check, on every tool call, leaves that read to
// a brief while one may still come, and starts it only past gateRefresh:
// starting it costs the answer that does (measured by madebook-bench:
// the server's part p99 about a tenth more). A session only its hook's
// checks reach is still read before it expires if they come at least
// every 8 s.
const (
	stateTTL     = time.Minute
	stateRefresh = stateTTL * 3 / 4
	gateRefresh  = 52 * time.Second
	maxRefreshes = 4
	stateMax     = 200_000
)

func newStateCache() *stateCache {
	return &stateCache{gens: map[string]uint64{}, entries: map[string]*stateEntry{}}
}

// generation returns the session's generation; take it before the query.
func (c *stateCache) generation(id string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[id] + c.epoch
}

// get returns the session's inputs, unless they are older than stateTTL.
// An entry present is current: put stores one only at the session's
// generation, and every forget removes the entries it outdates. refresh
// is the entry when the caller is to read the session again in the
// background, having claimed it: older than age, with no read of it
// under way and room for one more. The caller hands it to refreshed when
// done.
func (c *stateCache) get(id string, now time.Time, age time.Duration) (in *briefInputs, ok bool, refresh *stateEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || now.Sub(e.at) > stateTTL {
		return nil, false, nil
	}
	if now.Sub(e.at) > age && !e.refreshing && c.inFlight < maxRefreshes {
		e.refreshing = true
		c.inFlight++
		c.refreshes.Add(1)
		refresh = e
	}
	return &e.in, true, refresh
}

// refreshed ends the background read get handed out for e, whether or not
// it replaced e.
func (c *stateCache) refreshed(e *stateEntry) {
	c.mu.Lock()
	e.refreshing = false
	c.inFlight--
	c.mu.Unlock()
	c.refreshes.Done()
}

// put stores inputs read at generation gen, unless the session was
// forgotten since.
func (c *stateCache) put(id string, gen uint64, in briefInputs, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[id]+c.epoch != gen {
		return
	}
	if len(c.entries) >= stateMax {
		c.entries = map[string]*stateEntry{}
	}
	c.entries[id] = &stateEntry{in: in, at: now}
}

// forget invalidates the sessions' entries and any read in flight.
func (c *stateCache) forget(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.gens[id]++
		delete(c.entries, id)
	}
	if len(c.gens) > 2*len(c.entries)+gensSlack {
		c.compact()
	}
}

// gensSlack is how many generations beyond twice the entries the cache
// keeps before it compacts them.
const gensSlack = 1024

// compact drops every session's own count of forgets, keeping the
// bookkeeping bounded by the sessions the cache holds: a session
// forgotten once would otherwise keep its count for ever. The epoch jumps
// past every generation handed out so far, so that no generation repeats:
// a read in flight stores nothing (it reads again next time), and the
// entries held stay, as no forget outdated them.
func (c *stateCache) compact() {
	var highest uint64
	for _, g := range c.gens {
		highest = max(highest, g)
	}
	c.epoch += highest + 1
	c.gens = map[string]uint64{}
}

// forgetAll invalidates every entry and every read in flight: what
// another replica changed while this one was not listening is unknown.
func (c *stateCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.entries = map[string]*stateEntry{}
}

// heard forgets what a notice from the database says changed: a
// session's timeline (another replica's write to it), or everything.
func (c *stateCache) heard(n db.Notice) {
	switch n.Topic {
	case "":
		c.forgetAll()
	case db.TopicSession:
		c.forget([]string{n.Key})
	}
}

// briefInputs returns what the session's brief is built from, from the
// cache or from one read transaction. The inputs are shared, not copied:
// callers must not change them.
func (s *BriefService) briefInputs(ctx context.Context, id string, now time.Time) (*briefInputs, error) {
	return s.inputs(ctx, id, now, stateRefresh)
}

// inputs is briefInputs for a caller that has the entry read again in the
// background once it is older than age: a brief past stateRefresh, the
// executor's check past gateRefresh.
func (s *BriefService) inputs(ctx context.Context, id string, now time.Time, age time.Duration) (*briefInputs, error) {
	if in, ok, refresh := s.cache.get(id, now, age); ok {
		if refresh != nil {
			go func() {
				defer s.cache.refreshed(refresh)
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
				defer cancel()
				s.readInputs(ctx, id, s.core.now()) //nolint:errcheck // the entry serves on; it is read when it expires
			}()
		}
		return in, nil
	}
	return s.readInputs(ctx, id, now)
}

// refreshTimeout bounds a background read of a session's inputs.
const refreshTimeout = 10 * time.Second

// A Rider remembers something of sessions beside their brief's inputs
// (the ledger: the facts of the runs a session's checks named) and has
// it read again whenever they are, in the same read transaction: so one
// read a session, not one per memo, keeps all of it fresh (a brief's or
// a check's refresh, or a read past the expiry). It is called before the
// transaction begins, so that it can take whatever a write forgets
// (a generation) first, and returns what reads in the transaction, as
// read at the time given, or nil when it remembers nothing of session.
type Rider = func(session string) func(ctx context.Context, q db.Querier, now time.Time) error

// AddRider has r read with every session's inputs from now on (call it
// before serving; ledger.NewService does).
func (s *BriefService) AddRider(r Rider) {
	s.ridersMu.Lock()
	defer s.ridersMu.Unlock()
	s.ridersList = append(slices.Clip(s.ridersList), r)
}

// riders returns the riders added so far.
func (s *BriefService) riders() []Rider {
	s.ridersMu.Lock()
	defer s.ridersMu.Unlock()
	return s.ridersList
}

// WaitRefreshes waits for the background reads of sessions' inputs under
// way (a server that stops, before it closes the database; tests).
func (s *Services) WaitRefreshes() { s.Briefs.cache.refreshes.Wait() }

// readInputs reads the session's inputs in one read transaction and
// remembers them as read at now; the riders read what they remember of
// the session in the same transaction.
func (s *BriefService) readInputs(ctx context.Context, id string, now time.Time) (*briefInputs, error) {
	gen := s.cache.generation(id)
	riders := s.riders()
	reads := make([]func(context.Context, db.Querier, time.Time) error, 0, len(riders))
	for _, ride := range riders {
		if read := ride(id); read != nil {
			reads = append(reads, read)
		}
	}
	var in briefInputs
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		var err error
		if in, err = loadInputs(ctx, q, id); err != nil {
			return err
		}
		for _, read := range reads {
			if err := read(ctx, q, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.cache.put(id, gen, in, now)
	return &in, nil
}
