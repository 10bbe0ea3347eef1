package governance

import (
	"context"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
)

// TimelineEvent is one event RecordEvents records.
type TimelineEvent struct{ Kind, Ref, Detail string }

// RecordEvents records timeline events on a session in one write, as a
// use case does, for the tests of what events cause: the path the gate
// expiry's decision.expired takes, and that of a remediation requested
// with the violation that caused it.
func (s *Services) RecordEvents(ctx context.Context, actor auth.Actor, session string, evs ...TimelineEvent) error {
	c := s.Sessions.core
	return c.write(ctx, func(q db.Querier) error {
		for _, e := range evs {
			if err := c.event(ctx, q, session, actor, c.now(), e.Kind, e.Ref, e.Detail); err != nil {
				return err
			}
		}
		return nil
	})
}

// Failing is a store whose writes run and then roll back with err: a
// cause that fails to commit.
type Failing struct {
	db.Transactor
	Err error
}

// Write runs fn in a transaction and rolls it back.
func (f Failing) Write(ctx context.Context, fn func(db.Querier) error) error {
	err := f.Transactor.Write(ctx, func(q db.Querier) error {
		if err := fn(q); err != nil {
			return err
		}
		return f.Err
	})
	return err
}

// SetEvaluation replaces how change reports are evaluated, for the tests
// of the budget and of evaluating outside the write: the budget, the
// clock that times each policy, and a hook called after a report's
// evaluation, before its write (nil: none).
func (s *ChangeService) SetEvaluation(budget time.Duration, clock func() time.Time, evaluated func(session string)) {
	s.budget, s.clock, s.evaluated = budget, clock, evaluated
}
