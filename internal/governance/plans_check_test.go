package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/testkit"
)

// seedPlan is seed 001's worked example; with memoryStoreFirst, it carries
// the seed's bug: Vodou-Recall.memory_store in the probes fan, ahead of the
// "save this reading?" menu. Without it, the write is where it belongs: in
// the option that approves it.
func seedPlan(memoryStoreFirst bool) plan.Plan {
	store := plan.Step{ID: "memory_store", Server: "Vodou-Recall", Tool: "memory_store"}
	steps := []plan.Step{
		{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info", ParallelGroup: "probes", OnFail: "skip"},
		{ID: "mem", Server: "mcp-monitor", Tool: "get_memory_info", ParallelGroup: "probes", OnFail: "skip"},
		{ID: "join_probes", Kind: "join", In: []string{"cpu", "mem"}, MinSuccess: 1},
		{ID: "brief", DependsOn: []string{"join_probes"}, Prompt: "write one short line about the machine from {cpu, mem}"},
	}
	yes := plan.Option{Label: "Yes", Steps: []plan.Step{store}}
	if memoryStoreFirst {
		store.ParallelGroup = "probes"
		steps = append([]plan.Step{store}, steps...)
		yes.Steps = nil
	}
	return plan.Plan{InitialSteps: steps, StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "save this reading?",
		Options: map[string]plan.Option{"1": yes, "2": {Label: "No"}}}}}
}

