package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// What people mark on Attention items: a claim ("I'm on it", seen by
// everyone), a snooze (hidden from one person's queue for a while, still
// blocking the agent) and, on a blocked task, an acknowledgement. Each is
// keyed as the queue names an item (kind, session, ref) and counts only
// for the item opened at or before it: the answer that ends an item ends
// its marks, and a mark on an earlier item with the same key (a session
// paused again, a task blocked again) is not shown on the new one. Every
// mark is recorded in the activity record, in the write's transaction.

// The actions the activity record names them by.
const (
	ActionClaim       = "attention.claim"
	ActionUnclaim     = "attention.unclaim"
	ActionSnooze      = "attention.snooze"
	ActionUnsnooze    = "attention.unsnooze"
	ActionAcknowledge = "attention.acknowledge"
)

// The bounds of a snooze.
const (
	MinSnooze = time.Minute
	MaxSnooze = 7 * 24 * time.Hour
)

// ItemKey names one Attention item as the queue does: its kind, its
// session and its ref (for a plan or a paused session, the session's id
// again).
type ItemKey struct {
	Kind    string `json:"kind"`
	Session string `json:"session"`
	Ref     string `json:"ref"`
}

func (k ItemKey) target() string {
	return "session " + k.Session + " " + k.Kind + " " + k.Ref
}

// Claim says the actor is on an item ("I'm on it"): everyone sees who and
// since when on the item (ClaimedBy, ClaimedAt). An item someone else
// claimed is refused with 409 already_claimed naming them, unless
// takeOver, which takes it over (recorded, with who had it). Claiming an
// item one already holds changes and records nothing. Errors: forbidden
// (not a lead or admin), attention_item_not_found (it does not wait),
// already_claimed.
func (s *AttentionService) Claim(ctx context.Context, actor auth.Actor, key ItemKey, takeOver bool) (AttentionItem, error) {
	if err := actor.RequireLead("claim an Attention item"); err != nil {
		return AttentionItem{}, err
	}
	now := s.core.now()
	at := db.FormatTime(now)
	var it AttentionItem
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		key = ItemKey{Kind: it.Kind, Session: it.Session, Ref: it.Ref}
		if it.claimer == actor.UserID {
			return nil
		}
		var before activity.State
		if it.claimer != 0 {
			if !takeOver {
				return errClaimed(it)
			}
			before = activity.State{"claimed_by": it.ClaimedBy, "claimed_at": db.FormatTime(*it.ClaimedAt)}
		}
		prev, err := q.GetAttentionClaim(ctx, db.GetAttentionClaimParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref})
		var n int64
		switch {
		case errors.Is(err, sql.ErrNoRows):
			n, err = q.InsertAttentionClaim(ctx, db.InsertAttentionClaimParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
				UserID: actor.UserID, ClaimedAt: at})
		case err == nil:
			// A claim on an earlier item with this key, or the one taken
			// over: replaced, unless someone claimed it since.
			n, err = q.ReplaceAttentionClaim(ctx, db.ReplaceAttentionClaimParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
				UserID: actor.UserID, ClaimedAt: at, PrevClaimedAt: prev.ClaimedAt})
		}
		if err != nil {
			return err
		}
		if n == 0 {
			// Someone claimed it between the read and the write.
			if it, err = item(ctx, q, key, now); err != nil {
				return err
			}
			return errClaimed(it)
		}
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		after := activity.State{"session": key.Session, "kind": key.Kind, "ref": key.Ref, "claimed_by": actor.Who(), "claimed_at": at}
		return activity.Record(ctx, q, now, actor.Who(), ActionClaim, key.target(), before, after)
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("claim %s: %w", key.target(), err)
	}
	return it, nil
}

// errClaimed refuses to claim an item someone else holds.
func errClaimed(it AttentionItem) error {
	return errs.E(errs.Conflict, "already_claimed",
		"%s claimed this item at %s: ask them, or claim it with \"take_over\": true to take it over.",
		it.ClaimedBy, it.ClaimedAt.Format(time.RFC3339)).With("claimed_by", it.ClaimedBy).With("claimed_at", it.ClaimedAt.Format(time.RFC3339))
}

