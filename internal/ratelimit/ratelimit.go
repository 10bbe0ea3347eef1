// Package ratelimit is how fast one credential may call Madebook: token
// buckets per agent key (or personal token), one for every request, one
// for writes, one for opening sessions. The defaults let a busy fleet
// through (one key opening 5,000 sessions in a minute and briefing
// thousands of times a second is not refused) and slow a runaway down
// before it buries the single writer. It is pure: the caller passes the
// time, so the arithmetic is tested without a clock.
package ratelimit

import (
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/madebook/madebook/internal/errs"
)

// Limit is N calls per Per, with bursts of up to N. The zero Limit is no
// limit.
type Limit struct {
	N   int
	Per time.Duration
}

// Off reports whether l limits nothing.
func (l Limit) Off() bool { return l.N <= 0 || l.Per <= 0 }

// String is l as ParseLimit reads it: "10000/s", "5000/m", "off".
func (l Limit) String() string {
	if l.Off() {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[l.Per]
	if unit == "" {
		return fmt.Sprintf("%d/%s", l.N, l.Per)
	}
	return fmt.Sprintf("%d/%s", l.N, unit)
}

// ParseLimit reads "N/s", "N/m", "N/h" (N calls per second, minute or
// hour) or "off".
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Limit{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	count, err := strconv.Atoi(n)
	if !ok || per == 0 || err != nil || count < 1 {
		return Limit{}, fmt.Errorf("%q is not a rate: write N/s, N/m or N/h (N at least 1), or off", s)
	}
	return Limit{N: count, Per: per}, nil
}

// Class is what a call costs: every call is a request; a write is also a
// write, and opening a session also a session.
type Class int

// The classes, from cheapest.
const (
	Read    Class = iota // counts against the requests limit only
	Write                // requests and writes
	Session              // requests, writes and sessions
)

// Config is the three limits.
type Config struct {
	Requests Limit // every call: briefs, checks, reads, writes
	Writes   Limit // calls that change something
	Sessions Limit // sessions opened
}

// Defaults let a busy fleet through on one key: 10,000 requests a second
// (briefs and checks are most of them), 2,000 writes a second, 5,000
// sessions a minute.
var Defaults = Config{
	Requests: Limit{N: 10000, Per: time.Second},
	Writes:   Limit{N: 2000, Per: time.Second},
	Sessions: Limit{N: 5000, Per: time.Minute},
}

// Limits holds one bucket per credential and limit: requests, writes and
// sessions, in the order of the classes that take from them.
type Limits struct {
	all [3]*buckets
}

// New returns limits as cfg says (a zero Limit is no limit).
func New(cfg Config) *Limits {
	return &Limits{all: [3]*buckets{newBuckets("requests", cfg.Requests), newBuckets("writes", cfg.Writes),
		newBuckets("sessions", cfg.Sessions)}}
}

// Allow takes what a call of class c costs from who's buckets at now, or
// refuses it with a 429 error (code rate_limited, retry_after in seconds)
// and takes nothing. who names the credential (e.g. "key:12"). A nil
// Limits allows everything.
func (l *Limits) Allow(who string, c Class, now time.Time) error {
	if l == nil {
		return nil
	}
	// Every bucket is asked before any is taken from, so a refused call
	// takes nothing. Two calls racing for a key's last token may both pass
	// (a bucket then dips below zero, which only lengthens the next wait):
	// a limit to slow a runaway down need not be exact to the call.
	// A class takes from its own bucket and every cheaper class's.
	var wait time.Duration
	var worst *buckets
	if chain := l.all[:c+1]; len(chain) == 1 {
		// One bucket (the cheapest class's), asked and taken from under
		// one lock.
		if wait = chain[0].takeOne(who, now); wait > 0 {
			worst = chain[0]
		}
	} else {
		for _, b := range chain {
			if w := b.wait(who, now); w > wait {
				wait, worst = w, b
			}
		}
		if worst == nil {
			for _, b := range chain {
				b.take(who, now)
			}
		}
	}
	if worst != nil {
		secs := int(math.Ceil(wait.Seconds()))
		return errs.E(errs.TooMany, "rate_limited", "This credential went over its limit of %s %s; wait %d s and try again.",
			worst.limit, worst.name, secs).With("retry_after", secs)
	}
	return nil
}

// RetryAfter is the seconds a rate_limited error says to wait (0 for any
// other error).
func RetryAfter(err error) int {
	if e, ok := errs.As(err); ok && e.Code == "rate_limited" {
		if s, ok := e.Details["retry_after"].(int); ok {
			return s
		}
	}
	return 0
}

// shards spread the buckets over locks: many keys briefing at once do not
// queue on one mutex.
const shards = 32

// idleSweep is how many buckets a shard holds before it forgets the full
// ones (a full bucket is the same as no bucket).
const idleSweep = 1024

// buckets are one limit's token buckets, by credential.
type buckets struct {
	name  string
	limit Limit
	rate  float64 // tokens a nanosecond
	seed  maphash.Seed
	shard [shards]shard
}

type shard struct {
	sync.Mutex
	m map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newBuckets(name string, l Limit) *buckets {
	b := &buckets{name: name, limit: l, seed: maphash.MakeSeed()}
	if !l.Off() {
		b.rate = float64(l.N) / float64(l.Per)
	}
	for i := range b.shard {
		b.shard[i].m = map[string]*bucket{}
	}
	return b
}

// level is the bucket's tokens at now, refilled since it was last used.
func (b *buckets) level(k *bucket, now time.Time) float64 {
	if k == nil {
		return float64(b.limit.N)
	}
	// Calls racing on one key can arrive with their times out of order:
	// an earlier time refills nothing.
	t := k.tokens + float64(max(now.Sub(k.at), 0))*b.rate
	return math.Min(t, float64(b.limit.N))
}

// wait is how long who must wait for one token (0: it has one).
func (b *buckets) wait(who string, now time.Time) (w time.Duration) {
	b.locked(who, func(s *shard) { w = b.waitFor(s.m[who], now) })
	return w
}

// take takes one token from who's bucket.
func (b *buckets) take(who string, now time.Time) {
	b.locked(who, func(s *shard) { b.takeFrom(s, who, now) })
}

// takeOne takes one token from who's bucket if it has one, else returns
// how long who must wait for it: wait and take as one step.
func (b *buckets) takeOne(who string, now time.Time) (w time.Duration) {
	b.locked(who, func(s *shard) {
		if w = b.waitFor(s.m[who], now); w == 0 {
			b.takeFrom(s, who, now)
		}
	})
	return w
}

// locked runs f with who's shard locked; a limit that is off runs nothing.
func (b *buckets) locked(who string, f func(*shard)) {
	if b.limit.Off() {
		return
	}
	s := &b.shard[maphash.String(b.seed, who)%shards]
	s.Lock()
	defer s.Unlock()
	f(s)
}

// waitFor is how long a bucket's owner must wait for one token.
func (b *buckets) waitFor(k *bucket, now time.Time) time.Duration {
	if t := b.level(k, now); t < 1 {
		return time.Duration(math.Ceil((1 - t) / b.rate))
	}
	return 0
}

// takeFrom takes one token from who's bucket in s, whose lock is held.
func (b *buckets) takeFrom(s *shard, who string, now time.Time) {
	k := s.m[who]
	if k == nil {
		if len(s.m) >= idleSweep {
			for w, o := range s.m {
				if b.level(o, now) >= float64(b.limit.N) {
					delete(s.m, w)
				}
			}
		}
		k = &bucket{}
		s.m[who] = k
	}
	k.tokens = b.level(k, now) - 1
	if now.After(k.at) {
		k.at = now
	}
}
