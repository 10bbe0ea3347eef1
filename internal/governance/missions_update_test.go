package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
)

// inputOf is a mission as the input that would recreate it.
func inputOf(m governance.Mission) governance.MissionInput {
	return governance.MissionInput{Slug: m.Slug, Title: m.Title, Text: m.Text, HighRisk: m.HighRisk,
		Evidence: m.Evidence, Contract: m.Contract}
}

func TestUpdateMissionChangesWhatEverySessionIsToldAtOnce(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	second := w.Session(w.other, w.mission)
	elsewhere := w.Session(w.agent, w.Mission(w.lead, false))
	brief := func(agent auth.Actor, session string) governance.Brief {
		t.Helper()
		return must(w.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: session}))(t)
	}
	setHighRisk := func(on bool) governance.Mission {
		t.Helper()
		in := inputOf(must(w.Gov.Missions.Get(ctx, w.mission))(t))
		in.HighRisk = on
		by := w.lead
		if !on {
			by = w.admin // turning it off lowers a protection: an admin's
		}
		return must(w.Gov.Missions.Update(ctx, by, w.mission, in))(t).Mission
	}

	// Both sessions brief first, so that their state is cached.
	for _, s := range []struct {
		agent   auth.Actor
		session string
	}{{w.agent, w.session}, {w.other, second}} {
		if b := brief(s.agent, s.session); b.NextAction != protocol.Continue {
			t.Fatalf("before the edit %s briefs %s (%s), want CONTINUE", s.session, b.NextAction, codes(b))
		}
	}
	brief(w.agent, elsewhere)

	t.Run("flipping high_risk on blocks every session of the mission until a plan is approved", func(t *testing.T) {
		if m := setHighRisk(true); !m.HighRisk {
			t.Fatalf("the mission reads back %+v", m)
		}
		for _, s := range []struct {
			agent   auth.Actor
			session string
		}{{w.agent, w.session}, {w.other, second}} {
			b := brief(s.agent, s.session)
			if b.NextAction != protocol.Blocked || len(b.Reasons) == 0 || b.Reasons[0].Code != "plan_not_approved" {
				t.Fatalf("%s briefs %s (%s), want BLOCKED plan_not_approved", s.session, b.NextAction, codes(b))
			}
		}
	})
	t.Run("the timeline of each session says who changed what", func(t *testing.T) {
		want := personLabel(w.lead) + " mission.updated " + w.mission
		for _, s := range []string{w.session, second} {
			if n := countLines(timeline(t, w, s), want); n != 1 {
				t.Fatalf("%s has %d %q lines, want 1: %q", s, n, want, timeline(t, w, s))
			}
		}
		d := must(w.Gov.Sessions.Get(ctx, w.lead, w.session))(t)
		last := d.Timeline[len(d.Timeline)-1]
		if last.Kind != "mission.updated" || !strings.Contains(last.Detail, "high-risk: no → yes") {
			t.Fatalf("last event is %+v, want the high-risk change", last)
		}
	})
	t.Run("a session of another mission hears nothing and still continues", func(t *testing.T) {
		if n := countLines(timeline(t, w, elsewhere), personLabel(w.lead)+" mission.updated "+w.mission); n != 0 {
			t.Fatalf("another mission's session has %d mission.updated lines", n)
		}
		if b := brief(w.agent, elsewhere); b.NextAction != protocol.Continue {
			t.Fatalf("another mission's session briefs %s (%s)", b.NextAction, codes(b))
		}
	})
	t.Run("flipping high_risk off lets the sessions continue again", func(t *testing.T) {
		setHighRisk(false)
		for _, s := range []struct {
			agent   auth.Actor
			session string
		}{{w.agent, w.session}, {w.other, second}} {
			if b := brief(s.agent, s.session); b.NextAction != protocol.Continue {
				t.Fatalf("%s briefs %s (%s), want CONTINUE", s.session, b.NextAction, codes(b))
			}
		}
	})
	t.Run("an edit that changes nothing writes nothing", func(t *testing.T) {
		m := must(w.Gov.Missions.Get(ctx, w.mission))(t)
		before := w.Kit.Dump()
		if _, err := w.Gov.Missions.Update(ctx, w.lead, w.mission, inputOf(m)); err != nil {
			t.Fatal(err)
		}
		after := w.Kit.Dump()
		if strings.Join(before["events"], "\n") != strings.Join(after["events"], "\n") ||
			strings.Join(before["missions"], "\n") != strings.Join(after["missions"], "\n") {
			t.Fatal("an edit that changed nothing wrote to missions or events")
		}
	})
}

