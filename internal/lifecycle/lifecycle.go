// Package lifecycle is seed 002's agent state machine, made exact in
// DESIGN.md: twelve states, the events an agent reports, and the three
// answers a lead gives in CONFIRMING. It is pure: no I/O, no clock, and it
// imports nothing of Madebook's, so every arrow of the table is a test.
package lifecycle

import (
	"fmt"
	"slices"
	"strings"
)

// State is a session's lifecycle state.
type State string

// The twelve states.
const (
	Idle                  State = "IDLE"
	Classifying           State = "CLASSIFYING"
	Answering             State = "ANSWERING"
	Delegating            State = "DELEGATING"
	Scheduling            State = "SCHEDULING"
	ArchitectureDesigning State = "ARCHITECTURE_DESIGNING"
	Confirming            State = "CONFIRMING"
	Executing             State = "EXECUTING"
	Interrupting          State = "INTERRUPTING"
	ArchitectureRevising  State = "ARCHITECTURE_REVISING"
	Summarizing           State = "SUMMARIZING"
	DirectMode            State = "DIRECT_MODE"
)

// States returns the twelve states in the seed's order.
func States() []State {
	return []State{Idle, Classifying, Answering, Delegating, Scheduling, ArchitectureDesigning, Confirming,
		Executing, Interrupting, ArchitectureRevising, Summarizing, DirectMode}
}

// Valid reports whether s is one of the twelve states.
func (s State) Valid() bool { return slices.Contains(States(), s) }

// The events an agent reports.
const (
	UserMessageCreated          = "user.message.created"
	IntentClassified            = "IntentClassified"
	DirectModeEntered           = "DirectModeEntered"
	DirectModeExited            = "DirectModeExited"
	ReplySent                   = "reply.sent"
	ArchitectureImpactCompleted = "architecture.impact.completed"
	ArchitecturePlanUpdated     = "architecture.plan.updated"
	TaskCreated                 = "task.created"
	TaskProgress                = "task.progress"
	TaskCompleted               = "task.completed"
	TaskFailed                  = "task.failed"
	TaskBlocked                 = "task.blocked"
	RequirementChanged          = "requirement.changed"
	PermissionPromptRequested   = "permission.prompt.requested"
	// PermissionPromptResolved is a person's answer to a prompt: it is a
	// known event, but an agent never reports it, so Apply always refuses it.
	PermissionPromptResolved = "permission.prompt.resolved"
)

// The answers a lead gives in CONFIRMING. They are not agent events:
// Apply does not know them; Confirm, Modify and Reject take them.
const (
	LeadConfirm = "lead.confirm"
	LeadModify  = "lead.modify"
	LeadReject  = "lead.reject"
	// AutoConfirm is no one's answer: on a mission that is not high-risk
	// CONFIRMING proceeds to EXECUTING at once (high permission).
	AutoConfirm = "plan.auto_confirmed"
)

// Events returns the events an agent may name, in the table's order
// (permission.prompt.resolved included: it is known, and always refused).
func Events() []string {
	return []string{UserMessageCreated, IntentClassified, DirectModeEntered, DirectModeExited, ReplySent,
		ArchitectureImpactCompleted, ArchitecturePlanUpdated, TaskCreated, TaskProgress, TaskCompleted,
		TaskFailed, TaskBlocked, RequirementChanged, PermissionPromptRequested, PermissionPromptResolved}
}

// The intents of IntentClassified.
const (
	IntentChat   = "chat"
	IntentTask   = "task"
	IntentDirect = "direct"
)

// The levels of architecture.impact.completed and requirement.changed.
const (
	LevelImplementation = "implementation"
	LevelArchitecture   = "architecture"
	LevelExecution      = "execution"
	LevelDesign         = "design"
	LevelInterface      = "interface"
)

// Event is one event an agent reports, with the payload fields the state
// machine reads. The plan of architecture.plan.updated is checked by the
// caller; the state machine needs nothing from it.
type Event struct {
	Name    string
	Intent  string            // IntentClassified
	Level   string            // architecture.impact.completed, requirement.changed
	Task    string            // task.*
	Prompt  string            // permission.prompt.requested
	Options map[string]string // permission.prompt.requested
}

// InputError is an event that is not valid whatever the state: an unknown
// name or a payload field missing or out of its values. Field names the
// field ("name" or the payload's field).
type InputError struct {
	Field   string
	Code    string
	Message string
}

func (e *InputError) Error() string { return e.Message }

// TransitionError is a valid event the current state does not accept.
type TransitionError struct {
	State   State
	Event   string
	Allowed []string // the events accepted from State, in table order
}

func (e *TransitionError) Error() string {
	if e.Event == PermissionPromptResolved {
		return fmt.Sprintf("%s is never reported by an agent: a person answers the prompt. From %s the allowed events are: %s.",
			e.Event, e.State, strings.Join(e.Allowed, ", "))
	}
	return fmt.Sprintf("%s is not allowed in %s; the allowed events are: %s.", e.Event, e.State, strings.Join(e.Allowed, ", "))
}

