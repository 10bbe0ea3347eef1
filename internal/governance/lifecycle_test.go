package governance_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/protocol"
)

// ev is an event with a payload written as JSON.
func ev(name, payload string) governance.EventInput {
	in := governance.EventInput{Name: name}
	if payload != "" {
		in.Payload = json.RawMessage(payload)
	}
	return in
}

// report sends events in order as agent and returns the last report.
func report(t *testing.T, w *world, agent auth.Actor, session string, evs ...governance.EventInput) governance.LifecycleReport {
	t.Helper()
	var r governance.LifecycleReport
	for _, e := range evs {
		r = must(w.Gov.Lifecycle.Report(t.Context(), agent, session, e))(t)
	}
	return r
}

// lifecycleOf is the session's state and whether it is tracked.
func lifecycleOf(t *testing.T, w *world, session string) (string, bool) {
	t.Helper()
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, session))(t)
	return d.Lifecycle, d.Tracked
}

const planPayload = `{"summary":"Split the billing module","initial_steps":[{"id":"read","server":"fs","tool":"read","side_effecting":false}],"stopping_points":[]}`

var toTask = []governance.EventInput{ev("user.message.created", ""), ev("IntentClassified", `{"intent":"task"}`)}

func TestATaskRunsFromMessageToSummary(t *testing.T) {
	w := newWorld(t)
	if st, tracked := lifecycleOf(t, w, w.session); st != "IDLE" || tracked {
		t.Fatalf("a new session is %s tracked=%v, want IDLE untracked", st, tracked)
	}
	report(t, w, w.agent, w.session, toTask...)
	r := report(t, w, w.agent, w.session, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"a"}`), ev("task.created", `{"task":"b"}`), ev("task.progress", `{"task":"a"}`),
		ev("task.completed", `{"task":"a"}`))
	if r.Lifecycle != lifecycle.Executing {
		t.Fatalf("with b open: %s", r.Lifecycle)
	}
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
	if !d.Tracked || d.Tasks != (governance.TaskCounts{Created: 2, Completed: 1, Done: 1, Open: 1}) {
		t.Fatalf("tracked %v, tasks %+v", d.Tracked, d.Tasks)
	}
	r = report(t, w, w.agent, w.session, ev("task.created", `{"task":"c"}`), ev("task.failed", `{"task":"b"}`))
	if r.Lifecycle != lifecycle.Executing {
		t.Fatalf("task.failed with c open moves on: %s", r.Lifecycle)
	}
	r = report(t, w, w.agent, w.session, ev("task.completed", `{"task":"c"}`))
	if r.Lifecycle != lifecycle.Summarizing || len(r.Transitions) != 1 || r.Transitions[0] != (lifecycle.Transition{From: "EXECUTING", To: "SUMMARIZING", Event: "task.completed"}) {
		t.Fatalf("every task done: %+v", r)
	}
	r = report(t, w, w.agent, w.session, ev("reply.sent", ""))
	if r.Lifecycle != lifecycle.Idle {
		t.Fatalf("after the summary: %s", r.Lifecycle)
	}
}

// A cycle whose last open task fails is done too: every task created has
// completed or failed, and the agent summarizes.
func TestTheLastTaskFailingEndsTheCycle(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, toTask...)
	report(t, w, w.agent, w.session, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"a"}`), ev("task.created", `{"task":"b"}`), ev("task.completed", `{"task":"a"}`))
	r := report(t, w, w.agent, w.session, ev("task.failed", `{"task":"b"}`))
	if r.Lifecycle != lifecycle.Summarizing || len(r.Transitions) != 1 || r.Transitions[0] != (lifecycle.Transition{From: "EXECUTING", To: "SUMMARIZING", Event: "task.failed"}) {
		t.Fatalf("the last open task failed: %+v, want EXECUTING → SUMMARIZING on task.failed", r)
	}
}

