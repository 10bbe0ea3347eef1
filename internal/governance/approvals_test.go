package governance_test

import (
	"context"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
)

// twoPerson is a world with a two-person mission: three leads, an admin
// who created the agent's key, and a session of that agent.
type twoPerson struct {
	kit                 *testkit.Kit
	ctx                 context.Context
	alice, bob, carol   auth.Actor
	creator, agent      auth.Actor
	mission, session    string
	oneLeadMission      string
	oneLeadSession      string
	creatorsOwnAgentKey auth.Actor
}

func newTwoPerson(t *testing.T, highRisk bool) *twoPerson {
	t.Helper()
	k := testkit.New(t)
	w := &twoPerson{kit: k, ctx: context.Background()}
	w.alice = person(t, k, auth.Lead)
	w.bob = person(t, k, auth.Lead)
	w.carol = person(t, k, auth.Lead)
	w.creator = person(t, k, auth.Admin)
	w.agent, _ = k.AgentBy(w.creator)
	w.mission = "two-people"
	if _, err := k.Gov.Missions.Create(w.ctx, w.alice, governance.MissionInput{Slug: w.mission, Title: "Billing",
		HighRisk: highRisk, TwoPerson: true}); err != nil {
		t.Fatal(err)
	}
	w.session = k.Session(w.agent, w.mission)
	w.oneLeadMission = k.Mission(w.alice, highRisk)
	w.oneLeadSession = k.Session(w.agent, w.oneLeadMission)
	return w
}

func TestTwoPeopleResolveAGate(t *testing.T) {
	w := newTwoPerson(t, false)
	d, err := w.kit.Gov.Decisions.Open(w.ctx, w.agent, w.session, governance.DecisionInput{Title: "Legacy", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "Drop it", "Write a reversible migration.")
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != governance.DecisionOpen || len(first.Approvals) != 1 || first.Approvals[0].By != w.alice.Email ||
		first.Approvals[0].Resolution != "Drop it" || first.Approvals[0].Instruction != "Write a reversible migration." {
		t.Fatalf("after the first lead: %+v", first)
	}
	// Everyone sees "1 of 2": in the Attention view and on the session.
	items := must(w.kit.Gov.Attention.List(w.ctx))(t)
	if len(items) != 1 || len(items[0].Approvals) != 1 || items[0].Approvals[0].By != w.alice.Email {
		t.Fatalf("attention = %+v", items)
	}
	detail := must(w.kit.Gov.Sessions.Get(w.ctx, w.carol, w.session))(t)
	if len(detail.Decisions) != 1 || len(detail.Decisions[0].Approvals) != 1 {
		t.Fatalf("session decisions = %+v", detail.Decisions)
	}
	// The gate still blocks: 1 of 2 delivers nothing.
	b := must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)
	if b.NextAction != protocol.DecisionRequired || len(b.Resolutions) != 0 {
		t.Fatalf("brief after 1 of 2 = %s, %d resolutions", b.NextAction, len(b.Resolutions))
	}
	// The same lead twice, and the key's creator, are refused and write nothing.
	refused(t, w.kit, errs.Conflict, "same_approver", func() error {
		_, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "Drop it", "Write a reversible migration.")
		return err
	})
	refused(t, w.kit, errs.Conflict, "same_approver", func() error {
		_, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "Keep it", "Leave the table.")
		return err
	})
	refused(t, w.kit, errs.Forbidden, "key_creator", func() error {
		_, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.creator, d.Ref, "Drop it", "Write a reversible migration.")
		return err
	})
	// A second lead who approves something else starts the count again.
	other, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.bob, d.Ref, "Keep it", "Leave the table.")
	if err != nil {
		t.Fatal(err)
	}
	if other.Status != governance.DecisionOpen || len(other.Approvals) != 1 || other.Approvals[0].By != w.bob.Email {
		t.Fatalf("after a different resolution: %+v", other)
	}
	// Alice now approves Bob's resolution: it takes effect, resolved by her.
	done, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "Keep it", "Leave the table.")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != governance.DecisionResolved || done.Resolution != "Keep it" || len(done.Approvals) != 0 {
		t.Fatalf("after the second lead: %+v", done)
	}
	b = must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)
	if len(b.Resolutions) != 1 || b.Resolutions[0].Instruction != "Leave the table." {
		t.Fatalf("resolutions = %+v", b.Resolutions)
	}
	lines := timeline(t, &world{Kit: w.kit, lead: w.carol}, w.session)
	if countLines(lines, personLabel(w.alice)+" decision.approved "+d.Ref) != 1 || countLines(lines, personLabel(w.bob)+" decision.approved "+d.Ref) != 1 ||
		countLines(lines, personLabel(w.alice)+" decision.resolved "+d.Ref) != 1 {
		t.Fatalf("timeline: %q", lines)
	}
}

