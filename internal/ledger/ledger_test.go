package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// world is a workspace with one person of each role, two agents, and one
// session of the first agent.
type world struct {
	*testkit.Kit
	lead, admin, viewer auth.Actor
	agent, other        auth.Actor
	mission, session    string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	k := testkit.New(t)
	w := &world{Kit: k}
	w.lead, _ = k.Lead()
	w.admin, _ = k.Person(auth.Admin)
	w.viewer, _ = k.Person(auth.Viewer)
	w.agent, _ = k.Agent()
	w.other, _ = k.Agent()
	w.mission = k.Mission(w.lead, false)
	w.session = k.Session(w.agent, w.mission)
	return w
}

var yesNo = map[string]string{"1": "Yes", "2": "No"}

// start opens a run on the world's session.
func (w *world) start(t *testing.T, name, parent string) ledger.Run {
	t.Helper()
	r, err := w.Ledger.StartRun(context.Background(), w.agent, w.session, name, parent)
	if err != nil {
		t.Fatalf("start run %q: %v", name, err)
	}
	return r
}

// park asks "save this reading?" on the run.
func (w *world) park(t *testing.T, run string) ledger.Ask {
	t.Helper()
	a, err := w.Ledger.RecordAsk(context.Background(), w.agent, run, ledger.AskInput{Prompt: "save this reading?", Options: yesNo})
	if err != nil {
		t.Fatalf("ask on %s: %v", run, err)
	}
	return a
}

func (w *world) finish(t *testing.T, run, status string) {
	t.Helper()
	if _, err := w.Ledger.FinishRun(context.Background(), w.agent, run, status); err != nil {
		t.Fatalf("finish %s as %s: %v", run, status, err)
	}
}

// answer answers the ask as the lead.
func (w *world) answer(t *testing.T, ask, option string) ledger.Ask {
	t.Helper()
	a, err := w.Ledger.AnswerAsk(context.Background(), w.lead, ask, option)
	if err != nil {
		t.Fatalf("answer %s with %s: %v", ask, option, err)
	}
	return a
}

// raw is the database as SQL sees it (the writer connection, so that it
// reads what was just committed).
func (w *world) raw() testkit.SQL { return w.SQL() }

func (w *world) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := w.raw().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// runState is what a refused call must leave unchanged about a run.
type runState struct {
	Status    string
	EndedAt   sql.NullString
	Asks      int
	OpenAsks  int
	ToolCalls int
}

func (w *world) stateOf(t *testing.T, run string) runState {
	t.Helper()
	var s runState
	if err := w.raw().QueryRow("SELECT status, ended_at FROM runs WHERE id = ?", run).Scan(&s.Status, &s.EndedAt); err != nil {
		t.Fatalf("read run %s: %v", run, err)
	}
	s.Asks = w.count(t, "SELECT count(*) FROM asks WHERE run_id = ?", run)
	s.OpenAsks = w.count(t, "SELECT count(*) FROM asks WHERE run_id = ? AND answered_at IS NULL", run)
	s.ToolCalls = w.count(t, "SELECT count(*) FROM tool_calls WHERE run_id = ?", run)
	return s
}

// totals counts every row of the ledger, and the timeline events.
func (w *world) totals(t *testing.T) string {
	t.Helper()
	return w.totalsBut(t, 0)
}

// totalsBut is totals leaving out the last kept events (the timeline is
// append-only: a test cannot take back the event it expects).
func (w *world) totalsBut(t *testing.T, kept int) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"runs", "asks", "tool_calls", "tools", "events"} {
		n := w.count(t, "SELECT count(*) FROM "+table)
		if table == "events" {
			n -= kept
		}
		fmt.Fprintf(&b, "%s=%d ", table, n)
	}
	answered := w.count(t, "SELECT count(*) FROM asks WHERE answered_at IS NOT NULL")
	fmt.Fprintf(&b, "answered=%d", answered)
	return b.String()
}

// unchanged fails if the run or the ledger changed since before.
func (w *world) unchanged(t *testing.T, run string, beforeRun runState, beforeTotals string) {
	t.Helper()
	if run != "" {
		if after := w.stateOf(t, run); after != beforeRun {
			t.Errorf("a refused call half-wrote run %s:\nbefore %+v\nafter  %+v", run, beforeRun, after)
		}
	}
	if after := w.totals(t); after != beforeTotals {
		t.Errorf("a refused call wrote rows:\nbefore %s\nafter  %s", beforeTotals, after)
	}
}

// refusedOnly fails unless a refused tool call wrote nothing of itself and
// kept the attempt: one tool_call.refused event on the run, naming code.
func (w *world) refusedOnly(t *testing.T, run string, beforeRun runState, beforeTotals, code string) {
	t.Helper()
	var kind, ref, detail string
	if err := w.raw().QueryRow("SELECT kind, ref, detail FROM events ORDER BY id DESC LIMIT 1").Scan(&kind, &ref, &detail); err != nil {
		t.Fatal(err)
	}
	if kind != ledger.RefusedEvent || ref != run || !strings.Contains(detail, code) {
		t.Errorf("the last event is %s %s %q, want the refusal (%s) kept on run %s", kind, ref, detail, code, run)
	}
	if run != "" {
		if after := w.stateOf(t, run); after != beforeRun {
			t.Errorf("a refused call half-wrote run %s:\nbefore %+v\nafter  %+v", run, beforeRun, after)
		}
	}
	if after := w.totalsBut(t, 1); after != beforeTotals {
		t.Errorf("a refused call wrote more than its refusal event:\nbefore %s\nafter  %s (less the refusal)", beforeTotals, after)
	}
}

var kindNames = map[errs.Kind]string{
	errs.Internal: "Internal", errs.Malformed: "Malformed", errs.Unauthorized: "Unauthorized",
	errs.Forbidden: "Forbidden", errs.NotFound: "NotFound", errs.Conflict: "Conflict",
	errs.TooLarge: "TooLarge", errs.Invalid: "Invalid", errs.TooMany: "TooMany",
}

// wantErr fails unless err is a domain error of the kind and code, and
// returns it.
func wantErr(t *testing.T, err error, kind errs.Kind, code string) *errs.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s %s", kindNames[kind], code)
	}
	e, ok := errs.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("got %s %s (%v), want %s %s", kindNames[errs.KindOf(err)], errs.CodeOf(err), err, kindNames[kind], code)
	}
	return e
}

// wantAskDetail fails unless the error names the ask it waits on.
func wantAskDetail(t *testing.T, e *errs.Error, ask string) {
	t.Helper()
	if got := e.Details["ask"]; got != ask {
		t.Errorf("error details %v, want \"ask\": %q", e.Details, ask)
	}
	if !strings.Contains(e.Message, ask) {
		t.Errorf("message %q does not name ask %s", e.Message, ask)
	}
}

