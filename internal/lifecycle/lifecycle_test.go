package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// variant is one event as an agent sends it, with a payload.
type variant struct {
	label string
	ev    Event
	tasks TaskCounts
}

func variants() []variant {
	done, open := TaskCounts{Created: 2, Done: 2}, TaskCounts{Created: 2, Done: 1}
	return []variant{
		{"user.message.created", Event{Name: UserMessageCreated}, open},
		{"IntentClassified chat", Event{Name: IntentClassified, Intent: IntentChat}, open},
		{"IntentClassified task", Event{Name: IntentClassified, Intent: IntentTask}, open},
		{"IntentClassified direct", Event{Name: IntentClassified, Intent: IntentDirect}, open},
		{"DirectModeEntered", Event{Name: DirectModeEntered}, open},
		{"DirectModeExited", Event{Name: DirectModeExited}, open},
		{"reply.sent", Event{Name: ReplySent}, open},
		{"impact implementation", Event{Name: ArchitectureImpactCompleted, Level: LevelImplementation}, open},
		{"impact architecture", Event{Name: ArchitectureImpactCompleted, Level: LevelArchitecture}, open},
		{"architecture.plan.updated", Event{Name: ArchitecturePlanUpdated}, open},
		{"task.created", Event{Name: TaskCreated, Task: "t1"}, open},
		{"task.progress", Event{Name: TaskProgress, Task: "t1"}, open},
		{"task.completed, tasks remain", Event{Name: TaskCompleted, Task: "t1"}, open},
		{"task.completed, all done", Event{Name: TaskCompleted, Task: "t1"}, done},
		{"task.failed, tasks remain", Event{Name: TaskFailed, Task: "t1"}, open},
		{"task.failed, all done", Event{Name: TaskFailed, Task: "t1"}, done},
		{"task.blocked", Event{Name: TaskBlocked, Task: "t1"}, open},
		{"requirement execution", Event{Name: RequirementChanged, Level: LevelExecution}, open},
		{"requirement design", Event{Name: RequirementChanged, Level: LevelDesign}, open},
		{"requirement interface", Event{Name: RequirementChanged, Level: LevelInterface}, open},
		{"permission.prompt.requested", Event{Name: PermissionPromptRequested, Prompt: "Run rm?",
			Options: map[string]string{"1": "Allow", "2": "Deny"}}, open},
		{"permission.prompt.resolved", Event{Name: PermissionPromptResolved}, open},
	}
}

// want is DESIGN.md's table written out by hand: state → variant → the
// states passed through. A pair not listed is refused.
var want = map[State]map[string][]State{
	Idle:                  {"user.message.created": {Classifying}},
	Classifying:           {"IntentClassified chat": {Answering}, "IntentClassified task": {Delegating}, "IntentClassified direct": {DirectMode}, "DirectModeEntered": {DirectMode}},
	Answering:             {"reply.sent": {Idle}},
	Delegating:            {"impact implementation": {Scheduling}, "impact architecture": {ArchitectureDesigning}},
	Scheduling:            {"task.created": {Executing}},
	ArchitectureDesigning: {"architecture.plan.updated": {Confirming}},
	Confirming:            {},
	Executing: {"task.created": {Executing}, "task.progress": {Executing}, "task.blocked": {Executing},
		"task.failed, tasks remain": {Executing}, "task.failed, all done": {Summarizing},
		"task.completed, tasks remain": {Executing}, "task.completed, all done": {Summarizing},
		"requirement execution": {Interrupting, Executing}, "requirement design": {Interrupting, ArchitectureRevising},
		"requirement interface": {Interrupting, ArchitectureRevising}},
	Interrupting:         {},
	ArchitectureRevising: {"architecture.plan.updated": {Confirming}},
	Summarizing:          {"reply.sent": {Idle}},
	DirectMode: {"DirectModeExited": {Idle}, "task.created": {DirectMode}, "task.progress": {DirectMode},
		"task.completed, tasks remain": {DirectMode}, "task.completed, all done": {DirectMode},
		"task.failed, tasks remain": {DirectMode}, "task.failed, all done": {DirectMode}, "task.blocked": {DirectMode}},
}

// wantAllowed is the events each state accepts, by hand.
var wantAllowed = map[State][]string{
	Idle:                  {UserMessageCreated},
	Classifying:           {IntentClassified, DirectModeEntered},
	Answering:             {ReplySent},
	Delegating:            {ArchitectureImpactCompleted},
	Scheduling:            {TaskCreated},
	ArchitectureDesigning: {ArchitecturePlanUpdated},
	Confirming:            {},
	Executing:             {TaskCreated, TaskProgress, TaskFailed, TaskBlocked, TaskCompleted, RequirementChanged},
	Interrupting:          {},
	ArchitectureRevising:  {ArchitecturePlanUpdated},
	Summarizing:           {ReplySent},
	DirectMode:            {DirectModeExited, TaskCreated, TaskProgress, TaskCompleted, TaskFailed, TaskBlocked},
}