func oneOf(field, v string, values ...string) error {
	if slices.Contains(values, v) {
		return nil
	}
	if v == "" {
		return &InputError{Field: field, Code: field + "_required",
			Message: fmt.Sprintf("The %s is required: one of %s.", field, strings.Join(values, ", "))}
	}
	return &InputError{Field: field, Code: "invalid_" + field,
		Message: fmt.Sprintf("The %s %q is not one of %s.", field, v, strings.Join(values, ", "))}
}

// Validate checks the event's name and the payload fields its name needs,
// whatever the state. Errors are *InputError.
func (e Event) Validate() error {
	switch e.Name {
	case IntentClassified:
		return oneOf("intent", e.Intent, IntentChat, IntentTask, IntentDirect)
	case ArchitectureImpactCompleted:
		return oneOf("level", e.Level, LevelImplementation, LevelArchitecture)
	case RequirementChanged:
		return oneOf("level", e.Level, LevelExecution, LevelDesign, LevelInterface)
	case TaskCreated, TaskProgress, TaskCompleted, TaskFailed, TaskBlocked:
		if strings.TrimSpace(e.Task) == "" {
			return &InputError{Field: "task", Code: "task_required", Message: "The task is required: the id of the task."}
		}
	case PermissionPromptRequested:
		if strings.TrimSpace(e.Prompt) == "" {
			return &InputError{Field: "prompt", Code: "prompt_required", Message: "The prompt is required."}
		}
		if len(e.Options) == 0 {
			return &InputError{Field: "options", Code: "options_required",
				Message: `The options are required, e.g. {"1":"Allow","2":"Deny"}.`}
		}
	case UserMessageCreated, DirectModeEntered, DirectModeExited, ReplySent, ArchitecturePlanUpdated,
		PermissionPromptResolved:
	default:
		return &InputError{Field: "name", Code: "unknown_event",
			Message: fmt.Sprintf("No lifecycle event is called %q; the events are: %s.", e.Name, strings.Join(Events(), ", "))}
	}
	return nil
}

// IsTask reports whether the event names a task (task.created, …).
func IsTask(name string) bool { return strings.HasPrefix(name, "task.") }

// Transition is one arrow taken: from a state, on an event, to a state.
type Transition struct {
	From  State  `json:"from"`
	To    State  `json:"to"`
	Event string `json:"event"`
}

// TaskCounts are a session's tasks after the event being applied: how
// many were created, and how many of them completed or failed.
type TaskCounts struct {
	Created int
	Done    int
}

// allDone reports whether every task created has completed or failed.
func (c TaskCounts) allDone() bool { return c.Created > 0 && c.Done >= c.Created }

// Edge is one arrow of the table, for drawing it: When says which
// payload or condition takes it ("" when the event alone does).
type Edge struct {
	From  State  `json:"from"`
	To    State  `json:"to"`
	Event string `json:"event"`
	When  string `json:"when,omitempty"`
}

// edges is DESIGN.md's table. requirement.changed is two arrows: into
// INTERRUPTING, then at once out of it by its level. permission.prompt.
// requested, accepted in every state, is added by Transitions.
var edges = []Edge{
	{Idle, Classifying, UserMessageCreated, ""},
	{Classifying, Answering, IntentClassified, "intent=chat"},
	{Classifying, Delegating, IntentClassified, "intent=task"},
	{Classifying, DirectMode, IntentClassified, "intent=direct"},
	{Classifying, DirectMode, DirectModeEntered, ""},
	{Answering, Idle, ReplySent, ""},
	{Delegating, Scheduling, ArchitectureImpactCompleted, "level=implementation"},
	{Delegating, ArchitectureDesigning, ArchitectureImpactCompleted, "level=architecture"},
	{Scheduling, Executing, TaskCreated, ""},
	{ArchitectureDesigning, Confirming, ArchitecturePlanUpdated, ""},
	{Confirming, Executing, LeadConfirm, "a lead confirms"},
	{Confirming, ArchitectureRevising, LeadModify, "a lead asks for a modification"},
	{Confirming, Idle, LeadReject, "a lead rejects"},
	{Confirming, Executing, AutoConfirm, "the mission is not high-risk"},
	{Executing, Executing, TaskCreated, ""},
	{Executing, Executing, TaskProgress, ""},
	{Executing, Executing, TaskFailed, "tasks remain"},
	{Executing, Summarizing, TaskFailed, "every task created has completed or failed"},
	{Executing, Executing, TaskBlocked, ""},
	{Executing, Executing, TaskCompleted, "tasks remain"},
	{Executing, Summarizing, TaskCompleted, "every task created has completed or failed"},
	{Executing, Interrupting, RequirementChanged, ""},
	{Interrupting, Executing, RequirementChanged, "level=execution"},
	{Interrupting, ArchitectureRevising, RequirementChanged, "level=design|interface"},
	{ArchitectureRevising, Confirming, ArchitecturePlanUpdated, ""},
	{Summarizing, Idle, ReplySent, ""},
	{DirectMode, Idle, DirectModeExited, "after the evidence gate is evaluated"},
	{DirectMode, DirectMode, TaskCreated, ""},
	{DirectMode, DirectMode, TaskProgress, ""},
	{DirectMode, DirectMode, TaskCompleted, ""},
	{DirectMode, DirectMode, TaskFailed, ""},
	{DirectMode, DirectMode, TaskBlocked, ""},
}