func TestStartRun(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	otherSession := w.Session(w.other, w.mission)
	otherRun, err := w.Ledger.StartRun(ctx, w.other, otherSession, "theirs", "")
	if err != nil {
		t.Fatal(err)
	}
	secondSession := w.Session(w.agent, w.mission)
	runOfSecond, err := w.Ledger.StartRun(ctx, w.agent, secondSession, "elsewhere", "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the agent starts a run on its own session, and the run is running", func(t *testing.T) {
		r := w.start(t, "graph-ask-demo", "")
		if r.ID == "" || r.Session != w.session || r.Name != "graph-ask-demo" || r.Status != ledger.Running ||
			r.Parent != "" || r.EndedAt != nil || !r.StartedAt.Equal(w.Clock.Now()) {
			t.Fatalf("started %+v", r)
		}
		if s := w.stateOf(t, r.ID); s.Status != ledger.Running || s.EndedAt.Valid {
			t.Errorf("stored %+v", s)
		}
	})

	refusals := []struct {
		name    string
		actor   auth.Actor
		session string
		runName string
		parent  string
		kind    errs.Kind
		code    string
	}{
		{"another agent's key is forbidden: a key reaches only its own sessions", w.other, w.session, "probes", "", errs.Forbidden, "forbidden"},
		{"a lead does not start runs: the run record is the agent's", w.lead, w.session, "probes", "", errs.Forbidden, "forbidden"},
		{"an admin does not start runs either", w.admin, w.session, "probes", "", errs.Forbidden, "forbidden"},
		{"an unknown session is not found", w.agent, "ses_nope", "probes", "", errs.NotFound, "session_not_found"},
		{"a run needs a name", w.agent, w.session, "  ", "", errs.Invalid, "name_required"},
		{"the parent must be a run: an unknown one is parent_not_found", w.agent, w.session, "phase 2", "run_nope", errs.Invalid, "parent_not_found"},
		{"the parent must be a run of the same session, even the same agent's", w.agent, w.session, "phase 2", runOfSecond.ID, errs.Invalid, "parent_not_found"},
		{"another agent's run is never a parent", w.agent, w.session, "phase 2", otherRun.ID, errs.Invalid, "parent_not_found"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := w.totals(t)
			_, err := w.Ledger.StartRun(ctx, tc.actor, tc.session, tc.runName, tc.parent)
			wantErr(t, err, tc.kind, tc.code)
			w.unchanged(t, "", runState{}, before)
		})
	}

	t.Run("a four-phase skill is one thing a person did: its runs are grouped under the run that asked by the explicit parent id, not a time window", func(t *testing.T) {
		first := w.start(t, "phase 1", "")
		ask := w.park(t, first.ID)
		// The code answering the menu reads the group before answering,
		// because answering clears the ask that identifies it.
		w.Clock.Advance(3 * time.Hour) // a person takes their time
		w.answer(t, ask.ID, "1")
		w.finish(t, first.ID, ledger.Complete)
		var children []string
		for i := 2; i <= 4; i++ {
			w.Clock.Advance(time.Duration(i) * time.Hour)
			c := w.start(t, fmt.Sprintf("phase %d", i), first.ID)
			if c.Parent != first.ID {
				t.Fatalf("child %+v, want parent %s", c, first.ID)
			}
			children = append(children, c.ID)
		}
		// A run started at once after the parent, but without naming it,
		// is not in the group: closeness in time groups nothing.
		w.start(t, "unrelated", "")
		rows, err := w.raw().Query("SELECT id FROM runs WHERE parent_id = ? ORDER BY started_at", first.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		if fmt.Sprint(got) != fmt.Sprint(children) {
			t.Errorf("runs under %s: %v, want %v", first.ID, got, children)
		}
	})

	t.Run("a parked run may be a parent: the group is read before the answer", func(t *testing.T) {
		p := w.start(t, "menu", "")
		w.park(t, p.ID)
		if c := w.start(t, "after the answer", p.ID); c.Parent != p.ID {
			t.Errorf("child %+v", c)
		}
	})
}

func TestRecordAskParksTheRun(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cases := []struct {
		name string
		// before brings the run to the outcome it parks from.
		before     func(t *testing.T, run string)
		parkedFrom string
	}{
		{"recording an ask and parking the run happen in the same call; a running run parks from running",
			func(*testing.T, string) {}, ledger.Running},
		{"a run waiting on a person was already marked complete: it parks from complete, the steps being done",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Complete) }, ledger.Complete},
		{"a phase whose branches partly failed parks from partial",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Partial) }, ledger.Partial},
		{"a failed run may still ask what to do next, and parks from failed",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Failed) }, ledger.Failed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := w.start(t, "graph-ask-demo", "")
			tc.before(t, r.ID)
			w.Clock.Advance(time.Second)
			a, err := w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: "  save this reading?  ", Options: yesNo})
			if err != nil {
				t.Fatal(err)
			}
			if a.ID == "" || a.Run != r.ID || a.Prompt != "save this reading?" || a.ParkedFrom != tc.parkedFrom ||
				a.RunStatus != ledger.Parked || a.AnsweredAt != nil || a.Answer != "" || !a.CreatedAt.Equal(w.Clock.Now()) ||
				fmt.Sprint(a.Options) != fmt.Sprint(yesNo) {
				t.Fatalf("ask %+v", a)
			}
			if s := w.stateOf(t, r.ID); s.Status != ledger.Parked || s.EndedAt.Valid || s.Asks != 1 || s.OpenAsks != 1 {
				t.Errorf("run after the ask: %+v, want parked, not ended, one open ask", s)
			}
			var stored string
			if err := w.raw().QueryRow("SELECT parked_from FROM asks WHERE id = ?", a.ID).Scan(&stored); err != nil || stored != tc.parkedFrom {
				t.Errorf("stored parked_from %q (%v), want %q", stored, err, tc.parkedFrom)
			}
		})
	}

	t.Run("one question at a time: a second ask on a parked run is run_parked, naming the ask it waits on", func(t *testing.T) {
		r := w.start(t, "menu", "")
		first := w.park(t, r.ID)
		before, totals := w.stateOf(t, r.ID), w.totals(t)
		_, err := w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: "and this?", Options: yesNo})
		wantAskDetail(t, wantErr(t, err, errs.Conflict, "run_parked"), first.ID)
		w.unchanged(t, r.ID, before, totals)
	})

	t.Run("once answered, the run may ask again", func(t *testing.T) {
		r := w.start(t, "menu", "")
		w.answer(t, w.park(t, r.ID).ID, "2")
		if a := w.park(t, r.ID); a.ParkedFrom != ledger.Running {
			t.Errorf("second ask %+v", a)
		}
	})

	refusals := []struct {
		name  string
		actor auth.Actor
		run   func(t *testing.T) string
		kind  errs.Kind
		code  string
	}{
		{"another agent's key cannot park this agent's run", w.other, func(t *testing.T) string { return w.start(t, "r", "").ID },
			errs.Forbidden, "forbidden"},
		{"a person does not record asks: the agent does", w.lead, func(t *testing.T) string { return w.start(t, "r", "").ID },
			errs.Forbidden, "forbidden"},
		{"an unknown run is not found", w.agent, func(*testing.T) string { return "run_nope" }, errs.NotFound, "run_not_found"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run(t)
			var before runState
			if run != "run_nope" {
				before = w.stateOf(t, run)
			}
			totals := w.totals(t)
			_, err := w.Ledger.RecordAsk(ctx, tc.actor, run, ledger.AskInput{Prompt: "save?", Options: yesNo})
			wantErr(t, err, tc.kind, tc.code)
			if run == "run_nope" {
				run = ""
			}
			w.unchanged(t, run, before, totals)
		})
	}
}

