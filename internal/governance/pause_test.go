package governance_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

func TestPauseAndResume(t *testing.T) {
	tests := []struct {
		name      string
		reason    string
		wantText  string
		withGate  bool
		wantCodes string
	}{
		{
			name:      "a paused session is BLOCKED and the brief quotes the reason",
			reason:    "  Wrong branch, wait for Ana ",
			wantText:  `A person paused this session: "Wrong branch, wait for Ana". Stop all work in this session until the brake is released.`,
			wantCodes: "paused |",
		},
		{
			name:      "a pause outranks an open gate, which stays in also",
			reason:    "Hold on",
			wantText:  `A person paused this session: "Hold on". Stop all work in this session until the brake is released.`,
			withGate:  true,
			wantCodes: "paused | decision_open",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if tt.withGate {
				must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Go?")))(t)
			}
			w.Clock.Advance(time.Minute)
			s := must(w.Gov.Sessions.Pause(t.Context(), w.lead, w.session, tt.reason))(t)
			if !s.Paused || s.PauseReason != strings.TrimSpace(tt.reason) || s.PausedAt == nil || !s.PausedAt.Equal(w.Clock.Now()) {
				t.Fatalf("paused session is %+v", s)
			}
			b := briefIs(t, w, w.agent, w.session, protocol.Blocked, tt.wantCodes)
			if b.Reason != tt.wantText || !slices.Equal(b.BlockedScope, []string{protocol.ScopeAllSessionWork}) || len(b.AllowedScope) != 0 {
				t.Fatalf("paused brief is %q, blocked %q, allowed %q", b.Reason, b.BlockedScope, b.AllowedScope)
			}
			preview := must(w.Gov.Sessions.Get(t.Context(), w.viewer, w.session))(t)
			if !preview.Paused || preview.Brief.NextAction != protocol.Blocked {
				t.Fatalf("Sessions.Get shows paused %v, preview %s", preview.Paused, preview.Brief.NextAction)
			}

			r := must(w.Gov.Sessions.Resume(t.Context(), w.admin, w.session))(t)
			if r.Paused || r.PauseReason != "" || r.PausedAt != nil {
				t.Fatalf("resumed session is %+v", r)
			}
			after := protocol.Continue
			wantCodes := "|"
			if tt.withGate {
				after, wantCodes = protocol.DecisionRequired, "decision_open |"
			}
			briefIs(t, w, w.agent, w.session, after, wantCodes)

			lines := timeline(t, w, w.session)
			want := []string{personLabel(w.lead) + " session.paused", personLabel(w.admin) + " session.resumed"}
			if got := lines[len(lines)-2:]; !slices.Equal(got, want) {
				t.Fatalf("timeline ends %q, want %q", got, want)
			}
			d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
			if e := d.Timeline[len(d.Timeline)-2]; e.Detail != strings.TrimSpace(tt.reason) {
				t.Fatalf("the pause line's detail is %q, want the reason", e.Detail)
			}
		})
	}
}

func TestPauseRefuses(t *testing.T) {
	w := newWorld(t)
	paused := w.Session(w.agent, w.mission)
	must(w.Gov.Sessions.Pause(t.Context(), w.lead, paused, "First reason"))(t)
	pause := func(a auth.Actor, session, reason string) func() error {
		return func() error { _, err := w.Gov.Sessions.Pause(t.Context(), a, session, reason); return err }
	}
	resume := func(a auth.Actor, session string) func() error {
		return func() error { _, err := w.Gov.Sessions.Resume(t.Context(), a, session); return err }
	}
	tests := []struct {
		name string
		call func() error
		kind errs.Kind
		code string
	}{
		{"a pause without a reason is refused", pause(w.lead, w.session, ""), errs.Invalid, "reason_required"},
		{"a pause with a blank reason is refused", pause(w.lead, w.session, " \n\t "), errs.Invalid, "reason_required"},
		{"a viewer without a reason hears forbidden first", pause(w.viewer, w.session, ""), errs.Forbidden, "forbidden"},
		{"pausing a paused session is a conflict and keeps the first reason", pause(w.lead, paused, "Second reason"), errs.Conflict, "already_paused"},
		{"resuming a running session is a conflict", resume(w.lead, w.session), errs.Conflict, "not_paused"},
		{"the session's agent cannot pause itself", pause(w.agent, w.session, "x"), errs.Forbidden, "forbidden"},
		{"another agent cannot pause the session", pause(w.other, w.session, "x"), errs.Forbidden, "forbidden"},
		{"a viewer cannot pause a session", pause(w.viewer, w.session, "x"), errs.Forbidden, "forbidden"},
		{"the session's agent cannot release the brake", resume(w.agent, paused), errs.Forbidden, "forbidden"},
		{"a viewer cannot release the brake", resume(w.viewer, paused), errs.Forbidden, "forbidden"},
		{"pausing an unknown session is not found", pause(w.lead, "ses_nosuchsession", "x"), errs.NotFound, "session_not_found"},
		{"resuming an unknown session is not found", resume(w.lead, "ses_nosuchsession"), errs.NotFound, "session_not_found"},
		{"a reason over 2000 characters is refused", pause(w.lead, w.session, strings.Repeat("r", 2001)), errs.Invalid, "reason_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, w.Kit, tt.kind, tt.code, tt.call) })
	}
	t.Run("the paused session still quotes its first reason", func(t *testing.T) {
		b := briefIs(t, w, w.agent, paused, protocol.Blocked, "paused |")
		if !strings.Contains(b.Reason, `"First reason"`) {
			t.Fatalf("brief is %q", b.Reason)
		}
	})
}