// Transitions returns every arrow of the table, the lead's answers and the
// permission prompt's self-loop on every state included.
func Transitions() []Edge {
	out := slices.Clone(edges)
	for _, s := range States() {
		out = append(out, Edge{s, s, PermissionPromptRequested, "unchanged; the prompt waits on a person"})
	}
	return out
}

// Allowed returns the events an agent may report in state, in table order.
// The lead's answers are not among them. INTERRUPTING is left at once, on
// the same requirement.changed that entered it, so it accepts no event of
// its own but the permission prompt.
func Allowed(state State) []string {
	var out []string
	for _, e := range edges {
		if e.From == state && state != Interrupting && slices.Contains(Events(), e.Event) && !slices.Contains(out, e.Event) {
			out = append(out, e.Event)
		}
	}
	return append(out, PermissionPromptRequested)
}

// Apply returns the transitions an agent's event takes from state, in
// order: one, or two for requirement.changed (through INTERRUPTING). tasks
// are the session's task counts after this event. An invalid event is an
// *InputError whatever the state; a valid one the state does not accept
// (permission.prompt.resolved always) is a *TransitionError.
func Apply(state State, ev Event, tasks TaskCounts) ([]Transition, error) {
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	refuse := &TransitionError{State: state, Event: ev.Name, Allowed: Allowed(state)}
	if !state.Valid() {
		return nil, fmt.Errorf("lifecycle: unknown state %q", state)
	}
	if ev.Name == PermissionPromptResolved || !slices.Contains(refuse.Allowed, ev.Name) {
		return nil, refuse
	}
	step := func(to State) []Transition { return []Transition{{From: state, To: to, Event: ev.Name}} }
	switch {
	case ev.Name == PermissionPromptRequested:
		return step(state), nil
	case ev.Name == IntentClassified:
		return step(map[string]State{IntentChat: Answering, IntentTask: Delegating, IntentDirect: DirectMode}[ev.Intent]), nil
	case ev.Name == ArchitectureImpactCompleted:
		return step(map[string]State{LevelImplementation: Scheduling, LevelArchitecture: ArchitectureDesigning}[ev.Level]), nil
	case ev.Name == RequirementChanged:
		next := ArchitectureRevising
		if ev.Level == LevelExecution {
			next = Executing
		}
		return []Transition{{From: state, To: Interrupting, Event: ev.Name}, {From: Interrupting, To: next, Event: ev.Name}}, nil
	case (ev.Name == TaskCompleted || ev.Name == TaskFailed) && state == Executing:
		if tasks.allDone() {
			return step(Summarizing), nil
		}
		return step(Executing), nil
	}
	for _, e := range edges {
		if e.From == state && e.Event == ev.Name {
			return step(e.To), nil
		}
	}
	return nil, refuse // unreachable: Allowed came from edges
}

// answer is a lead's answer in CONFIRMING.
func answer(state State, name string, to State) (Transition, error) {
	if state != Confirming {
		return Transition{}, &TransitionError{State: state, Event: name, Allowed: Allowed(state)}
	}
	return Transition{From: Confirming, To: to, Event: name}, nil
}

// Confirm is a lead confirming the plan: CONFIRMING to EXECUTING. In any
// other state it is a *TransitionError.
func Confirm(state State) (Transition, error) { return answer(state, LeadConfirm, Executing) }

// Modify is a lead asking for a modification: CONFIRMING to
// ARCHITECTURE_REVISING. In any other state it is a *TransitionError.
func Modify(state State) (Transition, error) { return answer(state, LeadModify, ArchitectureRevising) }

// Reject is a lead rejecting the plan: CONFIRMING to IDLE. In any other
// state it is a *TransitionError.
func Reject(state State) (Transition, error) { return answer(state, LeadReject, Idle) }

// Proceed is CONFIRMING proceeding to EXECUTING at once, on a mission
// that is not high-risk. In any other state it is a *TransitionError.
func Proceed(state State) (Transition, error) { return answer(state, AutoConfirm, Executing) }

// Executes reports whether work runs in state: only DIRECT_MODE and
// EXECUTING execute.
func Executes(state State) bool { return state == DirectMode || state == Executing }

// The permission templates of the states that execute.
const (
	TemplateMainDirect = "main_direct"
	TemplatePerTask    = "per_task"
)

// PermissionTemplate returns the template work runs with in state:
// main_direct in DIRECT_MODE, per_task (the scheduler's, per task) in
// EXECUTING, and "" in every state that executes nothing.
func PermissionTemplate(state State) string {
	switch state {
	case DirectMode:
		return TemplateMainDirect
	case Executing:
		return TemplatePerTask
	}
	return ""
}
