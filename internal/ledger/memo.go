package ledger

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
)

// The executor's check is on every tool call an agent makes, and reads no
// database when what it decides on is remembered: the session's brief
// (governance's cache), the registry's word on the tool (tools) and the
// facts of the run it names (runs). Recording a call reads them all in its
// own transaction, exactly, never from here.
//
// Each memo is exact for this process's writes: the writes that change
// what it holds forget it once they have committed, and a reader stores
// what it read only if nothing was forgotten meanwhile (the generation it
// took before reading). Another replica's writes forget it when the
// database tells of them (db.Store.OnChange). Entries also expire after
// memoTTL, which bounds what a write from outside Madebook could leave
// stale. So that a busy session never waits on the database for an
// entry's age, the runs are read again whenever the session's brief
// inputs are (rideRuns: in the same transaction, by the refresh a brief
// starts past 45 s or a check past 52 s), and a tool older
// than memoRefresh that a check still finds is read again in the
// background while it serves (refresh).
type memo[K comparable, V any] struct {
	max     int // entries, past which the memo starts afresh
	mu      sync.Mutex
	gen     uint64
	entries map[K]memoEntry[V]
	// refreshing are the keys read again in the background now.
	refreshing map[K]bool
	refreshes  sync.WaitGroup
}

type memoEntry[V any] struct {
	v  V
	at time.Time
}

// memoTTL is how long an entry is believed, memoRefresh the age past
// which a check that finds it has it read again in the background, at
// most maxRefreshes at once (past that, it serves as it is until a later
// check refreshes it or it expires); toolsMax and runsMax are how many
// entries the memos hold: tools are few, and runs are remembered by
// session, for as many sessions as the brief's cache holds.
const (
	memoTTL        = time.Minute
	memoRefresh    = memoTTL * 3 / 4
	maxRefreshes   = 4
	refreshTimeout = 10 * time.Second
	toolsMax       = 10_000
	runsMax        = 200_000
)

// get returns key's value, and when it was read, when it is remembered
// and fresh; otherwise the generation to hand put with what the caller
// reads.
func (m *memo[K, V]) get(key K, now time.Time) (v V, at time.Time, ok bool, gen uint64) {
	m.mu.Lock()
	e, ok := m.entries[key]
	gen = m.gen
	m.mu.Unlock()
	if ok && now.Sub(e.at) <= memoTTL {
		return e.v, e.at, true, gen
	}
	var zero V
	return zero, time.Time{}, false, gen
}

// put remembers v, read at generation gen, unless something was forgotten
// since.
func (m *memo[K, V]) put(key K, gen uint64, v V, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen {
		return
	}
	if m.entries == nil || len(m.entries) >= m.max {
		m.entries = map[K]memoEntry[V]{}
	}
	m.entries[key] = memoEntry[V]{v: v, at: now}
}

// peek returns key's value, however old, and the generation to hand put
// with what the caller reads of it again.
func (m *memo[K, V]) peek(key K) (v V, ok bool, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	return e.v, ok, m.gen
}

// refresh, unless key is being read again already or maxRefreshes
// reads are, reads it again with read in the background and remembers
// what it reads, as read at the clock's time when it started. It returns
// at once.
func (m *memo[K, V]) refresh(ctx context.Context, key K, clock func() time.Time, read func(context.Context) (V, error)) {
	m.mu.Lock()
	claimed := !m.refreshing[key] && len(m.refreshing) < maxRefreshes
	if claimed {
		if m.refreshing == nil {
			m.refreshing = map[K]bool{}
		}
		m.refreshing[key] = true
		m.refreshes.Add(1)
	}
	gen := m.gen
	m.mu.Unlock()
	if !claimed {
		return
	}
	go func() {
		defer func() {
			m.mu.Lock()
			delete(m.refreshing, key)
			m.mu.Unlock()
			m.refreshes.Done()
		}()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		start := clock()
		if v, err := read(ctx); err == nil {
			m.put(key, gen, v, start)
		}
	}()
}

// forget drops the entries of keys (every entry when it names none) and
// any read in flight.
func (m *memo[K, V]) forget(keys ...K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	if len(keys) == 0 {
		m.entries = nil
	}
	for _, k := range keys {
		delete(m.entries, k)
	}
}

// toolMemo is the registry's entry per tool (nil: not in it). SetTool and
// DeleteTool forget it. An entry is shared by every check it serves:
// nothing may change it.
type toolMemo = memo[[2]string, *Tool]

