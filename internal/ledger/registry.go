package ledger

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/madebook/madebook/db"
)

// registry is the tool registry as the executor's check reads it: one
// snapshot of every entry, loaded on first use and dropped when it may be
// outdated: after this process's SetTool or DeleteTool commits, on another
// replica's notice (db.TopicTools), and after registryTTL, which bounds
// what a write from outside Madebook could leave stale. A snapshot is
// shared by every check it serves: nothing may change it.
type registry struct {
	snap atomic.Pointer[registrySnapshot]
	mu   sync.Mutex // guards gen, and orders swaps after invalidations
	// gen counts invalidations: a snapshot read before one is not stored.
	gen uint64
}

type registrySnapshot struct {
	tools map[[2]string]registryEntry // by server and tool
	at    time.Time                   // when it was read
}

// registryEntry is a tool's entry, or why its row does not read: a
// corrupt row fails the checks of its tool, not of every tool.
type registryEntry struct {
	tool *Tool
	err  error
}

// registryTTL is how long a snapshot is served.
const registryTTL = time.Minute

// lookup returns the registry's entry for the tool, nil when it has none,
// from the snapshot (read first when there is none current).
func (r *registry) lookup(ctx context.Context, q db.Querier, server, tool string, now time.Time) (*Tool, error) {
	snap := r.snap.Load()
	if snap == nil || now.Sub(snap.at) > registryTTL {
		var err error
		if snap, err = r.load(ctx, q, now); err != nil {
			return nil, err
		}
	}
	e := snap.tools[[2]string{server, tool}]
	return e.tool, e.err
}

// load reads every entry and stores the snapshot, unless the registry was
// invalidated while it read.
func (r *registry) load(ctx context.Context, q db.Querier, now time.Time) (*registrySnapshot, error) {
	r.mu.Lock()
	gen := r.gen
	r.mu.Unlock()
	rows, err := q.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	snap := &registrySnapshot{tools: make(map[[2]string]registryEntry, len(rows)), at: now}
	for _, row := range rows {
		t, err := toolFrom(row)
		if err != nil {
			snap.tools[[2]string{row.Server, row.Tool}] = registryEntry{err: err}
			continue
		}
		snap.tools[[2]string{t.Server, t.Tool}] = registryEntry{tool: &t}
	}
	r.mu.Lock()
	if r.gen == gen {
		r.snap.Store(snap)
	}
	r.mu.Unlock()
	return snap, nil
}

// invalidate drops the snapshot and outdates any read in flight.
func (r *registry) invalidate() {
	r.mu.Lock()
	r.gen++
	r.snap.Store(nil)
	r.mu.Unlock()
}
