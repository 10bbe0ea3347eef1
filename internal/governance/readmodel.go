package governance

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/gatefacts"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// The read model: everything a session's brief and the executor gate's
// check read of it is one sessionView, loaded by loadView in one read
// transaction and held in one cache (readModel). A brief or a check that
// finds its session cached reads no database.
//
// Invalidation is one rule: a session's generation is bumped whenever its
// facts may have changed, and a view is stored only at the generation
// taken before its read began. Every write that changes a session's facts
// records an event on its timeline through the write path (core.write),
// whose commit invalidates the sessions it recorded events for; on
// PostgreSQL a trigger on the timeline notifies the other replicas, which
// invalidate on notify (db.Store.OnChange). Views also expire after
// viewTTL, which bounds what a write from outside Madebook (an operator's
// sqlite3 or psql shell) could leave stale, and are refreshed ahead: a
// view older than viewRefresh that a brief or a check finds is read again
// in the background while it serves.

// sessionView is what one session's brief and check are decided on. It is
// shared by every brief and check the cache serves: nothing may change it.
type sessionView struct {
	state        db.GetBriefStateRow
	facts        protocol.Facts
	decisions    []Decision
	remediations []Remediation
	// plan is the session's approved plan with the options released at
	// its stopping points (nil: its latest plan is not approved), and
	// runs are the gate's facts of its live runs (running or parked), by
	// id: loadView reads them; the exact paths read what they need in
	// their own transaction.
	plan     *plan.Plan
	released map[int][]string
	runs     map[string]*gate.Run
	// decided caches what the view decides to until the clock changes it
	// (briefjson.go); it is the one part that fills in after loading.
	decided *decided
}

