// Package plan is the shape of an execution plan, as an agent compiles a
// skill into one: the steps that run first, and stopping points whose options hold
// the steps that may run only after a person picks that option.
package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// SideEffecting says whether the step writes. Unset means the tool
	// registry decides, and a tool nobody classified writes.
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

// Validate checks the plan's shape: every step has an id unique within its
// list, every stopping point a unique id, a title and at least one option,
// every option a label. It returns a sentence naming the first problem.
func (p Plan) Validate() error {
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
	return nil
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
