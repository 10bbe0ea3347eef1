package governance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/testkit"
)

// breachWorld is a world whose session waits on a gate blocking
// db/migrations, with a run of the session's agent.
type breachWorld struct {
	*world
	gate governance.Decision
	run  string
}

func newBreachWorld(t *testing.T) *breachWorld {
	t.Helper()
	w := &breachWorld{world: newWorld(t)}
	w.gate = must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, governance.DecisionInput{Title: "Legacy billing",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}}))(t)
	w.run = must(w.Ledger.StartRun(t.Context(), w.agent, w.session, "hook", ""))(t).ID
	return w
}

func (w *breachWorld) brief(t *testing.T) governance.Brief {
	t.Helper()
	return must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
}

// migrate is the breach of the brief's example: make migrate wrote a
// migration while DEC-001 was open.
var migrate = governance.ScopeBreachInput{Tool: "Bash", ToolUseID: "toolu_01", Files: []string{"db/migrations/x.sql"},
	Command: "make migrate"}

func TestABreachIsACriticalViolation(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	if b := w.brief(t); b.NextAction != protocol.DecisionRequired {
		t.Fatalf("before the breach: %s, want DECISION_REQUIRED", b.NextAction) // and cached
	}

	b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, migrate))(t)
	if b.ID == 0 || b.Violation == 0 || b.Run != w.run || b.Session != w.session || b.Server != "claude-code" || b.Tool != "Bash" ||
		b.ToolUseID != "toolu_01" || b.Command != "make migrate" || !slices.Equal(b.Files, []string{"db/migrations/x.sql"}) ||
		!slices.Equal(b.Scope, []string{"db/migrations"}) || !slices.Equal(b.Decisions, []string{w.gate.Ref}) ||
		!b.DetectedAt.Equal(w.Clock.Now()) {
		t.Fatalf("breach %+v", b)
	}

	t.Run("the brief is HARD_STOP at once, naming the call, the scope and the files", func(t *testing.T) {
		got := w.brief(t)
		want := "Bash (make migrate) wrote into the blocked scope db/migrations before its decision was made: db/migrations/x.sql. " +
			"This is a critical control: stop, and do not work around it."
		if got.NextAction != protocol.HardStop || got.Reason != want {
			t.Fatalf("brief %s %q, want HARD_STOP %q", got.NextAction, got.Reason, want)
		}
		r := got.Reasons[0]
		if r.Code != protocol.CodeCriticalViolation || r.Ref != fmt.Sprintf("VIO-%d", b.Violation) ||
			!slices.Equal(r.Files, b.Files) || !slices.Equal(got.BlockedScope, []string{protocol.ScopeAllWork}) {
			t.Errorf("reason %+v, blocked %v", r, got.BlockedScope)
		}
		if codes(got) != "critical_violation | decision_open" {
			t.Errorf("codes %s: the gate is still there, below", codes(got))
		}
		// The executor gate's check reads the same brief, from the same cache.
		if g := must(gateView(ctx, w.world, w.session))(t); g.NextAction != protocol.HardStop {
			t.Errorf("the gate's session after the breach: %s, want HARD_STOP", g.NextAction)
		}
	})

	t.Run("the session shows the violation and the timeline the breach", func(t *testing.T) {
		d := must(w.Gov.Sessions.Get(ctx, w.lead, w.session))(t)
		if len(d.Violations) != 1 || d.Violations[0].ID != b.Violation || d.Violations[0].Policy != governance.BreachPolicy ||
			d.Violations[0].Severity != "critical" || d.Violations[0].Match != "Bash (make migrate)" || d.Violations[0].File != "db/migrations/x.sql" {
			t.Errorf("violations %+v", d.Violations)
		}
		lines := timeline(t, w.world, w.session)
		for _, line := range []string{agentLabel(w.agent) + " " + governance.BreachEvent + " " + w.run,
			agentLabel(w.agent) + " violation.detected " + fmt.Sprint(b.Violation)} {
			if countLines(lines, line) != 1 {
				t.Errorf("timeline %q lacks %q once", lines, line)
			}
		}
		for _, e := range d.Timeline {
			if e.Kind == governance.BreachEvent && e.Detail != "Bash (make migrate) wrote into the blocked scope db/migrations before its decision was made: db/migrations/x.sql (tool use toolu_01)" {
				t.Errorf("breach event detail %q", e.Detail)
			}
		}
	})

	t.Run("it is an Attention item that says what happened", func(t *testing.T) {
		items := must(w.Gov.Attention.List(ctx))(t)
		var it *governance.AttentionItem
		for i := range items {
			if items[i].Kind == governance.ItemViolation {
				it = &items[i]
			}
		}
		if it == nil {
			t.Fatalf("attention %+v has no violation", items)
		}
		if it.Ref != fmt.Sprint(b.Violation) || it.State != protocol.HardStop || it.Severity != "critical" ||
			it.Title != "Bash (make migrate) wrote into the blocked scope db/migrations before its decision was made" ||
			!strings.HasPrefix(it.Detail, "It changed db/migrations/x.sql while the decision was open") ||
			!slices.Equal(it.Files, []string{"db/migrations/x.sql"}) {
			t.Errorf("item %+v", *it)
		}
	})

	t.Run("a lead clears it as any critical violation, and the brief is back where it was", func(t *testing.T) {
		refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Changes.ClearViolation(ctx, w.agent, b.Violation, "fixed", "")
			return err
		})
		must(w.Gov.Changes.ClearViolation(ctx, w.lead, b.Violation, "fixed", "Reverted the migration."))(t)
		got := w.brief(t)
		if got.NextAction != protocol.DecisionRequired || got.Reasons[0].Ref != w.gate.Ref {
			t.Fatalf("after the clear: %s %q, want DECISION_REQUIRED on %s", got.NextAction, got.Reason, w.gate.Ref)
		}
		if countLines(timeline(t, w.world, w.session), personLabel(w.lead)+" violation.cleared "+fmt.Sprint(b.Violation)) != 1 {
			t.Error("no violation.cleared line")
		}
		wantErr(t, func() error {
			_, err := w.Gov.Changes.ClearViolation(ctx, w.lead, b.Violation, "fixed", "")
			return err
		}(), errs.Conflict, "already_closed")
	})
}

