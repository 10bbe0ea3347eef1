package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/plan"
)

// The plan statuses a caller sees.
const (
	PlanProposed   = "proposed"
	PlanApproved   = "approved"
	PlanRejected   = "rejected"
	PlanSuperseded = "superseded"
	// PlanChangesRequested: a lead asked for changes (Modify).
	PlanChangesRequested = "changes_requested"
)

// Plan is a session's execution plan, answered in the shape it is
// proposed in: its summary, initial_steps and stopping_points, beside its
// id, status and when it was proposed and decided.
type Plan struct {
	ID      int64  `json:"id"`
	Summary string `json:"summary"`
	Status  string `json:"status"`
	plan.Plan
	ProposedAt time.Time  `json:"proposed_at"`
	DecidedAt  *time.Time `json:"decided_at,omitempty"`
	Note       string     `json:"note,omitempty"`
	// DeliveredAt is when a brief first handed the lead's answer (approve,
	// modify or reject) to the agent; AckedAt, when the agent acknowledged
	// the brief that last handed it over. Both absent until then.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	AckedAt     *time.Time `json:"acked_at,omitempty"`
	// Answered says a lead answered the plan (a plan approved when it was
	// proposed, on a mission that is not high-risk, has no answer to
	// deliver).
	Answered bool `json:"-"`
	// Approvals are the confirmations waiting for a second, different
	// lead on a two-person mission ("1 of 2"); the plan stays proposed
	// until then.
	Approvals []Approval `json:"approvals,omitempty"`
	// VoidApprovals are approvals that stand but no longer count: their
	// people can no longer approve (each says why).
	VoidApprovals []Approval `json:"void_approvals,omitempty"`
}

// PlanService takes an agent's plans and a lead's verdict on them.
type PlanService struct{ core *core }

// MaxPlanSummary is the most characters of a plan's summary.
const MaxPlanSummary = input.Text

// PlanInput is what an agent proposes.
type PlanInput struct {
	Summary string `json:"summary" jsonschema:"The plan in a few sentences."`
	plan.Plan
}

// Validate returns the input with its summary trimmed and its steps and
// stopping points never nil, or what is wrong with it. Whether a side
// effect starts before its gate is checked against the tool registry, by
// Propose. Errors: summary_required, summary_too_long, invalid_plan,
// unknown_dependency (a step waits on a step the plan does not have),
// dependency_cycle (steps wait on each other in a circle), and, about the
// JSON path of a text (initial_steps[0].prompt), <name>_too_long,
// too_many_entries and invalid_characters.
func (in PlanInput) Validate() (PlanInput, error) {
	summary, err := input.Required("summary", in.Summary, MaxPlanSummary)
	if err != nil {
		return in, err
	}
	if err := in.Plan.Validate(); err != nil {
		var graph *plan.GraphError
		switch e, ok := errs.As(err); {
		case ok:
			return in, e
		case errors.As(err, &graph) && len(graph.Cycle) == 0: // dangling, even on "" (a step waiting on an empty id)
			return in, errs.E(errs.Invalid, "unknown_dependency", "The plan is not valid: %v.", err).With("step", graph.Step)
		case errors.As(err, &graph):
			return in, errs.E(errs.Invalid, "dependency_cycle", "The plan is not valid: %v.", err).With("step", graph.Step)
		}
		return in, errs.E(errs.Invalid, "invalid_plan", "The plan is not valid: %v.", err)
	}
	in.Summary = summary
	if in.InitialSteps == nil {
		in.InitialSteps = []plan.Step{}
	}
	if in.StoppingPoints == nil {
		in.StoppingPoints = []plan.StoppingPoint{}
	}
	return in, nil
}

// Propose records the agent's execution plan. On a high-risk mission it
// waits for a lead (status proposed); otherwise it is approved at once. A
// new plan supersedes the session's earlier ones, so a revised plan on a
// high-risk mission needs approval again. A plan that lets a side effect
// start before the stopping point that governs it (plan.Check, with the
// operators' tool registry deciding, a tool nobody classified counting as
// side-effecting, and a step's own side_effecting only raising it:
// Classifier) is refused with
// side_effect_before_gate, naming the step and the stopping point. Errors:
// forbidden, session_not_found, those of PlanInput.Validate,
// side_effect_before_gate.
func (s *PlanService) Propose(ctx context.Context, actor auth.Actor, session string, in PlanInput) (Plan, error) {
	if err := actor.RequireAgent("propose a plan"); err != nil {
		return Plan{}, err
	}
	checked, err := s.check(ctx, in)
	if err != nil {
		return Plan{}, err
	}
	now := s.core.now()
	var row db.Plan
	err = s.core.write(ctx, func(q db.Querier) error {
		sess, err := ownSession(ctx, q, actor, session, "propose a plan")
		if err != nil {
			return err
		}
		row, err = s.record(ctx, q, actor, sess, checked, now)
		return err
	})
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan on %s: %w", session, err)
	}
	p, err := planFrom(row)
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan on %s: %w", session, err)
	}
	return p, nil
}