func TestTwoPeopleConfirmAPlan(t *testing.T) {
	w := newTwoPerson(t, true)
	if _, err := w.kit.Gov.Plans.Propose(w.ctx, w.agent, w.session, governance.PlanInput{Summary: "Split billing"}); err != nil {
		t.Fatal(err)
	}
	p, err := w.kit.Gov.Plans.Approve(w.ctx, w.alice, w.session, "Looks right.")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != governance.PlanProposed || len(p.Approvals) != 1 || p.Approvals[0].Note != "Looks right." {
		t.Fatalf("after the first lead: %+v", p)
	}
	if b := must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t); b.NextAction != protocol.Blocked {
		t.Fatalf("brief after 1 of 2 = %s, want BLOCKED", b.NextAction)
	}
	if detail := must(w.kit.Gov.Sessions.Get(w.ctx, w.carol, w.session))(t); detail.Plan == nil || len(detail.Plan.Approvals) != 1 {
		t.Fatalf("session plan = %+v", detail.Plan)
	}
	if items := must(w.kit.Gov.Attention.List(w.ctx))(t); len(items) != 1 || len(items[0].Approvals) != 1 {
		t.Fatalf("attention = %+v", items)
	}
	refused(t, w.kit, errs.Conflict, "same_approver", func() error {
		_, err := w.kit.Gov.Plans.Approve(w.ctx, w.alice, w.session, "")
		return err
	})
	refused(t, w.kit, errs.Forbidden, "key_creator", func() error {
		_, err := w.kit.Gov.Plans.Approve(w.ctx, w.creator, w.session, "")
		return err
	})
	if p, err = w.kit.Gov.Plans.Approve(w.ctx, w.bob, w.session, ""); err != nil || p.Status != governance.PlanApproved {
		t.Fatalf("after the second lead: %+v (%v)", p, err)
	}
	if b := must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t); b.NextAction != protocol.Continue {
		t.Fatalf("brief after 2 of 2 = %s, want CONTINUE", b.NextAction)
	}

	// Saying no takes one lead, and drops a waiting confirmation.
	s2 := w.kit.Session(w.agent, w.mission)
	if _, err := w.kit.Gov.Plans.Propose(w.ctx, w.agent, s2, governance.PlanInput{Summary: "Again"}); err != nil {
		t.Fatal(err)
	}
	must(w.kit.Gov.Plans.Approve(w.ctx, w.alice, s2, ""))(t)
	if p, err := w.kit.Gov.Plans.Reject(w.ctx, w.carol, s2, "Not now."); err != nil || p.Status != governance.PlanRejected {
		t.Fatalf("reject: %+v (%v)", p, err)
	}
	if a := must(w.kit.Gov.Attention.List(w.ctx))(t); len(a) != 0 {
		t.Fatalf("attention after the reject: %+v", a)
	}
}

func TestTwoPeopleClearACriticalViolation(t *testing.T) {
	w := newTwoPerson(t, false)
	res, err := w.kit.Gov.Changes.Report(w.ctx, w.agent, w.session, change.Change{Files: []change.File{{Path: "deploy.sh", Content: awsSecret}}})
	if err != nil || len(res.Violations) != 1 {
		t.Fatalf("report: %+v (%v)", res, err)
	}
	id := res.Violations[0].ID
	v, err := w.kit.Gov.Changes.ClearViolation(w.ctx, w.alice, id, "false_positive", "A test fixture.")
	if err != nil || len(v.Approvals) != 1 || v.Approvals[0].ClearKind != "false_positive" {
		t.Fatalf("first clear: %+v (%v)", v, err)
	}
	if b := must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t); b.NextAction != protocol.HardStop {
		t.Fatalf("brief after 1 of 2 = %s, want HARD_STOP", b.NextAction)
	}
	if detail := must(w.kit.Gov.Sessions.Get(w.ctx, w.carol, w.session))(t); len(detail.Violations) != 1 || len(detail.Violations[0].Approvals) != 1 {
		t.Fatalf("session violations = %+v", detail.Violations)
	}
	refused(t, w.kit, errs.Conflict, "same_approver", func() error {
		_, err := w.kit.Gov.Changes.ClearViolation(w.ctx, w.alice, id, "false_positive", "")
		return err
	})
	if _, err := w.kit.Gov.Changes.ClearViolation(w.ctx, w.bob, id, "false_positive", "Agreed."); err != nil {
		t.Fatal(err)
	}
	if b := must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t); b.NextAction == protocol.HardStop {
		t.Fatal("still HARD_STOP after two leads cleared it")
	}
}

