package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
)

func TestEvidenceGate(t *testing.T) {
	t.Run("the evidence gate decides, never the agent", func(t *testing.T) {
		e := newChangeEnv(t, false)
		s := e.session(t)
		g, err := e.kit.Gov.Evidence.Complete(e.ctx, e.agent, s)
		if err != nil || g.EvidenceGate != governance.GateUnsatisfied || strings.Join(g.Missing, ",") != "review,tests" {
			t.Fatalf("gate = %+v (%v)", g, err)
		}
		for _, ev := range []governance.EvidenceInput{{Kind: "tests", Passed: false}, {Kind: "review", Passed: true}} {
			if err := e.kit.Gov.Evidence.Report(e.ctx, e.agent, s, ev); err != nil {
				t.Fatal(err)
			}
		}
		if g, _ := e.kit.Gov.Evidence.Complete(e.ctx, e.agent, s); g.EvidenceGate != governance.GateUnsatisfied || strings.Join(g.Failed, ",") != "tests" {
			t.Fatalf("gate with failing tests = %+v", g)
		}
		if err := e.kit.Gov.Evidence.Report(e.ctx, e.agent, s, governance.EvidenceInput{Kind: "tests", Passed: true}); err != nil {
			t.Fatal(err)
		}
		if g, _ := e.kit.Gov.Evidence.Complete(e.ctx, e.agent, s); g.EvidenceGate != governance.GateSatisfied {
			t.Fatalf("gate = %+v", g)
		}
	})
}
