package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// world is a kit with a lead, an agent and a session of that agent.
type world struct {
	t       *testing.T
	kit     *testkit.Kit
	lead    auth.Actor
	agent   auth.Actor
	session string
	// last is the id of the last brief taken, which the next brief
	// acknowledges.
	last string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	kit := testkit.New(t)
	w := &world{t: t, kit: kit}
	w.lead, _ = kit.Lead()
	w.agent, _ = kit.Agent()
	w.session = kit.Session(w.agent, kit.Mission(w.lead, false))
	return w
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) run(name string) ledger.Run {
	w.t.Helper()
	r, err := w.kit.Ledger.StartRun(context.Background(), w.agent, w.session, name, "")
	w.must(err)
	return r
}

func (w *world) ask(run string, prompt string) ledger.Ask {
	w.t.Helper()
	a, err := w.kit.Ledger.RecordAsk(context.Background(), w.agent, run, ledger.AskInput{Prompt: prompt,
		Options: map[string]string{"1": "Yes", "2": "No"}})
	w.must(err)
	return a
}

func (w *world) answer(ask string) ledger.Ask {
	w.t.Helper()
	a, err := w.kit.Ledger.AnswerAsk(context.Background(), w.lead, ask, "1")
	w.must(err)
	return a
}

// call records a tool call; writes nil leaves it to the registry (an
// unclassified tool is side-effecting), started nil is now.
func (w *world) call(run, server, tool string, writes *bool, started *time.Time) ledger.ToolCall {
	w.t.Helper()
	c, err := w.kit.Ledger.RecordToolCall(context.Background(), w.agent, run, ledger.ToolCallInput{Server: server, Tool: tool,
		SideEffecting: writes, StartedAt: started})
	w.must(err)
	return c
}

