package governance_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

func proposal(summary string) governance.PlanInput {
	return governance.PlanInput{Summary: summary, Plan: plan.Plan{InitialSteps: []plan.Step{{ID: "read", Tool: "read_file"}}}}
}

// briefIs fails unless the agent's brief has the next action and reason codes.
func briefIs(t *testing.T, w *world, agent auth.Actor, session string, next protocol.State, wantCodes string) governance.Brief {
	t.Helper()
	b := must(w.Gov.Briefs.Brief(t.Context(), agent, governance.BriefRequest{Session: session}))(t)
	if b.NextAction != next || codes(b) != wantCodes {
		t.Fatalf("brief is %s (%s): %q, want %s (%s)", b.NextAction, codes(b), b.Reason, next, wantCodes)
	}
	return b
}

// planStatuses reads every plan of the session, oldest first, from the
// database.
func planStatuses(t *testing.T, w *world, session string) []string {
	t.Helper()
	rows, err := w.SQL().QueryContext(t.Context(), `SELECT status FROM plans WHERE session_id = ? ORDER BY id`, session)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestPlans(t *testing.T) {
	w := newWorld(t)

	t.Run("a plan on an ordinary mission is approved at once and nothing waits", func(t *testing.T) {
		p := must(w.Gov.Plans.Propose(t.Context(), w.agent, w.session, proposal("Read, then refactor.")))(t)
		if p.Status != governance.PlanApproved || p.DecidedAt == nil || p.Summary != "Read, then refactor." ||
			len(p.InitialSteps) != 1 || p.InitialSteps[0].ID != "read" {
			t.Fatalf("plan is %+v", p)
		}
		briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
		refused(t, w.Kit, errs.Conflict, "no_plan_proposed", func() error {
			_, err := w.Gov.Plans.Approve(t.Context(), w.lead, w.session, "")
			return err
		})
	})

	t.Run("a high-risk session is blocked until its plan is proposed and approved", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		b := briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		if !strings.Contains(b.Reason, "Propose one") || !slices.Equal(b.BlockedScope, []string{protocol.ScopeAnyCodeChange}) ||
			!slices.Equal(b.AllowedScope, []string{protocol.ScopeReadRepository, protocol.ScopeRevisePlan}) {
			t.Fatalf("brief with no plan is %+v", b)
		}
		p := must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Migrate in two steps.")))(t)
		if p.Status != governance.PlanProposed || p.DecidedAt != nil {
			t.Fatalf("plan is %+v, want proposed", p)
		}
		b = briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		if !strings.Contains(b.Reason, "waiting for a lead's approval") {
			t.Fatalf("brief with a proposed plan says %q", b.Reason)
		}
		w.Clock.Advance(time.Minute)
		a := must(w.Gov.Plans.Approve(t.Context(), w.lead, s, " Looks right. "))(t)
		if a.ID != p.ID || a.Status != governance.PlanApproved || a.Note != "Looks right." || a.DecidedAt == nil ||
			!a.DecidedAt.Equal(w.Clock.Now()) {
			t.Fatalf("approved plan is %+v", a)
		}
		b = briefIs(t, w, w.agent, s, protocol.Continue, "|")
		ref := fmt.Sprintf("PLAN-%d", p.ID)
		if len(b.Resolutions) != 1 || b.Resolutions[0] != (governance.Resolution{Ref: ref, Resolution: governance.PlanApproved,
			Instruction: "Looks right.", ResolvedAt: w.Clock.Now(), ResolvedBy: w.lead.Email}) {
			t.Fatalf("the brief after approval delivers %+v, want the lead's answer %s", b.Resolutions, ref)
		}
		if b = briefIs(t, w, w.agent, s, protocol.Continue, "|"); len(b.Resolutions) != 0 {
			t.Fatalf("the answer was delivered again: %+v", b.Resolutions)
		}
		refused(t, w.Kit, errs.Conflict, "no_plan_proposed", func() error {
			_, err := w.Gov.Plans.Approve(t.Context(), w.lead, s, "again")
			return err
		})
		want := []string{agentLabel(w.agent) + " session.created", agentLabel(w.agent) + " plan.proposed",
			personLabel(w.lead) + " plan.approved", agentLabel(w.agent) + " plan.answer.delivered " + ref}
		if got := timeline(t, w, s); !slices.Equal(got, want) {
			t.Fatalf("timeline is %q, want %q", got, want)
		}
	})

	t.Run("a rejected plan blocks with the lead's note quoted, and cannot be decided again", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Do it all at once.")))(t)
		r := must(w.Gov.Plans.Reject(t.Context(), w.lead, s, "Split the migration first"))(t)
		if r.Status != governance.PlanRejected || r.Note != "Split the migration first" {
			t.Fatalf("rejected plan is %+v", r)
		}
		b := briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		if !strings.Contains(b.Reason, `"Split the migration first"`) {
			t.Fatalf("brief does not quote the note: %q", b.Reason)
		}
		for _, decide := range []func() error{
			func() error { _, err := w.Gov.Plans.Approve(t.Context(), w.lead, s, ""); return err },
			func() error { _, err := w.Gov.Plans.Reject(t.Context(), w.lead, s, "again"); return err },
		} {
			refused(t, w.Kit, errs.Conflict, "no_plan_proposed", decide)
		}
		d := must(w.Gov.Sessions.Get(t.Context(), w.viewer, s))(t)
		if d.Plan == nil || d.Plan.Status != governance.PlanRejected || d.Plan.Note != "Split the migration first" {
			t.Fatalf("Sessions.Get shows plan %+v", d.Plan)
		}
	})

	t.Run("a revised plan supersedes the approved one and needs approval again", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("First plan.")))(t)
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, ""))(t)
		briefIs(t, w, w.agent, s, protocol.Continue, "|")
		revised := must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Revised plan.")))(t)
		if revised.Status != governance.PlanProposed {
			t.Fatalf("revised plan is %+v", revised)
		}
		briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		if got := planStatuses(t, w, s); !slices.Equal(got, []string{"superseded", "proposed"}) {
			t.Fatalf("plans are %q, want superseded then proposed", got)
		}
		d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
		if d.Plan == nil || d.Plan.ID != revised.ID || d.Plan.Summary != "Revised plan." {
			t.Fatalf("Sessions.Get shows plan %+v, want the revised one", d.Plan)
		}
		must(w.Gov.Plans.Approve(t.Context(), w.admin, s, ""))(t)
		briefIs(t, w, w.agent, s, protocol.Continue, "|")
	})

	t.Run("a plan revised after a rejection replaces it", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("One.")))(t)
		must(w.Gov.Plans.Reject(t.Context(), w.lead, s, "No."))(t)
		must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Two.")))(t)
		// A rejected plan stays rejected: only proposed or approved ones
		// are superseded.
		if got := planStatuses(t, w, s); !slices.Equal(got, []string{"rejected", "proposed"}) {
			t.Fatalf("plans are %q", got)
		}
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, ""))(t)
		briefIs(t, w, w.agent, s, protocol.Continue, "|")
	})
}