// Unclaim lets go of an item: only the person who claimed it, or an
// admin, may. Errors: forbidden (a viewer, or a lead who is not the
// claimer), attention_item_not_found, not_claimed (no one is on it).
func (s *AttentionService) Unclaim(ctx context.Context, actor auth.Actor, key ItemKey) (AttentionItem, error) {
	if err := actor.RequireLead("let go of an Attention item"); err != nil {
		return AttentionItem{}, err
	}
	now := s.core.now()
	var it AttentionItem
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		key = ItemKey{Kind: it.Kind, Session: it.Session, Ref: it.Ref}
		if it.claimer == 0 {
			return errs.E(errs.Conflict, "not_claimed", "No one has claimed this item: there is nothing to let go of.")
		}
		if it.claimer != actor.UserID && !actor.IsAdmin() {
			return errs.E(errs.Forbidden, "forbidden", "%s claimed this item: only they or an admin may let go of it.", it.ClaimedBy).
				With("claimed_by", it.ClaimedBy)
		}
		before := activity.State{"claimed_by": it.ClaimedBy, "claimed_at": db.FormatTime(*it.ClaimedAt)}
		n, err := q.DeleteAttentionClaim(ctx, db.DeleteAttentionClaimParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
			ClaimedAt: db.FormatTime(*it.ClaimedAt)})
		if err != nil {
			return err
		}
		if n == 0 {
			return errs.E(errs.Conflict, "claim_changed", "The claim on this item changed while you let go of it: look again.")
		}
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		after := activity.State{"session": key.Session, "kind": key.Kind, "ref": key.Ref}
		return activity.Record(ctx, q, now, actor.Who(), ActionUnclaim, key.target(), before, after)
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("unclaim %s: %w", key.target(), err)
	}
	return it, nil
}

// ParseSnooze reads how long a snooze lasts, as Go writes a duration
// ("30m", "1h30m", "2h") or in days ("1d", up to "7d"): from MinSnooze to
// MaxSnooze. Errors: invalid_snooze.
func ParseSnooze(text string) (time.Duration, error) {
	v := strings.TrimSpace(text)
	bad := func() error {
		return errs.E(errs.Invalid, "invalid_snooze",
			"\"for\" is %q: give how long to snooze, from 1 minute to 7 days, e.g. \"30m\", \"2h\" or \"1d\".", short(text)).In("for")
	}
	if v == "" {
		return 0, bad()
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := time.ParseDuration(days + "h")
		if err != nil {
			return 0, bad()
		}
		d = n * 24
	} else {
		n, err := time.ParseDuration(v)
		if err != nil {
			return 0, bad()
		}
		d = n
	}
	if d < MinSnooze || d > MaxSnooze {
		return 0, bad()
	}
	return d, nil
}

// Snooze hides an item from the actor's own queue for a while (from
// MinSnooze to MaxSnooze): everyone else sees it marked snoozed, by whom
// and until when, and it keeps blocking the agent. Snoozing it again
// replaces the actor's earlier snooze. Any person may snooze. Errors:
// forbidden (not a person), invalid_snooze, attention_item_not_found.
func (s *AttentionService) Snooze(ctx context.Context, actor auth.Actor, key ItemKey, d time.Duration) (AttentionItem, error) {
	if err := actor.RequirePerson("snooze an Attention item"); err != nil {
		return AttentionItem{}, err
	}
	if d < MinSnooze || d > MaxSnooze {
		return AttentionItem{}, errs.E(errs.Invalid, "invalid_snooze", "A snooze lasts from 1 minute to 7 days, not %s.", d).In("for")
	}
	now := s.core.now()
	until := now.Add(d)
	var it AttentionItem
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		key = ItemKey{Kind: it.Kind, Session: it.Session, Ref: it.Ref}
		var before activity.State
		for i, id := range it.snoozers {
			if id == actor.UserID {
				before = activity.State{"until": db.FormatTime(it.Snoozes[i].Until)}
			}
		}
		if err := q.PutAttentionSnooze(ctx, db.PutAttentionSnoozeParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
			UserID: actor.UserID, SnoozedAt: db.FormatTime(now), SnoozedUntil: db.FormatTime(until)}); err != nil {
			return err
		}
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		after := activity.State{"session": key.Session, "kind": key.Kind, "ref": key.Ref, "until": db.FormatTime(until)}
		return activity.Record(ctx, q, now, actor.Who(), ActionSnooze, key.target(), before, after)
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("snooze %s: %w", key.target(), err)
	}
	return it, nil
}

