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

// gate is a valid gate input.
func gate(question string) governance.DecisionInput {
	return governance.DecisionInput{Title: "Legacy billing", Question: question, Proposal: "Drop it in its own migration.",
		BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/", "views/"}}
}

// entries returns n distinct scope entries.
func entries(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("dir%02d/", i+1)
	}
	return out
}

func TestOpenDecision(t *testing.T) {
	w := newWorld(t)
	otherSession := w.Session(w.other, w.risky)

	t.Run("refs count up across sessions and agents in the workspace", func(t *testing.T) {
		opens := []struct {
			agent   auth.Actor
			session string
			want    string
		}{
			{w.agent, w.session, "DEC-001"},
			{w.other, otherSession, "DEC-002"},
			{w.agent, w.session, "DEC-003"},
			{w.other, otherSession, "DEC-004"},
		}
		for _, o := range opens {
			d := must(w.Gov.Decisions.Open(t.Context(), o.agent, o.session, gate("Drop "+o.want+"?")))(t)
			if d.Ref != o.want || d.Session != o.session || d.Status != governance.DecisionOpen || d.ResolvedAt != nil ||
				d.DeliveredAt != nil || !d.OpenedAt.Equal(w.Clock.Now()) {
				t.Fatalf("opened %+v, want ref %s on %s, open", d, o.want, o.session)
			}
		}
	})

	t.Run("the gate is stored trimmed and read back whole", func(t *testing.T) {
		in := governance.DecisionInput{Title: "  Schema ", Question: " Rename the column? ", Proposal: " Yes. ",
			BlockedScope: []string{" db/ "}, AllowedScope: nil}
		d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, in))(t)
		if d.Title != "Schema" || d.Question != "Rename the column?" || d.Proposal != "Yes." ||
			!slices.Equal(d.BlockedScope, []string{"db/"}) || d.AllowedScope == nil || len(d.AllowedScope) != 0 {
			t.Fatalf("opened %+v", d)
		}
		sd := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
		i := slices.IndexFunc(sd.Decisions, func(x governance.Decision) bool { return x.Ref == d.Ref })
		if i < 0 || sd.Decisions[i].Title != "Schema" || !slices.Equal(sd.Decisions[i].BlockedScope, []string{"db/"}) {
			t.Fatalf("Sessions.Get shows %+v, want %+v", sd.Decisions, d)
		}
	})

	t.Run("a gate takes exactly 20 entries in each scope", func(t *testing.T) {
		in := gate("Twenty?")
		in.BlockedScope, in.AllowedScope = entries(governance.MaxScopeEntries), entries(governance.MaxScopeEntries)
		d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, in))(t)
		if len(d.BlockedScope) != 20 || len(d.AllowedScope) != 20 {
			t.Fatalf("scopes hold %d and %d entries, want 20 and 20", len(d.BlockedScope), len(d.AllowedScope))
		}
	})

	t.Run("the opening is in the timeline under the key's name", func(t *testing.T) {
		lines := timeline(t, w, otherSession)
		want := []string{agentLabel(w.other) + " session.created", agentLabel(w.other) + " decision.opened DEC-002",
			agentLabel(w.other) + " decision.opened DEC-004"}
		if !slices.Equal(lines, want) {
			t.Fatalf("timeline is %q, want %q", lines, want)
		}
	})
}

func TestOpenGateMakesTheBriefDecisionRequired(t *testing.T) {
	w := newWorld(t)
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop the legacy billing table?")))(t)
	w.Clock.Advance(time.Minute)
	b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
	if b.NextAction != protocol.DecisionRequired || codes(b) != "decision_open |" ||
		b.Reason != d.Ref+" is waiting on a person: Drop the legacy billing table?" ||
		!slices.Equal(b.BlockedScope, []string{"db/migrations"}) || !slices.Equal(b.AllowedScope, []string{"web/", "views/"}) ||
		len(b.Decisions) != 1 || b.Decisions[0].Ref != d.Ref || len(b.Resolutions) != 0 {
		t.Fatalf("brief is %+v", b)
	}
}

