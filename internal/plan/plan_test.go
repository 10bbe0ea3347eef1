package plan_test

import (
	"encoding/json"
	"strings"
	"testing"

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