func TestTheTimelineHoldsEveryEventAndTransition(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, toTask...)
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
	var got []string
	for _, e := range d.Timeline[1:] { // after session.created
		got = append(got, e.Kind+" "+e.Ref+" "+e.Detail)
	}
	want := []string{
		`lifecycle.event user.message.created {}`,
		`lifecycle.transition user.message.created {"before":"IDLE","after":"CLASSIFYING","event":"user.message.created","payload":{}}`,
		`lifecycle.event IntentClassified {"intent":"task"}`,
		`lifecycle.transition IntentClassified {"before":"CLASSIFYING","after":"DELEGATING","event":"IntentClassified","payload":{"intent":"task"}}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRequirementChangesGoThroughInterrupting(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"a"}`))...)
	r := report(t, w, w.agent, w.session, ev("requirement.changed", `{"level":"execution"}`))
	want := []lifecycle.Transition{{From: "EXECUTING", To: "INTERRUPTING", Event: "requirement.changed"},
		{From: "INTERRUPTING", To: "EXECUTING", Event: "requirement.changed"}}
	if !slices.Equal(r.Transitions, want) {
		t.Fatalf("execution level: %+v", r.Transitions)
	}
	r = report(t, w, w.agent, w.session, ev("requirement.changed", `{"level":"interface"}`))
	if r.Lifecycle != lifecycle.ArchitectureRevising || len(r.Transitions) != 2 {
		t.Fatalf("interface level: %+v", r)
	}
	n := 0
	for _, line := range timeline(t, w, w.session) {
		if strings.HasSuffix(line, "lifecycle.transition requirement.changed") {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d requirement.changed transitions recorded, want 4", n)
	}
}

func TestAPlanOnAnOrdinaryMissionProceedsAtOnce(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, append(toTask, ev("architecture.impact.completed", `{"level":"architecture"}`))...)
	r := report(t, w, w.agent, w.session, ev("architecture.plan.updated", planPayload))
	want := []lifecycle.Transition{{From: "ARCHITECTURE_DESIGNING", To: "CONFIRMING", Event: "architecture.plan.updated"},
		{From: "CONFIRMING", To: "EXECUTING", Event: lifecycle.AutoConfirm}}
	if !slices.Equal(r.Transitions, want) || r.Plan == nil || r.Plan.Status != governance.PlanApproved {
		t.Fatalf("report %+v", r)
	}
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
	if d.Plan == nil || d.Plan.Summary != "Split the billing module" || d.Plan.Status != governance.PlanApproved {
		t.Fatalf("the session's plan is %+v", d.Plan)
	}
}

func TestAPlanOnAHighRiskMissionWaitsForALead(t *testing.T) {
	w := newWorld(t)
	toConfirming := func(t *testing.T) string {
		s := w.Session(w.agent, w.risky)
		report(t, w, w.agent, s, append(toTask, ev("architecture.impact.completed", `{"level":"architecture"}`),
			ev("architecture.plan.updated", planPayload))...)
		if st, _ := lifecycleOf(t, w, s); st != "CONFIRMING" {
			t.Fatalf("state %s", st)
		}
		briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		return s
	}
	t.Run("a lead's approval is the confirm answer: EXECUTING", func(t *testing.T) {
		s := toConfirming(t)
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, "go"))(t)
		if st, _ := lifecycleOf(t, w, s); st != "EXECUTING" {
			t.Fatalf("after approve: %s", st)
		}
		tl := timeline(t, w, s)
		if !strings.HasSuffix(tl[len(tl)-1], "lifecycle.transition lead.confirm") {
			t.Fatalf("timeline ends %q", tl[len(tl)-1])
		}
	})
	t.Run("a lead's rejection is the reject answer: IDLE", func(t *testing.T) {
		s := toConfirming(t)
		must(w.Gov.Plans.Reject(t.Context(), w.lead, s, "no"))(t)
		if st, _ := lifecycleOf(t, w, s); st != "IDLE" {
			t.Fatalf("after reject: %s", st)
		}
	})
	t.Run("an untracked session is not moved by a plan approval", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		must(w.Gov.Plans.Propose(t.Context(), w.agent, s, governance.PlanInput{Summary: "x"}))(t)
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, ""))(t)
		if st, tracked := lifecycleOf(t, w, s); st != "IDLE" || tracked {
			t.Fatalf("%s tracked=%v", st, tracked)
		}
	})
}

func TestDirectModeExitCollectsEvidence(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, ev("user.message.created", ""), ev("DirectModeEntered", ""),
		ev("task.created", `{"task":"bg"}`))
	r := report(t, w, w.agent, w.session, ev("DirectModeExited", ""))
	if r.Lifecycle != lifecycle.Idle || r.Evidence == nil || r.Evidence.EvidenceGate != governance.GateSatisfied {
		t.Fatalf("report %+v", r)
	}
	tl := timeline(t, w, w.session)
	if !slices.Contains(tl, w.agent.Label()+" evidence.collected") {
		t.Fatalf("timeline %q has no evidence.collected", tl)
	}
}

