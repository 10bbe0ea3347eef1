// Package plan is the shape of an execution plan, as an agent compiles a
// skill into one: the steps that run first, and stopping points whose options hold
// the steps that may run only after a person picks that option.
package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// Step is one step of a plan.
type Step struct {
	ID            string   `json:"id"`
	Server        string   `json:"server,omitempty"`
	Tool          string   `json:"tool,omitempty"`
	Prompt        string   `json:"prompt,omitempty"`
	Kind          string   `json:"kind,omitempty"` // "join" waits on the steps named in In
	In            []string `json:"in,omitempty"`
	MinSuccess    int      `json:"min_success,omitempty"`
	DependsOn     []string `json:"depends_on,omitempty"`
	ParallelGroup string   `json:"parallel_group,omitempty"`
	OnFail        string   `json:"on_fail,omitempty"`
	// SideEffecting is the step's own word on whether it writes, which
	// may only raise the tool registry's (Step.Writes): true makes the
	// step write; false or unset leaves it to the registry, and a tool
	// nobody classified writes.
	SideEffecting *bool `json:"side_effecting,omitempty"`
}

// StoppingPoint is where a run parks until a person answers.
type StoppingPoint struct {
	ID      int               `json:"id"`
	Type    string            `json:"type"`
	Title   string            `json:"title"`
	Options map[string]Option `json:"options"`
}

// Option is one answer at a stopping point and the steps it lets run.
type Option struct {
	Label string `json:"label"`
	Steps []Step `json:"steps"`
}

// Plan is an execution plan.
type Plan struct {
	InitialSteps   []Step          `json:"initial_steps"`
	StoppingPoints []StoppingPoint `json:"stopping_points"`
}

// MaxSteps bounds the steps a plan may hold in all.
const MaxSteps = 500

// The limits of a plan's other parts: stopping points, options per
// stopping point (an ask offers at most 9), and the characters of each text.
const (
	MaxStoppingPoints = 100
	MaxOptions        = 9
	MaxName           = input.Name // a step's id, server, tool, kind, parallel group, on_fail; a reference in in or depends_on; a stopping point's type and title; an option's key and label
	MaxPrompt         = 2000       // a step's prompt
)

// Validate checks the plan's shape: every step has an id unique within its
// list, every stopping point a unique id, a title and at least one option,
// every option a label; the steps a step names in depends_on or in exist in
// the plan, and no step waits, directly or not, on itself. A shape error
// is a plain error, one sentence naming the first problem. A text over its
// limit or holding a control character is an *errs.Error (422
// <name>_too_long or invalid_characters) whose field is the JSON path of
// the text, e.g. initial_steps[2].prompt.
func (p Plan) Validate() error {
	if err := p.validText(); err != nil {
		return err
	}
	total := 0
	if err := validSteps("initial_steps", p.InitialSteps, &total); err != nil {
		return err
	}
	seen := map[int]bool{}
	for i, sp := range p.StoppingPoints {
		where := fmt.Sprintf("stopping point %d", sp.ID)
		if seen[sp.ID] {
			return fmt.Errorf("stopping_points[%d]: the id %d is used twice", i, sp.ID)
		}
		seen[sp.ID] = true
		if strings.TrimSpace(sp.Title) == "" {
			return fmt.Errorf("%s has no title", where)
		}
		if len(sp.Options) == 0 {
			return fmt.Errorf("%s has no options", where)
		}
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			o := sp.Options[key]
			if strings.TrimSpace(key) == "" || strings.TrimSpace(o.Label) == "" {
				return fmt.Errorf("%s: option %q needs a key and a label", where, key)
			}
			if err := validSteps(fmt.Sprintf("%s option %s", where, key), o.Steps, &total); err != nil {
				return err
			}
		}
	}
	return p.validGraph()
}

func validSteps(where string, steps []Step, total *int) error {
	ids := map[string]bool{}
	for i, s := range steps {
		*total++
		if *total > MaxSteps {
			return fmt.Errorf("the plan has more than %d steps", MaxSteps)
		}
		if strings.TrimSpace(s.ID) == "" {
			return fmt.Errorf("%s: step %d has no id", where, i+1)
		}
		if ids[s.ID] {
			return fmt.Errorf("%s: the step id %q is used twice", where, s.ID)
		}
		ids[s.ID] = true
	}
	return nil
}

