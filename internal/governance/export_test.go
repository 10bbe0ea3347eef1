package governance

import (
	"context"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
)

// RecordEvent records one timeline event in a write of its own, as every
// use case does, for the tests of what events cause: the path the gate
// expiry's decision.expired takes.
func (s *Services) RecordEvent(ctx context.Context, actor auth.Actor, session, kind, ref, detail string) error {
	c := s.Sessions.core
	return c.write(ctx, func(q db.Querier) error {
		return c.event(ctx, q, session, actor, c.now(), kind, ref, detail)
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
