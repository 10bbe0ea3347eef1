package auth

import (
	"crypto/sha256"
	"database/sql"
	"sync"
)

// maxCached bounds the credential cache: past it, the cache starts
// afresh, so its memory is bounded by what it holds.
const maxCached = 10_000

// stored is what Authenticate reads of a credential: who it is, and the
// facts that decide whether it works now (its revocation, its expiry, its
// person disabled), each as stored, so that a cached one is judged at
// each request exactly as a fresh read would be.
type stored struct {
	cred     credential
	actor    Actor
	revoked  sql.NullString
	expires  sql.NullString
	lastUsed sql.NullString
	// refused is true for a personal token whose person is disabled (or
	// missing).
	refused bool
}

// credentialCache holds the credentials read, by their secret's hash,
// each with the store's data version it was read at (db.Store's
// DataVersion). An entry is used only while the data version is still
// that one: nothing was committed to the database since, in any process,
// so no revocation, role change or disabled person can have happened.
// That keeps the cache exact, with no TTL and no notification to miss.
type credentialCache struct {
	mu  sync.Mutex
	m   map[[sha256.Size]byte]cachedCredential
	max int // maxCached; tests lower it
}

type cachedCredential struct {
	version uint64
	stored
}

// get returns the credential read at version, if it is held.
func (c *credentialCache) get(sum [sha256.Size]byte, version uint64) (stored, bool) {
	c.mu.Lock()
	e, ok := c.m[sum]
	c.mu.Unlock()
	if !ok || e.version != version {
		return stored{}, false
	}
	return e.stored, true
}

// put holds a credential read at version, the data version taken before
// the read: a commit between the two leaves the entry at the older
// version, which the next probe no longer returns, so it is read again.
func (c *credentialCache) put(sum [sha256.Size]byte, version uint64, s stored) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sum]
	if ok && e.version > version {
		return // a newer read is already held
	}
	if c.m == nil || !ok && len(c.m) >= c.max {
		c.m = make(map[[sha256.Size]byte]cachedCredential)
	}
	c.m[sum] = cachedCredential{version: version, stored: s}
}

// len is how many credentials the cache holds.
func (c *credentialCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
