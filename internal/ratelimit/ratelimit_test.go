package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestParseLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Limit
		err  bool
	}{
		{"10000/s", Limit{10000, time.Second}, false},
		{"5000/m", Limit{5000, time.Minute}, false},
		{" 3/h ", Limit{3, time.Hour}, false},
		{"off", Limit{}, false},
		{"0", Limit{}, false},
		{"10", Limit{}, true},
		{"0/s", Limit{}, true},
		{"-1/s", Limit{}, true},
		{"5/d", Limit{}, true},
		{"x/s", Limit{}, true},
		{"", Limit{}, true},
	} {
		got, err := ParseLimit(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
		if err == nil {
			if back, _ := ParseLimit(got.String()); back != got {
				t.Errorf("%v does not read back from %q", got, got.String())
			}
		}
	}
}

func TestABurstPassesThenTheNextCallWaits(t *testing.T) {
	l := New(Config{Requests: Limit{N: 3, Per: time.Minute}})
	for i := 0; i < 3; i++ {
		if err := l.Allow("key:1", Read, t0); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err := l.Allow("key:1", Read, t0)
	e, ok := errs.As(err)
	if !ok || e.Kind != errs.TooMany || e.Code != "rate_limited" || RetryAfter(err) != 20 {
		t.Fatalf("the fourth call: %#v (retry after %d), want rate_limited after 20 s", err, RetryAfter(err))
	}
	if want := "This credential went over its limit of 3/m requests; wait 20 s and try again."; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	if err := l.Allow("key:2", Read, t0); err != nil {
		t.Errorf("another key is limited by the first's calls: %v", err)
	}
	if err := l.Allow("key:1", Read, t0.Add(19*time.Second)); err == nil {
		t.Error("a call before a token refilled passed")
	}
	if err := l.Allow("key:1", Read, t0.Add(20*time.Second)); err != nil {
		t.Errorf("a call once a token refilled: %v", err)
	}
	// A bucket never holds more than a burst, however long it rested.
	later := t0.Add(24 * time.Hour)
	for i := 0; i < 3; i++ {
		if err := l.Allow("key:1", Read, later); err != nil {
			t.Fatalf("after a rest, call %d: %v", i+1, err)
		}
	}
	if err := l.Allow("key:1", Read, later); err == nil {
		t.Error("a rested bucket let more than a burst through")
	}
}

// A refused call takes nothing, from any bucket: a key refused a write
// can still read as much as before.
func TestARefusedCallTakesNothing(t *testing.T) {
	l := New(Config{Requests: Limit{N: 4, Per: time.Second}, Writes: Limit{N: 1, Per: time.Second}, Sessions: Limit{N: 1, Per: time.Hour}})
	if err := l.Allow("k", Session, t0); err != nil {
		t.Fatal(err)
	}
	if got := RetryAfter(l.Allow("k", Session, t0)); got != 3600 {
		t.Errorf("a second session in the same second: retry after %d s, want 3600 (the longest wait is told)", got)
	}
	if got := RetryAfter(l.Allow("k", Session, t0.Add(time.Second))); got != 3599 {
		t.Errorf("a second session a second later: retry after %d s, want 3599", got)
	}
	if err := l.Allow("k", Write, t0.Add(time.Second)); err != nil {
		t.Errorf("the refused sessions took the write token: %v", err)
	}
	// Requests: the session took one at t0, the refusals none; refilled to
	// four by t0+1s, the write took one: three reads are left.
	for i := 0; i < 3; i++ {
		if err := l.Allow("k", Read, t0.Add(time.Second)); err != nil {
			t.Fatalf("read %d after refusals: %v", i+1, err)
		}
	}
	if err := l.Allow("k", Read, t0.Add(time.Second)); err == nil {
		t.Error("the requests bucket let a fourth read through")
	}
}

func TestOffAndNilLimitNothing(t *testing.T) {
	var none *Limits
	off := New(Config{})
	for i := 0; i < 100000; i++ {
		if err := none.Allow("k", Session, t0); err != nil {
			t.Fatal(err)
		}
		if err := off.Allow("k", Session, t0); err != nil {
			t.Fatal(err)
		}
	}
}

// The fleet on one key, under the defaults: 5,000 sessions opened
// in a minute, then 5,000 briefs a second for ten seconds, none refused;
// a loop that goes on opening a session every millisecond is refused.
func TestTheDefaultsLetABusyFleetThrough(t *testing.T) {
	l := New(Defaults)
	for i := 0; i < 5000; i++ {
		if err := l.Allow("key:fleet", Session, t0.Add(time.Duration(i)*12*time.Millisecond)); err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
	}
	for i := 0; i < 50000; i++ {
		if err := l.Allow("key:fleet", Read, t0.Add(time.Minute+time.Duration(i)*200*time.Microsecond)); err != nil {
			t.Fatalf("brief %d: %v", i+1, err)
		}
	}
	refused := false
	for i := 0; i < 10000 && !refused; i++ {
		refused = l.Allow("key:fleet", Session, t0.Add(70*time.Second+time.Duration(i)*time.Millisecond)) != nil
	}
	if !refused {
		t.Error("a key opening a session every millisecond for ten seconds after 5,000 in a minute was never refused")
	}
}

// A shard forgets the buckets that have refilled, so the keys that once
// called do not pile up.
func TestFullBucketsAreForgotten(t *testing.T) {
	l := New(Config{Requests: Limit{N: 2, Per: time.Second}})
	for i := 0; i < 40*idleSweep; i++ {
		if err := l.Allow(fmt.Sprint("key:", i), Read, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for i := range l.all[0].shard {
		held += len(l.all[0].shard[i].m)
	}
	if held > shards*idleSweep {
		t.Errorf("%d buckets held after 40,960 keys called once a second apart; want at most %d", held, shards*idleSweep)
	}
}

// BenchmarkAllow is the cost a limit adds to every brief: one key from
// every goroutine (the worst case for its shard's lock).
func BenchmarkAllow(b *testing.B) {
	l := New(Config{Requests: Limit{N: 1 << 30, Per: time.Second}})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Allow("key:1", Read, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
