package governance_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// TestOutcomeSaysWhatBecameOfAnItem: once an item leaves the queue, what
// was done to it, by whom, when and with which answer; while it waits, or
// when it never waited there, an error that says so.
func TestOutcomeSaysWhatBecameOfAnItem(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	outcome := func(kind, session, ref string) (governance.Outcome, error) {
		return w.Gov.Attention.Outcome(ctx, kind, session, ref)
	}

	ref := openGate(t, w, w.agent, w.session, "Schema")
	_, err := outcome(governance.ItemDecision, w.session, ref)
	wantErr(t, err, errs.Conflict, "attention_item_waiting")
	at := w.Clock.Now()
	must(w.Gov.Decisions.Resolve(ctx, w.lead, ref, "Keep it", "Archive instead."))(t)
	w.Clock.Advance(time.Minute)

	risky := w.Kit.Session(w.agent, w.risky)
	must(w.Gov.Plans.Propose(ctx, w.agent, risky, governance.PlanInput{Summary: "read, then change"}))(t)
	must(w.Gov.Plans.Reject(ctx, w.lead, risky, "Too broad."))(t)

	must(w.Gov.Sessions.Pause(ctx, w.lead, w.session, "hold"))(t)
	must(w.Gov.Sessions.Resume(ctx, w.lead, w.session))(t)

	rem := must(w.Gov.Remediations.Request(ctx, w.lead, w.session, governance.RemediationInput{Severity: "required",
		Instruction: "Add tests."}))(t)
	must(w.Gov.Remediations.Close(ctx, w.admin, rem.ID, "Tests added."))(t)
	remRef := strconv.FormatInt(rem.ID, 10)

	for _, tt := range []struct {
		name               string
		kind, session, ref string
		want               governance.Outcome
		wantAt             bool
	}{
		{"a resolved gate", governance.ItemDecision, w.session, ref,
			governance.Outcome{Label: ref, Verb: "resolved", By: w.lead.Email, Answer: "Keep it"}, true},
		{"a gate named without its session", governance.ItemDecision, "", ref,
			governance.Outcome{Label: ref, Verb: "resolved", By: w.lead.Email, Answer: "Keep it"}, true},
		{"a rejected plan", governance.ItemPlan, risky, risky,
			governance.Outcome{Label: "the plan", Verb: "rejected", By: w.lead.Email, Answer: "Too broad."}, true},
		{"a released brake", governance.ItemPaused, w.session, w.session,
			governance.Outcome{Label: "the brake", Verb: "released"}, false},
		{"a closed remediation", governance.ItemRemediation, w.session, remRef,
			governance.Outcome{Label: "the remediation", Verb: "closed", By: w.admin.Email, Answer: "Tests added."}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := must(outcome(tt.kind, tt.session, tt.ref))(t)
			if got.Session == "" || tt.session != "" && got.Session != tt.session {
				t.Errorf("session %q, want %q", got.Session, tt.session)
			}
			if tt.wantAt == got.At.IsZero() {
				t.Errorf("at %v: want a time %t", got.At, tt.wantAt)
			}
			got.Session, got.At, got.Kind, got.Ref = "", time.Time{}, "", ""
			if got != tt.want {
				t.Errorf("outcome %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := must(outcome(governance.ItemDecision, w.session, ref))(t); !got.At.Equal(at) {
		t.Errorf("resolved at %v, want %v", got.At, at)
	}
	for _, tt := range []struct{ name, kind, session, ref string }{
		{"a gate of another session", governance.ItemDecision, risky, ref},
		{"a gate that never was", governance.ItemDecision, w.session, "DEC-999"},
		{"a remediation of another session", governance.ItemRemediation, risky, remRef},
		{"a violation by a ref that is no id", governance.ItemViolation, w.session, "x"},
		{"a kind that does not exist", "nonsense", w.session, ref},
		{"a plan without its session", governance.ItemPlan, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := outcome(tt.kind, tt.session, tt.ref)
			wantErr(t, err, errs.NotFound, "attention_item_not_found")
		})
	}
}
