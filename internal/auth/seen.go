package auth

import (
	"sync"
	"time"
)

// seenTTL is how long an authenticated secret is remembered.
const seenTTL = 5 * time.Second

// seenMax bounds the remembered secrets; past it the cache starts afresh.
const seenMax = 10_000

// seenCache remembers recently authenticated secrets by their hash.
type seenCache struct {
	mu      sync.RWMutex
	ttl     time.Duration
	entries map[string]seenEntry
}

type seenEntry struct {
	actor   Actor
	expires time.Time
}

func (c *seenCache) get(hash string, now time.Time) (Actor, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return Actor{}, false
	}
	return e.actor, true
}

func (c *seenCache) put(hash string, a Actor, now time.Time) {
	c.mu.Lock()
	if len(c.entries) >= seenMax {
		c.entries = map[string]seenEntry{}
	}
	c.entries[hash] = seenEntry{actor: a, expires: now.Add(c.ttl)}
	c.mu.Unlock()
}

func (c *seenCache) clear() {
	c.mu.Lock()
	c.entries = map[string]seenEntry{}
	c.mu.Unlock()
}
