package governance_test

import (
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

func TestGetSessionAccess(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name    string
		actor   auth.Actor
		session string
		kind    errs.Kind // Internal means no error
		code    string
	}{
		{"the session's own agent sees it", w.agent, w.session, errs.Internal, ""},
		{"a lead sees it", w.lead, w.session, errs.Internal, ""},
		{"a viewer sees it", w.viewer, w.session, errs.Internal, ""},
		{"an admin sees it", w.admin, w.session, errs.Internal, ""},
		{"another agent's key does not see it", w.other, w.session, errs.Forbidden, "forbidden"},
		{"nobody at all does not see it", auth.Actor{}, w.session, errs.Forbidden, "forbidden"},
		{"an unknown session is not found", w.lead, "ses_nosuchsession", errs.NotFound, "session_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.code == "" {
				d := must(w.Gov.Sessions.Get(t.Context(), tt.actor, tt.session))(t)
				if d.ID != tt.session || d.Mission != w.mission || d.Brief.Session != tt.session ||
					d.Decisions == nil || d.Remediations == nil || len(d.Timeline) != 1 {
					t.Fatalf("session detail is %+v", d)
				}
				return
			}
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Sessions.Get(t.Context(), tt.actor, tt.session)
				return err
			})
		})
	}
}

// storedDeliveredAt reads a decision's delivered_at straight from the
// database.
func storedDeliveredAt(t *testing.T, w *world, ref string) sql.NullString {
	t.Helper()
	var v sql.NullString
	if err := w.SQL().QueryRowContext(t.Context(), `SELECT delivered_at FROM decisions WHERE ref = ?`, ref).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDecisionLifecycleOnTheSessionPage(t *testing.T) {
	w := newWorld(t)
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop the legacy billing table?")))(t)

	status := func(t *testing.T, viewer auth.Actor) governance.SessionDetail {
		t.Helper()
		sd := must(w.Gov.Sessions.Get(t.Context(), viewer, w.session))(t)
		if len(sd.Decisions) != 1 || sd.Decisions[0].Ref != d.Ref {
			t.Fatalf("Sessions.Get shows decisions %+v", sd.Decisions)
		}
		return sd
	}

	t.Run("an open gate shows as open and the preview is DECISION_REQUIRED", func(t *testing.T) {
		sd := status(t, w.lead)
		if sd.Decisions[0].Status != governance.DecisionOpen || sd.Brief.NextAction != protocol.DecisionRequired ||
			len(sd.Brief.Decisions) != 1 || len(sd.Brief.Resolutions) != 0 {
			t.Fatalf("session shows %s, preview %s with %d resolutions", sd.Decisions[0].Status, sd.Brief.NextAction, len(sd.Brief.Resolutions))
		}
	})

	w.Clock.Advance(time.Minute)
	resolvedAt := w.Clock.Now()
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Keep it.", "Leave db/migrations alone."))(t)

	t.Run("a resolved gate is decided, not yet delivered, and the preview shows the pending resolution", func(t *testing.T) {
		for _, viewer := range []auth.Actor{w.lead, w.viewer, w.agent, w.lead} {
			w.Clock.Advance(time.Minute)
			sd := status(t, viewer)
			got := sd.Decisions[0]
			if got.Status != governance.DecisionResolved || got.DeliveredAt != nil || got.ResolvedBy != w.lead.Email {
				t.Fatalf("%s sees %+v, want resolved and undelivered", viewer.Label(), got)
			}
			want := []governance.Resolution{{Ref: d.Ref, Resolution: "Keep it.", Instruction: "Leave db/migrations alone.",
				ResolvedAt: resolvedAt, ResolvedBy: w.lead.Email}}
			if !slices.EqualFunc(sd.Brief.Resolutions, want, sameResolution) || sd.Brief.NextAction != protocol.Continue {
				t.Fatalf("%s's preview has resolutions %+v and says %s, want %+v and CONTINUE", viewer.Label(), sd.Brief.Resolutions, sd.Brief.NextAction, want)
			}
		}
		if v := storedDeliveredAt(t, w, d.Ref); v.Valid {
			t.Fatalf("the preview stamped delivered_at = %s", v.String)
		}
		if n := countLines(timeline(t, w, w.session), agentLabel(w.agent)+" resolution.delivered "+d.Ref); n != 0 {
			t.Fatalf("the preview recorded %d deliveries", n)
		}
	})

	w.Clock.Advance(time.Minute)
	deliveredAt := w.Clock.Now()
	t.Run("the agent's next real brief still delivers it, with the instruction", func(t *testing.T) {
		b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
		want := []governance.Resolution{{Ref: d.Ref, Resolution: "Keep it.", Instruction: "Leave db/migrations alone.",
			ResolvedAt: resolvedAt, ResolvedBy: w.lead.Email}}
		if !slices.EqualFunc(b.Resolutions, want, sameResolution) || b.NextAction != protocol.Continue || len(b.Decisions) != 0 {
			t.Fatalf("brief delivers %+v and says %s, want %+v", b.Resolutions, b.NextAction, want)
		}
	})

	t.Run("a delivered gate shows as delivered at the brief's time", func(t *testing.T) {
		sd := status(t, w.viewer)
		got := sd.Decisions[0]
		if got.Status != governance.DecisionDelivered || got.DeliveredAt == nil || !got.DeliveredAt.Equal(deliveredAt) {
			t.Fatalf("session shows %+v, want delivered at %s", got, deliveredAt)
		}
		if len(sd.Brief.Resolutions) != 0 {
			t.Fatalf("the preview still shows %+v", sd.Brief.Resolutions)
		}
	})

	t.Run("later briefs within the delivery lease do not deliver it again", func(t *testing.T) {
		for range 3 {
			w.Clock.Advance(governance.DefaultDeliveryLease / 4)
			if b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t); len(b.Resolutions) != 0 {
				t.Fatalf("a later brief delivers %+v again", b.Resolutions)
			}
		}
		if v := storedDeliveredAt(t, w, d.Ref); !v.Valid || v.String != db.FormatTime(deliveredAt) {
			t.Fatalf("stored delivered_at is %+v, want the first brief's time", v)
		}
	})
}

