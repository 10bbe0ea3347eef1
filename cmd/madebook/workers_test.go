package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// trace records what the test's workers did, in order.
type trace struct {
	mu     sync.Mutex
	events []string
}

func (t *trace) add(e string) {
	t.mu.Lock()
	t.events = append(t.events, e)
	t.mu.Unlock()
}

func (t *trace) list() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.events)
}

// waiter is a worker that records its start, waits to be stopped, records
// its stop and returns err.
func waiter(tr *trace, name string, err error) worker {
	return worker{name, func(ctx context.Context) error {
		tr.add("start " + name)
		<-ctx.Done()
		tr.add("stop " + name)
		return err
	}}
}

// waitEvents waits until the trace holds n events.
func waitEvents(t *testing.T, tr *trace, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(tr.list()) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events %q, want %d", tr.list(), n)
		}
	}
}

// The workers run until the context ends, then stop last first, each
// once the ones after it have returned; an error returned on the way
// out is the result, named by its worker, and a worker done at once
// stops nothing.
func TestRunWorkersStopsThemInReverseOrder(t *testing.T) {
	t.Parallel()
	tr := &trace{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runWorkers(ctx, []worker{
			waiter(tr, "listener", nil),
			{"at once", func(context.Context) error { tr.add("ran at once"); return nil }},
			waiter(tr, "sender", nil),
			waiter(tr, "http", errors.New("shutdown timed out")),
			waiter(tr, "demo", nil),
		})
	}()
	waitEvents(t, tr, 5)
	select {
	case err := <-done:
		t.Fatalf("runWorkers returned %v before its context ended", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	err := <-done
	if err == nil || err.Error() != "http: shutdown timed out" {
		t.Errorf("runWorkers: %v, want the HTTP worker's error, named", err)
	}
	events := tr.list()
	if got, want := events[5:], []string{"stop demo", "stop http", "stop sender", "stop listener"}; !slices.Equal(got, want) {
		t.Errorf("stopped %q, want %q", got, want)
	}
}

// A worker that fails stops the others, in reverse order, and its error
// comes first.
func TestRunWorkersStopsAllWhenOneFails(t *testing.T) {
	t.Parallel()
	tr := &trace{}
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runWorkers(context.Background(), []worker{
			waiter(tr, "sender", errors.New("late")),
			waiter(tr, "http", nil),
			{"demo", func(context.Context) error { <-release; return errors.New("seed failed") }},
		})
	}()
	waitEvents(t, tr, 2)
	close(release)
	select {
	case err := <-done:
		if err == nil || !strings.HasPrefix(err.Error(), "demo: seed failed\n") || !strings.Contains(err.Error(), "sender: late") {
			t.Errorf("runWorkers: %q, want the demo's failure first, then the sender's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a failed worker did not stop the others")
	}
	if got, want := tr.list()[2:], []string{"stop http", "stop sender"}; !slices.Equal(got, want) {
		t.Errorf("stopped %q, want %q", got, want)
	}
}
