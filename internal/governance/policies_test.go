package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

func TestPolicies(t *testing.T) {
	t.Run("an invalid regex is refused at creation with its compile error", func(t *testing.T) {
		e := newChangeEnv(t, false)
		_, err := e.kit.Gov.Policies.Create(e.ctx, e.admin, governance.PolicyInput{Name: "Bad", Severity: "high", Kind: "content_regex", Pattern: "a(b"})
		if errs.CodeOf(err) != "invalid_policy" || !strings.Contains(err.Error(), "missing closing )") {
			t.Fatalf("err = %v", err)
		}
		if _, err := e.kit.Gov.Policies.Create(e.ctx, e.lead, governance.PolicyInput{Name: "X", Severity: "high", Kind: "path_glob", Pattern: "x/**"}); errs.KindOf(err) != errs.Forbidden {
			t.Fatalf("a lead defined a policy: %v", err)
		}
	})
}

func TestRiskGatesAreConfigurablePerBand(t *testing.T) {
	e := newChangeEnv(t, false)
	if _, err := e.kit.Gov.Policies.SetRiskGates(e.ctx, e.lead, map[string]string{"high": "x"}); errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("a lead set the gates: %v", err)
	}
	if _, err := e.kit.Gov.Policies.SetRiskGates(e.ctx, e.admin, map[string]string{"severe": "x"}); errs.CodeOf(err) != "invalid_band" {
		t.Fatalf("unknown band: %v", err)
	}
	gates, err := e.kit.Gov.Policies.SetRiskGates(e.ctx, e.admin, map[string]string{"high": "the platform team's sign-off", "critical": "the platform team's sign-off"})
	if err != nil || gates["high"] != "the platform team's sign-off" || gates["medium"] != change.DefaultGates()["medium"] {
		t.Fatalf("gates = %v (%v)", gates, err)
	}
	s := e.session(t)
	var files []change.File
	for i := 0; i < 15; i++ {
		files = append(files, file("db/migrations/"+string(rune('a'+i))+".sql", strings.Repeat("ALTER TABLE x;\n", 60)))
	}
	e.report(t, s, change.Change{Files: files})
	if b := e.brief(t, s); !strings.Contains(b.Reason, "Before it merges it needs the platform team's sign-off.") {
		t.Fatalf("brief = %s %q", b.NextAction, b.Reason)
	}
}
