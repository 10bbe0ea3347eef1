package ledger

import (
	"context"
	"sync"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/gate"
)

// toolCache remembers the registry's answer per tool for the executor's
// check, which is on every tool call an agent makes: the check then reads
// no database when the session's brief is cached too. Recording a call
// reads the registry in its own transaction, exactly, never from here.
//
// It is exact for this process's writes: SetTool and DeleteTool forget
// everything once their write has committed, and a reader stores what it
// read only if no write forgot meanwhile (the generation it took before
// reading). Entries also expire after toolTTL, which bounds what a write
// from another process could leave stale.
type toolCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[[2]string]toolEntry
}

type toolEntry struct {
	registered *bool // nil: not in the registry
	at         time.Time
}

const (
	toolTTL = time.Minute
	toolMax = 10_000
)

// classify is the package's classify (with no word from the agent),
// through the cache.
func (c *toolCache) classify(ctx context.Context, q db.Querier, server, tool string, now time.Time) (bool, error) {
	key := [2]string{server, tool}
	c.mu.Lock()
	e, ok := c.entries[key]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Sub(e.at) <= toolTTL {
		return gate.Classify(server, tool, e.registered, nil), nil
	}
	reg, err := registered(ctx, q, server, tool)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.entries == nil || len(c.entries) >= toolMax {
			c.entries = map[[2]string]toolEntry{}
		}
		c.entries[key] = toolEntry{registered: reg, at: now}
	}
	c.mu.Unlock()
	return gate.Classify(server, tool, reg, nil), nil
}

// forget drops every entry and any read in flight.
func (c *toolCache) forget() {
	c.mu.Lock()
	c.gen++
	c.entries = nil
	c.mu.Unlock()
}