func TestAskOptions(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	nine := map[string]string{}
	ten := map[string]string{}
	for i := 1; i <= 9; i++ {
		nine[fmt.Sprint(i)] = fmt.Sprintf("Option %d", i)
		ten[fmt.Sprint(i)] = fmt.Sprintf("Option %d", i)
	}
	ten["10"] = "Option 10"
	cases := []struct {
		name    string
		prompt  string
		options map[string]string
		code    string // "" when accepted
	}{
		{"the seed's menu, 1 Yes and 2 No, is an ask", "save this reading?", yesNo, ""},
		{"one option is an ask", "continue?", map[string]string{"1": "Continue"}, ""},
		{"nine options are the most a numbered menu holds", "which one?", nine, ""},
		{"no options is not a menu", "save?", map[string]string{}, "invalid_options"},
		{"nil options is not a menu", "save?", nil, "invalid_options"},
		{"ten options are too many", "which one?", ten, "invalid_options"},
		{"an option numbered 0 is refused", "save?", map[string]string{"0": "Yes", "1": "No"}, "invalid_options"},
		{"an option numbered 10 is refused", "save?", map[string]string{"1": "Yes", "10": "No"}, "invalid_options"},
		{"an option keyed a is refused", "save?", map[string]string{"1": "Yes", "a": "No"}, "invalid_options"},
		{"an empty key is refused", "save?", map[string]string{"": "Yes"}, "invalid_options"},
		{"an option with an empty label is refused", "save?", map[string]string{"1": "Yes", "2": ""}, "invalid_options"},
		{"an option with a blank label is refused", "save?", map[string]string{"1": " \t "}, "invalid_options"},
		{"an ask needs a prompt", "   ", yesNo, "prompt_required"},
		{"a prompt over 2000 characters is refused", strings.Repeat("p", 2001), yesNo, "prompt_too_long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := w.start(t, "menu", "")
			before, totals := w.stateOf(t, r.ID), w.totals(t)
			a, err := w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: tc.prompt, Options: tc.options})
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(a.Options) != len(tc.options) || w.stateOf(t, r.ID).Status != ledger.Parked {
					t.Errorf("ask %+v", a)
				}
				return
			}
			wantErr(t, err, errs.Invalid, tc.code)
			w.unchanged(t, r.ID, before, totals)
		})
	}
}

func TestAnswerAsk(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cases := []struct {
		name       string
		before     func(t *testing.T, run string)
		by         auth.Actor
		option     string
		wantStatus string
		wantEnded  bool
	}{
		{"the outcome the run parked from is stored on the ask itself, so answering restores running",
			func(*testing.T, string) {}, w.lead, "1", ledger.Running, false},
		{"the steps were done: answering restores complete, and the run has ended",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Complete) }, w.lead, "1", ledger.Complete, true},
		{"a phase whose branches partly failed comes back partial, not complete",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Partial) }, w.lead, "2", ledger.Partial, true},
		{"a blocked run comes back blocked",
			func(t *testing.T, run string) { w.finish(t, run, ledger.Blocked) }, w.admin, "2", ledger.Blocked, true},
		{"an admin answers as a lead does", func(*testing.T, string) {}, w.admin, "2", ledger.Running, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := w.start(t, "graph-ask-demo", "")
			tc.before(t, r.ID)
			ask := w.park(t, r.ID)
			w.Clock.Advance(90 * time.Second)
			a, err := w.Ledger.AnswerAsk(ctx, tc.by, ask.ID, tc.option)
			if err != nil {
				t.Fatal(err)
			}
			now := w.Clock.Now()
			if a.RunStatus != tc.wantStatus || a.Answer != tc.option || a.AnsweredAt == nil || !a.AnsweredAt.Equal(now) ||
				a.ParkedFrom != tc.wantStatus {
				t.Fatalf("answered %+v, want run_status %s, answer %s at %v", a, tc.wantStatus, tc.option, now)
			}
			s := w.stateOf(t, r.ID)
			if s.Status != tc.wantStatus || s.EndedAt.Valid != tc.wantEnded || s.OpenAsks != 0 {
				t.Errorf("run after the answer %+v, want %s (ended: %v) with no open ask", s, tc.wantStatus, tc.wantEnded)
			}
			if tc.wantEnded && s.EndedAt.String != db.FormatTime(now) {
				t.Errorf("ended_at %s, want the answer's time %s", s.EndedAt.String, db.FormatTime(now))
			}
			// Who and when: every person's action is recorded.
			var answer, at string
			var by int64
			if err := w.raw().QueryRow("SELECT answer, answered_at, answered_by FROM asks WHERE id = ?", ask.ID).Scan(&answer, &at, &by); err != nil {
				t.Fatal(err)
			}
			if answer != tc.option || at != db.FormatTime(now) || by != tc.by.UserID {
				t.Errorf("stored answer %q at %s by %d, want %q at %s by %d", answer, at, by, tc.option, db.FormatTime(now), tc.by.UserID)
			}
			if n := w.count(t, "SELECT count(*) FROM events WHERE kind = 'ask.answered' AND ref = ? AND actor = ?", ask.ID, tc.by.Label()); n != 1 {
				t.Errorf("%d ask.answered events by %s, want 1", n, tc.by.Label())
			}
		})
	}

	refusals := []struct {
		name   string
		by     auth.Actor
		ask    func(t *testing.T) (run, ask string)
		option string
		kind   errs.Kind
		code   string
	}{
		{"a viewer cannot answer: only a lead picks an option", w.viewer, w.parked, "1", errs.Forbidden, "forbidden"},
		{"the agent cannot answer its own question", w.agent, w.parked, "1", errs.Forbidden, "forbidden"},
		{"another agent cannot answer it either", w.other, w.parked, "1", errs.Forbidden, "forbidden"},
		{"an option that does not exist is invalid_option and nothing is written", w.lead, w.parked, "3", errs.Invalid, "invalid_option"},
		{"an option numbered 0 does not exist", w.lead, w.parked, "0", errs.Invalid, "invalid_option"},
		{"an option's label is not its number", w.lead, w.parked, "Yes", errs.Invalid, "invalid_option"},
		{"no option is not an answer", w.lead, w.parked, "", errs.Invalid, "invalid_option"},
		{"an unknown ask is not found", w.lead, func(*testing.T) (string, string) { return "", "ask_nope" }, "1", errs.NotFound, "ask_not_found"},
		{"an ask can be answered once: the second answer is already_answered", w.lead, func(t *testing.T) (string, string) {
			run, ask := w.parked(t)
			w.answer(t, ask, "1")
			return run, ask
		}, "2", errs.Conflict, "already_answered"},
		{"a second answer is already_answered even with an option that does not exist", w.admin, func(t *testing.T) (string, string) {
			run, ask := w.parked(t)
			w.answer(t, ask, "2")
			return run, ask
		}, "7", errs.Conflict, "already_answered"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			run, ask := tc.ask(t)
			var before runState
			var answerBefore sql.NullString
			if run != "" {
				before = w.stateOf(t, run)
				_ = w.raw().QueryRow("SELECT answer FROM asks WHERE id = ?", ask).Scan(&answerBefore)
			}
			totals := w.totals(t)
			w.Clock.Advance(time.Minute)
			_, err := w.Ledger.AnswerAsk(ctx, tc.by, ask, tc.option)
			wantErr(t, err, tc.kind, tc.code)
			w.unchanged(t, run, before, totals)
			if run != "" {
				var answerAfter sql.NullString
				_ = w.raw().QueryRow("SELECT answer FROM asks WHERE id = ?", ask).Scan(&answerAfter)
				if answerAfter != answerBefore {
					t.Errorf("the refused answer changed the stored answer from %v to %v", answerBefore, answerAfter)
				}
			}
		})
	}
}

