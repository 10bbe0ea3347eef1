package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// worker is one of serve's long-running parts: run does its work until
// its context is cancelled, then finishes up and returns.
type worker struct {
	name string
	run  func(ctx context.Context) error
}

// runWorkers starts the workers in order, each with a context of its
// own, and waits until ctx is done or one of them fails (returns an
// error before it is stopped). Then it stops them in reverse order, each
// once every worker started after it has returned, so that a worker
// outlives those that use it: the outbox sender outlives the HTTP server
// whose requests write notifications, and the HTTP server the demo that
// calls it. A worker that returns nil before it is stopped has nothing
// more to do (the change listener on SQLite). It returns the workers'
// errors, each named by its worker, the failure first.
func runWorkers(ctx context.Context, ws []worker) error {
	type running struct {
		cancel context.CancelFunc
		done   chan error // its result, once
	}
	rs := make([]running, len(ws))
	failed := make(chan int, len(ws))
	for i, w := range ws {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		rs[i] = running{cancel: cancel, done: make(chan error, 1)}
		go func() {
			err := w.run(wctx)
			if err != nil {
				err = fmt.Errorf("%s: %w", w.name, err)
				if wctx.Err() == nil {
					failed <- i
				}
			}
			rs[i].done <- err
		}()
	}
	first := -1
	select {
	case <-ctx.Done():
	case first = <-failed:
	}
	errs := make([]error, len(ws))
	for i := len(rs) - 1; i >= 0; i-- {
		rs[i].cancel()
		errs[i] = <-rs[i].done
	}
	if first >= 0 {
		failure := errs[first]
		errs = append([]error{failure}, slices.Delete(errs, first, first+1)...)
	}
	return errors.Join(errs...)
}
