package protocol_test

import (
	"testing"
	"time"

	"github.com/madebook/madebook/internal/protocol"
)

// benchFacts is a busy session: something fires at every state, and
// several things fire at most of them; one gate has expired.
func benchFacts() protocol.Facts {
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

// decideCases are the sessions the benchmarks decide: a quiet one
// (nothing in its way: most briefs), a typical waiting one (one open gate,
// a high-risk change), and the busy one above (17 reasons, every state).
func decideCases() []struct {
	name    string
	facts   protocol.Facts
	want    protocol.State
	reasons int
} {
	busy := benchFacts()
	gate := protocol.Facts{Decisions: busy.Decisions[:1], Risk: busy.Risk}
	return []struct {
		name    string
		facts   protocol.Facts
		want    protocol.State
		reasons int
	}{
		{"quiet", protocol.Facts{}, protocol.Continue, 0},
		{"gate", gate, protocol.DecisionRequired, 2},
		{"busy", busy, protocol.HardStop, 17},
	}
}

var benchNow = time.Date(2025, 6, 2, 11, 0, 0, 0, time.UTC)

// BenchmarkDecide is the decision alone, as Decide returns it: the next
// action, the reasons in order with their codes, refs and files, and the
// scopes, but no reason's words written out (what Next, the executor
// gate's check and a refused change need).
//
//	go test -run '^$' -bench Decide -benchmem ./internal/protocol
func BenchmarkDecide(b *testing.B) {
	for _, c := range decideCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var br protocol.Brief
			for b.Loop() {
				br = protocol.Decide(c.facts, benchNow)
			}
			if br.NextAction != c.want || len(br.Reasons)+len(br.Also) != c.reasons {
				b.Fatalf("unexpected brief: %v with %d+%d reasons", br.NextAction, len(br.Reasons), len(br.Also))
			}
		})
	}
}

// BenchmarkDecideWords is the decision and every reason's words written
// out as a string, as the console's preview reads them: the whole cost
// of a brief's words, which the decision alone no longer pays.
func BenchmarkDecideWords(b *testing.B) {
	for _, c := range decideCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				br := protocol.Decide(c.facts, benchNow)
				n = 0
				if len(br.Reasons) == 0 {
					n = len(br.Reason.String()) // ContinueText; else the first reason's words
				}
				for _, r := range br.Reasons {
					n += len(r.Text.String())
				}
				for _, r := range br.Also {
					n += len(r.Text.String())
				}
			}
			if n == 0 {
				b.Fatal("no words")
			}
		})
	}
}
