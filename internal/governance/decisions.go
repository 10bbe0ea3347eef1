package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// The three states of a decision gate.
const (
	DecisionOpen      = "open"      // waiting on a person
	DecisionResolved  = "resolved"  // decided, not yet delivered to the agent
	DecisionDelivered = "delivered" // the agent's brief carried the resolution
)

// Decision is a gate an agent opened because answering would mean making a
// decision that is not the agent's to make.
type Decision struct {
	Ref          string     `json:"ref"`
	Session      string     `json:"session"`
	Title        string     `json:"title"`
	Question     string     `json:"question"`
	Proposal     string     `json:"proposal"`
	Status       string     `json:"status"`
	BlockedScope []string   `json:"blocked_scope"`
	AllowedScope []string   `json:"allowed_scope"`
	OpenedAt     time.Time  `json:"opened_at"`
	Resolution   string     `json:"resolution,omitempty"`
	Instruction  string     `json:"instruction,omitempty"`
	ResolvedAt   *time.Time `json:"resolved_at,omitempty"`
	ResolvedBy   string     `json:"resolved_by,omitempty"`
	DeliveredAt  *time.Time `json:"delivered_at,omitempty"`
	// AckedAt is when the agent acknowledged the brief that delivered the
	// resolution; a delivered gate without it was sent, not yet confirmed
	// received.
	AckedAt *time.Time `json:"acked_at,omitempty"`
	// Approvals are the approvals of a resolution waiting for a second,
	// different lead on a two-person mission ("1 of 2"); the gate stays
	// open until then.
	Approvals []Approval `json:"approvals,omitempty"`
	// VoidApprovals are approvals that stand but no longer count: their
	// people can no longer approve (each says why).
	VoidApprovals []Approval `json:"void_approvals,omitempty"`
	// Expired says the gate is open past its mission's gate_ttl, by the
	// clock when it was read (protocol.GateExpiry): it still blocks, and a
	// lead can still resolve it. Expired is not rejected.
	Expired bool `json:"expired"`
	// ExpiredAt is when an expired gate expired: its opening plus the
	// gate_ttl, or when Madebook recorded it expired. A resolved gate keeps
	// the time it was recorded expired, when it was, as its history.
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
}

// DecisionService opens decision gates and resolves them.
type DecisionService struct {
	core *core
	// maxOpenGates is how many gates one session may hold open at once
	// (Options.MaxOpenGates).
	maxOpenGates int
}

// The limits of a decision gate's fields, in characters (runes) or entries.
const (
	MaxDecisionTitle    = input.Name // the gate's title
	MaxDecisionQuestion = input.Text // the question a person must answer
	MaxDecisionProposal = input.Text // what the agent proposes
	// MaxScopeEntries is the most entries a gate's blocked or allowed
	// scope may hold. More is refused, never silently cut.
	MaxScopeEntries = 20
	// MaxScopeEntry is the longest path or glob of a scope: as long as a
	// contract clause's value.
	MaxScopeEntry = MaxClauseValue
)

// DecisionInput is what an agent gives to open a gate.
type DecisionInput struct {
	Title        string   `json:"title" jsonschema:"The gate's title, a few words."`
	Question     string   `json:"question" jsonschema:"The question a person must answer."`
	Proposal     string   `json:"proposal,omitzero" jsonschema:"What you propose, if anything."`
	BlockedScope []string `json:"blocked_scope,omitzero" jsonschema:"What you will not touch until it is answered: paths or areas, at most 20."`
	AllowedScope []string `json:"allowed_scope,omitzero" jsonschema:"What you may still work on meanwhile, at most 20."`
}

// Validate returns the input trimmed, or the first field over its limit or
// missing. Errors: title_required, title_too_long, question_required,
// question_too_long, proposal_too_long, too_many_entries, empty_entry,
// blocked_scope_too_long, allowed_scope_too_long.
func (in DecisionInput) Validate() (DecisionInput, error) {
	var (
		d   DecisionInput
		err error
	)
	if d.Title, err = input.Required("title", in.Title, MaxDecisionTitle); err != nil {
		return d, err
	}
	if d.Question, err = input.Required("question", in.Question, MaxDecisionQuestion); err != nil {
		return d, err
	}
	if d.Proposal, err = input.Optional("proposal", in.Proposal, MaxDecisionProposal); err != nil {
		return d, err
	}
	if d.BlockedScope, err = input.List("blocked_scope", in.BlockedScope, MaxScopeEntries, MaxScopeEntry); err != nil {
		return d, err
	}
	if d.AllowedScope, err = input.List("allowed_scope", in.AllowedScope, MaxScopeEntries, MaxScopeEntry); err != nil {
		return d, err
	}
	return d, nil
}

