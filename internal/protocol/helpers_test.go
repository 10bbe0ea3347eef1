package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/protocol"
)

// t0 is when the session's first fact was recorded; at(m) is m minutes later.
var t0 = time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)

func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// now is when the briefs in these tests are generated.
var now = time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)

// The facts of the seed's own examples, one constructor each so that no two
// tests share a slice.

func criticalSecret() protocol.Violation {
	return protocol.Violation{ID: "VIO-001", Policy: "Secrets in source", Severity: protocol.SeverityCritical,
		Match: "AWS_SECRET_ACCESS_KEY", File: "config/deploy.sh", At: at(5)}
}

func highViolation() protocol.Violation {
	return protocol.Violation{ID: "VIO-002", Policy: "No SQL string building", Severity: protocol.SeverityHigh,
		Match: "fmt.Sprintf(\"SELECT", File: "db/report.go", At: at(6)}
}

func blockMergeViolation() protocol.Violation {
	return protocol.Violation{ID: "VIO-003", Policy: "Licence review", Severity: protocol.SeverityHigh, BlockMerge: true,
		Match: "GPL-3.0", File: "go.mod", At: at(12)}
}

func mediumViolation() protocol.Violation {
	return protocol.Violation{ID: "VIO-004", Policy: "TODO without a ticket", Severity: protocol.SeverityMedium,
		Match: "TODO", File: "web/app.go", At: at(14)}
}

func lowViolation() protocol.Violation {
	return protocol.Violation{ID: "VIO-005", Policy: "Long function", Severity: protocol.SeverityLow,
		Match: "ServeHTTP", File: "web/routes.go", At: at(15)}
}

func pauseWithReason() *protocol.Pause {
	return &protocol.Pause{Reason: "Wrong branch, wait for Ana", By: "ana@example.com", At: at(1)}
}

func billingGate() protocol.Decision {
	return protocol.Decision{Ref: "DEC-002", Title: "Legacy billing", Question: "Drop the legacy billing table?",
		Proposal:     "Drop it in a separate migration.",
		BlockedScope: []string{"migrations", "internal/billing/legacy"},
		AllowedScope: []string{"web", "tests"},
		OpenedAt:     at(3)}
}

// expiredGate is a gate on a mission whose gate_ttl is 90 minutes, opened
// at(4): it ran out at(94), before now.
func expiredGate() protocol.Decision {
	return protocol.Decision{Ref: "DEC-004", Title: "Legacy billing", Question: "Drop the legacy billing table?",
		BlockedScope: []string{"migrations"}, AllowedScope: []string{"web"},
		OpenedAt: at(4), TTL: 90 * time.Minute}
}

func requiredRemediation() protocol.Remediation {
	return protocol.Remediation{ID: "REM-001", Required: true,
		Instruction: "Re-read billing.Charge: its signature changed.",
		Files:       []string{"internal/billing/charge.go"}, CreatedAt: at(4)}
}

func advisoryRemediation() protocol.Remediation {
	return protocol.Remediation{ID: "REM-002", Instruction: "Consider a table test for rounding.",
		Files: []string{"internal/billing/round_test.go"}, CreatedAt: at(9)}
}

// reduxDeviation is the seed's example: redux-toolkit against React Query.
func reduxDeviation(support, total int, enforced bool) protocol.Deviation {
	return protocol.Deviation{ID: "DEV-001", Departure: "redux-toolkit", Chosen: "React Query", Concern: "server state",
		Support: support, Total: total, Enforced: enforced, Files: []string{"web/src/store.ts"}, At: at(7)}
}

func forbidPathBreach() protocol.Breach {
	return protocol.Breach{ID: "CL-001", Kind: protocol.ForbidPath, Value: "migrations/**",
		Found: []string{"migrations/0042_drop_billing.sql"}, At: at(8)}
}

func highRisk(band string) *protocol.Risk {
	return &protocol.Risk{Score: 82, Band: band, Gate: "a lead's review", At: at(10)}
}