func TestUpdateMissionEditsEverythingButTheSlug(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	contract := []governance.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}, {Kind: protocol.MaxFilesChanged, Value: "20"}}
	got := must(w.Gov.Missions.Update(ctx, w.admin, w.mission, governance.MissionInput{Slug: "ignored-slug",
		Title: " Billing v3 ", Text: "Move it all.", HighRisk: true, Evidence: []string{" tests", "review "}, Contract: contract}))(t)
	want := governance.Mission{Slug: w.mission, Title: "Billing v3", Text: "Move it all.", HighRisk: true,
		Evidence: []string{"tests", "review"}, Contract: contract, CreatedAt: w.Clock.Now()}
	assertMission(t, got.Mission, want)
	assertMission(t, must(w.Gov.Missions.Get(ctx, w.mission))(t), want)
	if _, err := w.Gov.Missions.Get(ctx, "ignored-slug"); errs.CodeOf(err) != "mission_not_found" {
		t.Fatalf("the slug changed: Missions.Get(ignored-slug) = %v", err)
	}
	list := must(w.Gov.Missions.ListSummaries(ctx))(t)
	counts := map[string]int{}
	for _, m := range list {
		counts[m.Slug] = m.Sessions
	}
	if counts[w.mission] != 1 || counts[w.risky] != 0 {
		t.Fatalf("session counts are %v, want 1 for %s and 0 for %s", counts, w.mission, w.risky)
	}
}

func TestUpdateMissionRefusals(t *testing.T) {
	w := newWorld(t)
	ok := governance.MissionInput{Title: "Still fine", HighRisk: true}
	with := func(f func(*governance.MissionInput)) governance.MissionInput {
		in := ok
		f(&in)
		return in
	}
	tests := []struct {
		name  string
		actor auth.Actor
		slug  string
		in    governance.MissionInput
		kind  errs.Kind
		code  string
		field string
	}{
		{"a viewer may not edit a mission", w.viewer, w.mission, ok, errs.Forbidden, "forbidden", ""},
		{"an agent may not edit a mission", w.agent, w.mission, ok, errs.Forbidden, "forbidden", ""},
		{"a mission that does not exist is not found", w.lead, "no-such-mission", ok, errs.NotFound, "mission_not_found", ""},
		{"a slug that could not exist is not found", w.lead, "Not A Slug", ok, errs.NotFound, "mission_not_found", ""},
		{"a mission that does not exist is not found before its input is checked", w.lead, "no-such-mission",
			with(func(in *governance.MissionInput) { in.Title = "" }), errs.NotFound, "mission_not_found", ""},
		{"the title stays required", w.lead, w.mission, with(func(in *governance.MissionInput) { in.Title = "  " }), errs.Invalid, "title_required", "title"},
		{"a clause kind must be one of the four", w.lead, w.mission, with(func(in *governance.MissionInput) {
			in.Contract = []governance.Clause{{Kind: "forbid_everything", Value: "x"}}
		}), errs.Invalid, "invalid_clause", "contract"},
		{"max_files_changed needs a number", w.lead, w.mission, with(func(in *governance.MissionInput) {
			in.Contract = []governance.Clause{{Kind: protocol.MaxFilesChanged, Value: "twenty"}}
		}), errs.Invalid, "invalid_clause", "contract"},
		{"an evidence kind may not be empty", w.lead, w.mission, with(func(in *governance.MissionInput) {
			in.Evidence = []string{"tests", " "}
		}), errs.Invalid, "empty_entry", "evidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Missions.Update(t.Context(), tt.actor, tt.slug, tt.in)
				if e, ok := errs.As(err); ok && tt.field != "" && e.Field != tt.field {
					t.Errorf("the error names field %q, want %q", e.Field, tt.field)
				}
				return err
			})
		})
	}
	if b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t); b.NextAction != protocol.Continue {
		t.Fatalf("after refused edits the session briefs %s (%s)", b.NextAction, codes(b))
	}
}

// Two people editing different fields of a mission both keep their change:
// a patch reads and writes in one transaction.
func TestPatchMissionKeepsOtherFields(t *testing.T) {
	ctx := t.Context()
	kit := testkit.New(t)
	lead, _ := kit.Lead()
	slug := kit.Mission(lead, false)
	title, risky := "Renamed", true
	if _, err := kit.Gov.Missions.Patch(ctx, lead, slug, governance.MissionPatch{Title: &title}); err != nil {
		t.Fatal(err)
	}
	m, err := kit.Gov.Missions.Patch(ctx, lead, slug, governance.MissionPatch{HighRisk: &risky})
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "Renamed" || !m.HighRisk {
		t.Fatalf("after two patches: %+v", m)
	}
}
