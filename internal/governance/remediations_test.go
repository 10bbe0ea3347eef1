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
	"github.com/madebook/madebook/internal/protocol"
)

func TestRemediationStates(t *testing.T) {
	tests := []struct {
		name      string
		severity  string
		next      protocol.State
		wantCodes string
		wantText  string
		wantAllow []string
	}{
		{"a required remediation makes the brief REMEDIATE, scoped to its files", governance.SeverityRequired,
			protocol.Remediate, "remediation_required |", "Fix this, then report again: Re-read billing.Charge.", []string{"billing/charge.go"}},
		{"an advisory remediation makes the brief CONTINUE_WITH_WARNING", governance.SeverityAdvisory,
			protocol.ContinueWithWarning, "remediation_advisory |", "Advisory: Re-read billing.Charge.", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			m := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{
				Severity: tt.severity, Instruction: " Re-read billing.Charge. ", Files: []string{" billing/charge.go "}}))(t)
			if m.Severity != tt.severity || m.Instruction != "Re-read billing.Charge." || !slices.Equal(m.Files, []string{"billing/charge.go"}) ||
				m.Source != "person" || m.DeliveredAt != nil || m.ClosedAt != nil || m.Session != w.session {
				t.Fatalf("remediation is %+v", m)
			}
			b := briefIs(t, w, w.agent, w.session, tt.next, tt.wantCodes)
			if b.Reason != tt.wantText || b.Reasons[0].Ref != fmt.Sprintf("REM-%d", m.ID) || !slices.Equal(b.AllowedScope, tt.wantAllow) {
				t.Fatalf("brief says %q (ref %s), allowed %q", b.Reason, b.Reasons[0].Ref, b.AllowedScope)
			}
			w.Clock.Advance(time.Minute)
			c := must(w.Gov.Remediations.Close(t.Context(), w.lead, m.ID, " Done by hand. "))(t)
			if c.ClosedAt == nil || !c.ClosedAt.Equal(w.Clock.Now()) || c.CloseNote != "Done by hand." {
				t.Fatalf("closed remediation is %+v", c)
			}
			b = briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
			if len(b.Remediations) != 0 {
				t.Fatalf("a closed remediation is still in the brief: %+v", b.Remediations)
			}
			id := fmt.Sprint(m.ID)
			want := []string{personLabel(w.lead) + " remediation.requested " + id, agentLabel(w.agent) + " remediation.delivered " + id,
				personLabel(w.lead) + " remediation.closed " + id}
			if got := timeline(t, w, w.session)[1:]; !slices.Equal(got, want) {
				t.Fatalf("timeline is %q, want %q", got, want)
			}
		})
	}
}

func TestRemediationIsDeliveredOnce(t *testing.T) {
	w := newWorld(t)
	first := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session,
		governance.RemediationInput{Severity: governance.SeverityRequired, Instruction: "Fix the test."}))(t)

	t.Run("the session page shows it undelivered, and its preview stamps nothing", func(t *testing.T) {
		for range 2 {
			d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
			if len(d.Remediations) != 1 || d.Remediations[0].DeliveredAt != nil ||
				len(d.Brief.Remediations) != 1 || d.Brief.Remediations[0].DeliveredAt != nil || d.Brief.NextAction != protocol.Remediate {
				t.Fatalf("session shows %+v, preview %+v", d.Remediations, d.Brief.Remediations)
			}
		}
	})

	t1 := w.Clock.Now().Add(time.Minute)
	t.Run("the next brief stamps delivered_at and carries the stamp", func(t *testing.T) {
		w.Clock.Advance(time.Minute)
		b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
		if len(b.Remediations) != 1 || b.Remediations[0].DeliveredAt == nil || !b.Remediations[0].DeliveredAt.Equal(t1) {
			t.Fatalf("brief carries %+v, want delivered at %s", b.Remediations, t1)
		}
	})

	t.Run("later briefs keep the first stamp and record no second delivery", func(t *testing.T) {
		for range 3 {
			w.Clock.Advance(time.Minute)
			b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
			if len(b.Remediations) != 1 || !b.Remediations[0].DeliveredAt.Equal(t1) || b.NextAction != protocol.Remediate {
				t.Fatalf("brief carries %+v", b.Remediations)
			}
		}
		d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
		if !d.Remediations[0].DeliveredAt.Equal(t1) {
			t.Fatalf("stored delivered_at is %v, want %s", d.Remediations[0].DeliveredAt, t1)
		}
		if n := countLines(timeline(t, w, w.session), agentLabel(w.agent)+" remediation.delivered "+fmt.Sprint(first.ID)); n != 1 {
			t.Fatalf("the delivery is in the timeline %d times, want once", n)
		}
	})

	t.Run("a new request is delivered on its own, leaving the first stamp alone", func(t *testing.T) {
		second := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session,
			governance.RemediationInput{Severity: governance.SeverityAdvisory, Instruction: "Tidy the names."}))(t)
		w.Clock.Advance(time.Minute)
		t2 := w.Clock.Now()
		b := briefIs(t, w, w.agent, w.session, protocol.Remediate, "remediation_required | remediation_advisory")
		got := map[int64]time.Time{}
		for _, m := range b.Remediations {
			got[m.ID] = *m.DeliveredAt
		}
		if !got[first.ID].Equal(t1) || !got[second.ID].Equal(t2) {
			t.Fatalf("delivered at %v, want first %s and second %s", got, t1, t2)
		}
	})
}

