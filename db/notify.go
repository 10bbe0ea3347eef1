package db

import "sync"

// watchers are the channels told about committed writes (Store.Subscribe).
type watchers struct {
	mu   sync.Mutex
	next int
	subs map[int]chan struct{}
}

// Subscribe returns a channel that receives a value after write
// transactions commit, and a function that stops it (and must be called).
// The channel holds one value at most: a reader that falls behind gets one
// value for any number of writes, never a blocked writer.
func (s *Store) Subscribe() (<-chan struct{}, func()) {
	w := &s.watch
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs = map[int]chan struct{}{}
	}
	id := w.next
	w.next++
	w.subs[id] = ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, id)
	}
}

// committed tells every subscriber that a write committed.
func (w *watchers) committed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.subs {
		select {
		case ch <- struct{}{}:
		default: // a value is already waiting: it stands for this write too
		}
	}
}
