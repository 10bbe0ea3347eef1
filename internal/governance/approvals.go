package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/approval"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

// What an approval approves.
const (
	approveDecision  = "decision"  // a gate's resolution and instruction
	approvePlan      = "plan"      // a plan's confirmation
	approveViolation = "violation" // the clearing of a critical violation
)

// Approval is a lead's approval that waits for a second, different lead
// on a two-person mission: shown as "1 of 2". What it approves is the
// resolution and instruction of a gate, the clear kind of a violation, or
// (for a plan) the plan itself; the second lead approves the same.
type Approval struct {
	By          string    `json:"by"`
	At          time.Time `json:"at"`
	Note        string    `json:"note,omitempty"`
	Resolution  string    `json:"resolution,omitempty"`
	Instruction string    `json:"instruction,omitempty"`
	ClearKind   string    `json:"clear_kind,omitempty"`
	// Void, when not "", says why this approval no longer counts: its
	// person was disabled, demoted below lead, or deleted since
	// (approval.Disabled, Demoted, Deleted).
	Void string `json:"void,omitempty"`
}

// approvalContent is what an approval approves, stored as JSON: approvals
// count together only when theirs are equal.
type approvalContent struct {
	Resolution  string `json:"resolution,omitempty"`
	Instruction string `json:"instruction,omitempty"`
	ClearKind   string `json:"clear_kind,omitempty"`
}

func (a approvalContent) encode() string {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err) // three strings always marshal
	}
	return string(b)
}

// Approvals are the approvals waiting for their second lead, by the kind
// and ref of the Attention item they would settle.
type Approvals map[[2]string][]Approval

// Of returns the approvals waiting on one Attention item that count.
func (a Approvals) Of(kind, ref string) []Approval {
	return slices.DeleteFunc(slices.Clone(a[[2]string{kind, ref}]), func(x Approval) bool { return x.Void != "" })
}

// VoidOf returns the approvals standing on one Attention item that no
// longer count, each saying why.
func (a Approvals) VoidOf(kind, ref string) []Approval {
	return slices.DeleteFunc(slices.Clone(a[[2]string{kind, ref}]), func(x Approval) bool { return x.Void == "" })
}

// standingApprovals reads every approval waiting for its second lead.
func standingApprovals(ctx context.Context, q db.Querier) (Approvals, error) {
	rows, err := q.ListAllStandingApprovals(ctx)
	if err != nil {
		return nil, fmt.Errorf("standing approvals: %w", err)
	}
	out := Approvals{}
	for _, r := range rows {
		a, err := approvalFrom(r.Ref, r.Email, r.At, r.Note, r.Content)
		if err != nil {
			return nil, err
		}
		a.Void = approval.VoidReason(r.UserExists, r.Role, r.Disabled)
		k := [2]string{r.Target, r.Ref}
		out[k] = append(out[k], a)
	}
	return out, nil
}

// withApprovals attaches to the gates, plans and violations among items
// the approvals that wait for a second lead.
func withApprovals(ctx context.Context, q db.Querier, items []AttentionItem) error {
	need := false
	for _, it := range items {
		need = need || it.Kind == ItemDecision || it.Kind == ItemPlan || it.Kind == ItemViolation
	}
	if !need {
		return nil
	}
	all, err := standingApprovals(ctx, q)
	if err != nil || len(all) == 0 {
		return err
	}
	for i := range items {
		items[i].Approvals = all.Of(items[i].Kind, items[i].Ref)
		items[i].VoidApprovals = all.VoidOf(items[i].Kind, items[i].Ref)
	}
	return nil
}

