package plan_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/plan"
)

// registry classifies the seed's tools the way an operator would, by the
// executor gate's rule (gate.Classify) over its entries: the mcp-monitor
// probes read, memory_store writes, a tool nobody classified writes (fail
// safe), and a step's own side_effecting may only raise that.
func registry(server, tool string, said *bool) bool {
	known := map[string]bool{
		"mcp-monitor.get_cpu_info":    false,
		"mcp-monitor.get_memory_info": false,
		"Vodou-Recall.get_memory":     false,
		"Vodou-Recall.memory_store":   true,
	}
	var registered *bool
	if writes, ok := known[server+"."+tool]; ok {
		registered = &writes
	}
	return gate.Classify(server, tool, registered, said)
}

// seed returns a fresh copy of the seed's worked example.
func seed(t *testing.T) plan.Plan {
	t.Helper()
	var p plan.Plan
	if err := json.Unmarshal([]byte(seedExample), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	yes, no     = true, false
	memoryStore = plan.Step{ID: "memory_store", Server: "Vodou-Recall", Tool: "memory_store", ParallelGroup: "probes"}
)

// edit returns the seed example after f changed it.
func edit(t *testing.T, f func(p *plan.Plan)) plan.Plan {
	t.Helper()
	p := seed(t)
	f(&p)
	return p
}

// withOption returns a copy of the options with the steps set on one of them.
func withOption(opts map[string]plan.Option, key string, steps ...plan.Step) map[string]plan.Option {
	out := map[string]plan.Option{}
	for k, o := range opts {
		out[k] = o
	}
	o := out[key]
	o.Steps = steps
	out[key] = o
	return out
}

func TestCheck(t *testing.T) {
	yesNo := map[string]plan.Option{"1": {Label: "Yes"}, "2": {Label: "No"}}
	notify := plan.Step{ID: "notify", Server: "mail", Tool: "send_mail"}
	cases := []struct {
		name string
		p    plan.Plan
		want *plan.GateError // nil: the plan passes; else the fields, Reason aside
		says []string        // parts of the sentence
	}{
		{name: "two probes run in parallel, a join needs one of the two to succeed, a model writes a line, and then the run asks",
			p: seed(t)},
		{name: "memory_store ran, then the run parked to ask permission for it",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append([]plan.Step{memoryStore}, p.InitialSteps...)
				p.InitialSteps[3].In = append(p.InitialSteps[3].In, "memory_store")
			}),
			want: &plan.GateError{Step: "memory_store", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "memory_store"`, `(Vodou-Recall.memory_store)`, `stopping point 1 "save this reading?"`}},
		{name: "what happens after Yes lives inside the option, not in the main step list",
			p: edit(t, func(p *plan.Plan) {
				s := memoryStore
				s.ParallelGroup = ""
				p.StoppingPoints[0].Options = withOption(p.StoppingPoints[0].Options, "1", s)
			})},
		{name: "a tool nobody classified is side-effecting",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append(p.InitialSteps, plan.Step{ID: "disk", Server: "mcp-monitor", Tool: "probe_disk", ParallelGroup: "probes"})
			}),
			want: &plan.GateError{Step: "disk", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "disk" writes (mcp-monitor.probe_disk) before stopping point 1`}},
		{name: "a step marked side_effecting false on a tool nobody classified still writes: the flag may only raise",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append(p.InitialSteps, plan.Step{ID: "disk", Server: "mcp-monitor", Tool: "probe_disk",
					ParallelGroup: "probes", SideEffecting: &no})
			}),
			want: &plan.GateError{Step: "disk", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "disk" writes (mcp-monitor.probe_disk) before stopping point 1`}},
		{name: "a Bash step marked side_effecting false still writes: Bash is no read-only built-in",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append(p.InitialSteps, plan.Step{ID: "sh", Server: gate.ClaudeCode, Tool: "Bash", SideEffecting: &no})
			}),
			want: &plan.GateError{Step: "sh", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "sh" writes (claude-code.Bash) before stopping point 1`}},
		{name: "a step marked side_effecting false on a tool the registry marks side-effecting still writes",
			p: edit(t, func(p *plan.Plan) {
				s := memoryStore
				s.SideEffecting = &no
				p.InitialSteps = append([]plan.Step{s}, p.InitialSteps...)
				p.InitialSteps[3].In = append(p.InitialSteps[3].In, "memory_store")
			}),
			want: &plan.GateError{Step: "memory_store", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "memory_store" writes (Vodou-Recall.memory_store) before stopping point 1`}},
		{name: "a step marked side_effecting true on a tool the registry says only reads writes",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append(p.InitialSteps, plan.Step{ID: "recall", Server: "Vodou-Recall", Tool: "get_memory", SideEffecting: &yes})
			}),
			want: &plan.GateError{Step: "recall", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "recall" writes (Vodou-Recall.get_memory) before stopping point 1`}},
		{name: "a step marked side_effecting false on a tool the registry says only reads does not write",
			p: edit(t, func(p *plan.Plan) {
				p.InitialSteps = append(p.InitialSteps, plan.Step{ID: "recall", Server: "Vodou-Recall", Tool: "get_memory", SideEffecting: &no})
			})},
		{name: "a model writing a line is not a side effect unless the step says it is",
			p:    edit(t, func(p *plan.Plan) { p.InitialSteps[3].SideEffecting = &yes }),
			want: &plan.GateError{Step: "brief", StoppingPoint: 1, Title: "save this reading?"},
			says: []string{`step "brief" writes (marked side_effecting) before stopping point 1`}},
		{name: "a fan branch that reads a write in its own parallel block races it",
			p: plan.Plan{InitialSteps: []plan.Step{
				{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", ParallelGroup: "probes"},
				memoryStore,
				{ID: "recall", Server: "Vodou-Recall", Tool: "get_memory", ParallelGroup: "probes", DependsOn: []string{"memory_store"}},
			}},
			want: &plan.GateError{Step: "recall", Writer: "memory_store"},
			says: []string{`step "recall" reads the output of "memory_store", which writes (Vodou-Recall.memory_store), in the same parallel group "probes"`}},
		{name: "a fan branch that reads a write through a join races it too",
			p: plan.Plan{InitialSteps: []plan.Step{
				{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", ParallelGroup: "probes"},
				memoryStore,
				{ID: "join_probes", Kind: "join", In: []string{"cpu", "memory_store"}, MinSuccess: 1},
				{ID: "brief", ParallelGroup: "probes", DependsOn: []string{"join_probes"}, Prompt: "one line from {cpu}"},
			}},
			want: &plan.GateError{Step: "brief", Writer: "memory_store"},
			says: []string{`"memory_store"`, `races the write`}},
		{name: "a step after the fan may read what a branch wrote when no question governs it",
			p: plan.Plan{InitialSteps: []plan.Step{
				{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", ParallelGroup: "probes"},
				memoryStore,
				{ID: "join_probes", Kind: "join", In: []string{"cpu", "memory_store"}, MinSuccess: 1},
				{ID: "brief", DependsOn: []string{"join_probes"}, Prompt: "one line from {cpu}"},
			}}},
		{name: "the next fan may read what the previous fan wrote when no question governs it",
			p: plan.Plan{InitialSteps: []plan.Step{
				{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", ParallelGroup: "probes"},
				memoryStore,
				{ID: "join_probes", Kind: "join", In: []string{"cpu", "memory_store"}, MinSuccess: 1},
				{ID: "recall", Server: "Vodou-Recall", Tool: "get_memory", ParallelGroup: "reports", DependsOn: []string{"join_probes"}},
				{ID: "brief", ParallelGroup: "reports", DependsOn: []string{"memory_store"}, Prompt: "one line"},
			}}},
		{name: "a stopping point only protects the steps after it, so a plan with none has no gate to run ahead of",
			p: plan.Plan{InitialSteps: []plan.Step{
				{ID: "memory_store", Server: "Vodou-Recall", Tool: "memory_store"},
				{ID: "recall", Server: "Vodou-Recall", Tool: "get_memory", DependsOn: []string{"memory_store"}},
			}}},
		{name: "a write approved at one ask still runs before the next ask",
			p: plan.Plan{InitialSteps: []plan.Step{{ID: "brief", Prompt: "draft it"}}, StoppingPoints: []plan.StoppingPoint{
				{ID: 2, Type: "menu", Title: "send it?", Options: withOption(yesNo, "1", notify)},
				{ID: 1, Type: "menu", Title: "save this reading?", Options: withOption(yesNo, "1", memoryStore)},
			}},
			want: &plan.GateError{Step: "memory_store", StoppingPoint: 2, Title: "send it?", Option: "1", OptionOf: 1},
			says: []string{`step "memory_store" in option "1" of stopping point 1 writes (Vodou-Recall.memory_store) before stopping point 2 "send it?"`,
				"the option of stopping point 2 that approves it"}},
		{name: "the last ask's options are where approved writes belong",
			p: plan.Plan{InitialSteps: []plan.Step{{ID: "brief", Prompt: "draft it"}}, StoppingPoints: []plan.StoppingPoint{
				{ID: 2, Type: "menu", Title: "send it?", Options: withOption(yesNo, "1", notify)},
				{ID: 1, Type: "menu", Title: "save this reading?", Options: yesNo},
			}}},
		{name: "a fan inside an approved option still may not read its own write",
			p: edit(t, func(p *plan.Plan) {
				p.StoppingPoints[0].Options = withOption(p.StoppingPoints[0].Options, "1", memoryStore,
					plan.Step{ID: "confirm", Server: "Vodou-Recall", Tool: "get_memory", ParallelGroup: "probes", DependsOn: []string{"memory_store"}})
			}),
			want: &plan.GateError{Step: "confirm", Option: "1", OptionOf: 1, Writer: "memory_store"},
			says: []string{`step "confirm" in option "1" of stopping point 1 reads the output of "memory_store"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatalf("the test's plan is not valid: %v", err)
			}
			err := tc.p.Check(registry)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ge *plan.GateError
			if !errors.As(err, &ge) {
				t.Fatalf("Check = %v, want a *GateError", err)
			}
			got := *ge
			got.Reason = ""
			if got != *tc.want {
				t.Fatalf("Check = %+v, want %+v", got, *tc.want)
			}
			for _, part := range tc.says {
				if !strings.Contains(err.Error(), part) {
					t.Fatalf("Check says %q, want it to contain %q", err, part)
				}
			}
		})
	}
}

func TestCheckSaysWhatToDoAboutMemoryStore(t *testing.T) {
	p := seed(t)
	p.InitialSteps = append([]plan.Step{memoryStore}, p.InitialSteps...)
	err := p.Check(registry)
	want := `step "memory_store" writes (Vodou-Recall.memory_store) before stopping point 1 "save this reading?" that governs it: move it into the option that approves it`
	if err == nil || err.Error() != want {
		t.Fatalf("Check = %v,\nwant %s", err, want)
	}
}

func TestCheckNamesTheFirstProblemTheSameWayEveryTime(t *testing.T) {
	writes := func(id string) plan.Step { return plan.Step{ID: id, Tool: "write_" + id} }
	opts := map[string]plan.Option{}
	for _, k := range []string{"9", "3", "1", "7", "5", "2", "8", "4", "6"} {
		opts[k] = plan.Option{Label: "Pick " + k, Steps: []plan.Step{writes("w" + k)}}
	}
	last := plan.StoppingPoint{ID: 2, Title: "done?", Options: map[string]plan.Option{"1": {Label: "Yes"}}}
	p := plan.Plan{StoppingPoints: []plan.StoppingPoint{last, {ID: 1, Title: "go?", Options: opts}}}
	for i := 0; i < 50; i++ {
		var ge *plan.GateError
		if err := p.Check(registry); !errors.As(err, &ge) || ge.Step != "w1" || ge.Option != "1" || ge.StoppingPoint != 2 {
			t.Fatalf("run %d: %v, want w1 in option 1 before stopping point 2", i, err)
		}
	}

	t.Run("the initial steps come before the options", func(t *testing.T) {
		p := p
		p.InitialSteps = []plan.Step{{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info"}, writes("early")}
		var ge *plan.GateError
		if err := p.Check(registry); !errors.As(err, &ge) || ge.Step != "early" || ge.StoppingPoint != 1 || ge.Title != "go?" {
			t.Fatalf("Check = %v, want early before stopping point 1", err)
		}
	})

	t.Run("in one list a write ahead of its gate comes before a race", func(t *testing.T) {
		p := plan.Plan{
			InitialSteps: []plan.Step{
				{ID: "confirm", Server: "Vodou-Recall", Tool: "get_memory", ParallelGroup: "probes", DependsOn: []string{"memory_store"}},
				memoryStore,
			},
			StoppingPoints: []plan.StoppingPoint{{ID: 1, Title: "save this reading?", Options: map[string]plan.Option{"1": {Label: "Yes"}}}},
		}
		var ge *plan.GateError
		if err := p.Check(registry); !errors.As(err, &ge) || ge.Step != "memory_store" || ge.StoppingPoint != 1 || ge.Writer != "" {
			t.Fatalf("Check = %v, want memory_store before stopping point 1", err)
		}
	})
}

func TestCheckWithoutARegistryCountsEveryToolAsWriting(t *testing.T) {
	p := seed(t)
	var ge *plan.GateError
	if err := p.Check(nil); !errors.As(err, &ge) || ge.Step != "cpu" {
		t.Fatalf("Check(nil) = %v, want cpu refused", err)
	}
	prompts := plan.Plan{InitialSteps: []plan.Step{{ID: "brief", Prompt: "one line"}}, StoppingPoints: p.StoppingPoints}
	if err := prompts.Check(nil); err != nil {
		t.Fatalf("a plan of prompts is refused: %v", err)
	}
	said := plan.Plan{InitialSteps: []plan.Step{{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", SideEffecting: &no}},
		StoppingPoints: p.StoppingPoints}
	if err := said.Check(nil); !errors.As(err, &ge) || ge.Step != "cpu" {
		t.Fatalf("Check(nil) of a step marked side_effecting false = %v, want cpu refused", err)
	}
}
