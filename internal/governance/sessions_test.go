package governance_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

func TestCreateSession(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name      string
		in        governance.SessionInput
		wantAgent string
		wantTitle string
		wantLabel string
	}{
		{"an agent that gives no name is named after its key", governance.SessionInput{Mission: w.mission, Title: "Refactor"}, w.agent.KeyName, "Refactor", ""},
		{"an agent that gives only spaces is named after its key", governance.SessionInput{Mission: w.mission, Agent: "   "}, w.agent.KeyName, "", ""},
		{"an agent that gives a name is still its key's, the name only a label beside it", governance.SessionInput{Mission: " " + w.risky + " ", Agent: " claude-1 ", Title: " Fix "}, w.agent.KeyName, "Fix", "claude-1"},
		{"an agent that gives another key's name is still its own key's", governance.SessionInput{Mission: w.mission, Agent: "agentB"}, w.agent.KeyName, "", "agentB"},
		{"an agent that gives its key's name has no label", governance.SessionInput{Mission: w.mission, Agent: w.agent.KeyName}, w.agent.KeyName, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := must(w.Gov.Sessions.Create(t.Context(), w.agent, tt.in))(t)
			wantMission := strings.TrimSpace(tt.in.Mission)
			if !strings.HasPrefix(s.ID, "ses_") || s.Agent != tt.wantAgent || s.AgentLabel != tt.wantLabel || s.Title != tt.wantTitle ||
				s.Mission != wantMission || s.Lifecycle != "IDLE" || s.Paused || s.LastBriefAt != nil ||
				!s.CreatedAt.Equal(w.Clock.Now()) {
				t.Fatalf("session is %+v, want agent %q labelled %q, title %q, mission %q, IDLE, not paused, never briefed",
					s, tt.wantAgent, tt.wantLabel, tt.wantTitle, wantMission)
			}
			d := must(w.Gov.Sessions.Get(t.Context(), w.agent, s.ID))(t)
			if !reflect.DeepEqual(d.Session, s) {
				t.Fatalf("Sessions.Get shows %+v, Sessions.Create returned %+v", d.Session, s)
			}
			// The timeline names the key, whatever the agent calls itself.
			if got, want := timeline(t, w, s.ID), []string{agentLabel(w.agent) + " session.created"}; !slices.Equal(got, want) {
				t.Fatalf("timeline is %q, want %q", got, want)
			}
		})
	}
	t.Run("two sessions get different ids", func(t *testing.T) {
		a := w.Session(w.agent, w.mission)
		b := w.Session(w.agent, w.mission)
		if a == b {
			t.Fatalf("both sessions have the id %s", a)
		}
	})
}

func TestCreateSessionRefuses(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name  string
		actor auth.Actor
		in    governance.SessionInput
		kind  errs.Kind
		code  string
	}{
		{"a lead cannot open a session", w.lead, governance.SessionInput{Mission: w.mission}, errs.Forbidden, "forbidden"},
		{"a viewer cannot open a session", w.viewer, governance.SessionInput{Mission: w.mission}, errs.Forbidden, "forbidden"},
		{"an admin cannot open a session", w.admin, governance.SessionInput{Mission: w.mission}, errs.Forbidden, "forbidden"},
		{"a session on an unknown mission is refused", w.agent, governance.SessionInput{Mission: "no-such-mission"}, errs.Invalid, "unknown_mission"},
		{"a session needs a mission", w.agent, governance.SessionInput{Mission: "  "}, errs.Invalid, "mission_required"},
		{"a title over 200 characters is refused", w.agent, governance.SessionInput{Mission: w.mission, Title: strings.Repeat("t", 201)}, errs.Invalid, "title_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Sessions.Create(t.Context(), tt.actor, tt.in)
				return err
			})
		})
	}
}
