package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/approval"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

// Lowers says which of a mission's protections going from old to m
// lowers, one sentence each, in a fixed order; none for a change that
// keeps or raises them. The protections: two people to approve, being
// high-risk (a plan approved before anything side-effecting), and a gate
// time to live (gates wait no longer than it on a person: removing it or
// making it longer lowers it).
func Lowers(old, m Mission) []string {
	var out []string
	if old.TwoPerson && !m.TwoPerson {
		out = append(out, "two people no longer approve")
	}
	if old.HighRisk && !m.HighRisk {
		out = append(out, "no longer high-risk: no plan approval before side effects")
	}
	switch {
	case old.GateTTL > 0 && m.GateTTL <= 0:
		out = append(out, fmt.Sprintf("gates no longer expire (gate_ttl was %s)", old.GateTTL))
	case old.GateTTL > 0 && m.GateTTL > old.GateTTL:
		out = append(out, fmt.Sprintf("gates wait longer before they expire (gate_ttl %s → %s)", old.GateTTL, m.GateTTL))
	}
	return out
}

// The statuses of a mission change.
const (
	ChangePending  = "pending"  // waiting for a second lead
	ChangeApplied  = "applied"  // a second lead approved it: the mission has it
	ChangeRejected = "rejected" // a lead rejected it: the mission never had it
)

// MissionChange is a lead's change that lowers a protection of a
// two-person mission, waiting for (or settled by) a second lead.
type MissionChange struct {
	ID      int64  `json:"id"`
	Mission string `json:"mission"`
	Status  string `json:"status"`
	// Summary says what the change changes ("two people: yes → no"), and
	// Lowers which protections it lowers (the reason it waits).
	Summary string       `json:"summary"`
	Lowers  []string     `json:"lowers"`
	Patch   MissionPatch `json:"patch"`
	// Note is the requester's, SettleNote the settler's.
	Note        string    `json:"note,omitempty"`
	RequestedBy string    `json:"requested_by"`
	RequestedAt time.Time `json:"requested_at"`
	// Void, for a pending change, says why it can no longer be approved:
	// its requester was disabled, demoted or deleted since
	// (approval.Disabled, Demoted, Deleted). Only a rejection settles it.
	Void       string     `json:"void,omitempty"`
	SettledBy  string     `json:"settled_by,omitempty"`
	SettledAt  *time.Time `json:"settled_at,omitempty"`
	SettleNote string     `json:"settle_note,omitempty"`
}

// requestChange keeps a lead's change that lowers a protection of a
// two-person mission, to take effect on a second lead's approval, and
// records the request.
func (s *MissionService) requestChange(ctx context.Context, q db.Querier, actor auth.Actor, old db.Mission, cur, m Mission,
	p MissionPatch, lowers []string) (*MissionChange, error) {
	patch, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode the change: %w", err)
	}
	id, err := q.CreateMissionChange(ctx, db.CreateMissionChangeParams{MissionID: old.ID, Patch: string(patch),
		Summary: missionChanges(cur, m), Lowers: encodeList(lowers), RequestedBy: actor.UserID,
		RequestedAt: db.FormatTime(s.core.now())})
	if err != nil {
		return nil, err
	}
	row, err := q.GetMissionChange(ctx, id)
	if err != nil {
		return nil, err
	}
	c, err := missionChangeFrom(row)
	if err != nil {
		return nil, err
	}
	return &c, s.core.did(ctx, q, actor, activity.MissionChangeRequest, changeTarget(c), missionState(cur), missionState(m))
}

// ApproveChange is a second lead's approval of a pending mission change:
// it is applied to the mission as the mission is now (what others changed
// meanwhile stays), told to its sessions and recorded. Errors: forbidden
// (not a lead), mission_change_not_found, change_settled (approved or
// rejected already), same_approver (the lead who asked for it),
// change_void (its requester can no longer approve: reject it).
func (s *MissionService) ApproveChange(ctx context.Context, actor auth.Actor, id int64, note string) (MissionChange, error) {
	return s.settleChange(ctx, actor, id, note, true)
}

// RejectChange settles a pending mission change without applying it; any
// lead may, the one who asked for it included (a withdrawal). Errors:
// forbidden, mission_change_not_found, change_settled.
func (s *MissionService) RejectChange(ctx context.Context, actor auth.Actor, id int64, note string) (MissionChange, error) {
	return s.settleChange(ctx, actor, id, note, false)
}

// MaxChangeNote is the longest note on a mission change, in characters.
const MaxChangeNote = 2000