func TestEveryStateAndEvent(t *testing.T) {
	if len(States()) != 12 || len(want) != 12 {
		t.Fatalf("twelve states: have %d, table %d", len(States()), len(want))
	}
	for _, s := range States() {
		allowed := append(slices.Clone(wantAllowed[s]), PermissionPromptRequested)
		t.Run(string(s)+" allows exactly its events", func(t *testing.T) {
			got := Allowed(s)
			if !sameSet(got, allowed) {
				t.Errorf("Allowed(%s) = %v, want %v", s, got, allowed)
			}
		})
		for _, v := range variants() {
			t.Run(fmt.Sprintf("in %s, %s", s, v.label), func(t *testing.T) {
				got, err := Apply(s, v.ev, v.tasks)
				path, ok := want[s][v.label]
				if v.ev.Name == PermissionPromptRequested {
					path, ok = []State{s}, true
				}
				if !ok {
					var te *TransitionError
					if !errors.As(err, &te) {
						t.Fatalf("Apply = %v, %v; want a transition error", got, err)
					}
					if te.State != s || te.Event != v.ev.Name || !sameSet(te.Allowed, allowed) {
						t.Fatalf("refusal = %+v, want state %s, allowed %v", te, s, allowed)
					}
					return
				}
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if len(got) != len(path) {
					t.Fatalf("transitions = %+v, want through %v", got, path)
				}
				from := s
				for i, tr := range got {
					if tr.From != from || tr.To != path[i] || tr.Event != v.ev.Name {
						t.Fatalf("transition %d = %+v, want %s -> %s on %s", i, tr, from, path[i], v.ev.Name)
					}
					from = tr.To
				}
			})
		}
	}
}

func TestAnAgentNeverResolvesAPermissionPrompt(t *testing.T) {
	for _, s := range States() {
		_, err := Apply(s, Event{Name: PermissionPromptResolved}, TaskCounts{})
		var te *TransitionError
		if !errors.As(err, &te) || slices.Contains(te.Allowed, PermissionPromptResolved) {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestLeadAnswersOnlyInConfirming(t *testing.T) {
	answers := []struct {
		name string
		fn   func(State) (Transition, error)
		to   State
	}{{LeadConfirm, Confirm, Executing}, {LeadModify, Modify, ArchitectureRevising}, {LeadReject, Reject, Idle},
		{AutoConfirm, Proceed, Executing}}
	for _, a := range answers {
		for _, s := range States() {
			tr, err := a.fn(s)
			if s == Confirming {
				if err != nil || tr != (Transition{Confirming, a.to, a.name}) {
					t.Errorf("%s in CONFIRMING = %+v, %v", a.name, tr, err)
				}
				continue
			}
			var te *TransitionError
			if !errors.As(err, &te) {
				t.Errorf("%s in %s = %+v, %v; want refused", a.name, s, tr, err)
			}
		}
		// An agent cannot send a lead's answer.
		_, err := Apply(Confirming, Event{Name: a.name}, TaskCounts{})
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != "name" || ie.Code != "unknown_event" {
			t.Errorf("agent sends %s: %v", a.name, err)
		}
	}
}

func TestInvalidPayloadsAreInputErrorsInEveryState(t *testing.T) {
	cases := []struct {
		ev          Event
		field, code string
	}{
		{Event{Name: "task.exploded"}, "name", "unknown_event"},
		{Event{Name: ""}, "name", "unknown_event"},
		{Event{Name: IntentClassified}, "intent", "intent_required"},
		{Event{Name: IntentClassified, Intent: "banter"}, "intent", "invalid_intent"},
		{Event{Name: ArchitectureImpactCompleted, Level: "design"}, "level", "invalid_level"},
		{Event{Name: RequirementChanged, Level: "architecture"}, "level", "invalid_level"},
		{Event{Name: RequirementChanged}, "level", "level_required"},
		{Event{Name: TaskCompleted, Task: "  "}, "task", "task_required"},
		{Event{Name: TaskCreated}, "task", "task_required"},
		{Event{Name: PermissionPromptRequested, Options: map[string]string{"1": "Allow"}}, "prompt", "prompt_required"},
		{Event{Name: PermissionPromptRequested, Prompt: "ok?"}, "options", "options_required"},
	}
	for _, c := range cases {
		for _, s := range States() {
			_, err := Apply(s, c.ev, TaskCounts{})
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != c.field || ie.Code != c.code {
				t.Errorf("%s %+v: %v, want %s on %s", s, c.ev, err, c.code, c.field)
			}
		}
	}
}

func TestOnlyDirectModeAndExecutingExecute(t *testing.T) {
	for _, s := range States() {
		want := s == DirectMode || s == Executing
		if Executes(s) != want {
			t.Errorf("Executes(%s) = %v", s, !want)
		}
		tpl := map[State]string{DirectMode: "main_direct", Executing: "per_task"}[s]
		if PermissionTemplate(s) != tpl {
			t.Errorf("PermissionTemplate(%s) = %q, want %q", s, PermissionTemplate(s), tpl)
		}
	}
}

func TestTransitionsDrawEveryArrowOfApply(t *testing.T) {
	drawn := map[Transition]bool{}
	for _, e := range Transitions() {
		if !e.From.Valid() || !e.To.Valid() {
			t.Errorf("edge %+v leaves the twelve states", e)
		}
		drawn[Transition{e.From, e.To, e.Event}] = true
	}
	for _, s := range States() {
		for _, v := range variants() {
			trs, err := Apply(s, v.ev, v.tasks)
			if err != nil {
				continue
			}
			for _, tr := range trs {
				if !drawn[tr] {
					t.Errorf("Apply takes %+v, which Transitions does not draw", tr)
				}
			}
		}
	}
	for _, a := range []func(State) (Transition, error){Confirm, Modify, Reject, Proceed} {
		tr, _ := a(Confirming)
		if !drawn[tr] {
			t.Errorf("lead answer %+v is not drawn", tr)
		}
	}
}

func TestAnUnknownStateIsNotATransitionError(t *testing.T) {
	_, err := Apply("PONDERING", Event{Name: ReplySent}, TaskCounts{})
	var te *TransitionError
	if err == nil || errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	if State("PONDERING").Valid() {
		t.Fatal("PONDERING is valid")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