func TestABreachIsRecordedWhateverTheSessionsState(t *testing.T) {
	ctx := context.Background()
	t.Run("on a paused session", func(t *testing.T) {
		w := newBreachWorld(t)
		must(w.Gov.Sessions.Pause(ctx, w.lead, w.session, "Hold everything"))(t)
		must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, migrate))(t)
		if b := w.brief(t); b.NextAction != protocol.HardStop {
			t.Errorf("paused, then breached: %s, want HARD_STOP (above the brake)", b.NextAction)
		}
	})
	t.Run("on a session already HARD_STOP, and on a run that ended", func(t *testing.T) {
		w := newBreachWorld(t)
		first := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, migrate))(t)
		must(w.Ledger.FinishRun(ctx, w.agent, w.run, "failed"))(t)
		second := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, governance.ScopeBreachInput{Tool: "Write",
			Files: []string{"db/migrations/y.sql"}}))(t)
		b := w.brief(t)
		if b.NextAction != protocol.HardStop || len(b.Reasons) != 2 || b.Reasons[0].Ref != fmt.Sprintf("VIO-%d", first.Violation) ||
			b.Reasons[1].Text.String() != "Write wrote into the blocked scope db/migrations before its decision was made: db/migrations/y.sql. "+
				"This is a critical control: stop, and do not work around it." || second.Violation == first.Violation {
			t.Errorf("two breaches: %+v", b.Reasons)
		}
	})
	t.Run("with no gate open: a blocked scope it had", func(t *testing.T) {
		w := newWorld(t)
		run := must(w.Ledger.StartRun(ctx, w.agent, w.session, "hook", ""))(t).ID
		b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, run, governance.ScopeBreachInput{Tool: "Bash",
			Files: []string{"db/migrations/x.sql"}}))(t)
		if len(b.Scope) != 0 || len(b.Decisions) != 0 {
			t.Errorf("breach %+v, want no scope and no gate", b)
		}
		if got := w.brief(t); got.Reason != "Bash wrote into a blocked scope before its decision was made: db/migrations/x.sql. "+
			"This is a critical control: stop, and do not work around it." {
			t.Errorf("reason %q", got.Reason)
		}
	})
}

func (w *world) brief(t *testing.T) governance.Brief {
	t.Helper()
	return must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
}

func TestABreachNamesItsScope(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	other := must(w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Config", Question: "Rotate it?",
		BlockedScope: []string{"config/**", "tool:Bash"}}))(t)
	must(w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Docs", Question: "Rewrite them?",
		BlockedScope: []string{"docs"}}))(t)

	t.Run("the open gates' entries that hold the files, when the hook names none", func(t *testing.T) {
		b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, governance.ScopeBreachInput{Tool: "Bash",
			Files: []string{"./db//migrations/x.sql", `config\prod\db.yml`, "db/migrations/x.sql", "web/app.js"}}))(t)
		if !slices.Equal(b.Files, []string{"db/migrations/x.sql", "config/prod/db.yml", "web/app.js"}) ||
			!slices.Equal(b.Scope, []string{"db/migrations", "config/**"}) || !slices.Equal(b.Decisions, []string{w.gate.Ref, other.Ref}) {
			t.Errorf("breach %+v", b)
		}
	})
	t.Run("the hook's scope, as it names it, and the gates that block it", func(t *testing.T) {
		b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, governance.ScopeBreachInput{Tool: "Bash",
			Files: []string{"scripts/x.sh"}, Scope: []string{"tool:Bash", "tool:Bash"}}))(t)
		if !slices.Equal(b.Scope, []string{"tool:Bash"}) || !slices.Equal(b.Decisions, []string{other.Ref}) {
			t.Errorf("breach %+v", b)
		}
	})
}