func collision() protocol.Collision {
	return protocol.Collision{ID: "COL-001", Symbol: "billing.Charge", OtherSession: "S-77", OtherAgent: "claude-code", At: at(11)}
}

// revising is a session whose lead asked for a modification: its plan is
// being revised.
func revising() protocol.Lifecycle {
	return protocol.Lifecycle{State: protocol.LifecycleArchitectureRevising, Since: at(13)}
}

// migrationPrompt is a pending permission prompt naming a tool and two paths.
func migrationPrompt() protocol.PermissionPrompt {
	return protocol.PermissionPrompt{ID: "PRM-001", Prompt: "Run the migration?",
		Options: map[string]string{"1": "Allow", "2": "Deny"}, Tool: "Bash",
		Paths: []string{"migrations/0042_drop_billing.sql", "db/seed.sql"}, OpenedAt: at(16)}
}

// cause is one fact that fires, described in the seed's words.
type cause struct {
	what  string
	state protocol.State
	code  protocol.Code
	facts func() protocol.Facts
}

// causes is one of everything that fires: every cause of every state.
func causes() []cause {
	return []cause{
		{"a critical policy violation", protocol.HardStop, protocol.CodeCriticalViolation,
			func() protocol.Facts { return protocol.Facts{Violations: []protocol.Violation{criticalSecret()}} }},
		{"a person's pause", protocol.Blocked, protocol.CodePaused,
			func() protocol.Facts { return protocol.Facts{Pause: pauseWithReason()} }},
		{"a high-risk mission whose plan is only proposed", protocol.Blocked, protocol.CodePlanNotApproved,
			func() protocol.Facts {
				return protocol.Facts{HighRisk: true, Plan: protocol.Plan{Status: protocol.PlanProposed, ProposedAt: at(2)}}
			}},
		{"a plan being revised", protocol.Blocked, protocol.CodePlanRevising,
			func() protocol.Facts { return protocol.Facts{Lifecycle: revising()} }},
		{"an open decision gate", protocol.DecisionRequired, protocol.CodeDecisionOpen,
			func() protocol.Facts { return protocol.Facts{Decisions: []protocol.Decision{billingGate()}} }},
		{"a decision gate open past its mission's gate_ttl", protocol.DecisionRequired, protocol.CodeDecisionExpired,
			func() protocol.Facts { return protocol.Facts{Decisions: []protocol.Decision{expiredGate()}} }},
		{"a pending permission prompt", protocol.DecisionRequired, protocol.CodePermissionRequested,
			func() protocol.Facts {
				return protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{migrationPrompt()}}
			}},
		{"a required remediation request", protocol.Remediate, protocol.CodeRemediationRequired,
			func() protocol.Facts {
				return protocol.Facts{Remediations: []protocol.Remediation{requiredRemediation()}}
			}},
		{"a high-severity policy violation", protocol.Remediate, protocol.CodeHighViolation,
			func() protocol.Facts { return protocol.Facts{Violations: []protocol.Violation{highViolation()}} }},
		{"a deviation from an enforced rule at 70% or more", protocol.Remediate, protocol.CodeRuleDeviation,
			func() protocol.Facts {
				return protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(31, 34, true)}}
			}},
		{"a violated mission contract clause", protocol.Remediate, protocol.CodeContractViolated,
			func() protocol.Facts { return protocol.Facts{Breaches: []protocol.Breach{forbidPathBreach()}} }},
		{"an advisory remediation request", protocol.ContinueWithWarning, protocol.CodeRemediationAdvisory,
			func() protocol.Facts {
				return protocol.Facts{Remediations: []protocol.Remediation{advisoryRemediation()}}
			}},
		{"a high risk band", protocol.ContinueWithWarning, protocol.CodeRiskHigh,
			func() protocol.Facts { return protocol.Facts{Risk: highRisk("high")} }},
		{"a collision", protocol.ContinueWithWarning, protocol.CodeCollision,
			func() protocol.Facts { return protocol.Facts{Collisions: []protocol.Collision{collision()}} }},
		{"a block_merge policy action", protocol.ContinueWithWarning, protocol.CodeBlockMerge,
			func() protocol.Facts { return protocol.Facts{Violations: []protocol.Violation{blockMergeViolation()}} }},
		{"a deviation from a rule held below 70%", protocol.ContinueWithWarning, protocol.CodeRuleAdvisory,
			func() protocol.Facts {
				d := reduxDeviation(11, 20, true)
				d.ID = "DEV-002"
				return protocol.Facts{Deviations: []protocol.Deviation{d}}
			}},
		{"a medium-severity policy violation", protocol.ContinueWithWarning, protocol.CodePolicyWarning,
			func() protocol.Facts { return protocol.Facts{Violations: []protocol.Violation{mediumViolation()}} }},
	}
}