// Open opens a gate on the agent's own session and gives it the
// next workspace-wide reference, DEC-001, DEC-002, … Only the session's
// agent opens gates: a gate a person opened would just be a conversation.
// A session holds at most maxOpenGates open gates (Options.MaxOpenGates): one
// more is refused until a person resolves some. Errors: forbidden,
// session_not_found, too_many_open_gates, and those of
// DecisionInput.Validate.
func (s *DecisionService) Open(ctx context.Context, actor auth.Actor, session string, in DecisionInput) (Decision, error) {
	if err := actor.RequireAgent("open a decision gate"); err != nil {
		return Decision{}, err
	}
	d, err := in.Validate()
	if err != nil {
		return Decision{}, err
	}
	now := s.core.now()
	var row db.Decision
	err = s.core.write(ctx, func(q db.Querier) error {
		if _, err := ownSession(ctx, q, actor, session, "open a decision gate"); err != nil {
			return err
		}
		open, err := q.CountOpenDecisions(ctx, session)
		if err != nil {
			return err
		}
		if open >= int64(s.maxOpenGates) {
			return errs.E(errs.Conflict, "too_many_open_gates",
				"Session %s already has %d open gates, the most one session may hold: wait for a person to resolve some (your brief lists them) before opening more.",
				session, open)
		}
		n, err := q.NextDecisionNumber(ctx)
		if err != nil {
			return err
		}
		row, err = q.CreateDecision(ctx, db.CreateDecisionParams{ID: n, Ref: fmt.Sprintf("DEC-%03d", n), SessionID: session,
			Title: d.Title, Question: d.Question, Proposal: d.Proposal, BlockedScope: encodeList(d.BlockedScope),
			AllowedScope: encodeList(d.AllowedScope), OpenedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		return s.core.event(ctx, q, session, actor, now, "decision.opened", row.Ref, d.Question)
	})
	if err != nil {
		return Decision{}, fmt.Errorf("open decision on %s: %w", session, err)
	}
	out, err := decisionFrom(row, "")
	if err != nil {
		return Decision{}, fmt.Errorf("open decision on %s: %w", session, err)
	}
	return out, nil
}

// The limits of a resolution, in characters (runes).
const (
	MaxResolution  = input.Text // what the person decided
	MaxInstruction = input.Text // what the agent is told to do next
)

// ResolutionInput is what a person decides on a gate: the resolution, and
// the instruction the agent gets with it on its next brief.
type ResolutionInput struct {
	Resolution  string `json:"resolution"`
	Instruction string `json:"instruction"`
}

// Validate returns the resolution trimmed. Errors: resolution_required,
// resolution_too_long, instruction_required, instruction_too_long.
func (r ResolutionInput) Validate() (ResolutionInput, error) {
	var out ResolutionInput
	var errRes, errInstr error
	out.Resolution, errRes = input.Required("resolution", r.Resolution, MaxResolution)
	out.Instruction, errInstr = input.Required("instruction", r.Instruction, MaxInstruction)
	return out, errs.Join(errRes, errInstr)
}

// Resolve records a person's resolution and the instruction the
// agent gets with it on its next brief. A gate resolves once. Errors:
// forbidden (not a lead), those of ResolutionInput.Validate,
// decision_not_found, already_resolved.
func (s *DecisionService) Resolve(ctx context.Context, actor auth.Actor, ref, resolution, instruction string) (Decision, error) {
	ds, err := s.ResolveMany(ctx, actor, []string{ref}, resolution, instruction)
	if err != nil {
		return Decision{}, err
	}
	return ds[0], nil
}

// Accept resolves a gate with what its agent proposed, as the resolution,
// and the instruction given. Errors as Resolve, and no_proposal for a gate
// whose agent proposed nothing.
func (s *DecisionService) Accept(ctx context.Context, actor auth.Actor, ref, instruction string) (Decision, error) {
	if err := actor.RequireLead("resolve a decision"); err != nil {
		return Decision{}, err
	}
	cur, err := s.core.store.Reader().GetDecisionByRef(ctx, ref)
	if errors.Is(err, sql.ErrNoRows) {
		return Decision{}, errs.E(errs.NotFound, "decision_not_found", "No decision has the reference %q.", ref)
	} else if err != nil {
		return Decision{}, fmt.Errorf("accept %s: %w", ref, err)
	}
	if strings.TrimSpace(cur.Proposal) == "" {
		return Decision{}, errs.E(errs.Invalid, "no_proposal", "The agent proposed nothing on %s: write the resolution yourself.", ref)
	}
	return s.Resolve(ctx, actor, ref, cur.Proposal, instruction)
}

// ResolveMany resolves several gates of one kind (one title: one answer
// fits only questions alike) with one resolution and one instruction, all
// or none. Errors as Resolve, decisions_required for an empty list and
// mixed_gates for gates of different titles.
func (s *DecisionService) ResolveMany(ctx context.Context, actor auth.Actor, refs []string, resolution, instruction string) ([]Decision, error) {
	if err := actor.RequireLead("resolve a decision"); err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, errs.E(errs.Invalid, "decisions_required", "Select at least one decision to resolve.")
	}
	r, err := ResolutionInput{Resolution: resolution, Instruction: instruction}.Validate()
	if err != nil {
		return nil, err
	}
	now := s.core.now()
	out := make([]Decision, 0, len(refs))
	err = s.core.write(ctx, func(q db.Querier) error {
		var first db.Decision
		for i, ref := range refs {
			cur, err := q.GetDecisionByRef(ctx, ref)
			if errors.Is(err, sql.ErrNoRows) {
				return errs.E(errs.NotFound, "decision_not_found", "No decision has the reference %q.", ref)
			} else if err != nil {
				return err
			}
			if cur.ResolvedAt.Valid {
				return errs.E(errs.Conflict, "already_resolved", "%s was already resolved at %s.", ref, cur.ResolvedAt.String)
			}
			if i > 0 && cur.Title != first.Title {
				return errs.E(errs.Invalid, "mixed_gates", "One answer fits only gates of one kind: %s asks %q, %s asks %q. Resolve them apart.",
					first.Ref, first.Title, cur.Ref, cur.Title)
			} else if i == 0 {
				first = cur
			}
			agreed, waiting, err := s.core.approve(ctx, q, actor, approveDecision, cur.ID, ref, cur.SessionID,
				approvalContent{Resolution: r.Resolution, Instruction: r.Instruction}, "", now)
			if err != nil {
				return err
			}
			if !agreed.Done {
				// 1 of 2: the gate stays open, showing who approved what.
				d, err := decisionFrom(cur, "")
				if err != nil {
					return err
				}
				d.Approvals = waiting
				if err := settleExpiry(ctx, q, &d, now); err != nil {
					return err
				}
				out = append(out, d)
				continue
			}
			row, err := q.ResolveDecision(ctx, db.ResolveDecisionParams{Ref: ref, Resolution: r.Resolution, Instruction: r.Instruction,
				ResolvedAt: db.NullTime(now), ResolvedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}})
			if err != nil {
				return err
			}
			if err := s.core.event(ctx, q, row.SessionID, actor, now, "decision.resolved", ref, r.Resolution); err != nil {
				return err
			}
			d, err := decisionFrom(row, actor.Email)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", strings.Join(refs, ", "), err)
	}
	return out, nil
}

// decisionFrom converts a decisions row; an error names the row.
func decisionFrom(r db.Decision, resolvedBy string) (Decision, error) {
	c := db.StoredRow("decisions", r.Ref)
	d := Decision{Ref: r.Ref, Session: r.SessionID, Title: r.Title, Question: r.Question, Proposal: r.Proposal,
		Status: DecisionOpen, BlockedScope: c.List("blocked_scope", r.BlockedScope), AllowedScope: c.List("allowed_scope", r.AllowedScope),
		OpenedAt: c.Time("opened_at", r.OpenedAt), Resolution: r.Resolution, Instruction: r.Instruction,
		ResolvedAt: c.TimePtr("resolved_at", r.ResolvedAt), ResolvedBy: resolvedBy, DeliveredAt: c.TimePtr("delivered_at", r.DeliveredAt),
		AckedAt: c.TimePtr("acked_at", r.AckedAt), ExpiredAt: c.TimePtr("expired_at", r.ExpiredAt)}
	if err := c.Err(); err != nil {
		return Decision{}, err
	}
	switch {
	case r.DeliveredAt.Valid:
		d.Status = DecisionDelivered
	case r.ResolvedAt.Valid:
		d.Status = DecisionResolved
	default:
		d.Expired = r.ExpiredAt.Valid
	}
	return d, nil
}
