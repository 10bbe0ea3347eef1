package policy_test

import (
	"errors"
	"math"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// FuzzPolicyPattern sends any pattern, of each kind, through what an
// admin's new policy goes through: Validate refuses it with a 422 naming
// its field, or Compile accepts it too, its cost is a finite figure within
// the bounds, and the compiled set evaluates a change without failing.
func FuzzPolicyPattern(f *testing.F) {
	for _, s := range []struct {
		kind    uint8
		pattern string
	}{
		{0, `TODO`}, {0, `(?i)aws_secret_access_key\s*=\s*(?P<AWS_SECRET>[A-Za-z0-9/+=]{40})`}, {0, `(a+)+$`}, {0, `x{1000}`},
		{0, `(((a{100}){100}){100})`}, {0, `[`}, {0, ``}, {0, `(?P<PRIVATE_KEY_block>-----BEGIN)`}, {0, `\pL{2,}\b`},
		{1, `vendor/**`}, {1, `**/*.pem`}, {1, `a/**b`}, {1, `[`}, {1, ` `}, {1, `**/**/**/x`},
		{2, `left-pad`}, {2, `github.com/labstack/echo/*`}, {2, `@scope/pkg`}, {2, ``}, {2, "a\x00b"},
	} {
		f.Add(s.kind, s.pattern, "config/deploy.sh", awsSecretKey+"="+awsSecret+"\nTODO\n", "left-pad")
	}
	kinds := []policy.Kind{policy.KindContentRegex, policy.KindPathGlob, policy.KindDependency}
	f.Fuzz(func(t *testing.T, kind uint8, pattern, path, content, dep string) {
		p := policy.Policy{ID: 1, Name: "Fuzzed", Severity: protocol.SeverityLow, Kind: kinds[int(kind)%len(kinds)],
			Pattern: pattern, Action: policy.ActionViolation}
		err := policy.Validate(p)
		set, cerr := policy.Compile([]policy.Policy{p})
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Validate says %v, Compile says %v", err, cerr)
		}
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Code == "" || e.Field == "" {
				t.Fatalf("Validate(%q): %v is not a 422 naming its field", pattern, err)
			}
			return
		}
		if p.Kind == policy.KindContentRegex {
			cost, program := policy.Cost(pattern)
			if math.IsNaN(cost) || math.IsInf(cost, 0) || cost > policy.MaxCost || program > policy.MaxProgram {
				t.Fatalf("a valid pattern %q costs %v (program %d)", pattern, cost, program)
			}
		}
		c := change.Change{Files: []change.File{{Path: path, Content: content}}, Dependencies: []string{dep}}
		for _, fd := range set.Evaluate(c) {
			if fd.PolicyID != 1 || fd.Severity != protocol.SeverityLow {
				t.Fatalf("a finding of another policy: %+v", fd)
			}
		}
	})
}
