package governance_test

import (
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

func TestBriefRefuses(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name    string
		actor   auth.Actor
		session string
		kind    errs.Kind
		code    string
	}{
		{"another agent's key cannot take this session's brief", w.other, w.session, errs.Forbidden, "forbidden"},
		{"a lead cannot take a brief (people see the preview)", w.lead, w.session, errs.Forbidden, "forbidden"},
		{"a viewer cannot take a brief", w.viewer, w.session, errs.Forbidden, "forbidden"},
		{"a brief of an unknown session is not found", w.agent, "ses_nosuchsession", errs.NotFound, "session_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), tt.actor, governance.BriefRequest{Session: tt.session})
				return err
			})
		})
	}
	t.Run("a fresh session's own agent is told to continue, with the protocol text", func(t *testing.T) {
		b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
		if b.NextAction != protocol.Continue || b.Reason != protocol.ContinueText || b.Session != w.session ||
			string(b.Protocol) != protocol.Text || !b.GeneratedAt.Equal(w.Clock.Now()) ||
			b.Reasons == nil || b.Also == nil || b.Resolutions == nil || b.Decisions == nil || b.Remediations == nil {
			t.Fatalf("brief is %+v", b)
		}
	})
}
