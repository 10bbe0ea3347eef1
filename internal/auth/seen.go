package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// seenTTL is how long an authenticated secret is remembered.
const seenTTL = 5 * time.Second

// seenMax bounds the remembered secrets; past it the cache starts afresh.
const seenMax = 10_000

// seenCache remembers recently authenticated secrets by their SHA-256
// sum (the stored hash is its hex, written only when the database is
// asked).
type seenCache struct {
	mu      sync.RWMutex
	ttl     time.Duration
	entries map[[sha256.Size]byte]seenEntry
}

type seenEntry struct {
	actor   Actor
	expires time.Time
}

func (c *seenCache) get(hash [sha256.Size]byte, now time.Time) (Actor, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return Actor{}, false
	}
	return e.actor, true
}

func (c *seenCache) put(hash [sha256.Size]byte, a Actor, now time.Time) {
	c.mu.Lock()
	if len(c.entries) >= seenMax {
		c.entries = map[[sha256.Size]byte]seenEntry{}
	}
	c.entries[hash] = seenEntry{actor: a, expires: now.Add(c.ttl)}
	c.mu.Unlock()
}

func (c *seenCache) clear() {
	c.mu.Lock()
	c.entries = map[[sha256.Size]byte]seenEntry{}
	c.mu.Unlock()
}
