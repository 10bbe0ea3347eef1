package governance_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

func TestLowers(t *testing.T) {
	hour := governance.GateTTL(time.Hour)
	base := governance.Mission{TwoPerson: true, HighRisk: true, GateTTL: hour}
	with := func(f func(*governance.Mission)) governance.Mission { m := base; f(&m); return m }
	for _, c := range []struct {
		name string
		old  governance.Mission
		m    governance.Mission
		want []string
	}{
		{"nothing changes", base, base, nil},
		{"two people off", base, with(func(m *governance.Mission) { m.TwoPerson = false }), []string{"two people no longer approve"}},
		{"high-risk off", base, with(func(m *governance.Mission) { m.HighRisk = false }), []string{"no longer high-risk: no plan approval before side effects"}},
		{"the gate_ttl lifted", base, with(func(m *governance.Mission) { m.GateTTL = 0 }), []string{"gates no longer expire (gate_ttl was 1h)"}},
		{"the gate_ttl raised", base, with(func(m *governance.Mission) { m.GateTTL = 2 * hour }), []string{"gates wait longer before they expire (gate_ttl 1h → 2h)"}},
		{"the gate_ttl shortened raises it", base, with(func(m *governance.Mission) { m.GateTTL = hour / 2 }), nil},
		{"a gate_ttl set where none was raises it", with(func(m *governance.Mission) { m.GateTTL = 0 }), base, nil},
		{"turning protections on", governance.Mission{}, base, nil},
		{"the title, text, evidence and contract are not protections", base,
			with(func(m *governance.Mission) { m.Title, m.Text, m.Evidence = "x", "y", []string{"tests"} }), nil},
		{"all three at once, in order", base, governance.Mission{}, []string{"two people no longer approve",
			"no longer high-risk: no plan approval before side effects", "gates no longer expire (gate_ttl was 1h)"}},
	} {
		if got := governance.Lowers(c.old, c.m); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// activityOf is the activity record as "actor action target" lines,
// oldest first.
func activityOf(t *testing.T, gov *governance.Services, admin auth.Actor) []string {
	t.Helper()
	page := must(gov.Activity.List(t.Context(), admin, activity.Page{Limit: activity.MaxLimit}))(t)
	var out []string
	for i := len(page.Items) - 1; i >= 0; i-- {
		e := page.Items[i]
		out = append(out, e.Actor+" "+e.Action+" "+e.Target)
	}
	return out
}

// On a mission that does not take two people, a lead cannot lower its
// protections at all; an admin can, at once, and the change is recorded
// before and after.
func TestOnlyAnAdminLowersAOneLeadMissionsProtections(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	ttl := "4h"
	must(w.Gov.Missions.Patch(ctx, w.lead, w.mission, governance.MissionPatch{HighRisk: ptr(true), GateTTL: &ttl}))(t)
	for _, c := range []struct {
		name  string
		patch governance.MissionPatch
	}{
		{"high_risk off", governance.MissionPatch{HighRisk: ptr(false)}},
		{"the gate_ttl lifted", governance.MissionPatch{GateTTL: ptr("")}},
		{"the gate_ttl raised", governance.MissionPatch{GateTTL: ptr("8h")}},
		{"high_risk off beside a new title", governance.MissionPatch{HighRisk: ptr(false), Title: ptr("Renamed")}},
	} {
		t.Run("a lead: "+c.name, func(t *testing.T) {
			refused(t, w.Kit, errs.Forbidden, "lowers_protection", func() error {
				_, err := w.Gov.Missions.Patch(ctx, w.lead, w.mission, c.patch)
				return err
			})
		})
	}
	edit := must(w.Gov.Missions.Patch(ctx, w.lead, w.mission, governance.MissionPatch{GateTTL: ptr("2h")}))(t)
	if edit.Pending != nil || edit.GateTTL.String() != "2h" {
		t.Fatalf("a lead shortening the gate_ttl: %+v, pending %v", edit.Mission, edit.Pending)
	}
	edit = must(w.Gov.Missions.Patch(ctx, w.admin, w.mission, governance.MissionPatch{HighRisk: ptr(false)}))(t)
	if edit.Pending != nil || edit.HighRisk {
		t.Fatalf("an admin turning high_risk off: %+v, pending %v", edit.Mission, edit.Pending)
	}
	page := must(w.Gov.Activity.List(ctx, w.admin, activity.Page{Action: "mission.update"}))(t)
	if len(page.Items) != 3 || page.Items[0].Actor != w.admin.Email ||
		!strings.Contains(string(page.Items[0].Before), `"high_risk":true`) || !strings.Contains(string(page.Items[0].After), `"high_risk":false`) {
		t.Fatalf("the activity record of mission updates: %+v", page.Items)
	}
}

// On a two-person mission a lead's change that lowers a protection waits
// for a second, different lead; so one lead cannot switch the rule off,
// resolve alone and switch it back on.
func TestASecondLeadApprovesLoweringATwoPersonMissionsProtection(t *testing.T) {
	w := newTwoPerson(t, true)
	ctx := w.ctx
	gov := w.kit.Gov
	edit := must(gov.Missions.Patch(ctx, w.alice, w.mission, governance.MissionPatch{TwoPerson: ptr(false)}))(t)
	if edit.Pending == nil || edit.Pending.Status != governance.ChangePending || !edit.TwoPerson ||
		!slices.Equal(edit.Pending.Lowers, []string{"two people no longer approve"}) || edit.Pending.RequestedBy != w.alice.Email {
		t.Fatalf("Alice's change: mission %+v, pending %+v", edit.Mission, edit.Pending)
	}
	if m := must(gov.Missions.Get(ctx, w.mission))(t); !m.TwoPerson {
		t.Fatal("the mission stopped taking two people on one lead's word")
	}
	d := must(gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Legacy", Question: "Drop it?"}))(t)
	if r := must(gov.Decisions.Resolve(ctx, w.alice, d.Ref, "Drop it", "Go.")); r(t).Status != governance.DecisionOpen {
		t.Fatal("Alice resolved alone while her change waited")
	}
	id := edit.Pending.ID
	refused(t, w.kit, errs.Conflict, "same_approver", func() error {
		_, err := gov.Missions.ApproveChange(ctx, w.alice, id, "")
		return err
	})
	refused(t, w.kit, errs.NotFound, "mission_change_not_found", func() error {
		_, err := gov.Missions.ApproveChange(ctx, w.bob, id+100, "")
		return err
	})
	// What another lead changed meanwhile stays.
	must(gov.Missions.Patch(ctx, w.carol, w.mission, governance.MissionPatch{Title: ptr("Billing, renamed")}))(t)
	c := must(gov.Missions.ApproveChange(ctx, w.bob, id, "Agreed at standup."))(t)
	if c.Status != governance.ChangeApplied || c.SettledBy != w.bob.Email || c.SettleNote != "Agreed at standup." || c.SettledAt == nil {
		t.Fatalf("Bob's approval: %+v", c)
	}
	m := must(gov.Missions.Get(ctx, w.mission))(t)
	if m.TwoPerson || m.Title != "Billing, renamed" || !m.HighRisk {
		t.Fatalf("after the approval: %+v", m)
	}
	refused(t, w.kit, errs.Conflict, "change_settled", func() error {
		_, err := gov.Missions.RejectChange(ctx, w.carol, id, "")
		return err
	})
	detail := must(gov.Sessions.Get(ctx, w.carol, w.session))(t)
	last := detail.Timeline[len(detail.Timeline)-1]
	if last.Kind != "mission.updated" || !strings.Contains(last.Detail, "two people: yes → no") || !strings.Contains(last.Detail, "asked for by "+w.alice.Email) {
		t.Fatalf("the session's last line: %+v", last)
	}
	got := activityOf(t, gov, w.creator)
	for _, want := range []string{
		w.alice.Email + " mission.change.request mission two-people change 1",
		w.alice.Email + " decision.approved session " + w.session + " " + d.Ref,
		w.carol.Email + " mission.update mission two-people",
		w.bob.Email + " mission.update mission two-people",
		w.bob.Email + " mission.change.approve mission two-people change 1",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the activity record has no %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// A change asked for by a lead who can no longer approve cannot be
// approved; any lead rejects it, its requester too.
func TestAMissionChangeFromADisabledLeadIsVoid(t *testing.T) {
	w := newTwoPerson(t, false)
	ctx, gov := w.ctx, w.kit.Gov
	ttl := "1h"
	must(gov.Missions.Patch(ctx, w.alice, w.mission, governance.MissionPatch{GateTTL: &ttl}))(t)
	first := must(gov.Missions.Patch(ctx, w.alice, w.mission, governance.MissionPatch{GateTTL: ptr("")}))(t).Pending
	second := must(gov.Missions.Patch(ctx, w.bob, w.mission, governance.MissionPatch{GateTTL: ptr("3h")}))(t).Pending
	if first == nil || second == nil {
		t.Fatal("a lead's lifting or raising of the gate_ttl of a two-person mission did not wait")
	}
	if _, err := w.kit.Auth.SetDisabled(ctx, w.creator, w.alice.UserID, true); err != nil {
		t.Fatal(err)
	}
	pending := must(gov.Missions.PendingChanges(ctx))(t)
	if len(pending) != 2 || pending[0].Void != "disabled" || pending[1].Void != "" {
		t.Fatalf("pending changes: %+v", pending)
	}
	refused(t, w.kit, errs.Conflict, "change_void", func() error {
		_, err := gov.Missions.ApproveChange(ctx, w.bob, first.ID, "")
		return err
	})
	if c := must(gov.Missions.RejectChange(ctx, w.bob, first.ID, "Alice left."))(t); c.Status != governance.ChangeRejected {
		t.Fatalf("Bob's rejection: %+v", c)
	}
	if c := must(gov.Missions.RejectChange(ctx, w.bob, second.ID, "Withdrawn."))(t); c.Status != governance.ChangeRejected {
		t.Fatalf("Bob withdrawing his own: %+v", c)
	}
	if m := must(gov.Missions.Get(ctx, w.mission))(t); m.GateTTL.String() != "1h" {
		t.Fatalf("a rejected change changed the mission: gate_ttl %s", m.GateTTL)
	}
	changes := must(gov.Missions.Changes(ctx, w.mission))(t)
	if len(changes) != 2 || changes[0].ID != second.ID || changes[0].Void != "" {
		t.Fatalf("the mission's changes, newest first: %+v", changes)
	}
	// An admin lowers it at once, two-person mission or not.
	if e := must(gov.Missions.Patch(ctx, w.creator, w.mission, governance.MissionPatch{TwoPerson: ptr(false)}))(t); e.Pending != nil || e.TwoPerson {
		t.Fatalf("an admin's change: %+v, pending %v", e.Mission, e.Pending)
	}
}

func ptr[T any](v T) *T { return &v }