func TestABreachIsTheRunsOwnAgents(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
		_, err := w.Gov.ScopeBreaches.Report(ctx, w.other, w.run, migrate)
		return err
	})
	refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
		_, err := w.Gov.ScopeBreaches.Report(ctx, w.lead, w.run, migrate)
		return err
	})
	refused(t, w.Kit, errs.NotFound, "run_not_found", func() error {
		_, err := w.Gov.ScopeBreaches.Report(ctx, w.agent, "run_nope", migrate)
		return err
	})
}

func TestABreachRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	with := func(change func(in *governance.ScopeBreachInput)) governance.ScopeBreachInput {
		in := migrate
		in.Files = slices.Clone(migrate.Files)
		change(&in)
		return in
	}
	for _, c := range []struct {
		name, code, field string
		in                governance.ScopeBreachInput
	}{
		{"no tool", "tool_required", "tool", with(func(in *governance.ScopeBreachInput) { in.Tool = "  " })},
		{"a tool over 200 characters", "tool_too_long", "tool", with(func(in *governance.ScopeBreachInput) { in.Tool = strings.Repeat("T", 201) })},
		{"a tool of two lines", "invalid_characters", "tool", with(func(in *governance.ScopeBreachInput) { in.Tool = "Bash\nEdit" })},
		{"a tool use id over 200 characters", "tool_use_id_too_long", "tool_use_id",
			with(func(in *governance.ScopeBreachInput) { in.ToolUseID = strings.Repeat("u", 201) })},
		{"no files", "files_required", "files", with(func(in *governance.ScopeBreachInput) { in.Files = nil })},
		{"101 files", "too_many_entries", "files", with(func(in *governance.ScopeBreachInput) {
			in.Files = many(101, func(i int) string { return fmt.Sprintf("db/migrations/%d.sql", i) })
		})},
		{"an empty file", "empty_entry", "files", with(func(in *governance.ScopeBreachInput) { in.Files = []string{"db/x.sql", " "} })},
		{"a file over 1000 characters", "files_too_long", "files",
			with(func(in *governance.ScopeBreachInput) { in.Files = []string{"db/" + strings.Repeat("x", 1000)} })},
		{"a file with a control character", "invalid_characters", "files",
			with(func(in *governance.ScopeBreachInput) { in.Files = []string{"db/x\x1b[31m.sql"} })},
		{"an absolute file", "invalid_files", "files", with(func(in *governance.ScopeBreachInput) { in.Files = []string{"/etc/passwd"} })},
		{"a Windows absolute file", "invalid_files", "files",
			with(func(in *governance.ScopeBreachInput) { in.Files = []string{`C:\repo\db\x.sql`} })},
		{"a file outside the project", "invalid_files", "files",
			with(func(in *governance.ScopeBreachInput) { in.Files = []string{"web/../../x.sql"} })},
		{"the project itself", "invalid_files", "files", with(func(in *governance.ScopeBreachInput) { in.Files = []string{"db/.."} })},
		{"21 scope entries", "too_many_entries", "scope", with(func(in *governance.ScopeBreachInput) {
			in.Scope = many(21, func(i int) string { return fmt.Sprintf("dir%d", i) })
		})},
		{"a command over 2000 characters", "command_too_long", "command",
			with(func(in *governance.ScopeBreachInput) { in.Command = strings.Repeat("x", 2001) })},
		{"a command with a NUL", "invalid_characters", "command", with(func(in *governance.ScopeBreachInput) { in.Command = "make\x00" })},
	} {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			refused(t, w.Kit, errs.Invalid, c.code, func() error {
				_, err := w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, c.in)
				if f := errs.FieldOf(err); f != c.field {
					t.Errorf("field %q, want %q", f, c.field)
				}
				return err
			})
		})
	}
	t.Run("a command of several lines is taken, and its reason quotes the first", func(t *testing.T) {
		b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, with(func(in *governance.ScopeBreachInput) {
			in.Command = "cd db\n\tmake migrate"
		})))(t)
		if b.Command != "cd db\n\tmake migrate" || !strings.HasPrefix(w.brief(t).Reason, "Bash (cd db …) wrote into") {
			t.Errorf("breach %+v, reason %q", b, w.brief(t).Reason)
		}
	})
}