// Without two_person one lead suffices, but never the key's creator.
func TestTheKeyCreatorNeverApprovesAlone(t *testing.T) {
	w := newTwoPerson(t, true)
	d, err := w.kit.Gov.Decisions.Open(w.ctx, w.agent, w.oneLeadSession, governance.DecisionInput{Title: "T", Question: "Q?"})
	if err != nil {
		t.Fatal(err)
	}
	refused(t, w.kit, errs.Forbidden, "key_creator", func() error {
		_, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.creator, d.Ref, "R", "I")
		return err
	})
	if done, err := w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "R", "I"); err != nil || done.Status != governance.DecisionResolved {
		t.Fatalf("one lead on a one-lead mission: %+v (%v)", done, err)
	}
	if _, err := w.kit.Gov.Plans.Propose(w.ctx, w.agent, w.oneLeadSession, governance.PlanInput{Summary: "P"}); err != nil {
		t.Fatal(err)
	}
	refused(t, w.kit, errs.Forbidden, "key_creator", func() error {
		_, err := w.kit.Gov.Plans.Approve(w.ctx, w.creator, w.oneLeadSession, "")
		return err
	})
	// Saying no is not approving: the creator may reject.
	if _, err := w.kit.Gov.Plans.Reject(w.ctx, w.creator, w.oneLeadSession, "Start over."); err != nil {
		t.Fatal(err)
	}
}

// An approval counts only while its person can approve: a "1 of 2" from a
// lead disabled or demoted since counts for nothing, the item says so, and
// the next lead's approval is the first of two again.
func TestApprovalsFromPeopleWhoCanNoLongerApproveAreVoid(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(w *twoPerson) error
		void   string
	}{
		{"disabled", func(w *twoPerson) error {
			_, err := w.kit.Auth.SetDisabled(w.ctx, w.creator, w.alice.UserID, true)
			return err
		}, "disabled"},
		{"demoted", func(w *twoPerson) error {
			_, err := w.kit.Auth.SetRole(w.ctx, w.creator, w.alice.UserID, auth.Viewer)
			return err
		}, "demoted"},
	} {
		t.Run("a lead "+c.name+" since", func(t *testing.T) {
			w := newTwoPerson(t, false)
			d, err := w.kit.Gov.Decisions.Open(w.ctx, w.agent, w.session, governance.DecisionInput{Title: "Legacy", Question: "Drop it?"})
			if err != nil {
				t.Fatal(err)
			}
			must(w.kit.Gov.Decisions.Resolve(w.ctx, w.alice, d.Ref, "Drop it", "Write a reversible migration."))(t)
			if err := c.change(w); err != nil {
				t.Fatal(err)
			}
			items := must(w.kit.Gov.Attention.List(w.ctx))(t)
			if len(items) != 1 || len(items[0].Approvals) != 0 || len(items[0].VoidApprovals) != 1 ||
				items[0].VoidApprovals[0].By != w.alice.Email || items[0].VoidApprovals[0].Void != c.void {
				t.Fatalf("the item after Alice was %s: approvals %+v, void %+v", c.name, items[0].Approvals, items[0].VoidApprovals)
			}
			detail := must(w.kit.Gov.Sessions.Get(w.ctx, w.carol, w.session))(t)
			if len(detail.Decisions[0].Approvals) != 0 || len(detail.Decisions[0].VoidApprovals) != 1 {
				t.Fatalf("the session's gate: %+v", detail.Decisions[0])
			}
			second := must(w.kit.Gov.Decisions.Resolve(w.ctx, w.bob, d.Ref, "Drop it", "Write a reversible migration."))(t)
			if second.Status != governance.DecisionOpen || len(second.Approvals) != 1 || second.Approvals[0].By != w.bob.Email {
				t.Fatalf("Bob's approval beside a void one took effect or counted two: %+v", second)
			}
			third := must(w.kit.Gov.Decisions.Resolve(w.ctx, w.carol, d.Ref, "Drop it", "Write a reversible migration."))(t)
			if third.Status != governance.DecisionResolved {
				t.Fatalf("two leads who can approve: %+v", third)
			}
			if items := must(w.kit.Gov.Attention.List(w.ctx))(t); len(items) != 0 {
				t.Fatalf("the resolved gate is still listed: %+v", items)
			}
		})
	}
}