func TestOpenDecisionRefuses(t *testing.T) {
	w := newWorld(t)
	first := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("First?")))(t)
	with := func(f func(*governance.DecisionInput)) governance.DecisionInput {
		in := gate("Q?")
		f(&in)
		return in
	}
	tests := []struct {
		name    string
		actor   auth.Actor
		session string
		in      governance.DecisionInput
		kind    errs.Kind
		code    string
	}{
		{"a lead cannot open a gate: gates opened by a person do not exist", w.lead, w.session, gate("Q?"), errs.Forbidden, "forbidden"},
		{"an admin cannot open a gate", w.admin, w.session, gate("Q?"), errs.Forbidden, "forbidden"},
		{"a viewer cannot open a gate", w.viewer, w.session, gate("Q?"), errs.Forbidden, "forbidden"},
		{"another agent's key cannot open a gate on this session", w.other, w.session, gate("Q?"), errs.Forbidden, "forbidden"},
		{"a gate on an unknown session is not found", w.agent, "ses_nosuchsession", gate("Q?"), errs.NotFound, "session_not_found"},
		{"a gate needs a title", w.agent, w.session, with(func(in *governance.DecisionInput) { in.Title = "" }), errs.Invalid, "title_required"},
		{"a title of spaces is no title", w.agent, w.session, with(func(in *governance.DecisionInput) { in.Title = "  \n" }), errs.Invalid, "title_required"},
		{"a gate needs a question", w.agent, w.session, with(func(in *governance.DecisionInput) { in.Question = "" }), errs.Invalid, "question_required"},
		{"a question of spaces is no question", w.agent, w.session, with(func(in *governance.DecisionInput) { in.Question = "\t" }), errs.Invalid, "question_required"},
		{"21 blocked scope entries are refused, not cut", w.agent, w.session, with(func(in *governance.DecisionInput) { in.BlockedScope = entries(21) }), errs.Invalid, "too_many_entries"},
		{"21 allowed scope entries are refused, not cut", w.agent, w.session, with(func(in *governance.DecisionInput) { in.AllowedScope = entries(21) }), errs.Invalid, "too_many_entries"},
		{"an empty scope entry is refused", w.agent, w.session, with(func(in *governance.DecisionInput) { in.AllowedScope = []string{"web/", " "} }), errs.Invalid, "empty_entry"},
		{"a title over 200 characters is refused", w.agent, w.session, with(func(in *governance.DecisionInput) { in.Title = strings.Repeat("x", 201) }), errs.Invalid, "title_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Decisions.Open(t.Context(), tt.actor, tt.session, tt.in)
				return err
			})
		})
	}
	t.Run("refused gates used up no reference", func(t *testing.T) {
		next := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Second?")))(t)
		if first.Ref != "DEC-001" || next.Ref != "DEC-002" {
			t.Fatalf("refs are %s then %s, want DEC-001 then DEC-002", first.Ref, next.Ref)
		}
	})
}

func TestResolveDecision(t *testing.T) {
	tests := []struct {
		name   string
		leadOf func(*world) auth.Actor
	}{
		{"a lead resolves a gate once and is named as the resolver", func(w *world) auth.Actor { return w.lead }},
		{"an admin resolves a gate once and is named as the resolver", func(w *world) auth.Actor { return w.admin }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			by := tt.leadOf(w)
			d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Drop it?")))(t)
			w.Clock.Advance(time.Hour)
			r := must(w.Gov.Decisions.Resolve(t.Context(), by, d.Ref, " Keep the table. ", " Leave db/migrations alone. "))(t)
			if r.Ref != d.Ref || r.Status != governance.DecisionResolved || r.Resolution != "Keep the table." ||
				r.Instruction != "Leave db/migrations alone." || r.ResolvedBy != by.Email || r.ResolvedAt == nil ||
				!r.ResolvedAt.Equal(w.Clock.Now()) || r.DeliveredAt != nil {
				t.Fatalf("resolved %+v", r)
			}
			sd := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
			if len(sd.Decisions) != 1 || sd.Decisions[0].Status != governance.DecisionResolved || sd.Decisions[0].ResolvedBy != by.Email {
				t.Fatalf("Sessions.Get shows %+v", sd.Decisions)
			}
			want := []string{agentLabel(w.agent) + " session.created", agentLabel(w.agent) + " decision.opened DEC-001",
				personLabel(by) + " decision.resolved DEC-001"}
			if got := timeline(t, w, w.session); !slices.Equal(got, want) {
				t.Fatalf("timeline is %q, want %q", got, want)
			}
		})
	}
}

