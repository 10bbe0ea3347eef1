// Package gatefacts reads from the database what the executor gate
// (internal/gate) decides a run's calls on: the question a run is parked
// on, the approved plan it or its session executes, and the options
// answered at the plan's stopping points. The read model
// (governance's loadView) and the ledger's exact path (a recorded tool
// call, an ask) both read them here.
package gatefacts

import (
	"context"
	"database/sql"
	"errors"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/plan"
)

// Run reads the gate's facts of run r: the ask it is parked on, and the
// plan it executes with the options released at its stopping points.
func Run(ctx context.Context, q db.Querier, r db.GetRunRow) (*gate.Run, error) {
	out := &gate.Run{ID: r.ID}
	if r.Status == "parked" { // ledger.Parked
		a, err := q.GetOpenAsk(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		c := db.StoredRow("asks", a.ID)
		out.OpenAsk = &gate.Ask{ID: a.ID, Prompt: a.Prompt, AskedAt: c.Time("created_at", a.CreatedAt)}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	if !r.PlanID.Valid {
		return out, nil
	}
	p, err := Plan(ctx, q, r.PlanID.Int64)
	if err != nil {
		return nil, err
	}
	out.Plan = &p
	if out.Released, err = Released(ctx, q, r.PlanID.Int64); err != nil {
		return nil, err
	}
	return out, nil
}

// ApprovedPlan sets the session's approved plan and what was released of
// it, when its latest plan is approved (sess.PlanApproved).
func ApprovedPlan(ctx context.Context, q db.Querier, sess *gate.Session) error {
	if !sess.PlanApproved {
		return nil
	}
	pl, err := q.GetLatestPlan(ctx, sess.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil || pl.Status != "approved" {
		return err
	}
	p, err := Plan(ctx, q, pl.ID)
	if err != nil {
		return err
	}
	rel, err := Released(ctx, q, pl.ID)
	if err != nil {
		return err
	}
	sess.Plan, sess.Released = &p, rel
	return nil
}

// Released reads the options answered at a plan's stopping points:
// stopping point id → the options chosen.
func Released(ctx context.Context, q db.Querier, planID int64) (map[int][]string, error) {
	answers, err := q.ListReleasedOptions(ctx, sql.NullInt64{Int64: planID, Valid: true})
	if err != nil {
		return nil, err
	}
	out := map[int][]string{}
	for _, a := range answers {
		sp := int(a.StoppingPoint.Int64)
		out[sp] = append(out[sp], a.Answer.String)
	}
	return out, nil
}

// Plan reads a plan's body. An error names the row that does not decode.
func Plan(ctx context.Context, q db.Querier, id int64) (plan.Plan, error) {
	row, err := q.GetPlan(ctx, id)
	if err != nil {
		return plan.Plan{}, err
	}
	var p plan.Plan
	c := db.StoredRow("plans", id)
	c.JSON("body", row.Body, &p)
	return p, c.Err()
}
