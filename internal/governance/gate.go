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
	"github.com/madebook/madebook/internal/gatefacts"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/protocol"
)

// GateView tells the executor gate what the session's brief says now, with
// its approved plan, and the facts of run when it is one of the session's
// live runs (running or parked), from the session's cached view: it
// writes nothing and, cached, reads nothing, and the gate's session is
// cached with the view until the clock changes it. It is the check's fast
// path (ledger.Gate). The run is nil when run is "" or not among the live
// runs: the caller reads it exactly (GateViewIn). Errors:
// session_not_found.
func (s *BriefService) GateView(ctx context.Context, session, run string) (gate.Session, *gate.Run, error) {
	now := s.core.now()
	v, err := s.views.view(ctx, session, now)
	if err != nil {
		return gate.Session{}, nil, gateErr(session, err)
	}
	return v.decided.gateSession(v, now), v.runs[run], nil
}

// GateViewIn is GateView read exactly in q's transaction, so that a
// recorded tool call is decided on what that transaction sees
// (ledger.Gate): the session with its approved plan, and the facts of run
// when it is not nil. Errors: session_not_found.
func (s *BriefService) GateViewIn(ctx context.Context, q db.Querier, session string, run *db.GetRunRow) (gate.Session, *gate.Run, error) {
	v, err := loadInputs(ctx, q, session)
	if err != nil {
		return gate.Session{}, nil, gateErr(session, err)
	}
	sess := gateSession(&v, s.core.now())
	if err := gatefacts.ApprovedPlan(ctx, q, &sess); err != nil {
		return gate.Session{}, nil, err
	}
	if run == nil {
		return sess, nil, nil
	}
	r, err := gatefacts.Run(ctx, q, *run)
	return sess, r, err
}

func gateErr(session string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
	}
	return err
}

// gateSession decides the brief and keeps what the gate reads of it (the
// plan aside).
func gateSession(in *sessionView, now time.Time) gate.Session {
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
