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
// stale.
type memo[K comparable, V any] struct {
	max     int // entries, past which the memo starts afresh
	mu      sync.Mutex
	gen     uint64
	entries map[K]memoEntry[V]
}

type memoEntry[V any] struct {
	v  V
	at time.Time
}

// memoTTL is how long an entry is believed; toolsMax and runsMax are how
// many entries the memos hold: tools are few, and runs are remembered by
// session, for as many sessions as the brief's cache holds.
const (
	memoTTL  = time.Minute
	toolsMax = 10_000
	runsMax  = 200_000
)

// get returns key's value when it is remembered and fresh; otherwise the
// generation to hand put with what the caller reads.
func (m *memo[K, V]) get(key K, now time.Time) (v V, ok bool, gen uint64) {
	m.mu.Lock()
	e, ok := m.entries[key]
	gen = m.gen
	m.mu.Unlock()
	if ok && now.Sub(e.at) <= memoTTL {
		return e.v, true, gen
	}
	var zero V
	return zero, false, gen
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

// toolMemo is the registry's word per tool (nil: not in it). SetTool and
// DeleteTool forget it.
type toolMemo = memo[[2]string, *bool]

// classifyMemo is the package's classify (with no word from the agent),
// through tools.
func classifyMemo(ctx context.Context, tools *toolMemo, q db.Querier, server, tool string, now time.Time) (bool, error) {
	key := [2]string{server, tool}
	reg, ok, gen := tools.get(key, now)
	if !ok {
		var err error
		if reg, err = registered(ctx, q, server, tool); err != nil {
			return false, err
		}
		tools.put(key, gen, reg, now)
	}
	return gate.Classify(server, tool, reg, nil), nil
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
type runMemo = memo[string, sessionRuns]

// checkRun returns the facts of the run id a check on session names,
// which must be the actor's and of the session, through s.runs. Errors:
// run_not_found, forbidden, run_not_in_session.
func (s *Service) checkRun(ctx context.Context, actor auth.Actor, session, id string, now time.Time) (*gate.Run, error) {
	runs, _, gen := s.runs.get(session, now)
	r, ok := runs[id]
	of := session // the run's session
	if !ok || now.Sub(r.at) > memoTTL {
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
		row, err := q.GetRun(ctx, id)
		if err != nil {
			return runNotFound(err, id)
		}
		session, r = row.SessionID, checkedRun{agentKey: row.AgentKeyID, at: now}
		r.facts, err = runFacts(ctx, q, row)
		return err
	})
	return r, session, err
}

// notInSession refuses a run of another session: run_not_in_session.
func notInSession(run, session string) error {
	return errs.E(errs.Invalid, "run_not_in_session", "Run %s belongs to another session, not %s.", run, session).In("run")
}