func TestABreachKeepsNoSecret(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	token := "ghp_" + strings.Repeat("a1", 18)
	b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, governance.ScopeBreachInput{Tool: "Bash",
		Files: []string{"db/migrations/" + token + ".sql"}, Scope: []string{"db/" + token},
		Command: "curl https://x-access-token:" + token + "@github.com/acme/db.git && make migrate"}))(t)
	for _, s := range append(append([]string{b.Command}, b.Files...), b.Scope...) {
		if strings.Contains(s, token) || !strings.Contains(s, "[REDACTED]") {
			t.Errorf("%q keeps the secret", s)
		}
	}
	for table, rows := range w.Dump() {
		for _, r := range rows {
			if strings.Contains(r, token) {
				t.Errorf("table %s holds the secret: %s", table, r)
			}
		}
	}
}

func TestABreachNotifiesAsAHardStop(t *testing.T) {
	ctx := context.Background()
	w := newBreachWorld(t)
	id := hook(t, w.world, notify.HardStop)
	b := must(w.Gov.ScopeBreaches.Report(ctx, w.agent, w.run, migrate))(t)
	var got []outboxRow
	for _, r := range outbox(t, w.Kit) {
		if r.webhook == id {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].event != notify.HardStop || got[0].payload.Madebook.Ref != fmt.Sprint(b.Violation) ||
		!strings.Contains(got[0].payload.Text, "blocked scope breached") ||
		!strings.Contains(fmt.Sprint(got[0].payload.Blocks), "Blocked scope breached: Bash (make migrate) changed db/migrations/x.sql before its decision was made") {
		t.Errorf("outbox %+v", got)
	}
}

func TestTwoPeopleClearABreach(t *testing.T) {
	w := newTwoPerson(t, false)
	if _, err := w.kit.Gov.Decisions.Open(w.ctx, w.agent, w.session, governance.DecisionInput{Title: "Schema", Question: "Drop it?",
		BlockedScope: []string{"db/migrations"}}); err != nil {
		t.Fatal(err)
	}
	run := must(w.kit.Ledger.StartRun(w.ctx, w.agent, w.session, "hook", ""))(t).ID
	b := must(w.kit.Gov.ScopeBreaches.Report(w.ctx, w.agent, run, migrate))(t)
	brief := func() protocol.State {
		return must(w.kit.Gov.Briefs.Brief(w.ctx, w.agent, governance.BriefRequest{Session: w.session}))(t).NextAction
	}
	if v := must(w.kit.Gov.Changes.ClearViolation(w.ctx, w.alice, b.Violation, "fixed", "Reverted."))(t); len(v.Approvals) != 1 {
		t.Fatalf("first clear %+v, want 1 of 2", v)
	}
	if s := brief(); s != protocol.HardStop {
		t.Fatalf("after 1 of 2: %s, want HARD_STOP", s)
	}
	must(w.kit.Gov.Changes.ClearViolation(w.ctx, w.bob, b.Violation, "fixed", "Agreed."))(t)
	if s := brief(); s != protocol.DecisionRequired {
		t.Fatalf("after 2 of 2: %s, want DECISION_REQUIRED (the gate is still open)", s)
	}
}

func TestACorruptBreachIsAnError(t *testing.T) {
	breached := func(t *testing.T, w *world) governance.ScopeBreach {
		run := must(w.Ledger.StartRun(t.Context(), w.agent, w.session, "hook", ""))(t).ID
		return must(w.Gov.ScopeBreaches.Report(t.Context(), w.agent, run, migrate))(t)
	}
	testkit.CorruptRows(t, newWorld, []testkit.CorruptRow[*world]{
		{Name: "a breach whose files are not JSON fails the brief", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			b := breached(t, w)
			w.Corrupt(`UPDATE scope_breaches SET files = 'db/x.sql' WHERE id = ?`, b.ID)
			return fmt.Sprintf("scope_breaches row %d, column files: not a JSON list", b.ID), func() error {
				_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session})
				return err
			}
		}},
		{Name: "a breach whose scope is not JSON fails the attention queue", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			b := breached(t, w)
			w.Corrupt(`UPDATE scope_breaches SET scope = '{' WHERE id = ?`, b.ID)
			return fmt.Sprintf("scope_breaches row %d, column scope: not a JSON list", b.ID), func() error {
				_, err := w.Gov.Attention.List(t.Context())
				return err
			}
		}},
	})
}
