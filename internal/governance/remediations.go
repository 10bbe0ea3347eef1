package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// The remediation severities.
const (
	SeverityRequired = "required"
	SeverityAdvisory = "advisory"
)

// The sources of a remediation: who or what raised it.
const (
	// SourcePerson: a lead asked for it.
	SourcePerson = "person"
	// SourceRule: a departure from an enforced architecture rule held with
	// 70% confidence or more raised it; it closes with the deviation.
	SourceRule = "rule"
	// SourceViolation: a high severity policy violation raised it; it
	// closes with the violation.
	SourceViolation = "violation"
	// SourceCollision: another session changed a symbol this one builds
	// against.
	SourceCollision = "collision"
)

// The limits of a remediation request, in characters (runes) or entries.
const (
	MaxRemediationInstruction = input.Text // what to fix, and how
	MaxRemediationFiles       = 100        // the most files one remediation names
	MaxRemediationFile        = 500        // the longest path of one of them
)

// Remediation is a request to fix something the agent is authorised to fix.
type Remediation struct {
	ID          int64    `json:"id"`
	Session     string   `json:"session"`
	Severity    string   `json:"severity"`
	Instruction string   `json:"instruction"`
	Files       []string `json:"files"`
	// Source is who or what raised it: person, rule, violation or
	// collision.
	Source string `json:"source"`
	// RaisedBy is the reason ref of the violation (VIO-<id>) or deviation
	// (DEV-<id>) that raised it, for sources violation and rule.
	RaisedBy    string     `json:"raised_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at"`
	// AckedAt is when the agent acknowledged the brief that delivered it.
	AckedAt   *time.Time `json:"acked_at,omitempty"`
	ClosedAt  *time.Time `json:"closed_at,omitempty"`
	CloseNote string     `json:"close_note,omitempty"`
	// Redelivered says this brief hands it over again: an earlier brief
	// delivered it and was not acknowledged within the delivery lease.
	// Only a brief sets it.
	Redelivered bool `json:"redelivered,omitempty"`
}

// RemediationService takes a lead's remediation requests and closes them.
type RemediationService struct{ core *core }

// RemediationInput is what a lead gives to request a remediation.
type RemediationInput struct {
	Severity    string   `json:"severity"`
	Instruction string   `json:"instruction"`
	Files       []string `json:"files"`
}

// Validate returns the input trimmed. Errors: invalid_severity,
// instruction_required, instruction_too_long, too_many_entries,
// empty_entry, files_too_long.
func (in RemediationInput) Validate() (RemediationInput, error) {
	out := RemediationInput{Severity: in.Severity}
	if in.Severity != SeverityRequired && in.Severity != SeverityAdvisory {
		return out, errs.E(errs.Invalid, "invalid_severity", "The severity %q must be required or advisory.", in.Severity).In("severity")
	}
	var err error
	if out.Instruction, err = input.Required("instruction", in.Instruction, MaxRemediationInstruction); err != nil {
		return out, err
	}
	if out.Files, err = input.List("files", in.Files, MaxRemediationFiles, MaxRemediationFile); err != nil {
		return out, err
	}
	return out, nil
}

// Request asks the session's agent to fix something; the request
// is delivered on its next brief. Errors: forbidden (not a lead),
// those of RemediationInput.Validate, session_not_found.
func (s *RemediationService) Request(ctx context.Context, actor auth.Actor, session string, in RemediationInput) (Remediation, error) {
	if err := actor.RequireLead("request a remediation"); err != nil {
		return Remediation{}, err
	}
	in, err := in.Validate()
	if err != nil {
		return Remediation{}, err
	}
	return s.request(ctx, actor, session, in, nil)
}

