package governance_test

import (
	"context"
	"sync"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/governance"
)

// pausingStore is the real store with one hook: the next read transaction
// first runs beforeRead. It makes a write land at an exact point of a
// brief, between the brief's first look at the session and its read
// transaction, an interleaving the race tests reach only by luck.
type pausingStore struct {
	*db.Store
	mu         sync.Mutex
	beforeRead func()
}

func (p *pausingStore) Read(ctx context.Context, fn func(db.Querier) error) error {
	p.mu.Lock()
	hook := p.beforeRead
	p.beforeRead = nil
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
	return p.Store.Read(ctx, fn)
}

func (p *pausingStore) arm(hook func()) {
	p.mu.Lock()
	p.beforeRead = hook
	p.mu.Unlock()
}

func TestWriteLandingInsideABriefIsDeliveredOnce(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves the session with something open, so that the
		// brief reads; land is the write that lands inside the brief.
		setup func(t *testing.T, w *world, svc *governance.Services) (land func() error)
	}{
		{"a resolution landing between a brief's look and its read is stamped by the brief that carries it",
			func(t *testing.T, w *world, svc *governance.Services) func() error {
				d := must(svc.Decisions.Open(t.Context(), w.agent, w.session, gate("Go?")))(t)
				return func() error {
					_, err := svc.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Yes.", "Go ahead.")
					return err
				}
			}},
		{"a remediation requested between a brief's look and its read is stamped by the brief that carries it",
			func(t *testing.T, w *world, svc *governance.Services) func() error {
				must(svc.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{Severity: "advisory", Instruction: "Old."}))(t)
				must(svc.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t) // delivers the old one
				return func() error {
					_, err := svc.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{Severity: "required", Instruction: "New."})
					return err
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			store := &pausingStore{Store: w.Store}
			svc := governance.New(store, w.Clock.Now, governance.Options{})
			land := tt.setup(t, w, svc)
			var landErr error
			store.arm(func() { landErr = land() })

			seen := map[string]int{} // what briefs carried: refs, and remediations without a stamp
			for i := range 3 {
				b := must(svc.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
				if landErr != nil {
					t.Fatal(landErr)
				}
				for _, r := range b.Resolutions {
					seen[r.Ref]++
				}
				for _, m := range b.Remediations {
					if m.DeliveredAt == nil {
						t.Errorf("brief %d carries remediation %d (%q) without stamping it", i+1, m.ID, m.Instruction)
					}
				}
			}
			for ref, n := range seen {
				if n != 1 {
					t.Errorf("%s was delivered by %d briefs, want exactly one", ref, n)
				}
			}
			d := must(svc.Sessions.Get(t.Context(), w.lead, w.session))(t)
			for _, dec := range d.Decisions {
				if dec.Status != governance.DecisionDelivered {
					t.Errorf("%s is %s after three briefs, want delivered", dec.Ref, dec.Status)
				}
			}
			for _, m := range d.Remediations {
				if m.DeliveredAt == nil {
					t.Errorf("remediation %d is undelivered after three briefs", m.ID)
				}
			}
		})
	}
}
