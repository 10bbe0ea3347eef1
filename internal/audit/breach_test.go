package audit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/governance"
)

// breach reports, on the run, that a Bash call changed files inside a
// blocked scope.
func (w *world) breach(run string, files ...string) governance.ScopeBreach {
	w.t.Helper()
	b, err := w.kit.Gov.ScopeBreaches.Report(context.Background(), w.agent, run,
		governance.ScopeBreachInput{Tool: "Bash", Files: files, Command: "make migrate"})
	w.must(err)
	return b
}

func TestABreachIsAPrematureSideEffect(t *testing.T) {
	t.Run("a breach is a row of its own, with its files, scope and gate, in time order among the calls", func(t *testing.T) {
		w := newWorld(t)
		r := w.run("import")
		w.call(r.ID, "fs", "write_file", ptr(true), nil)
		w.ask(r.ID, "write the file?") // the call above ran ahead of it
		w.kit.Clock.Advance(time.Minute)
		d, err := w.kit.Gov.Decisions.Open(context.Background(), w.agent, w.session, governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy table?", BlockedScope: []string{"db/migrations"}})
		w.must(err)
		other := w.run("hook")
		b := w.breach(other.ID, "db/migrations/0042.sql", "db/migrations/0043.sql")

		res := w.report(audit.PrematureSideEffects)
		recs := res.Records.([]audit.PrematureSideEffect)
		if len(recs) != 2 {
			t.Fatalf("rows %v, want the call and the breach", res.Rows)
		}
		if recs[0].Kind != audit.SideEffectToolCall || recs[0].BreachID != nil || recs[0].DetectedAt != nil || len(recs[0].Files) != 0 {
			t.Errorf("the call's row %+v", recs[0])
		}
		got := recs[1]
		if got.Kind != audit.SideEffectBreach || got.BreachID == nil || *got.BreachID != b.ID || got.RunID != other.ID ||
			got.SessionID != w.session || got.Server != "claude-code" || got.Tool != "Bash" || got.ToolCallID != 0 ||
			got.AskID != "" || got.AnsweredAt != nil || got.DetectedAt == nil || !got.DetectedAt.Equal(w.kit.Clock.Now()) ||
			!got.StartedAt.Equal(*got.DetectedAt) ||
			!slices.Equal(got.Files, []string{"db/migrations/0042.sql", "db/migrations/0043.sql"}) ||
			!slices.Equal(got.Scope, []string{"db/migrations"}) || !slices.Equal(got.Decisions, []string{d.Ref}) {
			t.Errorf("the breach's row %+v", got)
		}
		at := w.kit.Clock.Now().Format(time.RFC3339Nano)
		want := []string{other.ID, w.session, "", "claude-code", "Bash", at, "", "", "breach", itoa(b.ID),
			"db/migrations/0042.sql db/migrations/0043.sql", "db/migrations", d.Ref, at}
		if strings.Join(res.Rows[1], "|") != strings.Join(want, "|") {
			t.Errorf("display row %q, want %q", res.Rows[1], want)
		}
		js, err := json.Marshal(res)
		w.must(err)
		for _, part := range []string{`"kind":"breach"`, `"files":["db/migrations/0042.sql","db/migrations/0043.sql"]`,
			`"kind":"tool_call","breach_id":null,"files":[],"scope":[],"decisions":[],"detected_at":null`} {
			if !strings.Contains(string(js), part) {
				t.Errorf("JSON %s lacks %s", js, part)
			}
		}
	})

	t.Run("a breach stays a row after its violation is cleared and its gate resolved: it ran before its approval", func(t *testing.T) {
		w := newWorld(t)
		d, err := w.kit.Gov.Decisions.Open(context.Background(), w.agent, w.session, governance.DecisionInput{Title: "Schema",
			Question: "Drop it?", BlockedScope: []string{"db/migrations"}})
		w.must(err)
		b := w.breach(w.run("hook").ID, "db/migrations/0042.sql")
		w.resolve(d.Ref)
		if _, err := w.kit.Gov.Changes.ClearViolation(context.Background(), w.lead, b.Violation, "fixed", "Reverted the migration."); err != nil {
			t.Fatal(err)
		}
		if recs := w.report(audit.PrematureSideEffects).Records.([]audit.PrematureSideEffect); len(recs) != 1 || recs[0].Kind != audit.SideEffectBreach {
			t.Errorf("rows %+v, want the breach still listed", recs)
		}
	})

	t.Run("a breach that started earlier comes first", func(t *testing.T) {
		w := newWorld(t)
		b := w.breach(w.run("hook").ID, "db/migrations/0042.sql")
		w.kit.Clock.Advance(time.Minute)
		// The breach's session is HARD_STOP now: the later call is another session's.
		w.session = w.kit.Session(w.agent, w.kit.Mission(w.lead, false))
		r := w.run("later")
		w.call(r.ID, "fs", "write_file", ptr(true), nil)
		w.ask(r.ID, "write it?")
		recs := w.report(audit.PrematureSideEffects).Records.([]audit.PrematureSideEffect)
		if len(recs) != 2 || recs[0].BreachID == nil || *recs[0].BreachID != b.ID || recs[1].Kind != audit.SideEffectToolCall {
			t.Errorf("rows %+v, want the breach first", recs)
		}
	})
}