// checkedPlan is a plan that passed PlanInput.Validate and plan.Check,
// with its body encoded for storage.
type checkedPlan struct {
	in   PlanInput
	body string
}

// check validates a proposed plan and checks it against the tool
// registry, before any write. Errors: those of PlanInput.Validate,
// side_effect_before_gate.
func (s *PlanService) check(ctx context.Context, in PlanInput) (checkedPlan, error) {
	in, err := in.Validate()
	if err != nil {
		return checkedPlan{}, err
	}
	classify, err := s.Classifier(ctx)
	if err != nil {
		return checkedPlan{}, err
	}
	if err := in.Plan.Check(classify); err != nil {
		var ge *plan.GateError
		if !errors.As(err, &ge) {
			return checkedPlan{}, fmt.Errorf("check plan: %w", err)
		}
		e := errs.E(errs.Invalid, "side_effect_before_gate", "%s", ge.Error()).With("step", ge.Step)
		if ge.StoppingPoint != 0 {
			e = e.With("stopping_point", ge.StoppingPoint)
		}
		return checkedPlan{}, e
	}
	body, err := json.Marshal(in.Plan)
	if err != nil {
		return checkedPlan{}, fmt.Errorf("encode plan: %w", err)
	}
	return checkedPlan{in: in, body: string(body)}, nil
}

// record records a checked plan on the session inside q's transaction,
// superseding its earlier plans: proposed on a high-risk mission, approved
// at once on any other; the timeline says which.
func (s *PlanService) record(ctx context.Context, q db.Querier, actor auth.Actor, sess db.GetSessionRow, p checkedPlan, now time.Time) (db.Plan, error) {
	if err := q.SupersedePlans(ctx, sess.ID); err != nil {
		return db.Plan{}, err
	}
	arg := db.CreatePlanParams{SessionID: sess.ID, Summary: p.in.Summary, Body: p.body, Status: PlanProposed,
		ProposedAt: db.FormatTime(now)}
	if !sess.MissionHighRisk {
		arg.Status, arg.DecidedAt = PlanApproved, db.NullTime(now)
	}
	row, err := q.CreatePlan(ctx, arg)
	if err != nil {
		return db.Plan{}, err
	}
	return row, s.core.event(ctx, q, sess.ID, actor, now, "plan."+arg.Status, "", p.in.Summary)
}

// Approve approves the session's proposed plan, with an optional note of
// at most MaxNote characters; in CONFIRMING it is the lead's confirmation
// (→ EXECUTING). The answer, note included, is delivered once on the
// agent's next brief. Errors: forbidden (not a lead), note_too_long,
// session_not_found, no_plan_proposed.
func (s *PlanService) Approve(ctx context.Context, actor auth.Actor, session, note string) (Plan, error) {
	return s.decidePlan(ctx, actor, session, verdictApprove, note)
}

// Reject rejects the session's proposed plan, with an optional note; in
// CONFIRMING it sends the session back to IDLE. The note is delivered once
// on the agent's next brief (and quoted by every brief while the mission
// is high-risk). Errors as Approve.
func (s *PlanService) Reject(ctx context.Context, actor auth.Actor, session, note string) (Plan, error) {
	return s.decidePlan(ctx, actor, session, verdictReject, note)
}

// Modify asks for changes to the session's proposed plan, with an
// instruction saying which (required, at most MaxNote characters); in
// CONFIRMING it moves the session to ARCHITECTURE_REVISING. The
// instruction is delivered once on the agent's next brief. Errors:
// forbidden, instruction_required, instruction_too_long,
// session_not_found, no_plan_proposed.
func (s *PlanService) Modify(ctx context.Context, actor auth.Actor, session, instruction string) (Plan, error) {
	return s.decidePlan(ctx, actor, session, verdictModify, instruction)
}

// verdict is one of a lead's three answers to a proposed plan.
type verdict struct {
	status string // the plan's status after it
	verb   string // for errors: "approve a plan"
	// check validates the note or instruction.
	check func(string) (string, error)
	// answer moves a session waiting in CONFIRMING.
	answer func(lifecycle.State) (lifecycle.Transition, error)
}