// ForTask answers a blocked task (an ItemTask item) with a required
// remediation on its session, as Request does: the lead's instruction,
// naming the task, delivered on the agent's next brief. The task's item
// stays until the task moves. Errors: forbidden (not a lead),
// instruction_required, instruction_too_long, session_not_found,
// attention_item_not_found (the task is not blocked).
func (s *RemediationService) ForTask(ctx context.Context, actor auth.Actor, session, task, instruction string) (Remediation, error) {
	if err := actor.RequireLead("request a remediation"); err != nil {
		return Remediation{}, err
	}
	in, err := RemediationInput{Severity: SeverityRequired, Instruction: instruction}.Validate()
	if err != nil {
		return Remediation{}, err
	}
	in.Instruction = "Task " + task + " is blocked: " + in.Instruction
	if n := utf8.RuneCountInString(in.Instruction); n > MaxRemediationInstruction {
		return Remediation{}, errs.E(errs.Invalid, "instruction_too_long", "The instruction, with the task it names, is %d characters; at most %d are allowed.",
			n, MaxRemediationInstruction).In("instruction")
	}
	return s.request(ctx, actor, session, in, func(q db.Querier, now time.Time) error {
		_, err := item(ctx, q, ItemKey{Kind: ItemTask, Session: session, Ref: task}, now)
		return err
	})
}

// request writes a lead's remediation request, valid, after check (nil:
// none) passes in the same transaction.
func (s *RemediationService) request(ctx context.Context, actor auth.Actor, session string, in RemediationInput,
	check func(db.Querier, time.Time) error) (Remediation, error) {
	instruction, files := in.Instruction, in.Files
	now := s.core.now()
	var row db.Remediation
	err := s.core.write(ctx, func(q db.Querier) error {
		if _, err := sessionFor(ctx, q, actor, session); err != nil {
			return err
		}
		if check != nil {
			if err := check(q, now); err != nil {
				return err
			}
		}
		var err error
		row, err = q.CreateRemediation(ctx, db.CreateRemediationParams{SessionID: session, Severity: in.Severity,
			Instruction: instruction, Files: encodeList(files), Source: SourcePerson, CreatedAt: db.FormatTime(now),
			CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}})
		if err != nil {
			return err
		}
		return s.core.event(ctx, q, session, actor, now, "remediation.requested", fmt.Sprint(row.ID), instruction)
	})
	if err != nil {
		return Remediation{}, fmt.Errorf("request remediation on %s: %w", session, err)
	}
	m, err := remediationFrom(row)
	if err != nil {
		return Remediation{}, fmt.Errorf("request remediation on %s: %w", session, err)
	}
	return m, nil
}

// Close closes a remediation request with a note: it no longer
// holds the agent. Closing one a violation or a rule raised closes that
// violation or deviation too, as this person's, so that nothing of it
// holds the agent. Errors: forbidden (not a lead), note_too_long,
// remediation_not_found, already_closed.
func (s *RemediationService) Close(ctx context.Context, actor auth.Actor, id int64, note string) (Remediation, error) {
	if err := actor.RequireLead("close a remediation"); err != nil {
		return Remediation{}, err
	}
	note, err := validNote(note)
	if err != nil {
		return Remediation{}, err
	}
	now := s.core.now()
	var row db.Remediation
	err = s.core.write(ctx, func(q db.Querier) error {
		cur, err := q.GetRemediation(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "remediation_not_found", "No remediation has the id %d.", id)
		} else if err != nil {
			return err
		}
		if cur.ClosedAt.Valid {
			return errs.E(errs.Conflict, "already_closed", "Remediation %d was already closed at %s.", id, cur.ClosedAt.String)
		}
		row, err = q.CloseRemediation(ctx, db.CloseRemediationParams{ID: id, ClosedAt: db.NullTime(now),
			ClosedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, CloseNote: note})
		if err != nil {
			return err
		}
		if err := s.core.event(ctx, q, row.SessionID, actor, now, "remediation.closed", fmt.Sprint(id), note); err != nil {
			return err
		}
		return s.closeRaiser(ctx, q, actor, row, note, now)
	})
	if err != nil {
		return Remediation{}, fmt.Errorf("close remediation %d: %w", id, err)
	}
	m, err := remediationFrom(row)
	if err != nil {
		return Remediation{}, fmt.Errorf("close remediation %d: %w", id, err)
	}
	return m, nil
}