// loadView reads everything the session's brief and check need in q's
// snapshot.
func loadView(ctx context.Context, q db.Querier, id string) (sessionView, error) {
	v, err := loadInputs(ctx, q, id)
	if err != nil {
		return sessionView{}, err
	}
	sess := gate.Session{ID: id, PlanApproved: v.state.PlanStatus == PlanApproved}
	if err := gatefacts.ApprovedPlan(ctx, q, &sess); err != nil {
		return sessionView{}, err
	}
	v.plan, v.released = sess.Plan, sess.Released
	live, err := q.ListLiveRuns(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	v.runs = make(map[string]*gate.Run, len(live))
	for _, r := range live {
		if v.runs[r.ID], err = gatefacts.Run(ctx, q, db.GetRunRow(r)); err != nil {
			return sessionView{}, err
		}
	}
	return v, nil
}

// loadInputs reads what the session's brief is built from in q's
// snapshot, reading each list only when the state says it is not empty:
// the view without the gate's plan and runs, as the exact paths inside a
// write transaction need it.
func loadInputs(ctx context.Context, q db.Querier, id string) (sessionView, error) {
	st, err := q.GetBriefState(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	var r rows
	if st.OpenDecisions > 0 {
		if r.decisions, err = q.ListOpenDecisions(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.OpenRemediations > 0 {
		if r.remediations, err = q.ListOpenRemediations(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.OpenViolations > 0 {
		if r.violations, err = q.ListOpenViolations(ctx, id); err != nil {
			return sessionView{}, err
		}
		if slices.ContainsFunc(r.violations, func(v db.Violation) bool { return v.BreachID.Valid }) {
			if r.scopeBreaches, err = q.ListOpenScopeBreaches(ctx, id); err != nil {
				return sessionView{}, err
			}
		}
	}
	if st.OpenDeviations > 0 {
		if r.deviations, err = q.ListOpenDeviations(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.OpenBreaches > 0 {
		if r.breaches, err = q.ListOpenBreaches(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.OpenCollisions > 0 {
		if r.collisions, err = q.ListOpenCollisions(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.OpenPermissions > 0 {
		if r.prompts, err = q.ListOpenPermissionPrompts(ctx, id); err != nil {
			return sessionView{}, err
		}
	}
	if st.HasChange > 0 {
		ch, err := q.GetChange(ctx, id)
		if err != nil {
			return sessionView{}, err
		}
		r.change = &ch
	}
	return inputsFrom(st, r)
}

// viewTTL is how long a cached view is served, viewRefresh the age past
// which a brief or a check that finds it has it read again in the
// background, at most maxRefreshes at once (past that, it serves as it is
// until a later request refreshes it or it expires), each bounded by
// refreshTimeout; maxViews is how many views the cache holds before it
// starts afresh.
const (
	viewTTL        = time.Minute
	viewRefresh    = viewTTL * 3 / 4
	maxRefreshes   = 4
	refreshTimeout = 10 * time.Second
	maxViews       = 200_000
)

// readModel is the cache of session views.
type readModel struct {
	mu   sync.Mutex
	gens map[string]uint64
	// epoch counts invalidateAll: a session's generation is its own count
	// of invalidations plus the epoch, so either kind changes it.
	epoch   uint64
	entries map[string]*viewEntry
	// refreshes are the background reads under way, inFlight of them.
	refreshes sync.WaitGroup
	inFlight  int
	store     db.Transactor
	now       func() time.Time
}

type viewEntry struct {
	view sessionView
	at   time.Time // when view was read
	// refreshing: a background read of the session is under way (guarded
	// by the cache's mu).
	refreshing bool
}

func newReadModel(store db.Transactor, now func() time.Time) *readModel {
	return &readModel{gens: map[string]uint64{}, entries: map[string]*viewEntry{}, store: store, now: now}
}

// view returns the session's view, from the cache or from one read
// transaction, and starts a refresh-ahead when the cached one is older
// than viewRefresh. The view is shared, not copied: callers must not
// change it. Errors: sql.ErrNoRows when there is no such session.
func (m *readModel) view(ctx context.Context, id string, now time.Time) (*sessionView, error) {
	if v, ok, refresh := m.get(id, now); ok {
		if refresh != nil {
			go func() {
				defer m.refreshed(refresh)
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
				defer cancel()
				m.load(ctx, id, m.now()) //nolint:errcheck // the entry serves on; it is read when it expires
			}()
		}
		return v, nil
	}
	return m.load(ctx, id, now)
}

// load reads the session's view in one read transaction and caches it as
// read at now, unless the session was invalidated since the read began.
func (m *readModel) load(ctx context.Context, id string, now time.Time) (*sessionView, error) {
	gen := m.generation(id)
	var v sessionView
	err := m.store.Read(ctx, func(q db.Querier) error {
		var err error
		v, err = loadView(ctx, q, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	m.put(id, gen, v, now)
	return &v, nil
}

// generation returns the session's generation; take it before the query.
func (m *readModel) generation(id string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gens[id] + m.epoch
}

// get returns the session's cached view, unless it is older than viewTTL.
// An entry present is current: put stores one only at the session's
// generation, and every invalidation removes the entries it outdates.
// refresh is the entry when the caller is to read the session again in
// the background, having claimed it (older than viewRefresh, no read of
// it under way, room for one more); the caller hands it to refreshed when
// done.
func (m *readModel) get(id string, now time.Time) (v *sessionView, ok bool, refresh *viewEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[id]
	if !ok || now.Sub(e.at) > viewTTL {
		return nil, false, nil
	}
	if now.Sub(e.at) > viewRefresh && !e.refreshing && m.inFlight < maxRefreshes {
		e.refreshing = true
		m.inFlight++
		m.refreshes.Add(1)
		refresh = e
	}
	return &e.view, true, refresh
}

// refreshed ends the background read get handed out for e, whether or not
// it replaced e.
func (m *readModel) refreshed(e *viewEntry) {
	m.mu.Lock()
	e.refreshing = false
	m.inFlight--
	m.mu.Unlock()
	m.refreshes.Done()
}

// put caches a view read at generation gen, unless the session was
// invalidated since.
func (m *readModel) put(id string, gen uint64, v sessionView, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gens[id]+m.epoch != gen {
		return
	}
	if len(m.entries) >= maxViews {
		m.entries = map[string]*viewEntry{}
	}
	m.entries[id] = &viewEntry{view: v, at: now}
}

// invalidate bumps the sessions' generations, dropping their views and
// outdating any read in flight.
func (m *readModel) invalidate(ids []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.gens[id]++
		delete(m.entries, id)
	}
	if len(m.gens) > 2*len(m.entries)+gensSlack {
		m.compact()
	}
}

// gensSlack is how many generations beyond twice the entries the cache
// keeps before it compacts them.
const gensSlack = 1024

// compact drops every session's own count of invalidations, keeping the
// bookkeeping bounded by the sessions the cache holds: a session
// invalidated once would otherwise keep its count for ever. The epoch
// jumps past every generation handed out so far, so that no generation
// repeats: a read in flight stores nothing (it is read again next time),
// and the entries held stay, as nothing outdated them.
func (m *readModel) compact() {
	var highest uint64
	for _, g := range m.gens {
		highest = max(highest, g)
	}
	m.epoch += highest + 1
	m.gens = map[string]uint64{}
}

// invalidateAll drops every view and outdates every read in flight: what
// another replica changed while this one was not listening is unknown.
func (m *readModel) invalidateAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epoch++
	m.entries = map[string]*viewEntry{}
}

// onNotice invalidates what a notice from the database says changed: a
// session's timeline (another replica's write to it), or everything.
func (m *readModel) onNotice(n db.Notice) {
	switch n.Topic {
	case "":
		m.invalidateAll()
	case db.TopicSession:
		m.invalidate([]string{n.Key})
	}
}

// WaitRefreshes waits for the background reads of session views under way
// (a server that stops, before it closes the database; tests).
func (s *Services) WaitRefreshes() { s.Briefs.views.refreshes.Wait() }