// validText checks every text of the plan against its limit and for
// control characters, in the order of the JSON.
func (p Plan) validText() error {
	if len(p.StoppingPoints) > MaxStoppingPoints {
		return errs.E(errs.Invalid, "too_many_entries", "stopping_points has %d entries; at most %d are allowed.",
			len(p.StoppingPoints), MaxStoppingPoints).In("stopping_points")
	}
	if err := stepsText("initial_steps", p.InitialSteps); err != nil {
		return err
	}
	for i, sp := range p.StoppingPoints {
		at := fmt.Sprintf("stopping_points[%d]", i)
		if err := text(at, "type", sp.Type, MaxName); err != nil {
			return err
		}
		if err := text(at, "title", sp.Title, MaxName); err != nil {
			return err
		}
		if len(sp.Options) > MaxOptions {
			return errs.E(errs.Invalid, "too_many_entries", "%s.options has %d entries; at most %d are allowed.",
				at, len(sp.Options), MaxOptions).In(at + ".options")
		}
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			o := sp.Options[key]
			if err := text(at+".options", "key", key, MaxName); err != nil {
				return err
			}
			oat := fmt.Sprintf("%s.options[%q]", at, key)
			if err := text(oat, "label", o.Label, MaxName); err != nil {
				return err
			}
			if err := stepsText(oat+".steps", o.Steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepsText checks the texts of one list of steps, at the JSON path at.
func stepsText(at string, steps []Step) error {
	if len(steps) > MaxSteps {
		return fmt.Errorf("the plan has more than %d steps", MaxSteps)
	}
	for i, s := range steps {
		sat := fmt.Sprintf("%s[%d]", at, i)
		for _, f := range []struct {
			name, v string
			max     int
		}{
			{"id", s.ID, MaxName}, {"server", s.Server, MaxName}, {"tool", s.Tool, MaxName},
			{"prompt", s.Prompt, MaxPrompt}, {"kind", s.Kind, MaxName},
			{"parallel_group", s.ParallelGroup, MaxName}, {"on_fail", s.OnFail, MaxName},
		} {
			if err := text(sat, f.name, f.v, f.max); err != nil {
				return err
			}
		}
		for _, l := range []struct {
			name string
			refs []string
		}{{"in", s.In}, {"depends_on", s.DependsOn}} {
			if len(l.refs) > MaxSteps {
				return errs.E(errs.Invalid, "too_many_entries", "%s.%s has %d entries; at most %d are allowed.",
					sat, l.name, len(l.refs), MaxSteps).In(sat + "." + l.name)
			}
			for j, r := range l.refs {
				if err := text(fmt.Sprintf("%s.%s[%d]", sat, l.name, j), "", r, MaxName); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// text refuses v over max characters or holding a control character;
// only a prompt may hold newlines and tabs. The error's field is the JSON
// path at.name (at alone when name is ""), its code name_too_long or
// invalid_characters.
func text(at, name, v string, max int) error {
	field, code := at, "entry_too_long"
	if name != "" {
		field, code = at+"."+name, name+"_too_long"
	}
	if n := utf8.RuneCountInString(v); n > max {
		return errs.E(errs.Invalid, code, "%s is %d characters; at most %d are allowed.", field, n, max).In(field)
	}
	clean := input.CleanLine
	if name == "prompt" {
		clean = input.Clean
	}
	_, err := clean(field, v)
	return err
}

// validGraph refuses a step that names, in depends_on or in, a step the
// plan does not have, and steps that wait on each other in a circle. A
// name refers to the step of that id in the same list when there is one;
// otherwise to a step of another list (an option's step may read an
// initial step's output), which runs before it or apart from it, so a
// circle lies within one list.
func (p Plan) validGraph() error {
	all := map[string]bool{}
	lists := []struct {
		where string
		steps []Step
	}{{"initial_steps", p.InitialSteps}}
	for _, sp := range p.StoppingPoints {
		for _, key := range slices.Sorted(maps.Keys(sp.Options)) {
			lists = append(lists, struct {
				where string
				steps []Step
			}{fmt.Sprintf("stopping point %d option %s", sp.ID, key), sp.Options[key].Steps})
		}
	}
	for _, l := range lists {
		for _, s := range l.steps {
			all[s.ID] = true
		}
	}
	for _, l := range lists {
		byID := make(map[string]Step, len(l.steps))
		for _, s := range l.steps {
			byID[s.ID] = s
		}
		for _, s := range l.steps {
			for _, r := range refs(s) {
				if !all[r] {
					return &GraphError{Step: s.ID, Dangling: r, Reason: fmt.Sprintf("in %s waits on %q, which no step of the plan is: name a step's id", l.where, r)}
				}
			}
		}
		// Depth-first search for a circle: 1 while on the path, 2 when done.
		state := map[string]int{}
		var path []string
		var visit func(id string) []string
		visit = func(id string) []string {
			switch state[id] {
			case 1:
				return append(path[slices.Index(path, id):], id)
			case 2:
				return nil
			}
			state[id] = 1
			path = append(path, id)
			for _, r := range refs(byID[id]) {
				if _, local := byID[r]; !local {
					continue
				}
				if c := visit(r); c != nil {
					return c
				}
			}
			path = path[:len(path)-1]
			state[id] = 2
			return nil
		}
		for _, s := range l.steps {
			if c := visit(s.ID); c != nil {
				return &GraphError{Step: c[0], Cycle: c, Reason: fmt.Sprintf("in %s waits on itself through %s: a step can only wait on steps that do not wait on it",
					l.where, strings.Join(quoted(c), " → "))}
			}
		}
	}
	return nil
}

// refs are the steps s waits on: its depends_on, and its in for a join.
func refs(s Step) []string {
	if s.Kind == "join" {
		return append(slices.Clone(s.In), s.DependsOn...)
	}
	return s.DependsOn
}

func quoted(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%q", id)
	}
	return out
}

// GraphError is a plan whose steps wait on a step it does not have, or on
// each other in a circle: such a plan could never finish.
type GraphError struct {
	// Step is the id of the step that waits.
	Step string
	// Dangling is the id it waits on that no step has ("" for a circle,
	// and for a step that waits on an empty id: tell them apart by Cycle).
	Dangling string
	// Cycle is the circle, from Step back to Step; nil when dangling.
	Cycle []string
	// Reason is the rest of the sentence after the step's name.
	Reason string
}

// Error returns one sentence naming the step.
func (e *GraphError) Error() string { return fmt.Sprintf("step %q %s", e.Step, e.Reason) }