// closeRaiser closes, as the person's, the violation or deviation that
// raised the remediation the person closed, and records it in the
// timeline. One already closed stays as it was.
func (s *RemediationService) closeRaiser(ctx context.Context, q db.Querier, actor auth.Actor, r db.Remediation, note string, now time.Time) error {
	by := sql.NullInt64{Int64: actor.UserID, Valid: true}
	detail := fmt.Sprintf("closed with remediation %d", r.ID)
	if note != "" {
		detail += ": " + note
	}
	switch {
	case r.ViolationID.Valid:
		_, err := q.ClearViolation(ctx, db.ClearViolationParams{ID: r.ViolationID.Int64, ClosedAt: db.NullTime(now), ClearedBy: by,
			ClearNote: note})
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("close violation %d: %w", r.ViolationID.Int64, err)
		}
		return s.core.event(ctx, q, r.SessionID, actor, now, "violation.cleared", fmt.Sprint(r.ViolationID.Int64), detail)
	case r.DeviationID.Valid:
		n, err := q.CloseDeviationBy(ctx, db.CloseDeviationByParams{ID: r.DeviationID.Int64, ClosedAt: db.NullTime(now), ClosedBy: by})
		if err != nil {
			return fmt.Errorf("close deviation %d: %w", r.DeviationID.Int64, err)
		}
		if n == 0 {
			return nil
		}
		return s.core.event(ctx, q, r.SessionID, actor, now, "deviation.closed", fmt.Sprint(r.DeviationID.Int64), detail)
	}
	return nil
}

// raiseRemediation records a required remediation a violation or a rule
// raised (p names which) and its remediation.requested event, by actor
// (the agent whose change report found it).
func (c *core) raiseRemediation(ctx context.Context, q db.Querier, actor auth.Actor, p db.CreateRemediationParams, now time.Time) error {
	p.Severity, p.CreatedAt = SeverityRequired, db.FormatTime(now)
	r, err := q.CreateRemediation(ctx, p)
	if err != nil {
		return fmt.Errorf("raise a remediation (%s): %w", p.Source, err)
	}
	return c.event(ctx, q, r.SessionID, actor, now, "remediation.requested", fmt.Sprint(r.ID), r.Instruction)
}

// closedRemediations records in the timeline, by actor, the closing of
// each remediation in rows (those a closing violation or deviation took
// with it).
func (c *core) closedRemediations(ctx context.Context, q db.Querier, actor auth.Actor, rows []db.Remediation, now time.Time) error {
	for _, r := range rows {
		if err := c.event(ctx, q, r.SessionID, actor, now, "remediation.closed", fmt.Sprint(r.ID), r.CloseNote); err != nil {
			return err
		}
	}
	return nil
}

// raisedBy is the reason ref of what raised a remediation: VIO-<id> for a
// violation, DEV-<id> for a deviation, "" otherwise.
func raisedBy(r db.Remediation) string {
	switch {
	case r.ViolationID.Valid:
		return fmt.Sprintf("VIO-%d", r.ViolationID.Int64)
	case r.DeviationID.Valid:
		return fmt.Sprintf("DEV-%d", r.DeviationID.Int64)
	}
	return ""
}

// remediationFrom converts a remediations row; an error names the row.
func remediationFrom(r db.Remediation) (Remediation, error) {
	c := db.StoredRow("remediations", r.ID)
	m := Remediation{ID: r.ID, Session: r.SessionID, Severity: r.Severity, Instruction: r.Instruction,
		Files: c.List("files", r.Files), Source: r.Source, RaisedBy: raisedBy(r), CreatedAt: c.Time("created_at", r.CreatedAt),
		DeliveredAt: c.TimePtr("delivered_at", r.DeliveredAt), AckedAt: c.TimePtr("acked_at", r.AckedAt),
		ClosedAt: c.TimePtr("closed_at", r.ClosedAt), CloseNote: r.CloseNote}
	if err := c.Err(); err != nil {
		return Remediation{}, err
	}
	return m, nil
}
