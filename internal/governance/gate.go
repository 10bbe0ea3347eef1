package governance

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/protocol"
)

// GateSession tells the executor gate what the session's brief says now,
// decided from the brief's cached inputs as an undelivering brief is
// (assemble): it writes nothing and, cached, reads nothing, and the
// decision is remembered with the inputs until the clock changes it. It
// is the check's fast path (ledger.Briefs). Errors: session_not_found.
func (s *BriefService) GateSession(ctx context.Context, session string) (gate.Session, error) {
	now := s.core.now()
	in, err := s.inputs(ctx, session, now, gateRefresh)
	if err != nil {
		return gate.Session{}, gateErr(session, err)
	}
	return in.memo.gateSession(in, now), nil
}

// GateSessionIn is GateSession read in q's transaction, so a recorded
// tool call is decided on exactly what that transaction sees (ledger.Briefs).
// Errors: session_not_found.
func (s *BriefService) GateSessionIn(ctx context.Context, q db.Querier, session string) (gate.Session, error) {
	in, err := loadInputs(ctx, q, session)
	if err != nil {
		return gate.Session{}, gateErr(session, err)
	}
	return gateSession(&in, s.core.now()), nil
}

func gateErr(session string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
	}
	return err
}

// gateSession decides the brief and keeps what the gate reads of it.
func gateSession(in *briefInputs, now time.Time) gate.Session {
	p := protocol.Decide(in.facts, now)
	return gate.Session{ID: in.state.ID, Root: in.state.Root, AgentKeyID: in.state.AgentKeyID, Tracked: in.state.LifecycleAt.Valid,
		Lifecycle: lifecycle.State(in.state.Lifecycle), NextAction: p.NextAction, Reason: p.Reason.String(), BlockedScope: p.BlockedScope,
		PlanApproved: in.state.PlanStatus == PlanApproved}
}

// SetRoot records the session's project root, when it has none: the
// first one an executor reports stays. Errors: session_not_found.
func (s *BriefService) SetRoot(ctx context.Context, actor auth.Actor, session, root string) error {
	return s.core.write(ctx, func(q db.Querier) error { return s.core.setRoot(ctx, q, actor, session, root, s.core.now()) })
}

// setRoot records the root in q's transaction when the session has none,
// as a line of its timeline.
func (c *core) setRoot(ctx context.Context, q db.Querier, actor auth.Actor, session, root string, now time.Time) error {
	n, err := q.SetSessionRoot(ctx, db.SetSessionRootParams{ID: session, Root: root})
	if err != nil || n == 0 {
		return err
	}
	return c.event(ctx, q, session, actor, now, "session.root", "", root)
}