// approve counts a lead's approval of a gate's resolution, a plan or the
// clearing of a critical violation, and says whether it takes effect now:
// on a two-person mission the first approval waits for a second,
// different lead who approves the same content (recorded on the
// session's timeline as "1 of 2"); elsewhere one lead suffices. Nobody
// approves the work of an agent key they created. While it waits, it
// returns the approvals that stand, this one last. Errors: same_approver,
// key_creator.
func (c *core) approve(ctx context.Context, q db.Querier, actor auth.Actor, target string, id int64, ref, session string,
	what approvalContent, note string, now time.Time) (approval.Outcome, []Approval, error) {
	content := what.encode()
	pol, err := q.GetApprovalPolicy(ctx, session)
	if errors.Is(err, sql.ErrNoRows) {
		return approval.Outcome{}, nil, errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
	} else if err != nil {
		return approval.Outcome{}, nil, fmt.Errorf("approval policy of %s: %w", session, err)
	}
	standing, err := q.ListStandingApprovals(ctx, db.ListStandingApprovalsParams{Target: target, TargetID: id})
	if err != nil {
		return approval.Outcome{}, nil, fmt.Errorf("approvals of %s %d: %w", target, id, err)
	}
	votes := make([]approval.Vote, len(standing))
	for i, v := range standing {
		votes[i] = approval.Vote{By: v.UserID, Content: v.Content, Void: approval.VoidReason(v.UserExists, v.Role, v.Disabled)}
	}
	out, err := approval.Add(approval.Policy{TwoPerson: pol.TwoPerson, KeyCreator: pol.CreatedBy.Int64, KeyName: pol.KeyName},
		votes, actor.UserID, content)
	var refused *approval.Refusal
	if errors.As(err, &refused) {
		kind := errs.Conflict
		if refused.Code == "key_creator" {
			kind = errs.Forbidden
		}
		return out, nil, errs.E(kind, refused.Code, "%s", refused.Message)
	} else if err != nil {
		return out, nil, err
	}
	at := db.FormatTime(now)
	if out.Supersede || out.Done {
		if err := q.SettleApprovals(ctx, db.SettleApprovalsParams{Target: target, TargetID: id, At: sql.NullString{String: at, Valid: true}}); err != nil {
			return out, nil, fmt.Errorf("settle approvals of %s %d: %w", target, id, err)
		}
	}
	settled := sql.NullString{}
	if out.Done {
		settled = sql.NullString{String: at, Valid: true}
	}
	if err := q.AddApproval(ctx, db.AddApprovalParams{Target: target, TargetID: id, SessionID: session, UserID: actor.UserID,
		Content: content, Note: note, At: at, SettledAt: settled}); err != nil {
		return out, nil, fmt.Errorf("approve %s %d: %w", target, id, err)
	}
	if out.Done {
		return out, nil, nil
	}
	detail := fmt.Sprintf("%d of %d approvals", out.Count, out.Required)
	if err := c.event(ctx, q, session, actor, now, target+".approved", ref, detail); err != nil {
		return out, nil, err
	}
	var waiting []Approval
	if !out.Supersede {
		for i, r := range standing {
			if votes[i].Void != "" {
				continue // shown apart, as no longer counting
			}
			a, err := approvalFrom(ref, r.Email, r.At, r.Note, r.Content)
			if err != nil {
				return out, nil, err
			}
			waiting = append(waiting, a)
		}
	}
	return out, append(waiting, Approval{By: actor.Email, At: now, Note: note,
		Resolution: what.Resolution, Instruction: what.Instruction, ClearKind: what.ClearKind}), nil
}

// approvalFrom converts a stored approval; an error names the row.
func approvalFrom(target, email, at, note, content string) (Approval, error) {
	c := db.StoredRow("approvals", target)
	var what approvalContent
	c.JSON("content", content, &what)
	a := Approval{By: email, At: c.Time("at", at), Note: note,
		Resolution: what.Resolution, Instruction: what.Instruction, ClearKind: what.ClearKind}
	return a, c.Err()
}

// attach puts on the session's open gates, waiting plan and critical
// violations the approvals that wait for a second lead.
func (d *SessionDetail) attach(waiting Approvals) {
	if len(waiting) == 0 {
		return
	}
	for i := range d.Decisions {
		d.Decisions[i].Approvals = waiting.Of(ItemDecision, d.Decisions[i].Ref)
		d.Decisions[i].VoidApprovals = waiting.VoidOf(ItemDecision, d.Decisions[i].Ref)
	}
	if d.Plan != nil && d.Plan.Status == PlanProposed {
		d.Plan.Approvals = waiting.Of(ItemPlan, d.ID)
		d.Plan.VoidApprovals = waiting.VoidOf(ItemPlan, d.ID)
	}
	for i := range d.Violations {
		ref := strconv.FormatInt(d.Violations[i].ID, 10)
		d.Violations[i].Approvals = waiting.Of(ItemViolation, ref)
		d.Violations[i].VoidApprovals = waiting.VoidOf(ItemViolation, ref)
	}
}
