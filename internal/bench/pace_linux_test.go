//go:build linux

package bench

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The pacer narrows its thread's timer slack while it paces, gives the
// thread back as it found it, and never wakes before a request is due.
func TestPacerRestoresItsThread(t *testing.T) {
	runtime.LockOSThread() // the pacer's thread is this test's
	defer runtime.UnlockOSThread()
	slack := func() int {
		s, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Skipf("PR_GET_TIMERSLACK: %v", err)
		}
		return s
	}
	before := slack()
	p := newPacer()
	if got := slack(); got != 1 {
		t.Errorf("pacing with a timer slack of %d ns, want 1", got)
	}
	for range 20 {
		due := time.Now().Add(300 * time.Microsecond)
		p.sleepUntil(due)
		if early := time.Until(due); early > 0 {
			t.Fatalf("woke %s before the request was due", early)
		}
	}
	p.sleepUntil(time.Now().Add(-time.Second)) // a due time past returns at once
	p.close()
	if got := slack(); got != before {
		t.Errorf("the thread's timer slack is %d ns after pacing, was %d", got, before)
	}
}