// parked starts a run and parks it; it returns the run and the ask.
func (w *world) parked(t *testing.T) (string, string) {
	t.Helper()
	r := w.start(t, "graph-ask-demo", "")
	return r.ID, w.park(t, r.ID).ID
}

func TestARunHoldingAQuestionIsNeverTerminal(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	terminal := []string{ledger.Complete, ledger.Partial, ledger.Blocked, ledger.Failed, ledger.Cancelled}

	for _, status := range terminal {
		t.Run(fmt.Sprintf("finishing a parked run as %s is run_has_open_ask, naming the ask", status), func(t *testing.T) {
			run, ask := w.parked(t)
			before, totals := w.stateOf(t, run), w.totals(t)
			_, err := w.Ledger.FinishRun(ctx, w.agent, run, status)
			wantAskDetail(t, wantErr(t, err, errs.Conflict, "run_has_open_ask"), ask)
			w.unchanged(t, run, before, totals)
		})
		t.Run(fmt.Sprintf("the database refuses it too: raw SQL setting a parked run %s is aborted by the trigger", status), func(t *testing.T) {
			run, _ := w.parked(t)
			before, totals := w.stateOf(t, run), w.totals(t)
			_, err := w.raw().Exec("UPDATE runs SET status = ? WHERE id = ?", status, run)
			if err == nil || !strings.Contains(err.Error(), "run_has_open_ask") {
				t.Fatalf("raw UPDATE to %s: %v, want the trigger's run_has_open_ask", status, err)
			}
			w.unchanged(t, run, before, totals)
		})
	}

	t.Run("the seed's own statement is refused: UPDATE runs SET status='complete' on a parked run", func(t *testing.T) {
		run, _ := w.parked(t)
		_, err := w.raw().Exec(`UPDATE runs SET status='complete' WHERE id=?`, run)
		if err == nil || !strings.Contains(err.Error(), "run_has_open_ask") {
			t.Fatalf("raw UPDATE: %v, want run_has_open_ask", err)
		}
		if s := w.stateOf(t, run); s.Status != ledger.Parked {
			t.Errorf("status %s after the refused UPDATE", s.Status)
		}
	})

	t.Run("the trigger allows what is not terminal, and allows ending once the question is answered", func(t *testing.T) {
		run, ask := w.parked(t)
		if _, err := w.raw().Exec(`UPDATE runs SET status='parked' WHERE id=?`, run); err != nil {
			t.Errorf("raw UPDATE to parked: %v", err)
		}
		w.answer(t, ask, "1")
		if _, err := w.raw().Exec(`UPDATE runs SET status='complete' WHERE id=?`, run); err != nil {
			t.Errorf("raw UPDATE after the answer: %v", err)
		}
	})

	t.Run("answered, the run may finish; finishing twice is run_finished", func(t *testing.T) {
		run, ask := w.parked(t)
		w.answer(t, ask, "1")
		w.Clock.Advance(time.Second)
		r, err := w.Ledger.FinishRun(ctx, w.agent, run, ledger.Complete)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != ledger.Complete || r.EndedAt == nil || !r.EndedAt.Equal(w.Clock.Now()) {
			t.Errorf("finished %+v", r)
		}
		before, totals := w.stateOf(t, run), w.totals(t)
		w.Clock.Advance(time.Second)
		_, err = w.Ledger.FinishRun(ctx, w.agent, run, ledger.Failed)
		wantErr(t, err, errs.Conflict, "run_finished")
		w.unchanged(t, run, before, totals)
	})

	t.Run("a run parked from complete is complete again once answered, and cannot be finished twice", func(t *testing.T) {
		r := w.start(t, "r", "")
		w.finish(t, r.ID, ledger.Complete)
		w.answer(t, w.park(t, r.ID).ID, "1")
		_, err := w.Ledger.FinishRun(ctx, w.agent, r.ID, ledger.Complete)
		wantErr(t, err, errs.Conflict, "run_finished")
	})

	refusals := []struct {
		name   string
		actor  auth.Actor
		run    string
		status string
		kind   errs.Kind
		code   string
	}{
		{"parked is not an outcome to finish with", w.agent, "", ledger.Parked, errs.Invalid, "invalid_status"},
		{"running is not an outcome to finish with", w.agent, "", ledger.Running, errs.Invalid, "invalid_status"},
		{"an unknown outcome is invalid_status", w.agent, "", "done", errs.Invalid, "invalid_status"},
		{"another agent's key cannot finish the run", w.other, "", ledger.Complete, errs.Forbidden, "forbidden"},
		{"a lead does not finish runs", w.lead, "", ledger.Complete, errs.Forbidden, "forbidden"},
		{"an unknown run is not found", w.agent, "run_nope", ledger.Complete, errs.NotFound, "run_not_found"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			var before runState
			if run == "" {
				run = w.start(t, "r", "").ID
				before = w.stateOf(t, run)
			}
			totals := w.totals(t)
			_, err := w.Ledger.FinishRun(ctx, tc.actor, run, tc.status)
			wantErr(t, err, tc.kind, tc.code)
			if tc.run != "" {
				run = ""
			}
			w.unchanged(t, run, before, totals)
		})
	}
}