// Unsnooze ends the actor's snooze of an item early: it is back in their
// queue. Errors: forbidden (not a person), attention_item_not_found,
// not_snoozed (the actor has no snooze of it running).
func (s *AttentionService) Unsnooze(ctx context.Context, actor auth.Actor, key ItemKey) (AttentionItem, error) {
	if err := actor.RequirePerson("end a snooze"); err != nil {
		return AttentionItem{}, err
	}
	now := s.core.now()
	var it AttentionItem
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		key = ItemKey{Kind: it.Kind, Session: it.Session, Ref: it.Ref}
		i := slices.Index(it.snoozers, actor.UserID)
		if i < 0 {
			return errs.E(errs.Conflict, "not_snoozed", "You have not snoozed this item: it is already in your queue.")
		}
		before := activity.State{"until": db.FormatTime(it.Snoozes[i].Until)}
		n, err := q.EndAttentionSnooze(ctx, db.EndAttentionSnoozeParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
			UserID: actor.UserID, Now: db.FormatTime(now), OpenedAt: db.FormatTime(it.OpenedAt)})
		if err != nil {
			return err
		}
		if n == 0 {
			return errs.E(errs.Conflict, "not_snoozed", "You have not snoozed this item: it is already in your queue.")
		}
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		after := activity.State{"session": key.Session, "kind": key.Kind, "ref": key.Ref}
		return activity.Record(ctx, q, now, actor.Who(), ActionUnsnooze, key.target(), before, after)
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("unsnooze %s: %w", key.target(), err)
	}
	return it, nil
}

// Acknowledge says a lead has seen a blocked task (an ItemTask item): the
// item shows who and when (AcknowledgedBy, AcknowledgedAt) and stays until
// the task moves; a task blocked again is a new item, not acknowledged.
// Errors: forbidden (not a lead or admin), attention_item_not_found (the
// task is not blocked), already_acknowledged (naming who).
func (s *AttentionService) Acknowledge(ctx context.Context, actor auth.Actor, session, task string) (AttentionItem, error) {
	if err := actor.RequireLead("acknowledge a blocked task"); err != nil {
		return AttentionItem{}, err
	}
	key := ItemKey{Kind: ItemTask, Session: session, Ref: task}
	now := s.core.now()
	var it AttentionItem
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		key = ItemKey{Kind: it.Kind, Session: it.Session, Ref: it.Ref}
		if it.AcknowledgedAt != nil {
			return errs.E(errs.Conflict, "already_acknowledged", "%s acknowledged this blocked task at %s.",
				it.AcknowledgedBy, it.AcknowledgedAt.Format(time.RFC3339)).With("acknowledged_by", it.AcknowledgedBy)
		}
		if err := q.PutAttentionAck(ctx, db.PutAttentionAckParams{Kind: key.Kind, SessionID: key.Session, Ref: key.Ref,
			UserID: actor.UserID, AckedAt: db.FormatTime(now)}); err != nil {
			return err
		}
		if it, err = item(ctx, q, key, now); err != nil {
			return err
		}
		after := activity.State{"session": key.Session, "kind": key.Kind, "ref": key.Ref, "acknowledged_at": db.FormatTime(now)}
		return activity.Record(ctx, q, now, actor.Who(), ActionAcknowledge, key.target(), nil, after)
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("acknowledge %s: %w", key.target(), err)
	}
	return it, nil
}

// errItemMissing is the answer for an item that does not wait.
func errItemMissing(key ItemKey) error {
	return errs.E(errs.NotFound, "attention_item_not_found", "Nothing of kind %q with the reference %q waits on session %q: it may have been acted on already.",
		short(key.Kind), short(key.Ref), short(key.Session))
}