var (
	verdictApprove = verdict{PlanApproved, "approve", validNote, lifecycle.Confirm}
	verdictReject  = verdict{PlanRejected, "reject", validNote, lifecycle.Reject}
	verdictModify  = verdict{PlanChangesRequested, "ask for changes to", func(instruction string) (string, error) {
		return input.Required("instruction", instruction, MaxNote)
	}, lifecycle.Modify}
)

func (s *PlanService) decidePlan(ctx context.Context, actor auth.Actor, session string, v verdict, note string) (Plan, error) {
	if err := actor.RequireLead(v.verb + " a plan"); err != nil {
		return Plan{}, err
	}
	note, err := v.check(note)
	if err != nil {
		return Plan{}, err
	}
	now := s.core.now()
	var (
		row     db.Plan
		waiting []Approval
	)
	err = s.core.write(ctx, func(q db.Querier) error {
		sess, err := sessionFor(ctx, q, actor, session)
		if err != nil {
			return err
		}
		noPlan := errs.E(errs.Conflict, "no_plan_proposed", "The session has no plan waiting for approval.")
		latest, err := q.GetLatestPlan(ctx, session)
		if errors.Is(err, sql.ErrNoRows) {
			return noPlan
		} else if err != nil {
			return err
		}
		if latest.Status != PlanProposed {
			return noPlan.With("plan_status", latest.Status)
		}
		if v.status == PlanApproved {
			agreed, standing, err := s.core.approve(ctx, q, actor, approvePlan, latest.ID, "", session, approvalContent{}, note, now)
			if err != nil {
				return err
			}
			if !agreed.Done {
				// 1 of 2: the plan stays proposed, showing who confirmed it.
				row, waiting = latest, standing
				return nil
			}
		} else if err := q.SettleApprovals(ctx, db.SettleApprovalsParams{Target: approvePlan, TargetID: latest.ID,
			At: db.NullTime(now)}); err != nil {
			return err
		}
		row, err = q.DecidePlan(ctx, db.DecidePlanParams{ID: latest.ID, Status: v.status, DecidedAt: db.NullTime(now),
			DecidedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, Note: note})
		if errors.Is(err, sql.ErrNoRows) {
			return noPlan.With("plan_status", latest.Status)
		} else if err != nil {
			return err
		}
		if err := s.core.event(ctx, q, session, actor, now, "plan."+v.status, "", note); err != nil {
			return err
		}
		// A tracked session waiting in CONFIRMING moves on the answer; in
		// any other state, or untracked, it stays where it is.
		if !sess.LifecycleAt.Valid || lifecycle.State(sess.Lifecycle) != lifecycle.Confirming {
			return nil
		}
		tr, err := v.answer(lifecycle.Confirming)
		if err != nil {
			return err
		}
		return s.core.move(ctx, q, actor, sess.ID, now, "", []lifecycle.Transition{tr})
	})
	if err != nil {
		return Plan{}, fmt.Errorf("%s plan of %s: %w", v.verb, session, err)
	}
	p, err := planFrom(row)
	if err != nil {
		return Plan{}, fmt.Errorf("%s plan of %s: %w", v.verb, session, err)
	}
	p.Approvals = waiting
	return p, nil
}

// planFrom converts a plans row; an error names the row.
func planFrom(r db.Plan) (Plan, error) {
	c := db.StoredRow("plans", r.ID)
	p := Plan{ID: r.ID, Summary: r.Summary, Status: r.Status, ProposedAt: c.Time("proposed_at", r.ProposedAt),
		DecidedAt: c.TimePtr("decided_at", r.DecidedAt), Note: r.Note,
		DeliveredAt: c.TimePtr("delivered_at", r.DeliveredAt), AckedAt: c.TimePtr("acked_at", r.AckedAt),
		Answered: r.DecidedBy.Valid}
	c.JSON("body", r.Body, &p.Plan)
	if err := c.Err(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// Classifier returns whether a plan step's call to server.tool writes, as
// the executor gate classifies a call (gate.Classify) over the operators'
// registry as it is now: Madebook's own tools never write, else the
// registry's entry decides, else Claude Code's read-only built-ins do not
// write, else the call writes (fail safe); the step's own side_effecting
// (said) may only raise that. The plan check and the console's drawing
// of a plan both classify steps with it.
func (s *PlanService) Classifier(ctx context.Context) (plan.Classifier, error) {
	rows, err := s.core.store.Reader().ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tool registry: %w", err)
	}
	writes := make(map[[2]string]bool, len(rows))
	for _, r := range rows {
		writes[[2]string{r.Server, r.Tool}] = r.SideEffecting
	}
	return func(server, tool string, said *bool) bool {
		var registered *bool
		if w, ok := writes[[2]string{server, tool}]; ok {
			registered = &w
		}
		return gate.Classify(server, tool, registered, said)
	}, nil
}