func TestRefusedEventsWriteNothing(t *testing.T) {
	w := newWorld(t)
	risky := w.Session(w.agent, w.risky)
	report(t, w, w.agent, risky, append(toTask, ev("architecture.impact.completed", `{"level":"architecture"}`))...)
	cases := []struct {
		name, session string
		actor         auth.Actor
		in            governance.EventInput
		kind          errs.Kind
		code          string
	}{
		{"an event the state does not allow", w.session, w.agent, ev("reply.sent", ""), errs.Conflict, "transition_not_allowed"},
		{"a task event while idle", w.session, w.agent, ev("task.created", `{"task":"a"}`), errs.Conflict, "transition_not_allowed"},
		{"an agent resolving a permission prompt", w.session, w.agent, ev("permission.prompt.resolved", ""), errs.Conflict, "transition_not_allowed"},
		{"a lead's answer sent by an agent", w.session, w.agent, ev("lead.confirm", ""), errs.Invalid, "unknown_event"},
		{"an unknown event", w.session, w.agent, ev("task.exploded", ""), errs.Invalid, "unknown_event"},
		{"no name", w.session, w.agent, ev("", ""), errs.Invalid, "name_required"},
		{"an unknown intent", w.session, w.agent, ev("IntentClassified", `{"intent":"banter"}`), errs.Invalid, "invalid_intent"},
		{"a missing task id", w.session, w.agent, ev("task.created", `{}`), errs.Invalid, "task_required"},
		{"a payload field the event does not take", w.session, w.agent, ev("reply.sent", `{"text":"hi"}`), errs.Invalid, "unknown_field"},
		{"a payload that is not an object", w.session, w.agent, ev("reply.sent", `[1]`), errs.Invalid, "invalid_payload"},
		{"a person", w.session, w.lead, ev("user.message.created", ""), errs.Forbidden, "forbidden"},
		{"another agent", w.session, w.other, ev("user.message.created", ""), errs.Forbidden, "forbidden"},
		{"no such session", "ses_nope", w.agent, ev("user.message.created", ""), errs.NotFound, "session_not_found"},
		{"a plan whose side effect runs before its gate", risky, w.agent, ev("architecture.plan.updated",
			`{"summary":"s","initial_steps":[{"id":"drop","server":"db","tool":"drop","side_effecting":true}],"stopping_points":[{"id":1,"type":"menu","title":"Drop?","options":{"1":{"label":"Yes","steps":[]}}}]}`),
			errs.Invalid, "side_effect_before_gate"},
		{"a plan with no summary", risky, w.agent, ev("architecture.plan.updated", `{"initial_steps":[]}`), errs.Invalid, "summary_required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			refused(t, w.Kit, c.kind, c.code, func() error {
				_, err = w.Gov.Lifecycle.Report(t.Context(), c.actor, c.session, c.in)
				return err
			})
			e, _ := errs.As(err)
			if c.code == "transition_not_allowed" {
				if e.Details["lifecycle"] != "IDLE" || !slices.Equal(e.Details["allowed"].([]string), []string{"user.message.created", "permission.prompt.requested"}) {
					t.Fatalf("details %v", e.Details)
				}
			}
			if c.kind == errs.Invalid && c.code != "side_effect_before_gate" && e.Field == "" {
				t.Fatalf("%s names no field", c.code)
			}
		})
	}
	if st, tracked := lifecycleOf(t, w, w.session); st != "IDLE" || tracked {
		t.Fatalf("after refusals the session is %s tracked=%v", st, tracked)
	}
}

