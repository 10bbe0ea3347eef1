package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/errs"
)

// Outcome is what became of an item that no longer waits: what was done
// to it, by whom and when, and the answer given. A console whose open
// item left the queue under it shows this instead of an empty card.
type Outcome struct {
	Kind    string `json:"kind"`
	Session string `json:"session"`
	Ref     string `json:"ref"`
	// Label names the item for a person: "DEC-014", "the plan", "PRM-3".
	Label string `json:"label"`
	// Verb is what was done, past tense: "resolved", "approved",
	// "rejected", "sent back for changes", "answered", "cleared",
	// "closed", "released", or "moved on" for a task its agent took up.
	Verb string `json:"verb"`
	// By is the person who did it ("" when nobody is recorded: a brake
	// released, a task its agent moved on).
	By string `json:"by,omitempty"`
	// At is when it was done (zero when not recorded).
	At time.Time `json:"at"`
	// Answer is what was answered: a resolution, an option's label, a
	// note; "" when there was none.
	Answer string `json:"answer,omitempty"`
}

// errStillWaiting says an item has no outcome yet.
func errStillWaiting(kind, ref string) error {
	return errs.E(errs.Conflict, "attention_item_waiting", "The %s %s still waits: nobody has acted on it yet.", kind, ref)
}

// Outcome says what became of an item that waited: who acted on it, when,
// with which answer. Anyone signed in may read it. The session may be ""
// for the kinds whose references are unique on their own (a gate, an
// ask, a permission prompt, a violation, a remediation). Errors:
// attention_item_not_found (nothing of that kind and reference ever
// waited there), attention_item_waiting (it still waits).
func (s *AttentionService) Outcome(ctx context.Context, kind, session, ref string) (Outcome, error) {
	missing := errs.E(errs.NotFound, "attention_item_not_found", "Nothing of kind %q with the reference %q waited on session %q.", kind, ref, session)
	var o Outcome
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		f := AttentionFilter{Kind: kind, Session: session}
		if f.Validate() != nil {
			return missing
		}
		waiting, err := collect(ctx, q, f, s.core.now())
		if err != nil {
			return err
		}
		for _, it := range waiting {
			if it.Ref == ref {
				return errStillWaiting(kind, ref)
			}
		}
		o, err = outcomeOf(ctx, q, kind, session, ref)
		if errors.Is(err, sql.ErrNoRows) {
			return missing
		}
		return err
	})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return Outcome{}, err
		}
		return Outcome{}, fmt.Errorf("outcome of %s %s: %w", kind, ref, err)
	}
	o.Kind, o.Ref = kind, ref
	if o.Session == "" {
		o.Session = session
	}
	return o, nil
}