func TestRemediationRefuses(t *testing.T) {
	w := newWorld(t)
	open := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session,
		governance.RemediationInput{Severity: governance.SeverityRequired, Instruction: "Open."}))(t)
	closed := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session,
		governance.RemediationInput{Severity: governance.SeverityAdvisory, Instruction: "Closed."}))(t)
	must(w.Gov.Remediations.Close(t.Context(), w.lead, closed.ID, "first close"))(t)
	files := make([]string, governance.MaxRemediationFiles+1)
	for i := range files {
		files[i] = fmt.Sprintf("f%d.go", i)
	}
	request := func(a auth.Actor, session string, in governance.RemediationInput) func() error {
		return func() error { _, err := w.Gov.Remediations.Request(t.Context(), a, session, in); return err }
	}
	closeIt := func(a auth.Actor, id int64) func() error {
		return func() error { _, err := w.Gov.Remediations.Close(t.Context(), a, id, "note"); return err }
	}
	ok := governance.RemediationInput{Severity: governance.SeverityRequired, Instruction: "Fix it."}
	tests := []struct {
		name string
		call func() error
		kind errs.Kind
		code string
	}{
		{"the session's agent cannot request a remediation", request(w.agent, w.session, ok), errs.Forbidden, "forbidden"},
		{"a viewer cannot request a remediation", request(w.viewer, w.session, ok), errs.Forbidden, "forbidden"},
		{"a severity other than required or advisory is refused",
			request(w.lead, w.session, governance.RemediationInput{Severity: "urgent", Instruction: "x"}), errs.Invalid, "invalid_severity"},
		{"a remediation needs a severity",
			request(w.lead, w.session, governance.RemediationInput{Instruction: "x"}), errs.Invalid, "invalid_severity"},
		{"a remediation needs an instruction",
			request(w.lead, w.session, governance.RemediationInput{Severity: governance.SeverityAdvisory, Instruction: " "}), errs.Invalid, "instruction_required"},
		{"a remediation names at most 100 files",
			request(w.lead, w.session, governance.RemediationInput{Severity: governance.SeverityAdvisory, Instruction: "x", Files: files}), errs.Invalid, "too_many_entries"},
		{"an empty file entry is refused",
			request(w.lead, w.session, governance.RemediationInput{Severity: governance.SeverityAdvisory, Instruction: "x", Files: []string{""}}), errs.Invalid, "empty_entry"},
		{"a remediation on an unknown session is not found", request(w.lead, "ses_nosuchsession", ok), errs.NotFound, "session_not_found"},
		{"the agent cannot close its remediation", closeIt(w.agent, open.ID), errs.Forbidden, "forbidden"},
		{"a viewer cannot close a remediation", closeIt(w.viewer, open.ID), errs.Forbidden, "forbidden"},
		{"closing an unknown remediation is not found", closeIt(w.lead, 9999), errs.NotFound, "remediation_not_found"},
		{"closing twice is a conflict and keeps the first note", closeIt(w.lead, closed.ID), errs.Conflict, "already_closed"},
		{"closing twice is a conflict for an admin too", closeIt(w.admin, closed.ID), errs.Conflict, "already_closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, w.Kit, tt.kind, tt.code, tt.call) })
	}
	t.Run("the open remediation still holds the agent", func(t *testing.T) {
		b := briefIs(t, w, w.agent, w.session, protocol.Remediate, "remediation_required |")
		if !strings.HasSuffix(b.Reason, "Open.") {
			t.Fatalf("brief is %q", b.Reason)
		}
	})
}