// merge combines the facts of several causes into one session.
func merge(fs ...protocol.Facts) protocol.Facts {
	var m protocol.Facts
	for _, f := range fs {
		if f.Pause != nil {
			m.Pause = f.Pause
		}
		if f.HighRisk {
			m.HighRisk = true
		}
		if f.Plan != (protocol.Plan{}) {
			m.Plan = f.Plan
		}
		if f.Risk != nil {
			m.Risk = f.Risk
		}
		if f.Lifecycle != (protocol.Lifecycle{}) {
			m.Lifecycle = f.Lifecycle
		}
		m.PermissionPrompts = append(m.PermissionPrompts, f.PermissionPrompts...)
		m.Decisions = append(m.Decisions, f.Decisions...)
		m.Remediations = append(m.Remediations, f.Remediations...)
		m.Violations = append(m.Violations, f.Violations...)
		m.Deviations = append(m.Deviations, f.Deviations...)
		m.Breaches = append(m.Breaches, f.Breaches...)
		m.Collisions = append(m.Collisions, f.Collisions...)
	}
	return m
}

// everything is a session where every cause fires once.
func everything() protocol.Facts {
	var fs []protocol.Facts
	for _, c := range causes() {
		fs = append(fs, c.facts())
	}
	return merge(fs...)
}

func codesOf(rs []protocol.Reason) []protocol.Code {
	out := []protocol.Code{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func refsOf(rs []protocol.Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Ref)
	}
	return out
}

// checkShape asserts what holds for every brief: reason is the first reason
// at next_action, every reason in reasons is at next_action, every reason in
// also is at a lower state and also is ordered most severe first, and no
// list is nil.
func checkShape(t *testing.T, b protocol.Brief) {
	t.Helper()
	if b.Reasons == nil || b.Also == nil || b.BlockedScope == nil || b.AllowedScope == nil {
		t.Errorf("a list is nil: reasons %v, also %v, blocked %v, allowed %v",
			b.Reasons == nil, b.Also == nil, b.BlockedScope == nil, b.AllowedScope == nil)
	}
	if len(b.Reasons) == 0 {
		if b.NextAction != protocol.Continue || b.Reason.String() != protocol.ContinueText || len(b.Also) != 0 {
			t.Errorf("no reasons but next_action %v, reason %q, %d in also", b.NextAction, b.Reason.String(), len(b.Also))
		}
		return
	}
	if b.Reason.String() != b.Reasons[0].Text.String() {
		t.Errorf("reason %q is not the first reason's text %q", b.Reason.String(), b.Reasons[0].Text.String())
	}
	for _, r := range b.Reasons {
		if r.State != b.NextAction {
			t.Errorf("reason %s is at %v, next_action is %v", r.Code, r.State, b.NextAction)
		}
	}
	for i, r := range b.Also {
		if r.State >= b.NextAction {
			t.Errorf("also[%d] (%s) is at %v, not below %v", i, r.Code, r.State, b.NextAction)
		}
		if i > 0 && r.State > b.Also[i-1].State {
			t.Errorf("also is not ordered most severe first: %v after %v", r.State, b.Also[i-1].State)
		}
	}
}

// sameBrief reports whether two briefs say the same, word for word: their
// encodings are equal. (Words point at the facts they were decided from,
// so briefs decided from two copies of the facts are not DeepEqual.)
func sameBrief(t *testing.T, a, b protocol.Brief) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}