// outcomeOf reads one item's outcome from the row it was, in q.
func outcomeOf(ctx context.Context, q db.Querier, kind, session, ref string) (Outcome, error) {
	id, numeric := int64(0), false
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil {
		id, numeric = n, true
	}
	who := func(by sql.NullInt64) (string, error) {
		if !by.Valid {
			return "", nil
		}
		u, err := q.GetUser(ctx, by.Int64)
		return u.Email, err
	}
	stamp := func(table string, key any, column string, v sql.NullString) (time.Time, error) {
		c := db.StoredRow(table, key)
		t := c.NullTime(column, v)
		return t, c.Err()
	}
	var o Outcome
	var by sql.NullInt64
	var at sql.NullString
	var table, column string
	var key any
	switch kind {
	case ItemDecision:
		d, err := q.GetDecisionByRef(ctx, ref)
		if err != nil || session != "" && d.SessionID != session {
			return o, orMissing(err)
		}
		session = d.SessionID
		o = Outcome{Label: d.Ref, Verb: "resolved", Answer: d.Resolution}
		by, at, table, key, column = d.ResolvedBy, d.ResolvedAt, "decisions", d.ID, "resolved_at"
	case ItemPlan:
		if session == "" {
			return o, sql.ErrNoRows
		}
		p, err := q.GetLatestPlan(ctx, session)
		if err != nil {
			return o, err
		}
		verbs := map[string]string{PlanApproved: "approved", PlanRejected: "rejected", PlanChangesRequested: "sent back for changes"}
		verb, ok := verbs[p.Status]
		if !ok || !p.DecidedBy.Valid {
			verb = "replaced by a newer plan"
		}
		o = Outcome{Label: "the plan", Verb: verb, Answer: p.Note}
		by, at, table, key, column = p.DecidedBy, p.DecidedAt, "plans", p.ID, "decided_at"
	case ItemAsk:
		a, err := q.GetAsk(ctx, ref)
		if err != nil || session != "" && a.SessionID != session {
			return o, orMissing(err)
		}
		session = a.SessionID
		o = Outcome{Label: "the question", Verb: "answered", Answer: optionLabel(a.Options, a.Answer.String)}
		by, at, table, key, column = a.AnsweredBy, a.AnsweredAt, "asks", a.ID, "answered_at"
	case ItemPermission:
		if !numeric {
			return o, sql.ErrNoRows
		}
		p, err := q.GetPermissionPrompt(ctx, id)
		if err != nil || session != "" && p.SessionID != session {
			return o, orMissing(err)
		}
		session = p.SessionID
		o = Outcome{Label: "PRM-" + ref, Verb: "answered", Answer: optionLabel(p.Options, p.Answer.String)}
		by, at, table, key, column = p.AnsweredBy, p.AnsweredAt, "permission_prompts", p.ID, "answered_at"
	case ItemViolation:
		if !numeric {
			return o, sql.ErrNoRows
		}
		v, err := q.GetViolation(ctx, id)
		if err != nil || session != "" && v.SessionID != session {
			return o, orMissing(err)
		}
		session = v.SessionID
		answer := map[string]string{"fixed": "fixed", "false_positive": "a false positive"}[v.ClearKind.String]
		if v.ClearNote != "" {
			answer += " (" + v.ClearNote + ")"
		}
		o = Outcome{Label: "the violation", Verb: "cleared", Answer: answer}
		by, at, table, key, column = v.ClearedBy, v.ClosedAt, "violations", v.ID, "closed_at"
	case ItemRemediation:
		if !numeric {
			return o, sql.ErrNoRows
		}
		r, err := q.GetRemediation(ctx, id)
		if err != nil || session != "" && r.SessionID != session {
			return o, orMissing(err)
		}
		session = r.SessionID
		o = Outcome{Label: "the remediation", Verb: "closed", Answer: r.CloseNote}
		by, at, table, key, column = r.ClosedBy, r.ClosedAt, "remediations", r.ID, "closed_at"
	case ItemPaused:
		if _, err := q.GetSession(ctx, session); err != nil {
			return o, err
		}
		return Outcome{Label: "the brake", Verb: "released"}, nil
	case ItemTask:
		if _, err := q.GetSession(ctx, session); err != nil {
			return o, err
		}
		return Outcome{Label: "task " + ref, Verb: "moved on"}, nil
	default:
		return o, sql.ErrNoRows
	}
	email, err := who(by)
	if err != nil {
		return o, err
	}
	o.By, o.Session = email, session
	o.At, err = stamp(table, key, column, at)
	return o, err
}

// orMissing is err, or sql.ErrNoRows when the row read belongs to another
// session (err nil): to the caller, nothing of that reference waited there.
func orMissing(err error) error {
	if err != nil {
		return err
	}
	return sql.ErrNoRows
}

// optionLabel is the label of the option key among a stored options
// object ({"1":"Yes",…}), or the key itself when it has none.
func optionLabel(stored, key string) string {
	var opts map[string]string
	c := db.StoredRow("options", key)
	c.JSON("options", stored, &opts)
	if l, ok := opts[key]; ok && c.Err() == nil {
		return l
	}
	return key
}