// classifyMemo is the service's classify (with no word from the agent),
// through its tools memo.
func (s *Service) classifyMemo(ctx context.Context, server, tool string, now time.Time) (bool, *Tool, error) {
	key := [2]string{server, tool}
	reg, at, ok, gen := s.tools.get(key, now)
	switch {
	case !ok:
		var err error
		if reg, err = registered(ctx, s.store.Reader(), server, tool); err != nil {
			return false, nil, err
		}
		s.tools.put(key, gen, reg, now)
	case now.Sub(at) > memoRefresh: // served as it is, and read again behind
		s.tools.refresh(ctx, key, s.now, func(ctx context.Context) (*Tool, error) {
			return registered(ctx, s.store.Reader(), server, tool)
		})
	}
	return writes(server, tool, reg, nil), reg, nil
}

// checkedRun is what the check reads of a run: whose it is, the facts the
// gate decides on, and when they were read. Shared by every check the
// memo serves: nothing may change it.
type checkedRun struct {
	agentKey int64
	facts    *gate.Run
	at       time.Time
}

// sessionRuns are a session's runs the check has read, by id: a map
// never changed once remembered (a run read since is remembered with a
// copy).
type sessionRuns map[string]checkedRun

// runMemo is sessionRuns per session. The writes that change a run's
// facts (RecordAsk and AnswerAsk: whether it is parked and on what, the
// options its plan's stopping points released) forget its session: an
// answer at a stopping point releases it for every run of the plan, and
// they are all of the plan's session. Ending a run changes none of them.
// They are read again with the session's brief inputs (rideRuns).
type runMemo = memo[string, sessionRuns]

// checkRun returns the facts of the run id a check on session names,
// which must be the actor's and of the session, through s.runs. Errors:
// run_not_found, forbidden, run_not_in_session.
func (s *Service) checkRun(ctx context.Context, actor auth.Actor, session, id string, now time.Time) (*gate.Run, error) {
	runs, _, _, gen := s.runs.get(session, now)
	r, ok := runs[id]
	ok = ok && now.Sub(r.at) <= memoTTL
	of := session // the run's session
	if !ok {
		var err error
		if r, of, err = s.readRun(ctx, id, now); err != nil {
			return nil, err
		}
		if of == session {
			more := make(sessionRuns, len(runs)+1)
			maps.Copy(more, runs)
			more[id] = r
			s.runs.put(session, gen, more, now)
		}
	}
	if err := runOwner(actor, r.agentKey); err != nil {
		return nil, err
	}
	if of != session {
		return nil, notInSession(id, session)
	}
	return r.facts, nil
}

// readRun reads what the check needs of run id, and its session, in one
// read transaction. Errors: run_not_found.
func (s *Service) readRun(ctx context.Context, id string, now time.Time) (r checkedRun, session string, err error) {
	err = s.store.Read(ctx, func(q db.Querier) error {
		r, session, err = readRunIn(ctx, q, id, now)
		return err
	})
	return r, session, err
}

// readRunIn is readRun in q's transaction.
func readRunIn(ctx context.Context, q db.Querier, id string, now time.Time) (checkedRun, string, error) {
	row, err := q.GetRun(ctx, id)
	if err != nil {
		return checkedRun{}, "", runNotFound(err, id)
	}
	r := checkedRun{agentKey: row.AgentKeyID, at: now}
	r.facts, err = runFacts(ctx, q, row)
	return r, row.SessionID, err
}

// rideRuns is the ledger's governance.Rider: whenever a session's brief
// inputs are read (a brief's or a check's refresh behind the answer, or a
// read past their expiry), the runs of the session the check remembers
// are read again in the same transaction, so the check never reads them
// on its own for their age. A run no longer of the session, or gone, is
// left out.
func (s *Service) rideRuns(session string) func(context.Context, db.Querier, time.Time) error {
	runs, ok, gen := s.runs.peek(session)
	if !ok {
		return nil
	}
	return func(ctx context.Context, q db.Querier, now time.Time) error {
		out := make(sessionRuns, len(runs))
		for id := range runs {
			r, of, err := readRunIn(ctx, q, id, now)
			if errs.CodeOf(err) == "run_not_found" {
				continue // gone: a check naming it reads it, and says so
			} else if err != nil {
				return err
			}
			if of == session {
				out[id] = r
			}
		}
		s.runs.put(session, gen, out, now)
		return nil
	}
}

// notInSession refuses a run of another session: run_not_in_session.
func notInSession(run, session string) error {
	return errs.E(errs.Invalid, "run_not_in_session", "Run %s belongs to another session, not %s.", run, session).In("run")
}