// item reads one waiting item, with its marks, in q. Errors:
// attention_item_not_found.
func item(ctx context.Context, q db.Querier, key ItemKey, now time.Time) (AttentionItem, error) {
	f := AttentionFilter{Kind: key.Kind, Session: key.Session, Snoozed: SnoozedInclude}
	if key.Kind == "" || key.Ref == "" || f.Validate() != nil {
		return AttentionItem{}, errItemMissing(key)
	}
	items, err := collect(ctx, q, f, now)
	if err != nil {
		return AttentionItem{}, err
	}
	for _, it := range items {
		if it.Ref == key.Ref {
			return it, nil
		}
	}
	return AttentionItem{}, errItemMissing(key)
}

// withMarks adds to each item the claim, the snoozes running at now and
// the acknowledgement that count for it (made at or after it opened): one
// query for each kind of mark, narrowed to one session when session is
// not "".
func withMarks(ctx context.Context, q db.Querier, items []AttentionItem, session string, now time.Time) error {
	for i := range items {
		items[i].Snoozes = []Snoozed{}
	}
	if len(items) == 0 {
		return nil
	}
	at := map[ItemKey]int{}
	for i, it := range items {
		at[ItemKey{it.Kind, it.Session, it.Ref}] = i
	}
	claims, err := q.ListAttentionClaims(ctx, session)
	if err != nil {
		return fmt.Errorf("attention claims: %w", err)
	}
	for _, c := range claims {
		i, ok := at[ItemKey{c.Kind, c.SessionID, c.Ref}]
		if !ok {
			continue
		}
		row := db.StoredRow("attention_claims", c.Kind+"/"+c.SessionID+"/"+c.Ref)
		t := row.Time("claimed_at", c.ClaimedAt)
		if err := row.Err(); err != nil {
			return err
		}
		if !t.Before(items[i].OpenedAt) {
			items[i].ClaimedBy, items[i].ClaimedAt, items[i].claimer = c.Email, &t, c.UserID
		}
	}
	snoozes, err := q.ListAttentionSnoozes(ctx, db.ListAttentionSnoozesParams{Now: db.FormatTime(now), Session: session})
	if err != nil {
		return fmt.Errorf("attention snoozes: %w", err)
	}
	for _, z := range snoozes { // soonest first
		i, ok := at[ItemKey{z.Kind, z.SessionID, z.Ref}]
		if !ok {
			continue
		}
		row := db.StoredRow("attention_snoozes", fmt.Sprintf("%s/%s/%s/%d", z.Kind, z.SessionID, z.Ref, z.UserID))
		from, until := row.Time("snoozed_at", z.SnoozedAt), row.Time("snoozed_until", z.SnoozedUntil)
		if err := row.Err(); err != nil {
			return err
		}
		if !from.Before(items[i].OpenedAt) {
			items[i].Snoozes = append(items[i].Snoozes, Snoozed{By: z.Email, Until: until})
			items[i].snoozers = append(items[i].snoozers, z.UserID)
		}
	}
	acks, err := q.ListAttentionAcks(ctx, session)
	if err != nil {
		return fmt.Errorf("attention acknowledgements: %w", err)
	}
	for _, a := range acks {
		i, ok := at[ItemKey{a.Kind, a.SessionID, a.Ref}]
		if !ok {
			continue
		}
		row := db.StoredRow("attention_acks", a.Kind+"/"+a.SessionID+"/"+a.Ref)
		t := row.Time("acked_at", a.AckedAt)
		if err := row.Err(); err != nil {
			return err
		}
		if !t.Before(items[i].OpenedAt) {
			items[i].AcknowledgedBy, items[i].AcknowledgedAt = a.Email, &t
		}
	}
	return nil
}

// short is a value as an error message quotes it: at most 60 characters.
func short(v string) string {
	if utf8.RuneCountInString(v) <= 60 {
		return v
	}
	return string([]rune(v)[:60]) + "…"
}

// stateNames are the protocol states' wire names, most severe first.
func stateNames() string {
	names := make([]string, len(protocol.States))
	for i, st := range protocol.States {
		names[i] = st.String()
	}
	return strings.Join(names, ", ")
}