// TestRacingEventsApplyOneAfterTheOther sends events to one session from
// many goroutines over real SQLite: every call answers (no SQLITE_BUSY),
// and the final state is the table applied to the accepted events in
// commit order (read back from the timeline).
func TestRacingEventsApplyOneAfterTheOther(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"t0"}`))...)
	const n = 24
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in governance.EventInput
			switch i % 4 {
			case 0:
				in = ev("task.created", fmt.Sprintf(`{"task":"t%d"}`, i))
			case 1:
				in = ev("task.completed", fmt.Sprintf(`{"task":"t%d"}`, i-1))
			case 2:
				in = ev("requirement.changed", `{"level":"execution"}`)
			default:
				in = ev("reply.sent", "")
			}
			_, err := w.Gov.Lifecycle.Report(t.Context(), w.agent, w.session, in)
			if err != nil && errs.CodeOf(err) != "transition_not_allowed" {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("a racing event failed: %v", err)
	}
	replayMatches(t, w, w.session)
}

// replayMatches replays the session's timeline through the pure table:
// each recorded event, applied to the state the replay reached, with the
// task counts the replay keeps, takes exactly the transitions recorded
// after it, and ends in the stored state.
func replayMatches(t *testing.T, w *world, session string) {
	t.Helper()
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, session))(t)
	state := lifecycle.Idle
	tasks := map[string]string{}
	var pending []lifecycle.Transition
	check := func() {
		t.Helper()
		for _, tr := range pending {
			if tr.From != state {
				t.Fatalf("recorded %+v from %s", tr, state)
			}
			state = tr.To
		}
	}
	for _, e := range d.Timeline {
		switch e.Kind {
		case "lifecycle.event":
			if !json.Valid([]byte(e.Detail)) {
				t.Fatalf("payload %q is not JSON", e.Detail)
			}
			var event lifecycle.Event
			tasks, event = modelEvent(tasks, e.Ref, []byte(e.Detail))
			trs, err := lifecycle.Apply(state, event, countTasks(tasks))
			if err != nil {
				t.Fatalf("recorded event %s refused by the table from %s: %v", e.Ref, state, err)
			}
			pending = trs
		case "lifecycle.transition":
			var tr struct {
				Before, After lifecycle.State
				Event         string
			}
			if err := json.Unmarshal([]byte(e.Detail), &tr); err != nil {
				t.Fatal(err)
			}
			if tr.Before != state {
				t.Fatalf("transition %+v recorded from %s", tr, state)
			}
			if len(pending) > 0 {
				if want := pending[0]; want.From != tr.Before || want.To != tr.After || want.Event != tr.Event {
					t.Fatalf("recorded %+v, the table takes %+v", tr, want)
				}
				pending = pending[1:]
			}
			state = tr.After
		}
	}
	check()
	if string(state) != d.Lifecycle {
		t.Fatalf("replay ends in %s, stored %s", state, d.Lifecycle)
	}
}

// TestRandomEventsAgreeWithTheTable is a model-based test: random event
// sequences sent to the service and applied to the pure table agree on
// every answer and every state, and the stored state never leaves the
// twelve.
func TestRandomEventsAgreeWithTheTable(t *testing.T) {
	w := newWorld(t)
	rng := rand.New(rand.NewPCG(2, 26))
	pool := []func(int) governance.EventInput{
		func(int) governance.EventInput { return ev("user.message.created", "") },
		func(int) governance.EventInput { return ev("IntentClassified", `{"intent":"chat"}`) },
		func(int) governance.EventInput { return ev("IntentClassified", `{"intent":"task"}`) },
		func(int) governance.EventInput { return ev("IntentClassified", `{"intent":"direct"}`) },
		func(int) governance.EventInput { return ev("DirectModeEntered", "") },
		func(int) governance.EventInput { return ev("DirectModeExited", "") },
		func(int) governance.EventInput { return ev("reply.sent", "") },
		func(int) governance.EventInput {
			return ev("architecture.impact.completed", `{"level":"implementation"}`)
		},
		func(int) governance.EventInput {
			return ev("architecture.impact.completed", `{"level":"architecture"}`)
		},
		func(int) governance.EventInput { return ev("architecture.plan.updated", planPayload) },
		func(i int) governance.EventInput { return ev("task.created", fmt.Sprintf(`{"task":"t%d"}`, i%3)) },
		func(i int) governance.EventInput { return ev("task.progress", fmt.Sprintf(`{"task":"t%d"}`, i%3)) },
		func(i int) governance.EventInput { return ev("task.completed", fmt.Sprintf(`{"task":"t%d"}`, i%3)) },
		func(i int) governance.EventInput { return ev("task.failed", fmt.Sprintf(`{"task":"t%d"}`, i%3)) },
		func(i int) governance.EventInput { return ev("task.blocked", fmt.Sprintf(`{"task":"t%d"}`, i%3)) },
		func(int) governance.EventInput { return ev("requirement.changed", `{"level":"execution"}`) },
		func(int) governance.EventInput { return ev("requirement.changed", `{"level":"design"}`) },
		func(int) governance.EventInput { return ev("permission.prompt.resolved", "") },
	}
	visited := map[lifecycle.State]bool{}
	for seq := range 4 {
		s := w.Session(w.agent, []string{w.mission, w.risky}[seq%2])
		state := lifecycle.Idle
		tasks := map[string]string{}
		for i := range 60 {
			in := pool[rng.IntN(len(pool))](rng.IntN(9))
			next, event := modelEvent(tasks, in.Name, in.Payload)
			want, wantErr := lifecycle.Apply(state, event, countTasks(next))
			got, err := w.Gov.Lifecycle.Report(t.Context(), w.agent, s, in)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("seq %d step %d %s in %s: service %v, table %v", seq, i, in.Name, state, err, wantErr)
			}
			if err != nil {
				if errs.CodeOf(err) != "transition_not_allowed" {
					t.Fatalf("step %d: %v", i, err)
				}
				continue
			}
			tasks = next
			if in.Name == lifecycle.ArchitecturePlanUpdated && seq%2 == 0 { // not high-risk: proceeds at once
				tr, _ := lifecycle.Proceed(want[len(want)-1].To)
				want = append(want, tr)
			}
			if !slices.Equal(got.Transitions, want) {
				t.Fatalf("step %d %s: service %+v, table %+v", i, in.Name, got.Transitions, want)
			}
			state = want[len(want)-1].To
			for _, tr := range want {
				visited[tr.To] = true
			}
			if st, _ := lifecycleOf(t, w, s); st != string(state) || !lifecycle.State(st).Valid() {
				t.Fatalf("step %d: stored %s, table %s", i, st, state)
			}
		}
		replayMatches(t, w, s)
	}
	if len(visited) < 10 {
		t.Fatalf("the random walks reached only %d states: %v", len(visited), visited)
	}
}

// modelEvent reads an event as the model sees it, and returns a copy of
// the tasks (task id → status) with the event applied to them.
func modelEvent(tasks map[string]string, name string, payload []byte) (map[string]string, lifecycle.Event) {
	var p struct{ Intent, Level, Task string }
	_ = json.Unmarshal(payload, &p)
	next := maps.Clone(tasks)
	if lifecycle.IsTask(name) {
		next[p.Task] = strings.TrimPrefix(name, "task.")
	}
	return next, lifecycle.Event{Name: name, Intent: p.Intent, Level: p.Level, Task: p.Task}
}

// countTasks counts the model's tasks as the service does.
func countTasks(tasks map[string]string) lifecycle.TaskCounts {
	var c lifecycle.TaskCounts
	for _, st := range tasks {
		c.Created++
		if st == "completed" || st == "failed" {
			c.Done++
		}
	}
	return c
}

func TestTheDatabaseRefusesAThirteenthState(t *testing.T) {
	w := newWorld(t)
	for _, q := range []string{
		`UPDATE sessions SET lifecycle = 'PONDERING' WHERE id = ?`,
		`INSERT INTO sessions (id, mission_id, agent_key_id, agent, title, lifecycle, created_at)
		 SELECT 'ses_x', mission_id, agent_key_id, agent, title, 'PONDERING', created_at FROM sessions WHERE id = ?`,
	} {
		_, err := w.SQL().ExecContext(t.Context(), q, w.session)
		if err == nil || !strings.Contains(err.Error(), "twelve lifecycle states") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, s := range lifecycle.States() {
		if _, err := w.SQL().ExecContext(t.Context(), `UPDATE sessions SET lifecycle = ? WHERE id = ?`, string(s), w.session); err != nil {
			t.Fatalf("%s refused: %v", s, err)
		}
	}
}

func TestTheBriefBlocksCodeChangesWhileThePlanIsRevised(t *testing.T) {
	w := newWorld(t)
	report(t, w, w.agent, w.session, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"a"}`))...)
	b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
	if b.NextAction != protocol.Continue {
		t.Fatalf("EXECUTING briefs %s", b.NextAction)
	}
	report(t, w, w.agent, w.session, ev("requirement.changed", `{"level":"design"}`))
	b = must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
	if b.NextAction != protocol.Blocked || len(b.Reasons) == 0 || b.Reasons[0].Code != protocol.CodePlanRevising {
		t.Fatalf("ARCHITECTURE_REVISING briefs %s %+v", b.NextAction, b.Reasons)
	}
	report(t, w, w.agent, w.session, ev("architecture.plan.updated", planPayload))
	b = must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
	if b.NextAction != protocol.Continue {
		t.Fatalf("after the revised plan proceeds: %s %+v", b.NextAction, b.Reasons)
	}
}
