package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

func TestCreateMission(t *testing.T) {
	w := newWorld(t)
	every := []governance.Clause{
		{Kind: protocol.ForbidPath, Value: "vendor/**"},
		{Kind: protocol.RequirePath, Value: "CHANGELOG.md"},
		{Kind: protocol.ForbidDependency, Value: "left-pad"},
		{Kind: protocol.MaxFilesChanged, Value: "1"},
	}
	tests := []struct {
		name  string
		actor auth.Actor
		in    governance.MissionInput
		want  governance.Mission
	}{
		{
			name:  "a lead creates a mission with every clause kind and it reads back as given",
			actor: w.lead,
			in: governance.MissionInput{Slug: "billing-v2", Title: "  Billing v2 ", Text: "Move billing.", HighRisk: true,
				Evidence: []string{" tests ", "review"}, Contract: every},
			want: governance.Mission{Slug: "billing-v2", Title: "Billing v2", Text: "Move billing.", HighRisk: true,
				Evidence: []string{"tests", "review"}, Contract: every},
		},
		{
			name:  "an admin may create a mission too",
			actor: w.admin,
			in:    governance.MissionInput{Slug: "0-admin", Title: "Admin's"},
			want:  governance.Mission{Slug: "0-admin", Title: "Admin's", Evidence: []string{}, Contract: []governance.Clause{}},
		},
		{
			name:  "a slug of exactly 63 characters is accepted",
			actor: w.lead,
			in:    governance.MissionInput{Slug: strings.Repeat("a", 63), Title: "Long"},
			want:  governance.Mission{Slug: strings.Repeat("a", 63), Title: "Long", Evidence: []string{}, Contract: []governance.Clause{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := must(w.Gov.Missions.Create(t.Context(), tt.actor, tt.in))(t)
			tt.want.CreatedAt = w.Clock.Now()
			assertMission(t, got, tt.want)
			list := must(w.Gov.Missions.List(t.Context()))(t)
			found := false
			for _, m := range list {
				if m.Slug == tt.want.Slug {
					found = true
					assertMission(t, m, tt.want)
				}
			}
			if !found {
				t.Fatalf("Missions.List does not list %s", tt.want.Slug)
			}
		})
	}
}

func assertMission(t *testing.T, got, want governance.Mission) {
	t.Helper()
	if got.Slug != want.Slug || got.Title != want.Title || got.Text != want.Text || got.HighRisk != want.HighRisk ||
		!got.CreatedAt.Equal(want.CreatedAt) || strings.Join(got.Evidence, ",") != strings.Join(want.Evidence, ",") ||
		len(got.Contract) != len(want.Contract) {
		t.Fatalf("mission is %+v, want %+v", got, want)
	}
	for i := range got.Contract {
		if got.Contract[i] != want.Contract[i] {
			t.Fatalf("clause %d is %+v, want %+v", i, got.Contract[i], want.Contract[i])
		}
	}
}

func TestCreateMissionRefuses(t *testing.T) {
	w := newWorld(t)
	ok := governance.MissionInput{Slug: "fresh", Title: "Fresh"}
	with := func(f func(*governance.MissionInput)) governance.MissionInput {
		in := ok
		f(&in)
		return in
	}
	clause := func(kind protocol.ClauseKind, value string) governance.MissionInput {
		return with(func(in *governance.MissionInput) { in.Contract = []governance.Clause{{Kind: kind, Value: value}} })
	}
	tests := []struct {
		name  string
		actor auth.Actor
		in    governance.MissionInput
		kind  errs.Kind
		code  string
	}{
		{"a viewer cannot create a mission", w.viewer, ok, errs.Forbidden, "forbidden"},
		{"an agent cannot create a mission", w.agent, ok, errs.Forbidden, "forbidden"},
		{"nobody at all cannot create a mission", auth.Actor{}, ok, errs.Forbidden, "forbidden"},
		{"a mission needs a slug", w.lead, with(func(in *governance.MissionInput) { in.Slug = "" }), errs.Invalid, "invalid_slug"},
		{"a slug holds no capitals", w.lead, with(func(in *governance.MissionInput) { in.Slug = "Billing" }), errs.Invalid, "invalid_slug"},
		{"a slug does not start with a dash", w.lead, with(func(in *governance.MissionInput) { in.Slug = "-billing" }), errs.Invalid, "invalid_slug"},
		{"a slug holds no spaces", w.lead, with(func(in *governance.MissionInput) { in.Slug = "bill ing" }), errs.Invalid, "invalid_slug"},
		{"a slug holds no slashes", w.lead, with(func(in *governance.MissionInput) { in.Slug = "a/b" }), errs.Invalid, "invalid_slug"},
		{"a slug is at most 63 characters", w.lead, with(func(in *governance.MissionInput) { in.Slug = strings.Repeat("a", 64) }), errs.Invalid, "invalid_slug"},
		{"a mission needs a title", w.lead, with(func(in *governance.MissionInput) { in.Title = "" }), errs.Invalid, "title_required"},
		{"a title of spaces is no title", w.lead, with(func(in *governance.MissionInput) { in.Title = " \t " }), errs.Invalid, "title_required"},
		{"a clause kind must be one of the four", w.lead, clause("forbid_everything", "x"), errs.Invalid, "invalid_clause"},
		{"a clause kind is spelled exactly", w.lead, clause("Forbid_Path", "vendor/**"), errs.Invalid, "invalid_clause"},
		{"a clause needs a kind", w.lead, clause("", "vendor/**"), errs.Invalid, "invalid_clause"},
		{"a clause needs a value", w.lead, clause(protocol.ForbidPath, " "), errs.Invalid, "invalid_clause"},
		{"max_files_changed needs a number, not a word", w.lead, clause(protocol.MaxFilesChanged, "ten"), errs.Invalid, "invalid_clause"},
		{"max_files_changed needs a whole number", w.lead, clause(protocol.MaxFilesChanged, "2.5"), errs.Invalid, "invalid_clause"},
		{"max_files_changed needs a positive number", w.lead, clause(protocol.MaxFilesChanged, "0"), errs.Invalid, "invalid_clause"},
		{"max_files_changed refuses a negative number", w.lead, clause(protocol.MaxFilesChanged, "-3"), errs.Invalid, "invalid_clause"},
		{"a bad clause after good ones refuses the whole mission", w.lead, with(func(in *governance.MissionInput) {
			in.Contract = []governance.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}, {Kind: protocol.MaxFilesChanged, Value: "many"}}
		}), errs.Invalid, "invalid_clause"},
		{"a slug already taken is a conflict", w.lead, with(func(in *governance.MissionInput) { in.Slug = w.mission }), errs.Conflict, "slug_taken"},
		{"a slug already taken is a conflict for an admin too", w.admin, with(func(in *governance.MissionInput) { in.Slug = w.risky; in.Title = "Other" }), errs.Conflict, "slug_taken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Missions.Create(t.Context(), tt.actor, tt.in)
				return err
			})
		})
	}
	t.Run("the input refused above is accepted once it is valid", func(t *testing.T) {
		must(w.Gov.Missions.Create(t.Context(), w.lead, ok))(t)
	})
}
