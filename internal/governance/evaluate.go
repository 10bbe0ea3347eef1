package governance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/policy"
)

// PolicyBudget is how long evaluating the policies over one change report
// may take. Past it the report is refused (503 policy_evaluation_over_budget,
// naming the policy that cost the most) and nothing is written; the slow
// policy is logged, and shown with its cost on the Policies page, for an
// admin to disable.
const PolicyBudget = 2 * time.Second

// SlowPolicy is the time one policy may take over one change before it is
// logged as slow.
const SlowPolicy = PolicyBudget / 4

// newChangeService returns the change service over c, evaluating at most
// one change per CPU at a time against the real clock within PolicyBudget,
// logging to log and noting each policy's cost in costs.
func newChangeService(c *core, log *slog.Logger, costs *policyCosts) *ChangeService {
	return &ChangeService{core: c, log: log, costs: costs, budget: PolicyBudget, clock: time.Now,
		slots: make(chan struct{}, runtime.NumCPU())}
}

// PolicyCost is what running a policy over change reports has cost since
// the server started.
type PolicyCost struct {
	// Last is the time it took over the last change evaluated.
	LastMS float64 `json:"last_ms"`
	// Slowest is the most it took over one change, and when.
	SlowestMS float64    `json:"slowest_ms"`
	SlowestAt *time.Time `json:"slowest_at,omitempty"`
}

// policyCosts holds each policy's PolicyCost, in memory.
type policyCosts struct {
	mu sync.Mutex
	by map[int64]PolicyCost
}

func (pc *policyCosts) note(costs map[int64]time.Duration, at time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.by == nil {
		pc.by = map[int64]PolicyCost{}
	}
	for id, d := range costs {
		ms := float64(d.Microseconds()) / 1000
		c := pc.by[id]
		c.LastMS = ms
		if c.SlowestAt == nil || ms > c.SlowestMS {
			at := at
			c.SlowestMS, c.SlowestAt = ms, &at
		}
		pc.by[id] = c
	}
}

func (pc *policyCosts) get(id int64) (PolicyCost, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	c, ok := pc.by[id]
	return c, ok
}

// evaluate runs the policy set over the change, outside any transaction,
// within the budget. It waits up to the budget for a free evaluation slot;
// past the budget it stops and answers policy_evaluation_over_budget,
// naming the policy running or the one that cost most. A policy's run over
// one file is not interrupted: when the budget passes during one, the
// answer does not wait for it, and the evaluation ends, in the background,
// when that run does (holding its slot until then). Each evaluation's
// costs are kept for the Policies page, and a policy slower than
// SlowPolicy is logged.
func (s *ChangeService) evaluate(ctx context.Context, pols *compiledPolicies, session string, c change.Change) ([]policy.Finding, error) {
	timer := time.NewTimer(s.budget)
	defer timer.Stop()
	select {
	case s.slots <- struct{}{}:
	case <-timer.C:
		return nil, errs.E(errs.Unavailable, "policy_evaluation_busy",
			"Madebook is busy evaluating other changes against the policies; report the change again in a moment.")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	type result struct {
		found []policy.Finding
		err   error
	}
	var (
		stop    atomic.Bool
		running atomic.Pointer[policy.Policy]
		done    = make(chan result, 1)
	)
	start := s.clock()
	go func() {
		defer func() { <-s.slots }()
		m := &policy.Meter{Now: s.clock, Stop: func(next policy.Policy) bool {
			running.Store(&next)
			return stop.Load() || s.clock().Sub(start) > s.budget
		}}
		found, err := pols.set.EvaluateMetered(c, m)
		s.costs.note(m.Costs, s.core.now())
		for id, d := range m.Costs {
			if d > SlowPolicy {
				p := pols.byID[id]
				s.log.Warn("slow policy", "policy_id", id, "policy", p.Name, "cost", d.String(), "session", session,
					"files", len(c.Files), "budget", s.budget.String())
			}
		}
		done <- result{found, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
		stop.Store(true)
		p := running.Load()
		if p == nil {
			p = &policy.Policy{}
		}
		r.err = &policy.StoppedError{Policy: *p, Cost: s.clock().Sub(start)}
	case <-ctx.Done():
		stop.Store(true)
		return nil, ctx.Err()
	}
	var stopped *policy.StoppedError
	if errors.As(r.err, &stopped) {
		s.log.Warn("change evaluation over budget", "policy_id", stopped.Policy.ID, "policy", stopped.Policy.Name,
			"cost", stopped.Cost.String(), "session", session, "files", len(c.Files), "budget", s.budget.String())
		return nil, errs.E(errs.Unavailable, "policy_evaluation_over_budget",
			"Evaluating the policies over this change took longer than %s, so it was not recorded. Policy %d (%s) cost the most: an admin can disable it on the Policies page. Report the change again after.",
			s.budget, stopped.Policy.ID, stopped.Policy.Name).With("policy_id", stopped.Policy.ID).With("policy", stopped.Policy.Name)
	}
	if r.err != nil {
		return nil, fmt.Errorf("evaluate policies: %w", r.err)
	}
	return r.found, nil
}