func (s *MissionService) settleChange(ctx context.Context, actor auth.Actor, id int64, note string, approve bool) (MissionChange, error) {
	verb := "reject"
	if approve {
		verb = "approve"
	}
	if err := actor.RequireLead(verb + " a mission change"); err != nil {
		return MissionChange{}, err
	}
	note = strings.TrimSpace(note)
	if n := len([]rune(note)); n > MaxChangeNote {
		return MissionChange{}, errs.E(errs.Invalid, "note_too_long", "The note is %d characters; at most %d.", n, MaxChangeNote).In("note")
	}
	var out MissionChange
	err := s.core.write(ctx, func(q db.Querier) error {
		row, err := q.GetMissionChange(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return changeNotFound(id)
		} else if err != nil {
			return err
		}
		c, err := missionChangeFrom(row)
		if err != nil {
			return err
		}
		switch {
		case c.Status != ChangePending:
			return errs.E(errs.Conflict, "change_settled", "Mission change %d was %s already, by %s.", id, c.Status, c.SettledBy)
		case approve && row.RequestedBy == actor.UserID:
			return errs.E(errs.Conflict, "same_approver", "You asked for this change: a second, different lead must approve it.")
		case approve && c.Void != "":
			return errs.E(errs.Conflict, "change_void",
				"%s, who asked for this change, %s: the request no longer counts. Reject it, and ask for the change yourself if it is still wanted.",
				c.RequestedBy, VoidSince(c.Void))
		}
		status, action := ChangeRejected, activity.MissionChangeReject
		var before, after activity.State
		if approve {
			status, action = ChangeApplied, activity.MissionChangeApprove
			old, err := q.GetMissionByID(ctx, row.MissionID)
			if err != nil {
				return err
			}
			cur, err := missionFrom(old)
			if err != nil {
				return err
			}
			m := c.Patch.applyTo(cur)
			if _, err := s.update(ctx, q, actor, old, cur, m, "asked for by "+c.RequestedBy); err != nil {
				return err
			}
			before, after = missionState(cur), missionState(m)
		}
		n, err := q.SettleMissionChange(ctx, db.SettleMissionChangeParams{ID: id, Status: status,
			SettledBy: sql.NullInt64{Int64: actor.UserID, Valid: true}, SettledAt: sql.NullString{String: db.FormatTime(s.core.now()), Valid: true},
			SettleNote: note})
		if err != nil {
			return err
		} else if n == 0 {
			return errs.E(errs.Conflict, "change_settled", "Mission change %d was settled meanwhile.", id)
		}
		if row, err = q.GetMissionChange(ctx, id); err != nil {
			return err
		}
		if out, err = missionChangeFrom(row); err != nil {
			return err
		}
		return s.core.did(ctx, q, actor, action, changeTarget(out), before, after)
	})
	if err != nil {
		return MissionChange{}, fmt.Errorf("%s mission change %d: %w", verb, id, err)
	}
	return out, nil
}

// Changes lists a mission's changes, newest first (at most 50). Errors:
// mission_not_found.
func (s *MissionService) Changes(ctx context.Context, slug string) ([]MissionChange, error) {
	m, err := s.core.store.Reader().GetMissionBySlug(ctx, slug)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missionNotFound(slug)
	} else if err != nil {
		return nil, fmt.Errorf("changes of %s: %w", slug, err)
	}
	rows, err := s.core.store.Reader().ListMissionChanges(ctx, db.ListMissionChangesParams{MissionID: m.ID, Lim: 50})
	if err != nil {
		return nil, fmt.Errorf("changes of %s: %w", slug, err)
	}
	return missionChangesFrom(rows)
}

// PendingChanges lists every mission change waiting for a second lead,
// oldest first.
func (s *MissionService) PendingChanges(ctx context.Context) ([]MissionChange, error) {
	rows, err := s.core.store.Reader().ListPendingMissionChanges(ctx)
	if err != nil {
		return nil, fmt.Errorf("pending mission changes: %w", err)
	}
	return missionChangesFrom(rows)
}

// GetChange returns one mission change. Errors: mission_change_not_found.
func (s *MissionService) GetChange(ctx context.Context, id int64) (MissionChange, error) {
	row, err := s.core.store.Reader().GetMissionChange(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return MissionChange{}, changeNotFound(id)
	} else if err != nil {
		return MissionChange{}, fmt.Errorf("mission change %d: %w", id, err)
	}
	return missionChangeFrom(row)
}

func missionChangesFrom(rows []db.MissionChangeRow) ([]MissionChange, error) {
	out := make([]MissionChange, 0, len(rows))
	for _, r := range rows {
		c, err := missionChangeFrom(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// missionChangeFrom converts a stored change; an error names the row.
func missionChangeFrom(r db.MissionChangeRow) (MissionChange, error) {
	c := db.StoredRow("mission_changes", r.ID)
	out := MissionChange{ID: r.ID, Mission: r.MissionSlug, Status: r.Status, Summary: r.Summary,
		Lowers: c.List("lowers", r.Lowers), Note: r.Note, RequestedBy: r.RequestedEmail,
		RequestedAt: c.Time("requested_at", r.RequestedAt), SettledBy: r.SettledEmail, SettleNote: r.SettleNote}
	c.JSON("patch", r.Patch, &out.Patch)
	if r.SettledAt.Valid {
		t := c.Time("settled_at", r.SettledAt.String)
		out.SettledAt = &t
	}
	if r.Status == ChangePending {
		out.Void = approval.VoidReason(r.RequesterExists, r.RequesterRole, r.RequesterDisabled)
	}
	if err := c.Err(); err != nil {
		return MissionChange{}, err
	}
	return out, nil
}

// VoidSince says, in a sentence, why a person can no longer approve
// (an approval.VoidReason): "was disabled since".
func VoidSince(reason string) string {
	switch reason {
	case approval.Disabled:
		return "was disabled since"
	case approval.Demoted:
		return "is no longer a lead"
	}
	return "is no longer a user"
}

func changeNotFound(id int64) error {
	return errs.E(errs.NotFound, "mission_change_not_found", "No mission change has the id %d.", id)
}

// missionTarget names a mission in the activity record.
func missionTarget(slug string) string { return "mission " + slug }

// changeTarget names a mission change in the activity record.
func changeTarget(c MissionChange) string {
	return "mission " + c.Mission + " change " + strconv.FormatInt(c.ID, 10)
}

// missionState is a mission as the activity record keeps it.
func missionState(m Mission) activity.State {
	return activity.State{"title": m.Title, "text": m.Text, "high_risk": m.HighRisk, "two_person": m.TwoPerson,
		"evidence": m.Evidence, "contract": m.Contract, "gate_ttl": m.GateTTL.String()}
}