func sameResolution(a, b governance.Resolution) bool {
	return a.Ref == b.Ref && a.Resolution == b.Resolution && a.Instruction == b.Instruction &&
		a.ResolvedAt.Equal(b.ResolvedAt) && a.ResolvedBy == b.ResolvedBy
}

func TestTimelineRecordsWhoDidWhat(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.risky)
	ctx := t.Context()
	must(w.Gov.Plans.Propose(ctx, w.agent, s, proposal("Plan.")))(t)
	must(w.Gov.Plans.Approve(ctx, w.lead, s, "ok"))(t)
	d := must(w.Gov.Decisions.Open(ctx, w.agent, s, gate("Go?")))(t)
	must(w.Gov.Sessions.Pause(ctx, w.lead, s, "Wait for Ana"))(t)
	must(w.Gov.Decisions.Resolve(ctx, w.admin, d.Ref, "Yes.", "Go ahead."))(t)
	m := must(w.Gov.Remediations.Request(ctx, w.lead, s, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy."}))(t)
	must(w.Gov.Sessions.Resume(ctx, w.admin, s))(t)
	must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: s}))(t)
	must(w.Gov.Remediations.Close(ctx, w.lead, m.ID, ""))(t)
	must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: s}))(t) // delivers nothing: no line

	agent, lead, admin := agentLabel(w.agent), personLabel(w.lead), personLabel(w.admin)
	rem := " " + strconv.FormatInt(m.ID, 10)
	want := []string{
		agent + " session.created",
		agent + " plan.proposed",
		lead + " plan.approved",
		agent + " decision.opened " + d.Ref,
		lead + " session.paused",
		admin + " decision.resolved " + d.Ref,
		lead + " remediation.requested" + rem,
		admin + " session.resumed",
		agent + " resolution.delivered " + d.Ref,
		agent + " plan.answer.delivered PLAN-1",
		agent + " remediation.delivered" + rem,
		lead + " remediation.closed" + rem,
	}
	for _, viewer := range []auth.Actor{w.viewer, w.agent} {
		sd := must(w.Gov.Sessions.Get(ctx, viewer, s))(t)
		got := make([]string, len(sd.Timeline))
		for i, e := range sd.Timeline {
			got[i] = e.Actor + " " + e.Kind
			if e.Ref != "" {
				got[i] += " " + e.Ref
			}
			if !e.At.Equal(w.Clock.Now()) {
				t.Fatalf("line %d is at %s, want %s", i, e.At, w.Clock.Now())
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s sees the timeline\n%q\nwant\n%q", viewer.Label(), got, want)
		}
		pause := sd.Timeline[4]
		if pause.Detail != "Wait for Ana" {
			t.Fatalf("the pause line's detail is %q", pause.Detail)
		}
		if del := sd.Timeline[8]; del.Detail != "Go ahead." {
			t.Fatalf("the delivery line's detail is %q, want the instruction", del.Detail)
		}
	}
}
