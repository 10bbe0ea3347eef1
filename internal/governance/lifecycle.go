package governance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/policy"
)

// LifecycleService moves a session through seed 002's state machine on
// the events its agent reports.
type LifecycleService struct {
	core  *core
	plans *PlanService
}

// The limits of an event's payload, in characters (runes) or entries.
const (
	MaxTaskID        = input.Name // a task's id
	MaxPromptText    = 2000       // a permission prompt's question
	MaxPromptOptions = 9          // its options
	MaxPromptPaths   = 20         // the paths it names
)

// EventInput is one lifecycle event an agent reports: its name and the
// payload that event takes.
type EventInput struct {
	Name    string          `json:"name" jsonschema:"The lifecycle event: user.message.created, IntentClassified, DirectModeEntered, DirectModeExited, reply.sent, architecture.impact.completed, architecture.plan.updated, task.created, task.progress, task.completed, task.failed, task.blocked, requirement.changed or permission.prompt.requested."`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"The event's payload, e.g. {\"intent\":\"task\"} for IntentClassified, {\"level\":\"architecture\"} for architecture.impact.completed, a plan (summary, initial_steps, stopping_points) for architecture.plan.updated."`
}

// eventPayload is the payload of every event but architecture.plan.updated
// (whose payload is a plan).
type eventPayload struct {
	Intent  string            `json:"intent"`
	Level   string            `json:"level"`
	Task    string            `json:"task"`
	Prompt  string            `json:"prompt"`
	Options map[string]string `json:"options"`
	Tool    string            `json:"tool"`
	Paths   []string          `json:"paths"`
}

// decodePayload reads a payload strictly: a field it does not take is a
// 422 naming it. An absent payload reads as {}.
func decodePayload(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	err := input.DecodeJSON(raw, v, "payload", "payload.")
	if _, ours := errs.As(err); err != nil && !ours {
		return errs.E(errs.Invalid, "invalid_payload", "The payload must be a JSON object: %v.", err).In("payload")
	}
	return err
}

// validEvent is an event whose name and payload passed, whatever the state.
type validEvent struct {
	ev    lifecycle.Event
	plan  PlanInput // architecture.plan.updated
	tool  string    // permission.prompt.requested
	paths []string  // permission.prompt.requested
	// options are permission.prompt.requested's options, labels trimmed.
	options map[string]string
	payload string // compact JSON, for the timeline
}

// Validate reads the event's payload and checks it: a known name, the
// payload fields the event needs within their values and limits. The plan
// of architecture.plan.updated is checked by Report (as Plans.Propose
// checks it). Errors: name_required, unknown_event, unknown_field,
// invalid_field, invalid_payload, intent_required, invalid_intent,
// level_required, invalid_level, task_required, task_too_long,
// prompt_required, prompt_too_long, options_required, invalid_options
// (a key other than "1" to "9", an empty label, more than nine),
// too_many_entries, empty_entry, paths_too_long, tool_too_long,
// options_too_long (a label), invalid_characters; unknown_field is also a
// field another event takes (task.progress does not take intent).
func (in EventInput) Validate() (validEvent, error) {
	var out validEvent
	name, err := input.Required("name", in.Name, input.Name)
	if err != nil {
		return out, err
	}
	out.ev.Name = name
	if name == lifecycle.ArchitecturePlanUpdated {
		if err := decodePayload(in.Payload, &out.plan); err != nil {
			return out, err
		}
	} else {
		var p eventPayload
		if err := decodePayload(in.Payload, &p); err != nil {
			return out, err
		}
		if p.Task, err = input.Optional("task", p.Task, MaxTaskID); err != nil {
			return out, inPayload(err)
		}
		if p.Prompt, err = input.Optional("prompt", p.Prompt, MaxPromptText); err != nil {
			return out, inPayload(err)
		}
		if out.tool, err = input.Optional("tool", p.Tool, input.Name); err != nil {
			return out, inPayload(err)
		}
		if out.paths, err = input.List("paths", p.Paths, MaxPromptPaths, input.Name); err != nil {
			return out, inPayload(err)
		}
		for i, path := range out.paths {
			out.paths[i] = policy.RedactSecrets(path)
		}
		if out.options, err = promptOptions(p.Options); err != nil {
			return out, err
		}
		out.ev = lifecycle.Event{Name: name, Intent: p.Intent, Level: p.Level, Task: p.Task, Prompt: p.Prompt, Options: out.options}
	}
	if err := out.ev.Validate(); err != nil {
		return out, fromLifecycle(err)
	}
	if name != lifecycle.ArchitecturePlanUpdated {
		if err := takes(name, in.Payload); err != nil {
			return out, err
		}
	}
	if lifecycle.IsTask(name) {
		// A task event's payload is its task alone: recorded as the id
		// the tasks table holds (trimmed), the timeline is what tells
		// which cycle a task was last reported in (CountTasks).
		b, err := json.Marshal(map[string]string{"task": out.ev.Task})
		if err != nil {
			return out, fmt.Errorf("encode the task: %w", err)
		}
		out.payload = string(b)
		return out, nil
	}
	var compact bytes.Buffer
	if len(bytes.TrimSpace(in.Payload)) == 0 || json.Compact(&compact, in.Payload) != nil {
		compact.Reset()
		compact.WriteString("{}")
	}
	out.payload = compact.String()
	return out, nil
}

// promptOptions checks a permission prompt's options as an ask's are
// checked (ledger.AskInput.Validate): numbered "1" to "9", at most nine,
// each with a one-line label of at most input.Name characters, so that
// every option is one a person can pick and Answer can find. Labels are
// trimmed. None at all is for lifecycle.Event.Validate (options_required).
func promptOptions(options map[string]string) (map[string]string, error) {
	if len(options) == 0 {
		return nil, nil
	}
	invalid := func(format string, args ...any) error {
		return errs.E(errs.Invalid, "invalid_options", format, args...).In("payload.options")
	}
	if len(options) > MaxPromptOptions {
		return nil, invalid("A permission prompt has %d options; it takes 1 to %d, e.g. {\"1\":\"Allow\",\"2\":\"Deny\"}.",
			len(options), MaxPromptOptions)
	}
	out := make(map[string]string, len(options))
	for _, k := range slices.Sorted(maps.Keys(options)) {
		label := strings.TrimSpace(options[k])
		if len(k) != 1 || k[0] < '1' || k[0] > '9' || label == "" {
			return nil, invalid("Option %q must be numbered 1 to 9 and have a label, e.g. {\"1\":\"Allow\",\"2\":\"Deny\"}.", k)
		}
		if n := utf8.RuneCountInString(label); n > input.Name {
			return nil, errs.E(errs.Invalid, "options_too_long", "Option %s is %d characters; at most %d are allowed.",
				k, n, input.Name).In("payload.options")
		}
		if _, err := input.CleanLine("options", label); err != nil {
			return nil, inPayload(err)
		}
		out[k] = label
	}
	return out, nil
}

// eventFields are the payload fields each event takes (the plan's are
// PlanInput's); an event not named takes none.
var eventFields = map[string][]string{
	lifecycle.IntentClassified:            {"intent"},
	lifecycle.ArchitectureImpactCompleted: {"level"},
	lifecycle.RequirementChanged:          {"level"},
	lifecycle.TaskCreated:                 {"task"},
	lifecycle.TaskProgress:                {"task"},
	lifecycle.TaskCompleted:               {"task"},
	lifecycle.TaskFailed:                  {"task"},
	lifecycle.TaskBlocked:                 {"task"},
	lifecycle.PermissionPromptRequested:   {"prompt", "options", "tool", "paths"},
}

// takes refuses a payload field the event does not take, though another
// event does (task.progress with an intent): 422 unknown_field naming the
// field and the event. The payload decoded already, so it is an object.
func takes(name string, raw json.RawMessage) error {
	var fields map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	allowed := eventFields[name]
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if slices.Contains(allowed, f) {
			continue
		}
		takesWhat := "no payload fields"
		if len(allowed) > 0 {
			takesWhat = "only " + strings.Join(allowed, ", ")
		}
		return errs.E(errs.Invalid, "unknown_field", "The event %s does not take the payload field %q; it takes %s.",
			name, f, takesWhat).In("payload."+f).With("event", name)
	}
	return nil
}

// inPayload names the payload field an input error is about.
func inPayload(err error) error {
	if e, ok := errs.As(err); ok && e.Field != "" {
		return e.In("payload." + e.Field)
	}
	return err
}

// fromLifecycle turns the state machine's errors into Madebook's: an
// invalid event is a 422 naming its field, a refused one a 409
// transition_not_allowed with the allowed events and the current state.
func fromLifecycle(err error) error {
	var ie *lifecycle.InputError
	var te *lifecycle.TransitionError
	switch {
	case errors.As(err, &ie):
		field := ie.Field
		if field != "name" {
			field = "payload." + field
		}
		return errs.E(errs.Invalid, ie.Code, "%s", ie.Message).In(field)
	case errors.As(err, &te):
		return errs.E(errs.Conflict, "transition_not_allowed", "%s", te.Error()).
			With("allowed", te.Allowed).With("lifecycle", string(te.State))
	}
	return err
}

// LifecycleReport is the session's state after an event, and every
// transition the event took, in order.
type LifecycleReport struct {
	Lifecycle   lifecycle.State        `json:"lifecycle"`
	Transitions []lifecycle.Transition `json:"transitions"`
	// Plan is the plan architecture.plan.updated recorded.
	Plan *Plan `json:"plan,omitempty"`
	// Evidence is the mission's evidence gate DirectModeExited evaluated.
	Evidence *EvidenceGate `json:"evidence,omitempty"`
	// Permission is the prompt permission.prompt.requested opened: its id
	// is what the answer in a later brief's permissions names.
	Permission *PermissionPrompt `json:"permission,omitempty"`
}

// Report applies an event the session's own agent reports. The state is
// read, the event applied and the result written in one write
// transaction, so racing events on one session apply one after the other.
// Every event and every transition (before, after, event, payload) is in
// the session's timeline; a refused one writes nothing.
//
// architecture.plan.updated carries a plan, checked and stored as
// Plans.Propose does: on a mission that is not high-risk it is approved at
// once and CONFIRMING proceeds to EXECUTING; on a high-risk one the
// session waits in CONFIRMING for a lead. DirectModeExited evaluates the
// mission's evidence gate as Evidence.Complete does. task.* events update
// the session's tasks. Errors: forbidden, session_not_found, those of
// EventInput.Validate and PlanInput.Validate, side_effect_before_gate,
// transition_not_allowed.
func (s *LifecycleService) Report(ctx context.Context, actor auth.Actor, session string, in EventInput) (LifecycleReport, error) {
	const what = "report a lifecycle event"
	if err := actor.RequireAgent(what); err != nil {
		return LifecycleReport{}, err
	}
	ve, err := in.Validate()
	if err != nil {
		return LifecycleReport{}, err
	}
	var checked checkedPlan
	if ve.ev.Name == lifecycle.ArchitecturePlanUpdated {
		if checked, err = s.plans.check(ctx, ve.plan); err != nil {
			return LifecycleReport{}, err
		}
	}
	now := s.core.now()
	var (
		out     LifecycleReport
		planRow *db.Plan
	)
	err = s.core.write(ctx, func(q db.Querier) error {
		sess, err := ownSession(ctx, q, actor, session, what)
		if err != nil {
			return err
		}
		// The event is recorded first: the task counts read the
		// timeline to know the cycle's tasks. A refusal rolls it back.
		if err := s.core.event(ctx, q, session, actor, now, "lifecycle.event", ve.ev.Name, ve.payload); err != nil {
			return err
		}
		var counts lifecycle.TaskCounts
		if lifecycle.IsTask(ve.ev.Name) {
			if err := q.UpsertTask(ctx, db.UpsertTaskParams{SessionID: session, Task: ve.ev.Task,
				Status: strings.TrimPrefix(ve.ev.Name, "task."), At: db.FormatTime(now)}); err != nil {
				return err
			}
			c, err := q.CountTasks(ctx, session)
			if err != nil {
				return err
			}
			counts = lifecycle.TaskCounts{Created: int(c.Created), Done: int(c.Done)}
		}
		trs, err := lifecycle.Apply(lifecycle.State(sess.Lifecycle), ve.ev, counts)
		if err != nil {
			return fromLifecycle(err)
		}
		switch ve.ev.Name {
		case lifecycle.ArchitecturePlanUpdated:
			row, err := s.plans.record(ctx, q, actor, sess, checked, now)
			if err != nil {
				return err
			}
			planRow = &row
			if row.Status == PlanApproved {
				tr, err := lifecycle.Proceed(trs[len(trs)-1].To)
				if err != nil {
					return err
				}
				trs = append(trs, tr)
			}
		case lifecycle.DirectModeExited:
			gate, err := s.core.evaluateGate(ctx, q, actor, sess, now, "evidence.collected")
			if err != nil {
				return err
			}
			out.Evidence = &gate
		case lifecycle.PermissionPromptRequested:
			p, err := openPrompt(ctx, q, session, ve, now)
			if err != nil {
				return err
			}
			out.Permission = &p
		}
		out.Transitions = trs
		out.Lifecycle = trs[len(trs)-1].To
		if ve.ev.Name == lifecycle.PermissionPromptRequested {
			// The state is unchanged, and a prompt alone does not make an
			// untracked session tracked: the transition is only recorded.
			return s.core.record(ctx, q, actor, session, now, ve.payload, trs)
		}
		return s.core.move(ctx, q, actor, session, now, ve.payload, trs)
	})
	if err != nil {
		return LifecycleReport{}, fmt.Errorf("lifecycle event %s on %s: %w", ve.ev.Name, session, err)
	}
	if planRow != nil {
		p, err := planFrom(*planRow)
		if err != nil {
			return LifecycleReport{}, fmt.Errorf("lifecycle event %s on %s: %w", ve.ev.Name, session, err)
		}
		out.Plan = &p
	}
	return out, nil
}

// transitionDetail is how a transition reads in the timeline.
type transitionDetail struct {
	Before  lifecycle.State `json:"before"`
	After   lifecycle.State `json:"after"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// move records each transition in the session's timeline (with the
// payload of the event that took it, when there is one) and leaves the
// session, tracked from now on, in the last one's state.
func (c *core) move(ctx context.Context, q db.Querier, actor auth.Actor, session string, now time.Time, payload string, trs []lifecycle.Transition) error {
	if err := c.record(ctx, q, actor, session, now, payload, trs); err != nil {
		return err
	}
	return q.SetSessionLifecycle(ctx, db.SetSessionLifecycleParams{ID: session,
		Lifecycle: string(trs[len(trs)-1].To), LifecycleAt: db.NullTime(now)})
}

// record records each transition in the session's timeline, with the
// payload of the event that took it when there is one.
func (c *core) record(ctx context.Context, q db.Querier, actor auth.Actor, session string, now time.Time, payload string, trs []lifecycle.Transition) error {
	for _, tr := range trs {
		d := transitionDetail{Before: tr.From, After: tr.To, Event: tr.Event}
		if payload != "" {
			d.Payload = json.RawMessage(payload)
		}
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode transition: %w", err)
		}
		if err := c.event(ctx, q, session, actor, now, "lifecycle.transition", tr.Event, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// LifecycleStep is one transition a session took: the state before and
// after, the event that moved it, and when.
type LifecycleStep struct {
	From  lifecycle.State
	To    lifecycle.State
	Event string
	At    time.Time
}

// LifecyclePath is the transitions the session took, oldest first, as its
// timeline recorded them (lifecycle.transition events).
func (d SessionDetail) LifecyclePath() ([]LifecycleStep, error) {
	var path []LifecycleStep
	for _, e := range d.Timeline {
		if e.Kind != "lifecycle.transition" {
			continue
		}
		var t transitionDetail
		if err := json.Unmarshal([]byte(e.Detail), &t); err != nil {
			return nil, fmt.Errorf("session %s: a lifecycle transition at %s: %w", d.ID, e.At.Format(time.RFC3339), err)
		}
		path = append(path, LifecycleStep{From: t.Before, To: t.After, Event: t.Event, At: e.At})
	}
	return path, nil
}