func TestProposePlanRefusesASideEffectBeforeItsGate(t *testing.T) {
	ctx := t.Context()
	kit := testkit.New(t)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, true))
	// The operators classified the probes as read-only; memory_store nobody
	// classified, so it writes.
	admin, _ := kit.Person(auth.Admin)
	for _, tool := range []string{"get_cpu_info", "get_memory_info"} {
		if _, err := kit.Ledger.SetTool(ctx, admin, "mcp-monitor", tool, ledger.ToolInput{SideEffecting: false}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("memory_store ran, then the run parked to ask permission for it", func(t *testing.T) {
		var err error
		refused(t, kit, errs.Invalid, "side_effect_before_gate", func() error {
			_, err = kit.Gov.Plans.Propose(ctx, agent, session, governance.PlanInput{Summary: "Probe, then ask.", Plan: seedPlan(true)})
			return err
		})
		e, _ := errs.As(err)
		want := `step "memory_store" writes (Vodou-Recall.memory_store) before stopping point 1 "save this reading?" that governs it: move it into the option that approves it`
		if e.Message != want || e.Details["step"] != "memory_store" || e.Details["stopping_point"] != 1 {
			t.Fatalf("refusal is %q %v,\nwant %q with step memory_store and stopping point 1", e.Message, e.Details, want)
		}
		d := must(kit.Gov.Sessions.Get(ctx, lead, session))(t)
		if d.Plan != nil {
			t.Fatalf("a refused plan was recorded: %+v", d.Plan)
		}
	})

	t.Run("what happens after Yes lives inside the option, not in the main step list", func(t *testing.T) {
		p := must(kit.Gov.Plans.Propose(ctx, agent, session, governance.PlanInput{Summary: "Probe, then ask.", Plan: seedPlan(false)}))(t)
		if p.Status != governance.PlanProposed {
			t.Fatalf("plan is %+v, want proposed", p)
		}
		d := must(kit.Gov.Sessions.Get(ctx, lead, session))(t)
		if d.Plan == nil || d.Plan.ID != p.ID || len(d.Plan.StoppingPoints) != 1 ||
			len(d.Plan.StoppingPoints[0].Options["1"].Steps) != 1 {
			t.Fatalf("Sessions.Get shows plan %+v", d.Plan)
		}
	})
}

func TestProposePlanTakesTheToolRegistry(t *testing.T) {
	ctx := t.Context()
	kit := testkit.New(t)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, true))
	p := plan.Plan{InitialSteps: []plan.Step{{ID: "cpu", Server: "mcp-monitor", Tool: "get_cpu_info"}},
		StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "save?", Options: map[string]plan.Option{"1": {Label: "Yes"}}}}}
	t.Run("a probe nobody classified counts as a write before the gate", func(t *testing.T) {
		_, err := kit.Gov.Plans.Propose(ctx, agent, session, governance.PlanInput{Summary: "s", Plan: p})
		if errs.CodeOf(err) != "side_effect_before_gate" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("once the registry says it only reads, the plan passes", func(t *testing.T) {
		admin, _ := kit.Person(auth.Admin)
		if _, err := kit.Ledger.SetTool(ctx, admin, "mcp-monitor", "get_cpu_info", ledger.ToolInput{SideEffecting: false}); err != nil {
			t.Fatal(err)
		}
		if _, err := kit.Gov.Plans.Propose(ctx, agent, session, governance.PlanInput{Summary: "s", Plan: p}); err != nil {
			t.Fatal(err)
		}
	})
}

// A step's side_effecting may only raise the tool registry's word, as a
// call's may (gate.Classify): false never lowers a tool the registry marks
// side-effecting or does not know, so such a step before its gate is
// refused with 422 side_effect_before_gate, and nothing is recorded.
func TestProposePlanLetsAStepOnlyRaiseTheRegistry(t *testing.T) {
	ctx := t.Context()
	kit := testkit.New(t)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, true))
	admin, _ := kit.Person(auth.Admin)
	for _, tool := range []struct {
		server, tool string
		writes       bool
	}{{"db", "run_migration", true}, {"db", "list_readers", false}} {
		if _, err := kit.Ledger.SetTool(ctx, admin, tool.server, tool.tool, ledger.ToolInput{SideEffecting: tool.writes}); err != nil {
			t.Fatal(err)
		}
	}
	no, yes := false, true
	first := func(s plan.Step) governance.PlanInput {
		return governance.PlanInput{Summary: "Do it, then ask.", Plan: plan.Plan{InitialSteps: []plan.Step{s},
			StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "go on?", Options: map[string]plan.Option{"1": {Label: "Yes"}}}}}}
	}
	for _, tc := range []struct {
		name string
		step plan.Step
		what string // "" when the plan passes
	}{
		{"a Bash step marked side_effecting false is refused: the registry does not know it and Bash is no read-only built-in",
			plan.Step{ID: "sh", Server: "claude-code", Tool: "Bash", SideEffecting: &no}, "claude-code.Bash"},
		{"a step marked side_effecting false on a tool nobody classified is refused",
			plan.Step{ID: "probe", Server: "mcp-monitor", Tool: "probe_disk", SideEffecting: &no}, "mcp-monitor.probe_disk"},
		{"a step marked side_effecting false on a tool the registry marks side-effecting is refused",
			plan.Step{ID: "drop", Server: "db", Tool: "run_migration", SideEffecting: &no}, "db.run_migration"},
		{"a step marked side_effecting true on a tool the registry says only reads is refused",
			plan.Step{ID: "readers", Server: "db", Tool: "list_readers", SideEffecting: &yes}, "db.list_readers"},
		{"a step marked side_effecting false on a tool the registry says only reads passes",
			plan.Step{ID: "readers", Server: "db", Tool: "list_readers", SideEffecting: &no}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.what == "" {
				if _, err := kit.Gov.Plans.Propose(ctx, agent, session, first(tc.step)); err != nil {
					t.Fatal(err)
				}
				return
			}
			var err error
			refused(t, kit, errs.Invalid, "side_effect_before_gate", func() error {
				_, err = kit.Gov.Plans.Propose(ctx, agent, session, first(tc.step))
				return err
			})
			e, _ := errs.As(err)
			want := `step "` + tc.step.ID + `" writes (` + tc.what + `) before stopping point 1 "go on?"`
			if !strings.HasPrefix(e.Message, want) || e.Details["step"] != tc.step.ID || e.Details["stopping_point"] != 1 {
				t.Fatalf("refusal is %q %v, want it to start %q", e.Message, e.Details, want)
			}
		})
	}
}
