package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/web/webtest"
)

// step is one thing done to a session over HTTP: an event its agent
// reports, or a lead's answer in CONFIRMING. It returns the transitions
// the call answered (none for a lead's answer, whose plan is answered).
type step func(a *webtest.API, session string) []lifecycle.Transition

// event is the agent reporting name with payload (nil for none).
func event(name string, payload map[string]any) step {
	return func(a *webtest.API, id string) []lifecycle.Transition {
		body := map[string]any{"name": name}
		if payload != nil {
			body["payload"] = payload
		}
		r := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, body)
		var out []lifecycle.Transition
		for _, t := range r["transitions"].([]any) {
			m := t.(map[string]any)
			out = append(out, lifecycle.Transition{From: lifecycle.State(m["from"].(string)), To: lifecycle.State(m["to"].(string)),
				Event: m["event"].(string)})
		}
		return out
	}
}

// lead is a lead's answer to the plan: approve, modify or reject.
func lead(verb string, body map[string]any) step {
	return func(a *webtest.API, id string) []lifecycle.Transition {
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/plan/"+verb, a.LeadTok, body)
		return nil
	}
}

// TestEveryArrowOfTheDiagramOverHTTP walks a fresh session to the start of
// each arrow of seed 002's diagram (lifecycle.Transitions) and takes it,
// over HTTP: an agent's event, or a lead's answer in CONFIRMING.
func TestEveryArrowOfTheDiagramOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	plan := event(lifecycle.ArchitecturePlanUpdated, map[string]any{"summary": "Split billing",
		"initial_steps": []any{}, "stopping_points": []any{}})
	task := func(name, id string) step { return event(name, map[string]any{"task": id}) }
	msg := event(lifecycle.UserMessageCreated, nil)
	intent := func(i string) step { return event(lifecycle.IntentClassified, map[string]any{"intent": i}) }
	impact := func(l string) step { return event(lifecycle.ArchitectureImpactCompleted, map[string]any{"level": l}) }
	executing := []step{msg, intent("task"), impact("implementation"), task(lifecycle.TaskCreated, "t1")}
	confirming := []step{msg, intent("task"), impact("architecture"), plan}
	// reach walks a session on a high-risk mission from IDLE to each state.
	reach := map[lifecycle.State][]step{
		lifecycle.Idle:                  nil,
		lifecycle.Classifying:           {msg},
		lifecycle.Answering:             {msg, intent("chat")},
		lifecycle.Delegating:            {msg, intent("task")},
		lifecycle.Scheduling:            {msg, intent("task"), impact("implementation")},
		lifecycle.ArchitectureDesigning: {msg, intent("task"), impact("architecture")},
		lifecycle.Confirming:            confirming,
		lifecycle.Executing:             executing,
		lifecycle.Interrupting:          nil, // left at once: its arrows are taken from EXECUTING, with the one into it
		lifecycle.ArchitectureRevising:  append(confirming[:len(confirming):len(confirming)], lead("modify", map[string]any{"instruction": "smaller"})),
		lifecycle.Summarizing:           append(executing[:len(executing):len(executing)], task(lifecycle.TaskCompleted, "t1")),
		lifecycle.DirectMode:            {msg, intent("direct")},
	}
	if len(reach) != len(lifecycle.States()) {
		t.Fatalf("reach covers %d states of %d", len(reach), len(lifecycle.States()))
	}
	for _, e := range lifecycle.Transitions() {
		name := fmt.Sprintf("%s --%s %s--> %s", e.From, e.Event, e.When, e.To)
		t.Run(name, func(t *testing.T) {
			highRisk := e.Event != lifecycle.AutoConfirm
			from, want := e.From, e.To
			var pre []step
			var take step
			switch {
			case e.From == lifecycle.Interrupting && e.Event == lifecycle.PermissionPromptRequested:
				t.Skip("INTERRUPTING is left on the event that enters it: no event can be reported in it")
			case e.Event == lifecycle.AutoConfirm:
				from, take = lifecycle.ArchitectureDesigning, plan
			case e.Event == lifecycle.LeadConfirm:
				take = lead("approve", map[string]any{"note": "go"})
			case e.Event == lifecycle.LeadModify:
				take = lead("modify", map[string]any{"instruction": "smaller steps"})
			case e.Event == lifecycle.LeadReject:
				take = lead("reject", map[string]any{"note": "no"})
			case e.Event == lifecycle.IntentClassified:
				take = intent(strings.TrimPrefix(e.When, "intent="))
			case e.Event == lifecycle.ArchitectureImpactCompleted:
				take = impact(strings.TrimPrefix(e.When, "level="))
			case e.Event == lifecycle.RequirementChanged:
				level := "execution"
				if e.When == "level=design|interface" {
					level = "design"
				}
				// Into INTERRUPTING and at once out of it, by the level.
				from, want = lifecycle.Executing, lifecycle.Executing
				if level == "design" {
					want = lifecycle.ArchitectureRevising
				}
				take = event(e.Event, map[string]any{"level": level})
			case e.Event == lifecycle.ArchitecturePlanUpdated:
				take = plan
			case e.Event == lifecycle.PermissionPromptRequested:
				take = event(e.Event, map[string]any{"prompt": "May I?", "options": map[string]any{"1": "Yes", "2": "No"}})
			case (e.Event == lifecycle.TaskCompleted || e.Event == lifecycle.TaskFailed) && e.When == "tasks remain":
				pre, take = []step{task(lifecycle.TaskCreated, "t2")}, task(e.Event, "t1")
			case strings.HasPrefix(e.Event, "task."):
				take = task(e.Event, "t1")
			default:
				take = event(e.Event, nil)
			}
			id := a.Session(highRisk)
			for _, s := range append(reach[from][:len(reach[from]):len(reach[from])], pre...) {
				s(a, id)
			}
			if got := a.Detail(id)["lifecycle"]; got != string(from) {
				t.Fatalf("the walk reached %v, not %s", got, from)
			}
			trs := take(a, id)
			if trs != nil {
				found := false
				for _, tr := range trs {
					found = found || tr == lifecycle.Transition{From: e.From, To: e.To, Event: e.Event}
				}
				if !found {
					t.Fatalf("the call answered %+v, without the arrow", trs)
				}
			}
			if got := a.Detail(id)["lifecycle"]; got != string(want) {
				t.Fatalf("the session is %v after the arrow, want %s", got, want)
			}
		})
	}
}