func TestRecordToolCall(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	yes, no := true, false
	classify := func(t *testing.T, server, tool string, writes bool) {
		t.Helper()
		if _, err := w.Ledger.SetTool(ctx, w.admin, server, tool, ledger.ToolInput{SideEffecting: writes}); err != nil {
			t.Fatal(err)
		}
	}
	classify(t, "mcp-monitor", "get_cpu_info", false)
	classify(t, "mcp-monitor", "get_memory_info", false)
	classify(t, "Vodou-Recall", "memory_store", true)

	cases := []struct {
		name   string
		parked bool
		in     ledger.ToolCallInput
		// want is the recorded is_side_effecting; code is the refusal.
		want bool
		code string
	}{
		{"a call that says it writes is side-effecting", false,
			ledger.ToolCallInput{Server: "fs", Tool: "write_file", SideEffecting: &yes}, true, ""},
		{"a call that says it only reads is not trusted: a tool nobody classified still writes", false,
			ledger.ToolCallInput{Server: "fs", Tool: "read_file", SideEffecting: &no}, true, ""},
		{"the registry wins over the agent: memory_store the registry says writes is side-effecting whatever the call says", false,
			ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", SideEffecting: &no}, true, ""},
		{"a Claude Code built-in the list calls read-only is not side-effecting", false,
			ledger.ToolCallInput{Server: "claude-code", Tool: "Read"}, false, ""},
		{"a Claude Code built-in the list does not call read-only is side-effecting", false,
			ledger.ToolCallInput{Server: "claude-code", Tool: "Edit"}, true, ""},
		{"a tool nobody classified is side-effecting, fail safe", false,
			ledger.ToolCallInput{Server: "fs", Tool: "mystery"}, true, ""},
		{"a tool the registry classifies read-only is not side-effecting", false,
			ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_cpu_info"}, false, ""},
		{"a tool the registry classifies as writing is side-effecting", false,
			ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"}, true, ""},
		{"the call's own flag may raise the registry's classification", false,
			ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_cpu_info", SideEffecting: &yes}, true, ""},
		{"the registry is per server: the same tool name on another server is unclassified", false,
			ledger.ToolCallInput{Server: "other-monitor", Tool: "get_cpu_info"}, true, ""},
		{"memory_store on a parked run is run_parked, naming the ask: the answer must still matter", true,
			ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"}, false, "run_parked"},
		{"a call that says it writes on a parked run is run_parked", true,
			ledger.ToolCallInput{Server: "fs", Tool: "read_file", SideEffecting: &yes}, false, "run_parked"},
		{"an unclassified tool on a parked run is run_parked", true,
			ledger.ToolCallInput{Server: "fs", Tool: "mystery"}, false, "run_parked"},
		{"a stopping point only protects the steps after it: a read-only probe on a parked run is accepted", true,
			ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_memory_info"}, false, ""},
		{"a call that says it only reads, of a tool nobody classified, is still run_parked", true,
			ledger.ToolCallInput{Server: "fs", Tool: "read_file", SideEffecting: &no}, false, "run_parked"},
		{"memory_store saying it only reads is run_parked: the registry wins", true,
			ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", SideEffecting: &no}, false, "run_parked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := w.start(t, "probes", "")
			ask := ""
			if tc.parked {
				ask = w.park(t, r.ID).ID
			}
			w.Clock.Advance(time.Second)
			before, totals := w.stateOf(t, r.ID), w.totals(t)
			c, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, tc.in)
			if tc.code != "" {
				wantAskDetail(t, wantErr(t, err, errs.Conflict, tc.code), ask)
				w.refusedOnly(t, r.ID, before, totals, tc.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.SideEffecting != tc.want || c.Run != r.ID || c.Server != tc.in.Server || c.Tool != tc.in.Tool ||
				!c.StartedAt.Equal(w.Clock.Now()) || !c.RecordedAt.Equal(w.Clock.Now()) {
				t.Errorf("recorded %+v, want side_effecting %v now", c, tc.want)
			}
			var stored bool
			if err := w.raw().QueryRow("SELECT is_side_effecting FROM tool_calls WHERE id = ?", c.ID).Scan(&stored); err != nil || stored != tc.want {
				t.Errorf("stored is_side_effecting %v (%v), want %v", stored, err, tc.want)
			}
			if s := w.stateOf(t, r.ID); s.Status != before.Status {
				t.Errorf("a tool call moved the run from %s to %s", before.Status, s.Status)
			}
		})
	}

	t.Run("an explicit earlier started_at is recorded as reported: that is what the audit is for", func(t *testing.T) {
		r := w.start(t, "import", "")
		w.Clock.Advance(time.Hour)
		earlier := w.Clock.Now().Add(-50 * time.Minute).In(time.FixedZone("CEST", 2*3600))
		c, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", StartedAt: &earlier})
		if err != nil {
			t.Fatal(err)
		}
		if !c.StartedAt.Equal(earlier) || c.StartedAt.Location() != time.UTC || !c.RecordedAt.Equal(w.Clock.Now()) {
			t.Errorf("recorded %+v, want started_at %v in UTC, recorded now", c, earlier)
		}
		var started, recorded string
		if err := w.raw().QueryRow("SELECT started_at, recorded_at FROM tool_calls WHERE id = ?", c.ID).Scan(&started, &recorded); err != nil {
			t.Fatal(err)
		}
		if started != db.FormatTime(earlier) || recorded != db.FormatTime(w.Clock.Now()) {
			t.Errorf("stored started_at %s recorded_at %s", started, recorded)
		}
	})

	t.Run("after the answer the side-effecting call is accepted", func(t *testing.T) {
		run, ask := w.parked(t)
		w.answer(t, ask, "1")
		c, err := w.Ledger.RecordToolCall(ctx, w.agent, run, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"})
		if err != nil || !c.SideEffecting {
			t.Fatalf("call after the answer: %+v, %v", c, err)
		}
	})

	refusals := []struct {
		name  string
		actor auth.Actor
		run   string
		in    ledger.ToolCallInput
		kind  errs.Kind
		code  string
	}{
		{"another agent's key cannot record on this run", w.other, "", ledger.ToolCallInput{Server: "fs", Tool: "read_file", SideEffecting: &no}, errs.Forbidden, "forbidden"},
		{"a lead does not record tool calls", w.lead, "", ledger.ToolCallInput{Server: "fs", Tool: "read_file", SideEffecting: &no}, errs.Forbidden, "forbidden"},
		{"a call needs a tool", w.agent, "", ledger.ToolCallInput{Server: "fs", Tool: " "}, errs.Invalid, "tool_required"},
		{"a call needs a server", w.agent, "", ledger.ToolCallInput{Tool: "read_file"}, errs.Invalid, "server_required"},
		{"an unknown run is not found", w.agent, "run_nope", ledger.ToolCallInput{Server: "fs", Tool: "read_file"}, errs.NotFound, "run_not_found"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			var before runState
			if run == "" {
				run = w.start(t, "r", "").ID
				before = w.stateOf(t, run)
			}
			totals := w.totals(t)
			_, err := w.Ledger.RecordToolCall(ctx, tc.actor, run, tc.in)
			wantErr(t, err, tc.kind, tc.code)
			if tc.run != "" {
				run = ""
			}
			w.unchanged(t, run, before, totals)
		})
	}
}

func TestToolRegistry(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()

	t.Run("only an admin classifies a tool", func(t *testing.T) {
		for _, a := range []auth.Actor{w.lead, w.viewer, w.agent} {
			totals := w.totals(t)
			_, err := w.Ledger.SetTool(ctx, a, "mcp-monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: false})
			wantErr(t, err, errs.Forbidden, "forbidden")
			w.unchanged(t, "", runState{}, totals)
		}
	})
	t.Run("only an admin removes a tool", func(t *testing.T) {
		if _, err := w.Ledger.SetTool(ctx, w.admin, "fs", "stat", ledger.ToolInput{SideEffecting: false}); err != nil {
			t.Fatal(err)
		}
		totals := w.totals(t)
		wantErr(t, w.Ledger.DeleteTool(ctx, w.lead, "fs", "stat"), errs.Forbidden, "forbidden")
		w.unchanged(t, "", runState{}, totals)
	})
	t.Run("removing a tool nobody classified is not found", func(t *testing.T) {
		wantErr(t, w.Ledger.DeleteTool(ctx, w.admin, "fs", "nope"), errs.NotFound, "tool_not_found")
	})
	t.Run("a name no tool can have is refused before any query", func(t *testing.T) {
		// "\xac" is not UTF-8: PostgreSQL refuses it as a parameter (a 500
		// before names were read as SetTool reads them).
		wantErr(t, w.Ledger.DeleteTool(ctx, w.admin, "\xac", "stat"), errs.Invalid, "invalid_characters")
		wantErr(t, w.Ledger.DeleteTool(ctx, w.admin, "fs", ""), errs.Invalid, "tool_required")
	})
	t.Run("a tool is removed by the names it was classified under, trimmed as when it was set", func(t *testing.T) {
		if _, err := w.Ledger.SetTool(ctx, w.admin, " fs ", " touch ", ledger.ToolInput{SideEffecting: true}); err != nil {
			t.Fatal(err)
		}
		if err := w.Ledger.DeleteTool(ctx, w.admin, " fs ", " touch "); err != nil {
			t.Fatalf("remove the tool as it was set: %v", err)
		}
		if n := w.count(t, "SELECT count(*) FROM tools WHERE server = 'fs' AND tool = 'touch'"); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
	t.Run("a tool needs a server and a name", func(t *testing.T) {
		_, err := w.Ledger.SetTool(ctx, w.admin, " ", "x", ledger.ToolInput{SideEffecting: true})
		wantErr(t, err, errs.Invalid, "server_required")
		_, err = w.Ledger.SetTool(ctx, w.admin, "fs", " ", ledger.ToolInput{SideEffecting: true})
		wantErr(t, err, errs.Invalid, "tool_required")
	})
	t.Run("the registry is listed, reclassified in place, and a removed tool is side-effecting again", func(t *testing.T) {
		if _, err := w.Ledger.SetTool(ctx, w.admin, "mcp-monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: true}); err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(time.Minute)
		got, err := w.Ledger.SetTool(ctx, w.admin, " mcp-monitor ", " get_cpu_info ", ledger.ToolInput{SideEffecting: false})
		if err != nil {
			t.Fatal(err)
		}
		if got.Server != "mcp-monitor" || got.Tool != "get_cpu_info" || got.SideEffecting || !got.UpdatedAt.Equal(w.Clock.Now()) {
			t.Errorf("set %+v", got)
		}
		list, err := w.Ledger.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tl := range list {
			if tl.Server == "mcp-monitor" && tl.Tool == "get_cpu_info" {
				n++
				if tl.SideEffecting {
					t.Errorf("listed %+v, want read-only", tl)
				}
			}
		}
		if n != 1 {
			t.Errorf("get_cpu_info listed %d times in %+v", n, list)
		}
		var by int64
		if err := w.raw().QueryRow("SELECT updated_by FROM tools WHERE server = 'mcp-monitor' AND tool = 'get_cpu_info'").Scan(&by); err != nil || by != w.admin.UserID {
			t.Errorf("updated_by %d (%v), want the admin %d", by, err, w.admin.UserID)
		}

		run, ask := w.parked(t)
		if c, err := w.Ledger.RecordToolCall(ctx, w.agent, run, ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_cpu_info"}); err != nil || c.SideEffecting {
			t.Fatalf("a read-only probe on a parked run: %+v, %v", c, err)
		}
		if err := w.Ledger.DeleteTool(ctx, w.admin, "mcp-monitor", "get_cpu_info"); err != nil {
			t.Fatal(err)
		}
		_, err = w.Ledger.RecordToolCall(ctx, w.agent, run, ledger.ToolCallInput{Server: "mcp-monitor", Tool: "get_cpu_info"})
		wantAskDetail(t, wantErr(t, err, errs.Conflict, "run_parked"), ask)
	})
}

// TestTwoWritesThatHaveToAgreeDoNotDrift races the calls that must happen
// once: of many answers to one ask exactly one wins, and of many asks on
// one run exactly one parks it; the rest are refused and write nothing.
func TestTwoWritesThatHaveToAgreeDoNotDrift(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const n = 8
	race := func(fn func(i int) error) (wins int, codes map[string]int) {
		errsOf := make(chan error, n)
		var start sync.WaitGroup
		start.Add(1)
		for i := range n {
			go func() {
				start.Wait()
				errsOf <- fn(i)
			}()
		}
		start.Done()
		codes = map[string]int{}
		for range n {
			if err := <-errsOf; err == nil {
				wins++
			} else {
				codes[errs.CodeOf(err)]++
			}
		}
		return wins, codes
	}

	t.Run("an ask is answered once, however many leads press a button at once", func(t *testing.T) {
		run, ask := w.parked(t)
		wins, codes := race(func(i int) error {
			_, err := w.Ledger.AnswerAsk(ctx, w.lead, ask, fmt.Sprint(1+i%2))
			return err
		})
		if wins != 1 || codes["already_answered"] != n-1 {
			t.Errorf("%d answers won, refusals %v; want 1 and %d already_answered", wins, codes, n-1)
		}
		if s := w.stateOf(t, run); s.Status != ledger.Running || s.OpenAsks != 0 {
			t.Errorf("run after the race: %+v", s)
		}
		if got := w.count(t, "SELECT count(*) FROM events WHERE kind = 'ask.answered' AND ref = ?", ask); got != 1 {
			t.Errorf("%d ask.answered events, want 1", got)
		}
	})
	t.Run("one question at a time, however many are asked at once", func(t *testing.T) {
		r := w.start(t, "fan", "")
		wins, codes := race(func(i int) error {
			_, err := w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: fmt.Sprintf("question %d?", i), Options: yesNo})
			return err
		})
		if wins != 1 || codes["run_parked"] != n-1 {
			t.Errorf("%d asks won, refusals %v; want 1 and %d run_parked", wins, codes, n-1)
		}
		if s := w.stateOf(t, r.ID); s.Status != ledger.Parked || s.Asks != 1 || s.OpenAsks != 1 {
			t.Errorf("run after the race: %+v", s)
		}
	})
	t.Run("a side effect racing the ask either lands before the run parks or is refused, never lost", func(t *testing.T) {
		r := w.start(t, "fan", "")
		yes := true
		wins, codes := race(func(i int) error {
			if i == 0 {
				_, err := w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: "save?", Options: yesNo})
				return err
			}
			_, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", SideEffecting: &yes})
			return err
		})
		calls := w.count(t, "SELECT count(*) FROM tool_calls WHERE run_id = ?", r.ID)
		if wins != 1+calls || codes["run_parked"] != n-1-calls {
			t.Errorf("%d calls won (%d recorded), refusals %v", wins, calls, codes)
		}
		if s := w.stateOf(t, r.ID); s.Status != ledger.Parked || s.OpenAsks != 1 {
			t.Errorf("run after the race: %+v", s)
		}
	})
}

// moveTo reports lifecycle events as the world's agent.
func (w *world) moveTo(t *testing.T, events ...governance.EventInput) {
	t.Helper()
	for _, e := range events {
		if _, err := w.Gov.Lifecycle.Report(t.Context(), w.agent, w.session, e); err != nil {
			t.Fatalf("event %s: %v", e.Name, err)
		}
	}
}

func lcEvent(name, payload string) governance.EventInput {
	in := governance.EventInput{Name: name}
	if payload != "" {
		in.Payload = []byte(payload)
	}
	return in
}

func TestTheLifecycleGatesSideEffects(t *testing.T) {
	yes, no := true, false
	call := func(w *world, run string, writes *bool) (ledger.ToolCall, error) {
		return w.Ledger.RecordToolCall(t.Context(), w.agent, run, ledger.ToolCallInput{Server: "fs", Tool: "write", SideEffecting: writes})
	}
	t.Run("an untracked session is not gated, and its calls are the executor's", func(t *testing.T) {
		w := newWorld(t)
		r := w.start(t, "work", "")
		c, err := call(w, r.ID, &yes)
		if err != nil || c.SourceKind != ledger.SourceExecutor {
			t.Fatalf("%+v %v", c, err)
		}
	})
	t.Run("a tracked session in a state that executes nothing refuses a side effect, naming the state", func(t *testing.T) {
		w := newWorld(t)
		r := w.start(t, "work", "")
		w.moveTo(t, lcEvent("user.message.created", ""))
		before, totals := w.stateOf(t, r.ID), w.totals(t)
		_, err := call(w, r.ID, &yes)
		e, ok := errs.As(err)
		if !ok || e.Kind != errs.Conflict || e.Code != "not_executing" || e.Details["lifecycle"] != "CLASSIFYING" ||
			!strings.Contains(e.Message, "CLASSIFYING") {
			t.Fatalf("err = %v", err)
		}
		w.refusedOnly(t, r.ID, before, totals, "not_executing")
		if _, err := w.Ledger.RecordToolCall(t.Context(), w.agent, r.ID, ledger.ToolCallInput{Server: "claude-code", Tool: "Read"}); err != nil {
			t.Fatalf("a read-only call is refused: %v", err)
		}
		if _, err := call(w, r.ID, &no); errs.CodeOf(err) != "not_executing" {
			t.Fatalf("a call of a tool nobody classified that says it only reads: %v, want not_executing (the agent cannot lower it)", err)
		}
	})
	t.Run("EXECUTING runs the executor's calls", func(t *testing.T) {
		w := newWorld(t)
		r := w.start(t, "work", "")
		w.moveTo(t, lcEvent("user.message.created", ""), lcEvent("IntentClassified", `{"intent":"task"}`),
			lcEvent("architecture.impact.completed", `{"level":"implementation"}`), lcEvent("task.created", `{"task":"a"}`))
		c, err := call(w, r.ID, &yes)
		if err != nil || c.SourceKind != ledger.SourceExecutor {
			t.Fatalf("%+v %v", c, err)
		}
	})
	t.Run("DIRECT_MODE runs the main agent's calls", func(t *testing.T) {
		w := newWorld(t)
		r := w.start(t, "work", "")
		w.moveTo(t, lcEvent("user.message.created", ""), lcEvent("DirectModeEntered", ""))
		c, err := call(w, r.ID, &yes)
		if err != nil || c.SourceKind != ledger.SourceMain {
			t.Fatalf("%+v %v", c, err)
		}
		w.moveTo(t, lcEvent("DirectModeExited", ""))
		if _, err := call(w, r.ID, &yes); errs.CodeOf(err) != "not_executing" {
			t.Fatalf("after /done: %v", err)
		}
	})
}

func TestTheDatabaseRefusesAnOpenAskOnAnEndedRun(t *testing.T) {
	w := newWorld(t)
	for _, status := range []string{ledger.Complete, ledger.Partial, ledger.Blocked, ledger.Failed, ledger.Cancelled} {
		t.Run("raw SQL inserting an unanswered ask on a "+status+" run is aborted by the trigger", func(t *testing.T) {
			r := w.start(t, "ended", "")
			w.finish(t, r.ID, status)
			before, totals := w.stateOf(t, r.ID), w.totals(t)
			_, err := w.raw().Exec(`INSERT INTO asks (id, run_id, prompt, options, parked_from, created_at) VALUES (?, ?, 'go?', '{"1":"Yes"}', ?, ?)`,
				"ask_raw_"+status, r.ID, status, db.FormatTime(w.Clock.Now()))
			if err == nil || !strings.Contains(err.Error(), "ask_on_terminal_run") {
				t.Fatalf("raw INSERT: %v, want the trigger's ask_on_terminal_run", err)
			}
			w.unchanged(t, r.ID, before, totals)
			e, ok := errs.As(ledger.TriggerError(err))
			if !ok || e.Kind != errs.Conflict || e.Code != "ask_on_terminal_run" {
				t.Errorf("the API would answer %v, want 409 ask_on_terminal_run", ledger.TriggerError(err))
			}
		})
	}
	t.Run("an answered ask may be kept on an ended run: only an open question is refused", func(t *testing.T) {
		r := w.start(t, "ended", "")
		w.finish(t, r.ID, ledger.Complete)
		now := db.FormatTime(w.Clock.Now())
		if _, err := w.raw().Exec(`INSERT INTO asks (id, run_id, prompt, options, parked_from, created_at, answer, answered_at)
			VALUES ('ask_answered', ?, 'go?', '{"1":"Yes"}', 'complete', ?, '1', ?)`, r.ID, now, now); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the ledger parks an ended run before it asks, so asking after the steps are done still works", func(t *testing.T) {
		r := w.start(t, "ended", "")
		w.finish(t, r.ID, ledger.Complete)
		if a := w.park(t, r.ID); a.ParkedFrom != ledger.Complete || a.RunStatus != ledger.Parked {
			t.Errorf("ask %+v", a)
		}
	})
	if err := ledger.TriggerError(nil); err != nil {
		t.Errorf("TriggerError(nil) = %v", err)
	}
}

// The check remembers the registry's answers, and an admin's change to
// the registry holds on the very next check: classified, reclassified,
// removed.
func TestTheCheckFollowsTheRegistryAtOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.Gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Schema",
		Question: "Drop it?", BlockedScope: []string{"db/"}}); err != nil {
		t.Fatal(err)
	}
	check := func(step string, want bool) {
		t.Helper()
		for range 2 { // the second from what the first remembered
			r, err := w.Ledger.Check(ctx, w.agent, w.session, ledger.CheckInput{Tool: "mcp__monitor__get_cpu_info"})
			if err != nil {
				t.Fatal(err)
			}
			if r.SideEffecting != want {
				t.Fatalf("%s: side_effecting %v, want %v", step, r.SideEffecting, want)
			}
		}
	}
	check("unclassified", true)
	if _, err := w.Ledger.SetTool(ctx, w.admin, "monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: false}); err != nil {
		t.Fatal(err)
	}
	check("classified read-only", false)
	if _, err := w.Ledger.SetTool(ctx, w.admin, "monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: true}); err != nil {
		t.Fatal(err)
	}
	check("reclassified", true)
	if _, err := w.Ledger.SetTool(ctx, w.admin, "monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: false}); err != nil {
		t.Fatal(err)
	}
	check("read-only again", false)
	if err := w.Ledger.DeleteTool(ctx, w.admin, "monitor", "get_cpu_info"); err != nil {
		t.Fatal(err)
	}
	check("removed", true)
}

// The check remembers the facts of the run it names, and a run parked,
// answered or ended holds on the very next check — of that run and of
// every other run of the session — while the session's other writes
// leave what it remembers alone.
func TestTheCheckFollowsItsRunAtOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r, other := w.start(t, "work", ""), w.start(t, "beside", "")
	check := func(step, run, wantCode string) {
		t.Helper()
		for range 2 { // the second from what the first remembered
			v, err := w.Ledger.Check(ctx, w.agent, w.session, ledger.CheckInput{Tool: "mcp__fs__write", Run: run})
			if err != nil {
				t.Fatal(err)
			}
			if v.Code != wantCode || v.Allow != (wantCode == "") {
				t.Fatalf("%s: %+v, want code %q", step, v, wantCode)
			}
		}
	}
	check("running", r.ID, "")
	check("the other run, running", other.ID, "")
	// A call recorded on the run changes none of its facts.
	if _, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, ledger.ToolCallInput{Server: "fs", Tool: "write"}); err != nil {
		t.Fatal(err)
	}
	check("after a recorded call", r.ID, "")
	ask := w.park(t, r.ID)
	check("parked", r.ID, "run_parked")
	check("the other run, beside the parked one", other.ID, "")
	w.answer(t, ask.ID, "1")
	check("answered", r.ID, "")
	w.park(t, other.ID)
	check("the other run parked", other.ID, "run_parked")
	check("this run, beside it", r.ID, "")
}

// The check's run facts come from the session's view, refreshed ahead
// past 45 seconds like a brief's, and its tool from the registry's
// snapshot, read again once it is a minute old. The writes here come from
// outside this process's services (another governance and ledger on the
// same database, as a replica not heard would write), so nothing
// invalidates what the check caches but its age.
func TestTheCheckRefreshesWhatItCachesBehindTheChecks(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gov := governance.New(w.Store, w.Clock.Now, governance.Options{})
	outside := ledger.NewService(gov.Transactor(), w.Clock.Now, gov.Briefs)
	r := w.start(t, "work", "")
	if _, err := w.Ledger.SetTool(ctx, w.admin, "fs", "write", ledger.ToolInput{SideEffecting: false}); err != nil {
		t.Fatal(err)
	}
	check := func(step, wantCode string, wantWrites bool) {
		t.Helper()
		v, err := w.Ledger.Check(ctx, w.agent, w.session, ledger.CheckInput{Tool: "mcp__fs__write", Run: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		if v.Code != wantCode || v.Allow != (wantCode == "") || v.SideEffecting != wantWrites {
			t.Fatalf("%s: %+v, want code %q, side_effecting %v", step, v, wantCode, wantWrites)
		}
	}
	parkedRun := func(step string, want bool) {
		t.Helper()
		_, run, err := w.Gov.Briefs.GateView(ctx, w.session, r.ID)
		if err != nil || run == nil || (run.OpenAsk != nil) != want {
			t.Fatalf("%s: the view holds run %+v (%v); want parked %v", step, run, err, want)
		}
	}
	check("cached", "", false)
	a, err := outside.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: "save this reading?", Options: yesNo})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outside.SetTool(ctx, w.admin, "fs", "write", ledger.ToolInput{SideEffecting: true}); err != nil {
		t.Fatal(err)
	}
	check("written outside", "", false)
	w.Clock.Advance(44 * time.Second)
	check("not yet 45 seconds old", "", false)
	w.Gov.WaitRefreshes()
	parkedRun("not yet 45 seconds old, nothing read behind it", false)

	w.Clock.Advance(2 * time.Second)
	check("past 45 seconds: answered from the cache, the view read again behind", "", false)
	w.Gov.WaitRefreshes()
	parkedRun("refreshed", true)
	check("the tool's snapshot is not yet a minute old", "", false)
	w.Clock.Advance(15 * time.Second)
	check("the snapshot read again", "run_parked", true)

	// Checked no more for a minute: read before the check is answered.
	if _, err := outside.AnswerAsk(ctx, w.lead, a.ID, "1"); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Minute + time.Second)
	check("expired", "", true)
}