func TestResolveDecisionRefuses(t *testing.T) {
	w := newWorld(t)
	open := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Open?")))(t)
	done := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Done?")))(t)
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, done.Ref, "Yes.", "Go ahead."))(t)
	tests := []struct {
		name                    string
		actor                   auth.Actor
		ref                     string
		resolution, instruction string
		kind                    errs.Kind
		code                    string
	}{
		{"a viewer cannot resolve a gate", w.viewer, open.Ref, "Yes.", "Go.", errs.Forbidden, "forbidden"},
		{"the session's own agent cannot resolve its gate", w.agent, open.Ref, "Yes.", "Go.", errs.Forbidden, "forbidden"},
		{"another agent cannot resolve a gate", w.other, open.Ref, "Yes.", "Go.", errs.Forbidden, "forbidden"},
		{"a resolution is required", w.lead, open.Ref, "", "Go.", errs.Invalid, "resolution_required"},
		{"a resolution of spaces is no resolution", w.lead, open.Ref, "   ", "Go.", errs.Invalid, "resolution_required"},
		{"an instruction is required", w.lead, open.Ref, "Yes.", "", errs.Invalid, "instruction_required"},
		{"an instruction of spaces is no instruction", w.lead, open.Ref, "Yes.", " \n ", errs.Invalid, "instruction_required"},
		{"an unknown ref is not found", w.lead, "DEC-999", "Yes.", "Go.", errs.NotFound, "decision_not_found"},
		{"a second resolve is a conflict and the first one stands", w.lead, done.Ref, "No.", "Stop.", errs.Conflict, "already_resolved"},
		{"a second resolve by an admin is a conflict too", w.admin, done.Ref, "No.", "Stop.", errs.Conflict, "already_resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, w.Kit, tt.kind, tt.code, func() error {
				_, err := w.Gov.Decisions.Resolve(t.Context(), tt.actor, tt.ref, tt.resolution, tt.instruction)
				return err
			})
		})
	}
	t.Run("the gate still open after the refusals resolves", func(t *testing.T) {
		r := must(w.Gov.Decisions.Resolve(t.Context(), w.lead, open.Ref, "Yes.", "Go."))(t)
		if r.Status != governance.DecisionResolved {
			t.Fatalf("resolved %+v", r)
		}
	})
}

// A session holds at most the cap of open gates: one more is 409
// too_many_open_gates and writes nothing; a resolution makes room.
func TestARunawayAgentIsStoppedAtTheOpenGateCap(t *testing.T) {
	w := newWorld(t)
	w.Configure(func(o *governance.Options) { o.MaxOpenGates = 3 })
	ctx := t.Context()
	var refs []string
	for i := range 3 {
		d, err := w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: fmt.Sprint("Gate ", i), Question: "Go on?"})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, d.Ref)
	}
	refused(t, w.Kit, errs.Conflict, "too_many_open_gates", func() error {
		_, err := w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "One more", Question: "Go on?"})
		return err
	})
	// Another session of the same agent has its own room.
	if _, err := w.Gov.Decisions.Open(ctx, w.agent, w.Session(w.agent, w.mission), governance.DecisionInput{Title: "Elsewhere", Question: "Go on?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Gov.Decisions.Resolve(ctx, w.lead, refs[0], "Yes", "Go on."); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Now there is room", Question: "Go on?"}); err != nil {
		t.Fatalf("after a resolution: %v", err)
	}
}
