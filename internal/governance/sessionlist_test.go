package governance_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

func TestSessionsPage(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	second := w.Kit.Mission(w.lead, false)
	w.Clock.Advance(time.Second)
	blocked := w.Session(w.agent, w.mission)
	must(w.Gov.Sessions.Pause(ctx, w.lead, blocked, "Hold"))(t)
	w.Clock.Advance(time.Second)
	gated := w.Session(w.agent, second)
	must(w.Gov.Decisions.Open(ctx, w.agent, gated, gate("Go?")))(t)
	w.Clock.Advance(time.Second)
	theirs := must(w.Gov.Sessions.Create(ctx, w.other, governance.SessionInput{Mission: w.mission, Agent: "claude-code",
		Title: "Billing Cleanup", ExternalID: "ext-1"}))(t).ID
	ids := func(a auth.Actor, f governance.SessionFilter) []string {
		t.Helper()
		var out []string
		for _, s := range must(w.Gov.Sessions.Page(ctx, a, f))(t).Items {
			out = append(out, s.ID)
		}
		return out
	}
	tests := []struct {
		name string
		who  auth.Actor
		f    governance.SessionFilter
		want []string
	}{
		{"by state severity, then oldest", w.viewer, governance.SessionFilter{}, []string{blocked, gated, w.session, theirs}},
		{"by mission", w.viewer, governance.SessionFilter{Mission: second}, []string{gated}},
		{"by state", w.viewer, governance.SessionFilter{State: "CONTINUE"}, []string{w.session, theirs}},
		{"by agent", w.viewer, governance.SessionFilter{Agent: w.other.KeyName}, []string{theirs}},
		{"by executor", w.viewer, governance.SessionFilter{Executor: "claude-code"}, []string{theirs}},
		{"by executor, the agent's name without a label", w.viewer, governance.SessionFilter{Executor: w.agent.KeyName},
			[]string{blocked, gated, w.session}},
		{"by external id", w.viewer, governance.SessionFilter{ExternalID: "ext-1"}, []string{theirs}},
		{"by title, ignoring case", w.viewer, governance.SessionFilter{Q: "billing clean"}, []string{theirs}},
		{"an agent sees only its own", w.other, governance.SessionFilter{}, []string{theirs}},
		{"an agent's filter cannot reach another's", w.other, governance.SessionFilter{Mission: second}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(tt.who, tt.f); !slices.Equal(got, tt.want) {
				t.Fatalf("%+v lists %q, want %q", tt.f, got, tt.want)
			}
		})
	}
	t.Run("rows", func(t *testing.T) {
		p := must(w.Gov.Sessions.Page(ctx, w.lead, governance.SessionFilter{ExternalID: "ext-1"}))(t)
		r := p.Items[0]
		if r.Executor != "claude-code" || r.Mission != w.mission || r.Title != "Billing Cleanup" || r.NextAction != protocol.Continue ||
			r.UpdatedAt.Before(r.CreatedAt) || r.ExternalID != "ext-1" {
			t.Fatalf("row %+v", r)
		}
	})
	t.Run("pages", func(t *testing.T) {
		var got []string
		next := ""
		for range 10 {
			p := must(w.Gov.Sessions.Page(ctx, w.viewer, governance.SessionFilter{Limit: 1, Next: next}))(t)
			for _, s := range p.Items {
				got = append(got, s.ID)
			}
			if next = p.Next; next == "" {
				break
			}
		}
		if want := []string{blocked, gated, w.session, theirs}; !slices.Equal(got, want) {
			t.Fatalf("pages list %q, want %q", got, want)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, tt := range []struct {
			f    governance.SessionFilter
			code string
		}{
			{governance.SessionFilter{State: "PAUSED"}, "unknown_state"},
			{governance.SessionFilter{Limit: 501}, "invalid_limit"},
			{governance.SessionFilter{Next: "%%%"}, "invalid_next"},
			{governance.SessionFilter{Q: strings.Repeat("x", 201)}, "filter_too_long"},
		} {
			_, err := w.Gov.Sessions.Page(ctx, w.viewer, tt.f)
			wantErr(t, err, errs.Invalid, tt.code)
		}
		_, err := w.Gov.Sessions.Page(ctx, auth.Actor{}, governance.SessionFilter{})
		wantErr(t, err, errs.Forbidden, "forbidden")
	})
}
