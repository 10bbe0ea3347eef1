package plan_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/madebook/madebook/internal/plan"
)

// FuzzPlanChecks decodes any JSON as a plan and runs the checks an agent's
// plan goes through: Validate and Check never fail outright, give the same
// answer twice, and a plan Validate accepts has no step that waits on a
// step the plan does not have.
func FuzzPlanChecks(f *testing.F) {
	for _, s := range []string{seedExample, `{}`, `{"initial_steps":[{"id":"a","depends_on":["a"]}]}`,
		`{"initial_steps":[{"id":"a","depends_on":["b"]},{"id":"b","depends_on":["a"]}]}`,
		`{"initial_steps":[{"id":"j","kind":"join","in":["x"]}]}`,
		`{"initial_steps":[{"id":"w","server":"s","tool":"t","side_effecting":true}],"stopping_points":[{"id":1,"type":"menu","title":"go?","options":{"1":{"label":"Yes","steps":[{"id":"r","depends_on":["w"]}]}}}]}`,
		`{"stopping_points":[{"id":1},{"id":1}]}`, `{"initial_steps":[{"id":""},{"id":""}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p plan.Plan
		if json.Unmarshal(data, &p) != nil {
			return
		}
		err := p.Validate()
		if again := p.Validate(); (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("Validate said %v, then %v", err, again)
		}
		ids := map[string]bool{}
		var lists [][]plan.Step
		lists = append(lists, p.InitialSteps)
		for _, sp := range p.StoppingPoints {
			for _, o := range sp.Options {
				lists = append(lists, o.Steps)
			}
		}
		for _, l := range lists {
			for _, s := range l {
				ids[s.ID] = true
			}
		}
		// A graph error is a circle or a reference to no step (which may
		// be "": governance tells them apart by the cycle).
		var g *plan.GraphError
		if errors.As(err, &g) && len(g.Cycle) == 0 && ids[g.Dangling] {
			t.Fatalf("a graph error names neither a cycle nor a step the plan lacks: %v", err)
		}
		if err != nil {
			return
		}
		for _, l := range lists {
			for _, s := range l {
				for _, r := range s.DependsOn {
					if !ids[r] {
						t.Fatalf("Validate accepted step %q waiting on %q, which no step is", s.ID, r)
					}
				}
			}
		}
		writes := func(server, tool string, said *bool) bool { return tool != "read" || (said != nil && *said) }
		cerr := p.Check(writes)
		if again := p.Check(writes); (cerr == nil) != (again == nil) || (cerr != nil && cerr.Error() != again.Error()) {
			t.Fatalf("Check said %v, then %v", cerr, again)
		}
	})
}