func TestPlanRefuses(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.risky)
	bare := w.Session(w.agent, w.risky)
	must(w.Gov.Plans.Propose(t.Context(), w.agent, s, proposal("Waiting.")))(t)
	no := false
	badPlan := governance.PlanInput{Summary: "Bad.", Plan: plan.Plan{StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu",
		Options: map[string]plan.Option{"1": {Label: "Yes", Steps: []plan.Step{{ID: "x", SideEffecting: &no}}}}}}}}
	propose := func(a auth.Actor, session string, in governance.PlanInput) func() error {
		return func() error { _, err := w.Gov.Plans.Propose(t.Context(), a, session, in); return err }
	}
	approve := func(a auth.Actor, session string) func() error {
		return func() error { _, err := w.Gov.Plans.Approve(t.Context(), a, session, ""); return err }
	}
	reject := func(a auth.Actor, session string) func() error {
		return func() error { _, err := w.Gov.Plans.Reject(t.Context(), a, session, "no"); return err }
	}
	tests := []struct {
		name string
		call func() error
		kind errs.Kind
		code string
	}{
		{"a lead cannot propose a plan", propose(w.lead, s, proposal("x")), errs.Forbidden, "forbidden"},
		{"another agent cannot propose a plan on this session", propose(w.other, s, proposal("x")), errs.Forbidden, "forbidden"},
		{"a plan on an unknown session is not found", propose(w.agent, "ses_nosuchsession", proposal("x")), errs.NotFound, "session_not_found"},
		{"a plan needs a summary", propose(w.agent, s, proposal(" ")), errs.Invalid, "summary_required"},
		{"a plan whose stopping point has no title is invalid", propose(w.agent, s, badPlan), errs.Invalid, "invalid_plan"},
		{"the agent cannot approve its own plan", approve(w.agent, s), errs.Forbidden, "forbidden"},
		{"a viewer cannot approve a plan", approve(w.viewer, s), errs.Forbidden, "forbidden"},
		{"a viewer cannot reject a plan", reject(w.viewer, s), errs.Forbidden, "forbidden"},
		{"an agent cannot reject a plan", reject(w.agent, s), errs.Forbidden, "forbidden"},
		{"approving a session that has no plan is a conflict", approve(w.lead, bare), errs.Conflict, "no_plan_proposed"},
		{"rejecting a session that has no plan is a conflict", reject(w.lead, bare), errs.Conflict, "no_plan_proposed"},
		{"approving on an unknown session is not found", approve(w.lead, "ses_nosuchsession"), errs.NotFound, "session_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, w.Kit, tt.kind, tt.code, tt.call) })
	}
	t.Run("the plan is still waiting after the refusals", func(t *testing.T) {
		briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, ""))(t)
		briefIs(t, w, w.agent, s, protocol.Continue, "|")
	})
}