func (w *world) gate(title string) governance.Decision {
	w.t.Helper()
	d, err := w.kit.Gov.Decisions.Open(context.Background(), w.agent, w.session, governance.DecisionInput{Title: title,
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
	w.must(err)
	return d
}

func (w *world) resolve(ref string) {
	w.t.Helper()
	_, err := w.kit.Gov.Decisions.Resolve(context.Background(), w.lead, ref, "Keep it.", "Archive instead.")
	w.must(err)
}

// brief takes a brief as a well-behaved agent does, acknowledging the
// brief before.
func (w *world) brief() governance.Brief {
	w.t.Helper()
	b, err := w.kit.Gov.Briefs.Brief(context.Background(), w.agent, governance.BriefRequest{Session: w.session, Ack: w.last})
	w.must(err)
	w.last = b.BriefID
	return b
}

// briefNoAck takes a brief as an agent that never acknowledges does.
func (w *world) briefNoAck() governance.Brief {
	w.t.Helper()
	b, err := w.kit.Gov.Briefs.Brief(context.Background(), w.agent, governance.BriefRequest{Session: w.session})
	w.must(err)
	return b
}

// report runs one report with default options.
func (w *world) report(name string) audit.Result {
	w.t.Helper()
	return w.reportWith(name, audit.Options{})
}

func (w *world) reportWith(name string, opts audit.Options) audit.Result {
	w.t.Helper()
	res, err := w.kit.Audit.Run(context.Background(), name, opts)
	w.must(err)
	if len(res.Rows) != recordCount(res) {
		w.t.Fatalf("%s: %d display rows but %d typed rows", name, len(res.Rows), recordCount(res))
	}
	for i, row := range res.Rows {
		if len(row) != len(res.Columns) {
			w.t.Fatalf("%s row %d has %d cells for %d columns", name, i, len(row), len(res.Columns))
		}
	}
	return res
}

func recordCount(r audit.Result) int {
	switch recs := r.Records.(type) {
	case []audit.UnanswerableAsk:
		return len(recs)
	case []audit.PrematureSideEffect:
		return len(recs)
	case []audit.UndeliveredResolution:
		return len(recs)
	case []audit.StaleGate:
		return len(recs)
	case []audit.BlockedChange:
		return len(recs)
	case []audit.UnacknowledgedDelivery:
		return len(recs)
	case []audit.UngovernedToolCall:
		return len(recs)
	}
	panic("unknown records type")
}

func ptr[T any](v T) *T { return &v }

// blockedChange reports a change while a person has the brake on: it is
// refused (code_change_blocked) and kept for blocked-changes.
func (w *world) blockedChange(path string) {
	w.t.Helper()
	ctx := context.Background()
	_, err := w.kit.Gov.Sessions.Pause(ctx, w.lead, w.session, "Hold the release")
	w.must(err)
	_, err = w.kit.Gov.Changes.Report(ctx, w.agent, w.session, change.Change{Files: []change.File{{Path: path, Content: "x\n"}}})
	if errs.CodeOf(err) != "code_change_blocked" {
		w.t.Fatalf("a change on a paused session: %v, want code_change_blocked", err)
	}
	_, err = w.kit.Gov.Sessions.Resume(ctx, w.lead, w.session)
	w.must(err)
}

// cleanRun is a run that does everything right: it reads, asks, waits for
// the answer, then writes and completes; and a gate that is resolved and
// delivered, and one opened a moment ago.
func (w *world) cleanRun() {
	w.t.Helper()
	r := w.run("graph-ask-demo")
	w.call(r.ID, "claude-code", "Read", nil, nil)
	a := w.ask(r.ID, "save this reading?")
	w.kit.Clock.Advance(time.Minute)
	w.answer(a.ID)
	w.kit.Clock.Advance(time.Second)
	w.call(r.ID, "Vodou-Recall", "memory_store", nil, nil)
	_, err := w.kit.Ledger.FinishRun(context.Background(), w.agent, r.ID, ledger.Complete)
	w.must(err)
	d := w.gate("Schema")
	w.resolve(d.Ref)
	w.brief()
	w.brief() // acknowledges the resolution
	w.gate("Fresh")
	w.kit.Clock.Advance(time.Hour)
}

func TestEveryReportIsEmptyOnACleanRun(t *testing.T) {
	w := newWorld(t)
	w.cleanRun()
	results, err := w.kit.Audit.RunAll(context.Background(), audit.Options{})
	w.must(err)
	if len(results) != 7 {
		t.Fatalf("RunAll gave %d reports, want 7", len(results))
	}
	for i, res := range results {
		if res.Report.Name != audit.Names()[i] {
			t.Errorf("report %d is %s, want %s", i, res.Report.Name, audit.Names()[i])
		}
		if !res.Passing() || len(res.Rows) != 0 || recordCount(res) != 0 {
			t.Errorf("%s found %d rows on a clean run: %v", res.Report.Name, len(res.Rows), res.Rows)
		}
		b, err := json.Marshal(res)
		w.must(err)
		if want := `{"report":"` + res.Report.Name + `","rows":[]}`; string(b) != want {
			t.Errorf("JSON %s, want %s", b, want)
		}
	}
}

func TestPrematureSideEffects(t *testing.T) {
	t.Run("a side effect reported as started before the answer is found", func(t *testing.T) {
		w := newWorld(t)
		r := w.run("import")
		a := w.ask(r.ID, "write the file?")
		w.kit.Clock.Advance(10 * time.Minute)
		answered := w.answer(a.ID)
		earlier := answered.AnsweredAt.Add(-3 * time.Minute)
		c := w.call(r.ID, "fs", "write_file", ptr(true), &earlier)
		w.call(r.ID, "claude-code", "Read", nil, &earlier) // reads are not side effects
		w.call(r.ID, "fs", "write_file", ptr(true), nil)   // after the answer: fine

		res := w.report(audit.PrematureSideEffects)
		recs := res.Records.([]audit.PrematureSideEffect)
		if len(recs) != 1 {
			t.Fatalf("found %d rows, want 1: %v", len(recs), res.Rows)
		}
		got := recs[0]
		if got.RunID != r.ID || got.SessionID != w.session || got.ToolCallID != c.ID || got.Tool != "write_file" ||
			got.Server != "fs" || got.AskID != a.ID || !got.StartedAt.Equal(earlier) ||
			got.AnsweredAt == nil || !got.AnsweredAt.Equal(*answered.AnsweredAt) {
			t.Errorf("row %+v", got)
		}
		wantRow := []string{r.ID, w.session, itoa(c.ID), "fs", "write_file", earlier.Format(time.RFC3339Nano), a.ID,
			answered.AnsweredAt.Format(time.RFC3339Nano), "tool_call", "", "", "", "", ""}
		if strings.Join(res.Rows[0], "|") != strings.Join(wantRow, "|") {
			t.Errorf("display row %q, want %q", res.Rows[0], wantRow)
		}
	})

	t.Run("memory_store ran, then the run parked to ask permission for it", func(t *testing.T) {
		w := newWorld(t)
		r := w.run("graph-ask-demo")
		w.call(r.ID, "claude-code", "Grep", nil, nil)                   // read-only
		store := w.call(r.ID, "Vodou-Recall", "memory_store", nil, nil) // unclassified: side-effecting
		w.kit.Clock.Advance(time.Second)
		a := w.ask(r.ID, "save this reading?")

		recs := w.report(audit.PrematureSideEffects).Records.([]audit.PrematureSideEffect)
		if len(recs) != 1 || recs[0].ToolCallID != store.ID || recs[0].AskID != a.ID || recs[0].AnsweredAt != nil {
			t.Fatalf("while the ask waits: %+v, want memory_store against the unanswered ask", recs)
		}
		b, err := json.Marshal(w.report(audit.PrematureSideEffects))
		w.must(err)
		if !strings.Contains(string(b), `"answered_at":null`) || !strings.Contains(string(b), `"tool":"memory_store"`) {
			t.Errorf("JSON %s", b)
		}

		w.kit.Clock.Advance(time.Minute)
		w.answer(a.ID)
		recs = w.report(audit.PrematureSideEffects).Records.([]audit.PrematureSideEffect)
		if len(recs) != 1 || recs[0].ToolCallID != store.ID || recs[0].AnsweredAt == nil {
			t.Fatalf("after the answer: %+v, want memory_store still listed: the answer no longer mattered", recs)
		}
	})

	t.Run("a side effect in another run is not governed by this run's ask", func(t *testing.T) {
		w := newWorld(t)
		other := w.run("other")
		w.call(other.ID, "fs", "write_file", ptr(true), nil)
		r := w.run("asks")
		w.kit.Clock.Advance(time.Second)
		w.ask(r.ID, "go on?")
		if res := w.report(audit.PrematureSideEffects); !res.Passing() {
			t.Errorf("found %v", res.Rows)
		}
	})
}

func TestUnanswerableAsks(t *testing.T) {
	w := newWorld(t)
	// A parked run's question is answerable: not listed.
	parked := w.run("parked")
	w.ask(parked.ID, "deploy?")
	if res := w.report(audit.UnanswerableAsks); !res.Passing() {
		t.Fatalf("a parked run's ask is listed: %v", res.Rows)
	}

	// The database refuses the state the report looks for both ways: it
	// cannot end a run holding a question (the UPDATE trigger), nor take
	// an unanswered ask on a run that has ended (the INSERT trigger). So
	// it is written as a database from before the INSERT trigger held it:
	// the run first, already complete, then the ask.
	now := w.kit.Clock.Now()
	exec := func(q string, args ...any) error {
		_, err := w.kit.SQL().Exec(q, args...)
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(exec(`INSERT INTO runs (id, session_id, name, status, started_at, ended_at) VALUES (?, ?, 'legacy', 'complete', ?, ?)`,
		"run_legacy", w.session, db.FormatTime(now.Add(-time.Hour)), db.FormatTime(now.Add(-time.Minute))))
	insertAsk := func() error {
		return exec(`INSERT INTO asks (id, run_id, prompt, options, parked_from, created_at) VALUES (?, ?, ?, ?, 'complete', ?)`,
			"ask_legacy", "run_legacy", "save this reading to memory?", `{"1":"Yes","2":"No"}`, db.FormatTime(now))
	}
	if err := insertAsk(); err == nil || !strings.Contains(err.Error(), "ask_on_terminal_run") {
		t.Fatalf("an unanswered ask inserted on a complete run: %v, want the trigger's ask_on_terminal_run", err)
	}
	drop := `DROP TRIGGER asks_no_open_ask_on_terminal_run`
	if testkit.Postgres() {
		drop += ` ON asks`
	}
	must(exec(drop))
	must(insertAsk())

	res := w.report(audit.UnanswerableAsks)
	recs := res.Records.([]audit.UnanswerableAsk)
	if len(recs) != 1 {
		t.Fatalf("found %d rows, want 1: %v", len(recs), res.Rows)
	}
	want := audit.UnanswerableAsk{RunID: "run_legacy", RunStatus: "complete", SessionID: w.session, AskID: "ask_legacy",
		Prompt: "save this reading to memory?", AskedAt: now}
	if recs[0] != want {
		t.Errorf("row %+v, want %+v", recs[0], want)
	}
	if got := strings.Join(res.Rows[0], "|"); got != "run_legacy|complete|"+w.session+"|ask_legacy|save this reading to memory?|2026-11-29T12:00:00Z" {
		t.Errorf("display row %s", got)
	}

	// Answering it (a person, in the database) clears the report.
	must(exec(`UPDATE asks SET answer = '2', answered_at = ? WHERE id = 'ask_legacy'`, db.FormatTime(now)))
	if res := w.report(audit.UnanswerableAsks); !res.Passing() {
		t.Errorf("an answered ask is listed: %v", res.Rows)
	}
}

func TestBlockedChanges(t *testing.T) {
	w := newWorld(t)
	if res := w.report(audit.BlockedChanges); !res.Passing() {
		t.Fatalf("a fresh database lists %v", res.Rows)
	}
	at := w.kit.Clock.Now()
	w.blockedChange("web/app.js")
	w.kit.Clock.Advance(time.Minute)
	// Released, the same change is accepted and adds no row.
	if _, err := w.kit.Gov.Changes.Report(context.Background(), w.agent, w.session,
		change.Change{Files: []change.File{{Path: "web/app.js", Content: "x\n"}}}); err != nil {
		t.Fatal(err)
	}
	res := w.report(audit.BlockedChanges)
	recs := res.Records.([]audit.BlockedChange)
	if len(recs) != 1 {
		t.Fatalf("found %d rows, want 1: %v", len(recs), res.Rows)
	}
	got := recs[0]
	if got.SessionID != w.session || got.Agent == "" || !got.AttemptedAt.Equal(at) || got.Code != "paused" ||
		!strings.Contains(got.Reason, "Hold the release") || strings.Join(got.Files, ",") != "web/app.js" {
		t.Errorf("row %+v", got)
	}
	wantRow := []string{itoa(got.ID), w.session, got.Agent, "2026-11-29T12:00:00Z", "paused", got.Reason, "web/app.js"}
	if strings.Join(res.Rows[0], "|") != strings.Join(wantRow, "|") {
		t.Errorf("display row %q, want %q", res.Rows[0], wantRow)
	}
}

func TestUndeliveredResolutions(t *testing.T) {
	w := newWorld(t)
	open := w.gate("Still open")
	d := w.gate("Schema")
	w.resolve(d.Ref)
	resolvedAt := w.kit.Clock.Now()
	w.kit.Clock.Advance(2*time.Hour + 30*time.Second)

	res := w.report(audit.UndeliveredResolutions)
	recs := res.Records.([]audit.UndeliveredResolution)
	if len(recs) != 1 {
		t.Fatalf("found %d rows, want 1: %v", len(recs), res.Rows)
	}
	want := audit.UndeliveredResolution{Ref: d.Ref, SessionID: w.session, ResolvedAt: resolvedAt, ResolvedBy: w.lead.Email,
		Age: "2h30s", AgeSeconds: 7230}
	if recs[0] != want {
		t.Errorf("row %+v, want %+v", recs[0], want)
	}
	if recs[0].Ref == open.Ref {
		t.Error("an open gate is listed as an undelivered resolution")
	}

	t.Run("the age is counted from the now passed in", func(t *testing.T) {
		r := w.reportWith(audit.UndeliveredResolutions, audit.Options{Now: resolvedAt.Add(90 * time.Minute)})
		if got := r.Records.([]audit.UndeliveredResolution)[0].Age; got != "1h30m" {
			t.Errorf("age %s, want 1h30m", got)
		}
	})

	w.brief()
	if res := w.report(audit.UndeliveredResolutions); !res.Passing() {
		t.Errorf("a delivered resolution is listed: %v", res.Rows)
	}
}

func TestUndeliveredResolutionsWaitForTheMinimumAge(t *testing.T) {
	w := newWorld(t)
	d := w.gate("Schema")
	w.resolve(d.Ref)
	resolvedAt := w.kit.Clock.Now()
	listed := func(opts audit.Options) bool {
		t.Helper()
		res := w.reportWith(audit.UndeliveredResolutions, opts)
		if opts.MinAge == 0 && res.MinAge != audit.DefaultMinAge {
			t.Errorf("the result says min age %s, want the default %s", res.MinAge, audit.DefaultMinAge)
		}
		return !res.Passing()
	}

	t.Run("a resolution three seconds old is in flight, not a row", func(t *testing.T) {
		if listed(audit.Options{Now: resolvedAt.Add(3 * time.Second)}) {
			t.Error("listed three seconds after the resolve")
		}
	})
	t.Run("one exactly the minimum age old is not a row yet", func(t *testing.T) {
		if listed(audit.Options{Now: resolvedAt.Add(audit.DefaultMinAge)}) {
			t.Error("listed at exactly the default minimum age")
		}
	})
	t.Run("one older than the default five minutes is a row", func(t *testing.T) {
		if audit.DefaultMinAge != 5*time.Minute {
			t.Errorf("DefaultMinAge %s, want 5m (the documented default)", audit.DefaultMinAge)
		}
		if !listed(audit.Options{Now: resolvedAt.Add(5*time.Minute + time.Second)}) {
			t.Error("not listed five minutes and a second after the resolve")
		}
	})
	t.Run("MinAge moves the line both ways", func(t *testing.T) {
		if !listed(audit.Options{Now: resolvedAt.Add(2 * time.Minute), MinAge: time.Minute}) {
			t.Error("not listed at two minutes with a one-minute minimum")
		}
		if listed(audit.Options{Now: resolvedAt.Add(time.Hour), MinAge: 2 * time.Hour}) {
			t.Error("listed at one hour with a two-hour minimum")
		}
	})
	t.Run("a negative MinAge is refused", func(t *testing.T) {
		_, err := w.kit.Audit.Run(context.Background(), audit.UndeliveredResolutions, audit.Options{MinAge: -time.Minute})
		if errs.KindOf(err) != errs.Invalid || errs.CodeOf(err) != "invalid_min_age" {
			t.Errorf("negative min age: %v (%s)", err, errs.CodeOf(err))
		}
	})
}

func TestStaleGates(t *testing.T) {
	w := newWorld(t)
	old := w.gate("Old")
	openedAt := w.kit.Clock.Now()
	resolved := w.gate("Resolved")
	w.kit.Clock.Advance(20 * time.Hour)
	w.resolve(resolved.Ref)
	w.gate("Young")
	w.kit.Clock.Advance(5 * time.Hour) // Old is 25h open, Young 5h

	res := w.report(audit.StaleGates)
	recs := res.Records.([]audit.StaleGate)
	if len(recs) != 1 {
		t.Fatalf("found %d rows, want 1: %v", len(recs), res.Rows)
	}
	want := audit.StaleGate{Ref: old.Ref, SessionID: w.session, Title: "Old", OpenedAt: openedAt, Age: "25h", AgeSeconds: 25 * 3600}
	if recs[0] != want {
		t.Errorf("row %+v, want %+v", recs[0], want)
	}
	if res.OlderThan != audit.DefaultOlderThan {
		t.Errorf("older than %s, want the default 24h", res.OlderThan)
	}

	for _, tc := range []struct {
		olderThan time.Duration
		want      int
	}{{36 * time.Hour, 0}, {25 * time.Hour, 0}, {25*time.Hour - time.Second, 1}, {4 * time.Hour, 2}} {
		r := w.reportWith(audit.StaleGates, audit.Options{OlderThan: tc.olderThan})
		if len(r.Rows) != tc.want {
			t.Errorf("older than %s: %d rows, want %d: %v", tc.olderThan, len(r.Rows), tc.want, r.Rows)
		}
	}

	w.resolve(old.Ref)
	if res := w.report(audit.StaleGates); !res.Passing() {
		t.Errorf("a resolved gate is listed: %v", res.Rows)
	}
}

func TestRunRefuses(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.kit.Audit.Run(ctx, "everything", audit.Options{})
	if errs.KindOf(err) != errs.NotFound || errs.CodeOf(err) != "unknown_report" {
		t.Errorf("unknown report: %v (%s)", err, errs.CodeOf(err))
	}
	if _, err := w.kit.Audit.RunAll(ctx, audit.Options{}, audit.StaleGates, "nope"); errs.CodeOf(err) != "unknown_report" {
		t.Errorf("RunAll with an unknown report: %v", err)
	}
	_, err = w.kit.Audit.Run(ctx, audit.StaleGates, audit.Options{OlderThan: -time.Hour})
	if errs.KindOf(err) != errs.Invalid || errs.CodeOf(err) != "invalid_older_than" {
		t.Errorf("negative age: %v (%s)", err, errs.CodeOf(err))
	}
}

// TestParseAges checks the two age parsers, which take the same forms and
// differ in their default and their error code.
func TestParseAges(t *testing.T) {
	type tc struct {
		in   string
		want time.Duration
		ok   bool
	}
	// Refused by both.
	bad := []tc{{"0", 0, false}, {"-5h", 0, false}, {"0d", 0, false}, {"1.5d", 0, false}, {"soon", 0, false},
		{"36", 0, false}, {"999999999d", 0, false}}
	for _, p := range []struct {
		name  string
		parse func(string) (time.Duration, error)
		code  string
		cases []tc
	}{
		{"ParseOlderThan", audit.ParseOlderThan, "invalid_older_than", []tc{{"", audit.DefaultOlderThan, true},
			{"36h", 36 * time.Hour, true}, {"90m", 90 * time.Minute, true}, {"7d", 7 * 24 * time.Hour, true}, {" 1h30m ", 90 * time.Minute, true}}},
		{"ParseMinAge", audit.ParseMinAge, "invalid_min_age", []tc{{"", audit.DefaultMinAge, true},
			{"10m", 10 * time.Minute, true}, {"30s", 30 * time.Second, true}, {"1d", 24 * time.Hour, true}}},
	} {
		for _, c := range append(p.cases, bad...) {
			got, err := p.parse(c.in)
			switch {
			case c.ok && (err != nil || got != c.want):
				t.Errorf("%s(%q) = %s, %v; want %s", p.name, c.in, got, err, c.want)
			case !c.ok && (errs.KindOf(err) != errs.Invalid || errs.CodeOf(err) != p.code):
				t.Errorf("%s(%q) = %s, %v; want %s", p.name, c.in, got, err, p.code)
			}
		}
	}
}

func TestReportsMetadata(t *testing.T) {
	names := map[string]bool{}
	for _, r := range audit.Reports() {
		if names[r.Name] || r.Title == "" || r.Finds == "" || r.Passing == "" || len(r.Columns) == 0 {
			t.Errorf("report %+v: duplicate or incomplete", r)
		}
		names[r.Name] = true
	}
	want := []string{"unanswerable-asks", "premature-side-effects", "undelivered-resolutions", "stale-gates", "blocked-changes",
		"unacknowledged-deliveries", "ungoverned-tool-calls"}
	if strings.Join(audit.Names(), " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", audit.Names(), want)
	}
	// The JSON keys of each report's rows are its columns (plus age_seconds).
	for _, rec := range []struct {
		name string
		v    any
	}{
		{audit.UnanswerableAsks, audit.UnanswerableAsk{}},
		{audit.PrematureSideEffects, audit.PrematureSideEffect{}},
		{audit.UndeliveredResolutions, audit.UndeliveredResolution{}},
		{audit.StaleGates, audit.StaleGate{}},
		{audit.BlockedChanges, audit.BlockedChange{}},
		{audit.UnacknowledgedDeliveries, audit.UnacknowledgedDelivery{}},
	} {
		b, _ := json.Marshal(rec.v)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		r, _ := audit.Lookup(rec.name)
		for _, c := range r.Columns {
			if _, ok := m[c]; !ok {
				t.Errorf("%s: column %s is not a JSON key of its rows (%s)", rec.name, c, b)
			}
		}
	}
}

func TestWriters(t *testing.T) {
	r, _ := audit.Lookup(audit.UnanswerableAsks)
	res := audit.Result{Report: r, Columns: r.Columns, Rows: [][]string{
		{"run_1", "complete", "ses_1", "ask_1", "=HYPERLINK(\"http://evil\")", "2026-11-29T12:00:00Z"},
		{"run_2", "failed", "ses_1", "ask_2", "line one\nline two\x1b[31m, \"quoted\"", "2026-11-29T12:00:01.5Z"},
	}}

	t.Run("CSV has a header, quotes what needs quoting and defuses formulas", func(t *testing.T) {
		var b bytes.Buffer
		if err := audit.WriteCSV(&b, res); err != nil {
			t.Fatal(err)
		}
		want := "run_id,run_status,session_id,ask_id,prompt,asked_at\n" +
			"run_1,complete,ses_1,ask_1,\"'=HYPERLINK(\"\"http://evil\"\")\",2026-11-29T12:00:00Z\n" +
			"run_2,failed,ses_1,ask_2,\"line one\nline two⟨U+001B⟩[31m, \"\"quoted\"\"\",2026-11-29T12:00:01.5Z\n"
		if b.String() != want {
			t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
		}
	})

	t.Run("a table is aligned, one line a row, without control characters", func(t *testing.T) {
		var b bytes.Buffer
		if err := audit.WriteTable(&b, res); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 5 || lines[0] != "unanswerable-asks — Unanswerable asks" || lines[4] != "2 rows" {
			t.Fatalf("table:\n%s", b.String())
		}
		if strings.Index(lines[1], "prompt") != strings.Index(lines[2], "=HYPERLINK") ||
			strings.Index(lines[1], "prompt") != strings.Index(lines[3], "line one") {
			t.Errorf("columns not aligned:\n%s", b.String())
		}
		if strings.ContainsRune(b.String(), '\x1b') {
			t.Errorf("an escape sequence reached the terminal: %q", b.String())
		}
	})

	t.Run("a tool name that would retitle the terminal or reorder a line is shown, not obeyed", func(t *testing.T) {
		evil := audit.Result{Report: r, Columns: r.Columns, Rows: [][]string{
			{"run_3", "complete", "ses_1", "ask_3", "\x1b]0;pwned\x07\x1b[2K\rinvoice\u202Efdp.exe\x00\u009b2J", "2026-11-29T12:00:00Z"},
		}}
		for name, write := range map[string]func(*bytes.Buffer) error{
			"CSV":   func(b *bytes.Buffer) error { return audit.WriteCSV(b, evil) },
			"table": func(b *bytes.Buffer) error { return audit.WriteTable(b, evil) },
		} {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			for _, r := range []rune{'\x1b', '\x07', '\r', '\x00', '\u202E', '\u009b'} {
				if strings.ContainsRune(b.String(), r) {
					t.Errorf("%s: %U reached the terminal: %q", name, r, b.String())
				}
			}
			if !strings.Contains(b.String(), "⟨U+202E⟩") {
				t.Errorf("%s: the override is not shown: %q", name, b.String())
			}
		}
	})

	t.Run("a passing report says so", func(t *testing.T) {
		var b bytes.Buffer
		if err := audit.WriteTable(&b, audit.Result{Report: r, Columns: r.Columns, Rows: [][]string{}}); err != nil {
			t.Fatal(err)
		}
		if b.String() != "unanswerable-asks — Unanswerable asks\n0 rows — passing\n" {
			t.Errorf("table %q", b.String())
		}
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestUnacknowledgedDeliveries(t *testing.T) {
	lease := audit.DefaultLease
	listed := func(w *world, opts audit.Options) []audit.UnacknowledgedDelivery {
		t.Helper()
		res := w.reportWith(audit.UnacknowledgedDeliveries, opts)
		if opts.Lease == 0 && res.Lease != w.kit.Audit.DeliveryLease() {
			t.Errorf("the result says lease %s, want the service's %s", res.Lease, w.kit.Audit.DeliveryLease())
		}
		return res.Records.([]audit.UnacknowledgedDelivery)
	}

	t.Run("a resolution delivered and never acknowledged is a row once past its lease, and not before", func(t *testing.T) {
		w := newWorld(t)
		d := w.gate("Schema")
		w.resolve(d.Ref)
		b := w.briefNoAck()
		at := w.kit.Clock.Now()
		if got := listed(w, audit.Options{Now: at.Add(lease - time.Second)}); len(got) != 0 {
			t.Errorf("listed within its lease: %+v", got)
		}
		got := listed(w, audit.Options{Now: at.Add(lease + 30*time.Second)})
		want := []audit.UnacknowledgedDelivery{{Kind: audit.DeliveryResolution, Ref: d.Ref, SessionID: w.session,
			DeliveredAt: at, LastDeliveredAt: at, UnacknowledgedFor: "2m30s", UnacknowledgedSeconds: 150, BriefID: b.BriefID}}
		if len(got) != 1 || got[0] != want[0] {
			t.Errorf("rows %+v, want %+v", got, want)
		}
	})

	t.Run("an acknowledged delivery is never a row", func(t *testing.T) {
		w := newWorld(t)
		d := w.gate("Schema")
		w.resolve(d.Ref)
		w.brief()
		w.kit.Clock.Advance(time.Second)
		w.brief()
		w.kit.Clock.Advance(24 * time.Hour)
		if got := listed(w, audit.Options{}); len(got) != 0 {
			t.Errorf("an acknowledged resolution is listed: %+v", got)
		}
	})

	t.Run("a redelivered one keeps its first delivered_at and stays listed: it went a whole lease unacknowledged", func(t *testing.T) {
		w := newWorld(t)
		d := w.gate("Schema")
		w.resolve(d.Ref)
		first := w.briefNoAck()
		firstAt := w.kit.Clock.Now()
		w.kit.Clock.Advance(lease + time.Minute)
		again := w.briefNoAck()
		if len(again.Resolutions) != 1 || !again.Resolutions[0].Redelivered {
			t.Fatalf("the second brief did not redeliver: %+v", again.Resolutions)
		}
		lastAt := w.kit.Clock.Now()
		if got := listed(w, audit.Options{}); len(got) != 1 || got[0].UnacknowledgedFor != "3m" {
			t.Errorf("just after its redelivery, rows %+v, want one, 3m unacknowledged", got)
		}
		w.kit.Clock.Advance(lease)
		got := listed(w, audit.Options{})
		if len(got) != 1 {
			t.Fatalf("rows %+v, want one", got)
		}
		if !got[0].DeliveredAt.Equal(firstAt) || !got[0].LastDeliveredAt.Equal(lastAt) || got[0].BriefID != again.BriefID ||
			got[0].BriefID == first.BriefID || got[0].UnacknowledgedFor != "5m" {
			t.Errorf("row %+v: want delivered_at %s (the first), last %s, brief %s, 5m unacknowledged", got[0], firstAt, lastAt, again.BriefID)
		}
	})

	t.Run("the lease comes from the service, and Options override it", func(t *testing.T) {
		w := newWorld(t)
		d := w.gate("Schema")
		w.resolve(d.Ref)
		w.briefNoAck()
		at := w.kit.Clock.Now()
		w.kit.Audit = audit.NewService(w.kit.Store, w.kit.Clock.Now, 10*time.Minute)
		if got := listed(w, audit.Options{Now: at.Add(5 * time.Minute)}); len(got) != 0 {
			t.Errorf("listed at 5m with a 10m server lease: %+v", got)
		}
		if got := listed(w, audit.Options{Now: at.Add(11 * time.Minute)}); len(got) != 1 {
			t.Errorf("not listed at 11m with a 10m server lease: %+v", got)
		}
		if got := listed(w, audit.Options{Now: at.Add(time.Minute), Lease: 30 * time.Second}); len(got) != 1 {
			t.Errorf("not listed at 1m with a 30s lease given: %+v", got)
		}
		_, err := w.kit.Audit.Run(context.Background(), audit.UnacknowledgedDeliveries, audit.Options{Lease: -time.Second})
		if errs.CodeOf(err) != "invalid_lease" {
			t.Errorf("a negative lease: %v", err)
		}
	})

	t.Run("remediations and plan answers are listed too; a closed remediation is not", func(t *testing.T) {
		w := newWorld(t)
		ctx := context.Background()
		open, err := w.kit.Gov.Remediations.Request(ctx, w.lead, w.session, governance.RemediationInput{Severity: "required",
			Instruction: "Rename the handler.", Files: []string{"web/app.go"}})
		w.must(err)
		closed, err := w.kit.Gov.Remediations.Request(ctx, w.lead, w.session, governance.RemediationInput{Severity: "advisory",
			Instruction: "Consider a test."})
		w.must(err)
		w.briefNoAck()
		_, err = w.kit.Gov.Remediations.Close(ctx, w.lead, closed.ID, "done")
		w.must(err)

		risky := w.kit.Session(w.agent, w.kit.Mission(w.lead, true))
		p, err := w.kit.Gov.Plans.Propose(ctx, w.agent, risky, governance.PlanInput{Summary: "Migrate billing."})
		w.must(err)
		_, err = w.kit.Gov.Plans.Approve(ctx, w.lead, risky, "Go ahead.")
		w.must(err)
		_, err = w.kit.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: risky})
		w.must(err)

		w.kit.Clock.Advance(lease)
		got := listed(w, audit.Options{})
		var refs []string
		for _, r := range got {
			refs = append(refs, r.Kind+" "+r.Ref)
		}
		want := []string{"plan answer PLAN-" + itoa(p.ID), "remediation REM-" + itoa(open.ID)} // delivered at one time: by kind
		if strings.Join(refs, ", ") != strings.Join(want, ", ") {
			t.Errorf("rows %v, want %v", refs, want)
		}
	})
}

func TestDefaultLeaseIsTheServers(t *testing.T) {
	if audit.DefaultLease != governance.DefaultDeliveryLease {
		t.Errorf("audit.DefaultLease %s, governance.DefaultDeliveryLease %s: the report and the briefs disagree on the default lease",
			audit.DefaultLease, governance.DefaultDeliveryLease)
	}
}
