package plan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/plan"
)

// The seed's worked example, as a skill compiles it.
const seedExample = `{
  "initial_steps": [
    {"id": "cpu", "server": "mcp-monitor", "tool": "get_cpu_info", "parallel_group": "probes", "on_fail": "skip"},
    {"id": "mem", "server": "mcp-monitor", "tool": "get_memory_info", "parallel_group": "probes", "on_fail": "skip"},
    {"id": "join_probes", "kind": "join", "in": ["cpu", "mem"], "min_success": 1},
    {"id": "brief", "depends_on": ["join_probes"], "prompt": "write one short line about the machine from {cpu, mem}"}
  ],
  "stopping_points": [
    {"id": 1, "type": "menu", "title": "save this reading?",
     "options": {"1": {"label": "Yes", "steps": []}, "2": {"label": "No", "steps": []}}}
  ]
}`

func TestValidate(t *testing.T) {
	var seed plan.Plan
	if err := json.Unmarshal([]byte(seedExample), &seed); err != nil {
		t.Fatal(err)
	}
	if err := seed.Validate(); err != nil {
		t.Fatalf("the seed's own plan is refused: %v", err)
	}
	step := func(id string) plan.Step { return plan.Step{ID: id} }
	menu := func(id int, title string, opts map[string]plan.Option) plan.StoppingPoint {
		return plan.StoppingPoint{ID: id, Type: "menu", Title: title, Options: opts}
	}
	yes := map[string]plan.Option{"1": {Label: "Yes"}}
	many := make([]plan.Step, plan.MaxSteps+1)
	for i := range many {
		many[i] = step(strings.Repeat("s", i+1))
	}
	cases := []struct {
		name string
		p    plan.Plan
		want string // "" for valid, else part of the error
	}{
		{"an empty plan is valid", plan.Plan{}, ""},
		{"a step without an id is refused", plan.Plan{InitialSteps: []plan.Step{step(" ")}}, "step 1 has no id"},
		{"a step id used twice in one list is refused", plan.Plan{InitialSteps: []plan.Step{step("a"), step("a")}}, `"a" is used twice`},
		{"the same step id in an option and the initial steps is fine", plan.Plan{InitialSteps: []plan.Step{step("a")},
			StoppingPoints: []plan.StoppingPoint{menu(1, "ok?", map[string]plan.Option{"1": {Label: "Yes", Steps: []plan.Step{step("a")}}})}}, ""},
		{"a stopping point id used twice is refused", plan.Plan{StoppingPoints: []plan.StoppingPoint{menu(1, "a?", yes), menu(1, "b?", yes)}}, "the id 1 is used twice"},
		{"a stopping point without a title is refused", plan.Plan{StoppingPoints: []plan.StoppingPoint{menu(2, "", yes)}}, "stopping point 2 has no title"},
		{"a stopping point without options is refused", plan.Plan{StoppingPoints: []plan.StoppingPoint{menu(3, "ok?", nil)}}, "stopping point 3 has no options"},
		{"an option without a label is refused", plan.Plan{StoppingPoints: []plan.StoppingPoint{menu(4, "ok?", map[string]plan.Option{"1": {}})}}, `option "1" needs a key and a label`},
		{"a step inside an option without an id is refused", plan.Plan{StoppingPoints: []plan.StoppingPoint{menu(5, "ok?",
			map[string]plan.Option{"1": {Label: "Yes", Steps: []plan.Step{step("")}}})}}, "stopping point 5 option 1: step 1 has no id"},
		{"more than MaxSteps steps in all are refused", plan.Plan{InitialSteps: many}, "more than 500 steps"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateNamesTheFirstProblemTheSameWayEveryTime(t *testing.T) {
	p := plan.Plan{StoppingPoints: []plan.StoppingPoint{{ID: 1, Title: "ok?", Options: map[string]plan.Option{
		"1": {}, "2": {}, "3": {}, "4": {}, "5": {}, "6": {}, "7": {}, "8": {}, "9": {}}}}}
	first := p.Validate().Error()
	for i := 0; i < 50; i++ {
		if got := p.Validate().Error(); got != first {
			t.Fatalf("run %d: %q, then %q", i, first, got)
		}
	}
	if !strings.Contains(first, `option "1"`) {
		t.Fatalf("first problem = %q, want option 1", first)
	}
}

// TestValidateRefusesStepsThatWaitOnNothingOrOnThemselves proves that a
// step naming a step the plan lacks, and steps waiting on each other in a
// circle (through depends_on or a join's in), are refused naming the step,
// and that a step may wait on a step of another list.
func TestValidateRefusesStepsThatWaitOnNothingOrOnThemselves(t *testing.T) {
	dep := func(id string, on ...string) plan.Step { return plan.Step{ID: id, DependsOn: on} }
	join := func(id string, in ...string) plan.Step { return plan.Step{ID: id, Kind: "join", In: in} }
	option := func(steps ...plan.Step) []plan.StoppingPoint {
		return []plan.StoppingPoint{{ID: 1, Title: "ok?", Options: map[string]plan.Option{"1": {Label: "Yes", Steps: steps}}}}
	}
	cases := []struct {
		name     string
		p        plan.Plan
		dangling string
		cycle    string // the circle, joined by " "
	}{
		{"a chain is valid", plan.Plan{InitialSteps: []plan.Step{dep("a"), dep("b", "a"), dep("c", "a", "b")}}, "", ""},
		{"an option's step may wait on an initial step", plan.Plan{InitialSteps: []plan.Step{dep("a")}, StoppingPoints: option(dep("b", "a"))}, "", ""},
		{"a step waiting on a step the plan lacks is refused", plan.Plan{InitialSteps: []plan.Step{dep("a"), dep("b", "ghost")}}, "ghost", ""},
		{"a join over a step the plan lacks is refused", plan.Plan{InitialSteps: []plan.Step{dep("a"), join("j", "a", "ghost")}}, "ghost", ""},
		{"a step waiting on itself is refused", plan.Plan{InitialSteps: []plan.Step{dep("a", "a")}}, "", "a a"},
		{"two steps waiting on each other are refused", plan.Plan{InitialSteps: []plan.Step{dep("a", "b"), dep("b", "a")}}, "", "a b a"},
		{"a circle through a join is refused", plan.Plan{InitialSteps: []plan.Step{dep("a", "j"), dep("b", "a"), join("j", "b")}}, "", "a j b a"},
		{"a circle inside an option is refused", plan.Plan{StoppingPoints: option(dep("x", "y"), dep("y", "x"))}, "", "x y x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			var g *plan.GraphError
			if c.dangling == "" && c.cycle == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.As(err, &g) || g.Dangling != c.dangling || strings.Join(g.Cycle, " ") != c.cycle {
				t.Fatalf("got %v (%+v), want dangling %q, cycle %q", err, g, c.dangling, c.cycle)
			}
		})
	}
}

// TestValidateBoundsEveryText proves that each text of a plan has a limit
// and refuses control characters, with an error naming its JSON path.
func TestValidateBoundsEveryText(t *testing.T) {
	long := strings.Repeat("é", plan.MaxName+1)
	sp := func(f func(*plan.StoppingPoint)) plan.Plan {
		s := plan.StoppingPoint{ID: 1, Type: "menu", Title: "ok?", Options: map[string]plan.Option{"1": {Label: "Yes"}}}
		f(&s)
		return plan.Plan{StoppingPoints: []plan.StoppingPoint{s}}
	}
	st := func(f func(*plan.Step)) plan.Plan {
		s := plan.Step{ID: "a"}
		f(&s)
		return plan.Plan{InitialSteps: []plan.Step{{ID: "z"}, s}}
	}
	nine := map[string]plan.Option{}
	for i := range 10 {
		nine[fmt.Sprint(i)] = plan.Option{Label: "x"}
	}
	cases := []struct {
		name, code, field string
		p                 plan.Plan
	}{
		{"a step id", "id_too_long", "initial_steps[1].id", st(func(s *plan.Step) { s.ID = long })},
		{"a tool", "tool_too_long", "initial_steps[1].tool", st(func(s *plan.Step) { s.Tool = long })},
		{"a server with ESC", "invalid_characters", "initial_steps[1].server", st(func(s *plan.Step) { s.Server = "a\x1b[2J" })},
		{"a prompt", "prompt_too_long", "initial_steps[1].prompt", st(func(s *plan.Step) { s.Prompt = strings.Repeat("p", plan.MaxPrompt+1) })},
		{"a prompt with NUL", "invalid_characters", "initial_steps[1].prompt", st(func(s *plan.Step) { s.Prompt = "a\x00" })},
		{"a depends_on entry", "entry_too_long", "initial_steps[1].depends_on[0]", st(func(s *plan.Step) { s.DependsOn = []string{long} })},
		{"a parallel group", "parallel_group_too_long", "initial_steps[1].parallel_group", st(func(s *plan.Step) { s.ParallelGroup = long })},
		{"a stopping point's title", "title_too_long", "stopping_points[0].title", sp(func(s *plan.StoppingPoint) { s.Title = long })},
		{"a stopping point's title with a NUL", "invalid_characters", "stopping_points[0].title", sp(func(s *plan.StoppingPoint) { s.Title = "ok\x00?" })},
		{"an option's label", "label_too_long", `stopping_points[0].options["1"].label`, sp(func(s *plan.StoppingPoint) { s.Options["1"] = plan.Option{Label: long} })},
		{"an option's key", "key_too_long", "stopping_points[0].options.key", sp(func(s *plan.StoppingPoint) { s.Options = map[string]plan.Option{long: {Label: "x"}} })},
		{"more than 9 options", "too_many_entries", "stopping_points[0].options", sp(func(s *plan.StoppingPoint) { s.Options = nine })},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			err := c.p.Validate()
			if errs.CodeOf(err) != c.code || errs.FieldOf(err) != c.field {
				t.Fatalf("got %v (%s about %q), want %s about %s", err, errs.CodeOf(err), errs.FieldOf(err), c.code, c.field)
			}
		})
	}
}
