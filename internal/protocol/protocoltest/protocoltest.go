// Package protocoltest holds sessions' facts for tests and benchmarks of
// the protocol engine (internal/protocol's, and madebook-bench's
// measure of Decide).
package protocoltest

import (
	"time"

	"github.com/madebook/madebook/internal/protocol"
)

// Now is the time Busy is decided at.
var Now = time.Date(2025, 6, 2, 11, 0, 0, 0, time.UTC)

// Busy is a busy session: something fires at every state, and several
// things fire at most of them; one gate has expired at Now. Decided at
// Now it is HARD_STOP with 17 reasons.
func Busy() protocol.Facts {
	t0 := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	return protocol.Facts{
		Pause:    &protocol.Pause{Reason: "Wrong branch, wait for Ana", By: "ana", At: at(40)},
		HighRisk: true,
		Plan:     protocol.Plan{Status: protocol.PlanProposed, ProposedAt: at(2)},
		Decisions: []protocol.Decision{
			{Ref: "DEC-003", Title: "Currency rounding", Question: "Round half-even or half-up?",
				BlockedScope: []string{"internal/billing/round.go"}, AllowedScope: []string{"internal/billing", "tests"}, OpenedAt: at(9)},
			{Ref: "DEC-001", Title: "Auth provider", Question: "Keep the in-house session store?",
				BlockedScope: []string{"internal/auth"}, AllowedScope: []string{"web", "tests"}, OpenedAt: at(3),
				TTL: 30 * time.Minute}, // expired at(33)
			{Ref: "DEC-002", Title: "Legacy billing", Question: "Drop the legacy billing table?",
				BlockedScope: []string{"migrations", "internal/billing"}, AllowedScope: []string{"web", "views"}, OpenedAt: at(5)},
		},
		Remediations: []protocol.Remediation{
			{ID: "REM-1", Required: true, Instruction: "Re-read billing.Charge: its signature changed.",
				Files: []string{"internal/billing/charge.go"}, CreatedAt: at(11)},
			{ID: "REM-2", Instruction: "Consider a table test for rounding.", Files: []string{"internal/billing/round_test.go"}, CreatedAt: at(12)},
		},
		Violations: []protocol.Violation{
			{ID: "VIO-1", Policy: "Secrets in source", Severity: protocol.SeverityCritical,
				Match: "AWS_SECRET_ACCESS_KEY", File: "config/deploy.sh", At: at(20)},
			{ID: "VIO-2", Policy: "No SQL string building", Severity: protocol.SeverityHigh,
				Match: "fmt.Sprintf(\"SELECT", File: "db/report.go", At: at(21)},
		},
		Deviations: []protocol.Deviation{
			{ID: "DEV-1", Departure: "redux-toolkit", Chosen: "React Query", Concern: "server state",
				Support: 31, Total: 34, Enforced: true, Files: []string{"web/src/store.ts"}, At: at(22)},
			{ID: "DEV-2", Departure: "moment", Chosen: "date-fns", Concern: "date handling",
				Support: 11, Total: 20, Enforced: true, Files: []string{"web/src/dates.ts"}, At: at(23)},
		},
		Breaches: []protocol.Breach{
			{ID: "CL-1", Kind: protocol.ForbidPath, Value: "migrations/**",
				Found: []string{"migrations/0042_drop_billing.sql"}, At: at(24)},
		},
		Risk: &protocol.Risk{Score: 82, Band: "high", Gate: "a lead's review", At: at(25)},
		Collisions: []protocol.Collision{
			{ID: "COL-1", Symbol: "billing.Charge", OtherSession: "S-77", OtherAgent: "claude-code", At: at(26)},
		},
		Lifecycle: protocol.Lifecycle{State: protocol.LifecycleArchitectureRevising, Since: at(30)},
		PermissionPrompts: []protocol.PermissionPrompt{
			{ID: "PRM-2", Prompt: "Run the migration?", Options: map[string]string{"1": "Allow", "2": "Deny"}, Tool: "Bash",
				Paths: []string{"migrations/0042_drop_billing.sql", "db/seed.sql"}, OpenedAt: at(8)},
			{ID: "PRM-1", Prompt: "Edit the router?", Options: map[string]string{"1": "Allow", "2": "Deny"}, Tool: "Edit",
				Paths: []string{"web/routes.go"}, OpenedAt: at(4)},
		},
	}
}

// Waiting is a typical waiting session: one open gate and a high-risk
// change (Busy's first gate and its risk). Decided at Now it is
// DECISION_REQUIRED with 2 reasons.
func Waiting() protocol.Facts {
	busy := Busy()
	return protocol.Facts{Decisions: busy.Decisions[:1], Risk: busy.Risk}
}
