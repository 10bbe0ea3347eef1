package protocol_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/protocol"
)

// rule is one row of DESIGN.md's table: a session with one kind of fact,
// and the brief it must produce.
type rule struct {
	name  string
	facts protocol.Facts
	want  protocol.State
	codes []protocol.Code // the codes of reasons, in order
	ref   string          // the first reason's ref, when it has one

	text        string   // the exact reason, when the seed or DESIGN.md gives it
	prefix      string   // how the reason starts
	suffix      string   // how the reason ends
	contains    []string // what the reason names
	notContains []string // what it must not say

	blocked []string // nil: none
	allowed []string // nil: none
	files   []string // the first reason's files; nil: none
}

func rules() []rule {
	pauseNoReason := &protocol.Pause{By: "ana@example.com", At: at(1)}
	pauseBlank := &protocol.Pause{Reason: "   ", By: "ana@example.com", At: at(1)}
	planBlocked := []string{protocol.ScopeAnyCodeChange}
	planAllowed := []string{protocol.ScopeReadRepository, protocol.ScopeRevisePlan}
	plan := func(s protocol.PlanStatus, note string) protocol.Plan {
		return protocol.Plan{Status: s, Note: note, ProposedAt: at(2)}
	}
	breach := func(kind protocol.ClauseKind, value string, found []string, count int) protocol.Facts {
		return protocol.Facts{Breaches: []protocol.Breach{{ID: "CL-002", Kind: kind, Value: value, Found: found, Count: count, At: at(8)}}}
	}
	one := func(c protocol.Code) []protocol.Code { return []protocol.Code{c} }
	rs := []rule{
		// HARD_STOP
		{
			name:    "a critical policy violation is a HARD_STOP",
			facts:   protocol.Facts{Violations: []protocol.Violation{criticalSecret()}},
			want:    protocol.HardStop,
			codes:   one(protocol.CodeCriticalViolation),
			ref:     "VIO-001",
			text:    "Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh. This is a critical control: stop, and do not work around it.",
			blocked: []string{protocol.ScopeAllWork},
			files:   []string{"config/deploy.sh"},
		},
		{
			name: "a critical violation with nothing matched still names the policy and stops",
			facts: protocol.Facts{Violations: []protocol.Violation{{ID: "VIO-009", Policy: "No production data",
				Severity: protocol.SeverityCritical, At: at(5)}}},
			want:    protocol.HardStop,
			codes:   one(protocol.CodeCriticalViolation),
			ref:     "VIO-009",
			prefix:  "No production data was violated.",
			suffix:  "This is a critical control: stop, and do not work around it.",
			blocked: []string{protocol.ScopeAllWork},
		},
		{
			name: "a breach of a blocked scope is a HARD_STOP naming the call, the scope and every file",
			facts: protocol.Facts{Violations: []protocol.Violation{{ID: "VIO-010", Policy: "Blocked scope breached",
				Severity: protocol.SeverityCritical, Match: "Bash (make migrate)", File: "db/migrations/x.sql", At: at(5),
				Breach: &protocol.ScopeBreach{Call: "Bash (make migrate)", Scope: []string{"db/migrations"},
					Files: []string{"db/migrations/x.sql", "db/migrations/y.sql"}}}}},
			want:  protocol.HardStop,
			codes: one(protocol.CodeCriticalViolation),
			ref:   "VIO-010",
			text: "Bash (make migrate) wrote into the blocked scope db/migrations before its decision was made: " +
				"db/migrations/x.sql, db/migrations/y.sql. This is a critical control: stop, and do not work around it.",
			blocked: []string{protocol.ScopeAllWork},
			files:   []string{"db/migrations/x.sql", "db/migrations/y.sql"},
		},

		// BLOCKED (1): the brake
		{
			name:     "a person's pause is BLOCKED for all work in this session and quotes the reason",
			facts:    protocol.Facts{Pause: pauseWithReason()},
			want:     protocol.Blocked,
			codes:    one(protocol.CodePaused),
			contains: []string{`"Wrong branch, wait for Ana"`},
			blocked:  []string{protocol.ScopeAllSessionWork},
		},
		{
			name:        "a pause without a reason is BLOCKED for all work in this session and quotes nothing",
			facts:       protocol.Facts{Pause: pauseNoReason},
			want:        protocol.Blocked,
			codes:       one(protocol.CodePaused),
			contains:    []string{"paused"},
			notContains: []string{`"`},
			blocked:     []string{protocol.ScopeAllSessionWork},
		},
		{
			name:        "a pause whose reason is only spaces is a pause without a reason",
			facts:       protocol.Facts{Pause: pauseBlank},
			want:        protocol.Blocked,
			codes:       one(protocol.CodePaused),
			text:        protocol.Decide(protocol.Facts{Pause: pauseNoReason}, now).Reason.String(),
			notContains: []string{`"`},
			blocked:     []string{protocol.ScopeAllSessionWork},
		},

		// BLOCKED (2): the plan, on a high-risk mission
		{
			name:    "a high-risk mission with no plan is BLOCKED for any code change",
			facts:   protocol.Facts{HighRisk: true},
			want:    protocol.Blocked,
			codes:   one(protocol.CodePlanNotApproved),
			ref:     "plan",
			blocked: planBlocked, allowed: planAllowed,
		},
		{
			name:     "a high-risk mission whose plan is proposed is BLOCKED until a lead approves it",
			facts:    protocol.Facts{HighRisk: true, Plan: plan(protocol.PlanProposed, "")},
			want:     protocol.Blocked,
			codes:    one(protocol.CodePlanNotApproved),
			ref:      "plan",
			contains: []string{"approv"},
			blocked:  planBlocked, allowed: planAllowed,
		},
		{
			name:     "a high-risk mission whose plan was rejected is BLOCKED and quotes the lead's note",
			facts:    protocol.Facts{HighRisk: true, Plan: plan(protocol.PlanRejected, "Split the migration out")},
			want:     protocol.Blocked,
			codes:    one(protocol.CodePlanNotApproved),
			ref:      "plan",
			contains: []string{"rejected", `"Split the migration out"`},
			blocked:  planBlocked, allowed: planAllowed,
		},
		{
			name:        "a high-risk mission whose plan was rejected without a note is still BLOCKED",
			facts:       protocol.Facts{HighRisk: true, Plan: plan(protocol.PlanRejected, " ")},
			want:        protocol.Blocked,
			codes:       one(protocol.CodePlanNotApproved),
			ref:         "plan",
			contains:    []string{"rejected"},
			notContains: []string{`"`},
			blocked:     planBlocked, allowed: planAllowed,
		},
		{
			name:     "a high-risk mission whose plan a lead asked changes to is BLOCKED and quotes the instruction",
			facts:    protocol.Facts{HighRisk: true, Plan: plan(protocol.PlanChangesRequested, "Gate the migration behind a stopping point")},
			want:     protocol.Blocked,
			codes:    one(protocol.CodePlanNotApproved),
			ref:      "plan",
			contains: []string{"asked for changes", `"Gate the migration behind a stopping point"`, "propose it again"},
			blocked:  planBlocked, allowed: planAllowed,
		},
		{
			name:  "a mission that is not high-risk may CONTINUE after a lead asked changes to its plan",
			facts: protocol.Facts{Plan: plan(protocol.PlanChangesRequested, "Smaller steps")},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a high-risk mission whose plan is approved may CONTINUE",
			facts: protocol.Facts{HighRisk: true, Plan: plan(protocol.PlanApproved, "")},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a mission that is not high-risk needs no plan to CONTINUE",
			facts: protocol.Facts{},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a mission that is not high-risk may CONTINUE while its plan is only proposed",
			facts: protocol.Facts{Plan: plan(protocol.PlanProposed, "")},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a mission that is not high-risk may CONTINUE after its plan was rejected",
			facts: protocol.Facts{Plan: plan(protocol.PlanRejected, "Too broad")},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a mission that is not high-risk may CONTINUE with an approved plan",
			facts: protocol.Facts{Plan: plan(protocol.PlanApproved, "")},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},

		// BLOCKED (3): the lifecycle, while the plan is being revised
		{
			name:    "a session whose lead asked for a modification is BLOCKED for any code change while the plan is revised",
			facts:   protocol.Facts{Lifecycle: revising()},
			want:    protocol.Blocked,
			codes:   one(protocol.CodePlanRevising),
			ref:     "plan",
			text:    "The plan is being revised (ARCHITECTURE_REVISING): make no code change until the revised plan is confirmed. You may read the repository and revise the plan.",
			blocked: planBlocked, allowed: planAllowed,
		},
		{
			name:    "a session interrupted by a changed requirement is BLOCKED for any code change until the revised plan is confirmed",
			facts:   protocol.Facts{Lifecycle: protocol.Lifecycle{State: protocol.LifecycleInterrupting, Since: at(13)}},
			want:    protocol.Blocked,
			codes:   one(protocol.CodePlanRevising),
			ref:     "plan",
			text:    "A requirement changed and the plan is being revised (INTERRUPTING): make no code change until the revised plan is confirmed. You may read the repository and revise the plan.",
			blocked: planBlocked, allowed: planAllowed,
		},
		{
			name: "a revising session on a high-risk mission whose plan is not approved is BLOCKED by both, oldest first, with the scopes once",
			facts: protocol.Facts{Lifecycle: revising(), HighRisk: true,
				Plan: plan(protocol.PlanProposed, "")},
			want:    protocol.Blocked,
			codes:   []protocol.Code{protocol.CodePlanNotApproved, protocol.CodePlanRevising},
			ref:     "plan",
			prefix:  "This mission is high-risk",
			blocked: planBlocked, allowed: planAllowed,
		},

		// DECISION_REQUIRED
		{
			name:    "an open decision gate is DECISION_REQUIRED, asks its question and carries the gate's scopes",
			facts:   protocol.Facts{Decisions: []protocol.Decision{billingGate()}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionOpen),
			ref:     "DEC-002",
			text:    "DEC-002 is waiting on a person: Drop the legacy billing table?",
			blocked: []string{"migrations", "internal/billing/legacy"},
			allowed: []string{"web", "tests"},
		},
		{
			name: "a gate opened without scope lists is DECISION_REQUIRED with empty scopes",
			facts: protocol.Facts{Decisions: []protocol.Decision{{Ref: "DEC-007", Title: "Naming",
				Question: "Call it Ledger or Journal?", OpenedAt: at(3)}}},
			want:  protocol.DecisionRequired,
			codes: one(protocol.CodeDecisionOpen),
			ref:   "DEC-007",
			text:  "DEC-007 is waiting on a person: Call it Ledger or Journal?",
		},

		// DECISION_REQUIRED, expired: a gate open past its mission's gate_ttl
		{
			name:    "a gate open longer than its mission's gate_ttl is still DECISION_REQUIRED, says it expired unanswered and keeps its scopes",
			facts:   protocol.Facts{Decisions: []protocol.Decision{expiredGate()}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionExpired),
			ref:     "DEC-004",
			text:    "DEC-004 expired unanswered after 1h30m: Drop the legacy billing table? Nothing on its blocked scope proceeds; a lead can still resolve it.",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name:    "a gate open exactly its gate_ttl has expired",
			facts:   protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) { d.TTL = now.Sub(d.OpenedAt) })}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionExpired),
			ref:     "DEC-004",
			text:    "DEC-004 expired unanswered after 1h56m: Drop the legacy billing table? Nothing on its blocked scope proceeds; a lead can still resolve it.",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name:    "a gate one nanosecond short of its gate_ttl is still only open",
			facts:   protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) { d.TTL = now.Sub(d.OpenedAt) + 1 })}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionOpen),
			ref:     "DEC-004",
			text:    "DEC-004 is waiting on a person: Drop the legacy billing table?",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name:    "a gate within a 4h gate_ttl is open, not expired",
			facts:   protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) { d.TTL = 4 * time.Hour })}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionOpen),
			ref:     "DEC-004",
			text:    "DEC-004 is waiting on a person: Drop the legacy billing table?",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name: "a gate on a mission without gate_ttl never expires, however old",
			facts: protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) {
				d.TTL, d.OpenedAt = 0, now.AddDate(-2, 0, 0)
			})}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionOpen),
			ref:     "DEC-004",
			text:    "DEC-004 is waiting on a person: Drop the legacy billing table?",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name: "a gate recorded expired stays expired when its mission's gate_ttl is lifted, and says how long it had waited then",
			facts: protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) {
				d.TTL, d.ExpiredAt = 0, d.OpenedAt.Add(90*time.Minute+25*time.Second)
			})}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionExpired),
			ref:     "DEC-004",
			text:    "DEC-004 expired unanswered after 1h30m: Drop the legacy billing table? Nothing on its blocked scope proceeds; a lead can still resolve it.",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name: "a gate recorded expired stays expired when its mission's gate_ttl is raised past its age",
			facts: protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) {
				d.TTL, d.ExpiredAt = 8*time.Hour, d.OpenedAt.Add(90*time.Minute)
			})}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodeDecisionExpired),
			ref:     "DEC-004",
			prefix:  "DEC-004 expired unanswered after 1h30m: ",
			blocked: []string{"migrations"},
			allowed: []string{"web"},
		},
		{
			name: "an expired gate whose question has no closing mark gets a full stop before what follows",
			facts: protocol.Facts{Decisions: []protocol.Decision{withGate(expiredGate(), func(d *protocol.Decision) {
				d.Question, d.BlockedScope, d.AllowedScope = "Ledger or Journal", nil, nil
			})}},
			want:  protocol.DecisionRequired,
			codes: one(protocol.CodeDecisionExpired),
			ref:   "DEC-004",
			text:  "DEC-004 expired unanswered after 1h30m: Ledger or Journal. Nothing on its blocked scope proceeds; a lead can still resolve it.",
		},
		{
			name:        "an expired gate is never called rejected",
			facts:       protocol.Facts{Decisions: []protocol.Decision{expiredGate()}},
			want:        protocol.DecisionRequired,
			codes:       one(protocol.CodeDecisionExpired),
			ref:         "DEC-004",
			contains:    []string{"expired unanswered", "a lead can still resolve it"},
			notContains: []string{"reject"},
			blocked:     []string{"migrations"},
			allowed:     []string{"web"},
		},

		{
			name:    "a pending permission prompt is DECISION_REQUIRED, names the tool and the paths, and blocks both",
			facts:   protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{migrationPrompt()}},
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodePermissionRequested),
			ref:     "PRM-001",
			text:    `Permission prompt PRM-001 asks to use Bash on migrations/0042_drop_billing.sql, db/seed.sql: "Run the migration?". A person must answer it; until then, do not use Bash on those paths.`,
			blocked: []string{"tool:Bash", "migrations/0042_drop_billing.sql", "db/seed.sql"},
			files:   []string{"migrations/0042_drop_billing.sql", "db/seed.sql"},
		},
		{
			name:    "a permission prompt naming one path blocks the tool and that path",
			facts:   prompt("PRM-002", 16, "Edit", "Overwrite the file?", "web/app.go"),
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodePermissionRequested),
			ref:     "PRM-002",
			text:    `Permission prompt PRM-002 asks to use Edit on web/app.go: "Overwrite the file?". A person must answer it; until then, do not use Edit on that path.`,
			blocked: []string{"tool:Edit", "web/app.go"},
			files:   []string{"web/app.go"},
		},
		{
			name:    "a permission prompt naming only a tool blocks only the tool",
			facts:   prompt("PRM-003", 16, "WebFetch", "Fetch example.com?"),
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodePermissionRequested),
			ref:     "PRM-003",
			text:    `Permission prompt PRM-003 asks to use WebFetch: "Fetch example.com?". A person must answer it; until then, do not use WebFetch.`,
			blocked: []string{"tool:WebFetch"},
		},
		{
			name:    "a permission prompt naming only paths blocks only the paths",
			facts:   prompt("PRM-004", 16, "", "Touch these?", "a.go", "b.go"),
			want:    protocol.DecisionRequired,
			codes:   one(protocol.CodePermissionRequested),
			ref:     "PRM-004",
			text:    `Permission prompt PRM-004 asks to touch a.go, b.go: "Touch these?". A person must answer it; until then, do not touch those paths.`,
			blocked: []string{"a.go", "b.go"},
			files:   []string{"a.go", "b.go"},
		},
		{
			name:  "a permission prompt naming neither a tool nor a path is still DECISION_REQUIRED and blocks nothing",
			facts: prompt("PRM-005", 16, "", "Proceed?"),
			want:  protocol.DecisionRequired,
			codes: one(protocol.CodePermissionRequested),
			ref:   "PRM-005",
			text:  `Permission prompt PRM-005 is waiting: "Proceed?". A person must answer it; until then, do not do what it asks.`,
		},
		{
			name:        "a permission prompt without prompt text still names the tool and the path and quotes nothing",
			facts:       prompt("PRM-006", 16, "Bash", "  ", "Makefile"),
			want:        protocol.DecisionRequired,
			codes:       one(protocol.CodePermissionRequested),
			ref:         "PRM-006",
			text:        "Permission prompt PRM-006 asks to use Bash on Makefile. A person must answer it; until then, do not use Bash on that path.",
			notContains: []string{`"`},
			blocked:     []string{"tool:Bash", "Makefile"},
			files:       []string{"Makefile"},
		},
		{
			name: "two permission prompts are a reason each, oldest first even when its ref sorts later, and merge their blocked scopes in order",
			facts: merge(prompt("PRM-007", 16, "Bash", "Build?", "Makefile"),
				prompt("PRM-008", 15, "Bash", "Deploy?", "deploy.sh", "Makefile")),
			want:    protocol.DecisionRequired,
			codes:   []protocol.Code{protocol.CodePermissionRequested, protocol.CodePermissionRequested},
			ref:     "PRM-008",
			prefix:  "Permission prompt PRM-008 asks to use Bash on deploy.sh, Makefile",
			blocked: []string{"tool:Bash", "deploy.sh", "Makefile"},
			files:   []string{"deploy.sh", "Makefile"},
		},

		// REMEDIATE
		{
			name:     "a required remediation request is REMEDIATE with its instruction and allows its files",
			facts:    protocol.Facts{Remediations: []protocol.Remediation{requiredRemediation()}},
			want:     protocol.Remediate,
			codes:    one(protocol.CodeRemediationRequired),
			ref:      "REM-001",
			contains: []string{"Re-read billing.Charge: its signature changed."},
			allowed:  []string{"internal/billing/charge.go"},
			files:    []string{"internal/billing/charge.go"},
		},
		{
			name:     "a high-severity policy violation is REMEDIATE, not a HARD_STOP, and names policy, match and file",
			facts:    protocol.Facts{Violations: []protocol.Violation{highViolation()}},
			want:     protocol.Remediate,
			codes:    one(protocol.CodeHighViolation),
			ref:      "VIO-002",
			prefix:   `No SQL string building was violated by fmt.Sprintf("SELECT. Found in db/report.go.`,
			allowed:  []string{"db/report.go"},
			files:    []string{"db/report.go"},
			contains: []string{"Fix it"},
		},
		{
			name:    "a deviation from an enforced rule at 70% or more is REMEDIATE naming the compliant alternative",
			facts:   protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(31, 34, true)}},
			want:    protocol.Remediate,
			codes:   one(protocol.CodeRuleDeviation),
			ref:     "DEV-001",
			text:    "redux-toolkit departs from this workspace's approach. Use React Query — chosen for server state in 31 of 34 components.",
			allowed: []string{"web/src/store.ts"},
			files:   []string{"web/src/store.ts"},
		},
		{
			name: "a high violation and the required remediation it raised are one reason: high_violation",
			facts: protocol.Facts{Violations: []protocol.Violation{highViolation()},
				Remediations: []protocol.Remediation{raisedBy("REM-010", highViolation().ID, "db/report.go")}},
			want:    protocol.Remediate,
			codes:   one(protocol.CodeHighViolation),
			ref:     "VIO-002",
			prefix:  `No SQL string building was violated by fmt.Sprintf("SELECT. Found in db/report.go.`,
			allowed: []string{"db/report.go"},
			files:   []string{"db/report.go"},
		},
		{
			name: "an enforced deviation and the required remediation it raised are one reason: rule_deviation",
			facts: protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(31, 34, true)},
				Remediations: []protocol.Remediation{raisedBy("REM-011", "DEV-001", "web/src/store.ts")}},
			want:    protocol.Remediate,
			codes:   one(protocol.CodeRuleDeviation),
			ref:     "DEV-001",
			text:    "redux-toolkit departs from this workspace's approach. Use React Query — chosen for server state in 31 of 34 components.",
			allowed: []string{"web/src/store.ts"},
			files:   []string{"web/src/store.ts"},
		},
		{
			name:     "a change touching a path the mission contract forbids is REMEDIATE and allows undoing those files",
			facts:    breach(protocol.ForbidPath, "migrations/**", []string{"migrations/0042.sql", "migrations/0043.sql"}, 0),
			want:     protocol.Remediate,
			codes:    one(protocol.CodeContractViolated),
			ref:      "CL-002",
			contains: []string{"migrations/**", "migrations/0042.sql, migrations/0043.sql"},
			allowed:  []string{"migrations/0042.sql", "migrations/0043.sql"},
			files:    []string{"migrations/0042.sql", "migrations/0043.sql"},
		},
		{
			name:     "a change missing a path the mission contract requires is REMEDIATE and names the path",
			facts:    breach(protocol.RequirePath, "docs/billing.md", nil, 0),
			want:     protocol.Remediate,
			codes:    one(protocol.CodeContractViolated),
			ref:      "CL-002",
			contains: []string{"docs/billing.md"},
		},
		{
			name:     "a change adding a dependency the mission contract forbids is REMEDIATE and names it",
			facts:    breach(protocol.ForbidDependency, "github.com/lib/pq", []string{"github.com/lib/pq v1.10.9"}, 0),
			want:     protocol.Remediate,
			codes:    one(protocol.CodeContractViolated),
			ref:      "CL-002",
			contains: []string{"github.com/lib/pq", "github.com/lib/pq v1.10.9"},
		},
		{
			name:     "a change touching more files than the mission contract allows is REMEDIATE and names both numbers",
			facts:    breach(protocol.MaxFilesChanged, "20", nil, 47),
			want:     protocol.Remediate,
			codes:    one(protocol.CodeContractViolated),
			ref:      "CL-002",
			contains: []string{"20", "47"},
		},

		// CONTINUE_WITH_WARNING
		{
			name:     "a remediation request that is not required only warns",
			facts:    protocol.Facts{Remediations: []protocol.Remediation{advisoryRemediation()}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodeRemediationAdvisory),
			ref:      "REM-002",
			contains: []string{"Consider a table test for rounding."},
			files:    []string{"internal/billing/round_test.go"},
		},
		{
			name:     "a high risk band warns and names the score, the band and the gate before merge",
			facts:    protocol.Facts{Risk: highRisk("high")},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodeRiskHigh),
			contains: []string{"82", "high", "a lead's review"},
		},
		{
			name:     "a critical risk band warns and names the score, the band and the gate before merge",
			facts:    protocol.Facts{Risk: &protocol.Risk{Score: 97, Band: "critical", Gate: "two approvals", At: at(10)}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodeRiskHigh),
			contains: []string{"97", "critical", "two approvals"},
		},
		{
			name:  "a medium risk band is not a reason to warn",
			facts: protocol.Facts{Risk: &protocol.Risk{Score: 55, Band: "medium", Gate: "a review", At: at(10)}},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:  "a low risk band is not a reason to warn",
			facts: protocol.Facts{Risk: &protocol.Risk{Score: 10, Band: "low", At: at(10)}},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
		{
			name:     "a collision warns, names the other session and the symbol, and says not to stop",
			facts:    protocol.Facts{Collisions: []protocol.Collision{collision()}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodeCollision),
			ref:      "COL-001",
			contains: []string{"S-77", "claude-code", "billing.Charge"},
			suffix:   "Madebook is re-briefing it; you do not need to stop.",
		},
		{
			name: "a collision with a session whose agent is unnamed still says not to stop",
			facts: protocol.Facts{Collisions: []protocol.Collision{{ID: "COL-002", Symbol: "auth.Session",
				OtherSession: "S-80", At: at(11)}}},
			want:        protocol.ContinueWithWarning,
			codes:       one(protocol.CodeCollision),
			ref:         "COL-002",
			contains:    []string{"S-80", "auth.Session"},
			notContains: []string{"()"},
			suffix:      "Madebook is re-briefing it; you do not need to stop.",
		},
		{
			name:     "a block_merge policy action only warns: the code may be written, it will not ship",
			facts:    protocol.Facts{Violations: []protocol.Violation{blockMergeViolation()}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodeBlockMerge),
			ref:      "VIO-003",
			prefix:   "Licence review was violated by GPL-3.0. Found in go.mod.",
			contains: []string{"merge"},
			files:    []string{"go.mod"},
		},
		{
			name:   "below 70% confidence the same deviation only warns and says so",
			facts:  protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(11, 20, true)}},
			want:   protocol.ContinueWithWarning,
			codes:  one(protocol.CodeRuleAdvisory),
			ref:    "DEV-001",
			prefix: "redux-toolkit departs from this workspace's approach",
			suffix: "(React Query, inferred with 55% confidence — advisory).",
			files:  []string{"web/src/store.ts"},
		},
		{
			name:     "a medium-severity policy violation only warns, with code policy_warning",
			facts:    protocol.Facts{Violations: []protocol.Violation{mediumViolation()}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodePolicyWarning),
			ref:      "VIO-004",
			prefix:   "TODO without a ticket was violated by TODO. Found in web/app.go.",
			contains: []string{"medium"},
			files:    []string{"web/app.go"},
		},
		{
			name:     "a low-severity policy violation only warns, with code policy_warning",
			facts:    protocol.Facts{Violations: []protocol.Violation{lowViolation()}},
			want:     protocol.ContinueWithWarning,
			codes:    one(protocol.CodePolicyWarning),
			ref:      "VIO-005",
			prefix:   "Long function was violated by ServeHTTP. Found in web/routes.go.",
			contains: []string{"low"},
			files:    []string{"web/routes.go"},
		},

		// CONTINUE
		{
			name:  "when nothing fires the agent is told to CONTINUE",
			facts: protocol.Facts{},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		},
	}
	// Only the revising states hold a session: every other lifecycle state,
	// an untracked session, and a state spelled otherwise fire nothing.
	// CONFIRMING's wait is the plan approval, which the Plan fact carries.
	for _, st := range []string{"", "IDLE", "CLASSIFYING", "ANSWERING", "DELEGATING", "SCHEDULING",
		"ARCHITECTURE_DESIGNING", "CONFIRMING", "EXECUTING", "SUMMARIZING", "DIRECT_MODE",
		"architecture_revising", " INTERRUPTING"} {
		name := fmt.Sprintf("a session in lifecycle %q is not held by its lifecycle and may CONTINUE", st)
		if st == "" {
			name = "an untracked session (no lifecycle state) is not held by its lifecycle and may CONTINUE"
		}
		rs = append(rs, rule{
			name:  name,
			facts: protocol.Facts{Lifecycle: protocol.Lifecycle{State: st, Since: at(13)}},
			want:  protocol.Continue,
			codes: []protocol.Code{},
			text:  protocol.ContinueText,
		})
	}
	return rs
}

// withGate is the gate d changed by fn.
func withGate(d protocol.Decision, fn func(*protocol.Decision)) protocol.Decision {
	fn(&d)
	return d
}

// prompt is a session with one pending permission prompt, opened at(age).
func prompt(id string, age int, tool, question string, paths ...string) protocol.Facts {
	return protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{{ID: id, Prompt: question,
		Options: map[string]string{"1": "Allow", "2": "Deny"}, Tool: tool, Paths: paths, OpenedAt: at(age)}}}
}

func TestDecideFollowsTheTable(t *testing.T) {
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			b := protocol.Decide(r.facts, now)
			checkShape(t, b)
			if b.NextAction != r.want {
				t.Errorf("next_action = %v, want %v", b.NextAction, r.want)
			}
			if got := codesOf(b.Reasons); !slices.Equal(got, r.codes) {
				t.Errorf("reason codes = %v, want %v", got, r.codes)
			}
			if len(b.Also) != 0 {
				t.Errorf("also = %v, want nothing: only one fact fired", codesOf(b.Also))
			}
			if r.ref != "" && (len(b.Reasons) == 0 || b.Reasons[0].Ref != r.ref) {
				t.Errorf("ref = %v, want %q", refsOf(b.Reasons), r.ref)
			}
			if r.text != "" && b.Reason.String() != r.text {
				t.Errorf("reason =\n  %q\nwant\n  %q", b.Reason.String(), r.text)
			}
			if !strings.HasPrefix(b.Reason.String(), r.prefix) {
				t.Errorf("reason %q does not start %q", b.Reason.String(), r.prefix)
			}
			if !strings.HasSuffix(b.Reason.String(), r.suffix) {
				t.Errorf("reason %q does not end %q", b.Reason.String(), r.suffix)
			}
			for _, s := range r.contains {
				if !strings.Contains(b.Reason.String(), s) {
					t.Errorf("reason %q does not name %q", b.Reason.String(), s)
				}
			}
			for _, s := range r.notContains {
				if strings.Contains(b.Reason.String(), s) {
					t.Errorf("reason %q contains %q", b.Reason.String(), s)
				}
			}
			wantBlocked, wantAllowed := r.blocked, r.allowed
			if wantBlocked == nil {
				wantBlocked = []string{}
			}
			if wantAllowed == nil {
				wantAllowed = []string{}
			}
			if !slices.Equal(b.BlockedScope, wantBlocked) {
				t.Errorf("blocked_scope = %q, want %q", b.BlockedScope, wantBlocked)
			}
			if !slices.Equal(b.AllowedScope, wantAllowed) {
				t.Errorf("allowed_scope = %q, want %q", b.AllowedScope, wantAllowed)
			}
			var files []string
			if len(b.Reasons) > 0 {
				files = b.Reasons[0].Files
			}
			if !slices.Equal(files, r.files) {
				t.Errorf("files = %q, want %q", files, r.files)
			}
		})
	}
}

// TestEveryStateAndCodeHasARule keeps the table honest: every state is the
// answer of some rule, and every Code constant declared in the package is
// produced by some rule, so a new code cannot be added without a test.
func TestEveryStateAndCodeHasARule(t *testing.T) {
	states := map[protocol.State]bool{}
	produced := map[protocol.Code]bool{}
	for _, r := range rules() {
		states[r.want] = true
		for _, c := range r.codes {
			produced[c] = true
		}
	}
	for _, s := range protocol.States {
		if !states[s] {
			t.Errorf("no rule produces %v", s)
		}
	}
	declared := declaredCodes(t)
	if len(declared) < 16 {
		t.Fatalf("found %d Code constants in the package, want at least the 16 DESIGN.md names", len(declared))
	}
	for name, c := range declared {
		if !produced[c] {
			t.Errorf("%s (%q) is declared but no rule produces it", name, c)
		}
	}
}

// declaredCodes reads the package's non-test source for constants of type Code.
func declaredCodes(t *testing.T) map[string]protocol.Code {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]protocol.Code{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s is not a string literal", n.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = protocol.Code(v)
				}
			}
		}
	}
	return out
}

// Agents switch on codes, so their spelling is part of the wire format.
func TestReasonCodesAreSpelledAsOnTheWire(t *testing.T) {
	tests := []struct {
		code protocol.Code
		want string
	}{
		{protocol.CodeCriticalViolation, "critical_violation"},
		{protocol.CodePaused, "paused"},
		{protocol.CodePlanNotApproved, "plan_not_approved"},
		{protocol.CodePlanRevising, "plan_revising"},
		{protocol.CodeDecisionOpen, "decision_open"},
		{protocol.CodeDecisionExpired, "decision_expired"},
		{protocol.CodePermissionRequested, "permission_requested"},
		{protocol.CodeRemediationRequired, "remediation_required"},
		{protocol.CodeHighViolation, "high_violation"},
		{protocol.CodeRuleDeviation, "rule_deviation"},
		{protocol.CodeContractViolated, "contract_violated"},
		{protocol.CodeRemediationAdvisory, "remediation_advisory"},
		{protocol.CodeRiskHigh, "risk_high"},
		{protocol.CodeCollision, "collision"},
		{protocol.CodeBlockMerge, "block_merge"},
		{protocol.CodeRuleAdvisory, "rule_advisory"},
		{protocol.CodePolicyWarning, "policy_warning"},
	}
	if n := len(declaredCodes(t)); n != len(tests) {
		t.Errorf("the package declares %d codes, this table spells %d", n, len(tests))
	}
	for _, tt := range tests {
		t.Run("code "+tt.want+" is spelled "+tt.want, func(t *testing.T) {
			if string(tt.code) != tt.want {
				t.Errorf("got %q", tt.code)
			}
		})
	}
}

func TestTheSeventyPercentThreshold(t *testing.T) {
	tests := []struct {
		name               string
		support, total     int
		enforced           bool
		want               protocol.State
		percent            int
		enforceable        bool
		wantShownPercent   string // in the advisory text
		wantNotShownInText string
	}{
		{name: "7 of 10 (exactly 70%) on an enforced rule is REMEDIATE",
			support: 7, total: 10, enforced: true, want: protocol.Remediate, percent: 70, enforceable: true},
		{name: "70 of 100 on an enforced rule is REMEDIATE",
			support: 70, total: 100, enforced: true, want: protocol.Remediate, percent: 70, enforceable: true},
		{name: "34 of 34 on an enforced rule is REMEDIATE",
			support: 34, total: 34, enforced: true, want: protocol.Remediate, percent: 100, enforceable: true},
		{name: "69 of 100 on an enforced rule only warns",
			support: 69, total: 100, enforced: true, want: protocol.ContinueWithWarning, percent: 69,
			wantShownPercent: "inferred with 69% confidence — advisory"},
		{name: "16 of 23 (69.57%) on an enforced rule only warns and shows 69%, never a rounded-up 70%",
			support: 16, total: 23, enforced: true, want: protocol.ContinueWithWarning, percent: 69,
			wantShownPercent: "inferred with 69% confidence — advisory", wantNotShownInText: "70%"},
		{name: "2 of 3 (66.7%) shows 66%, rounded down",
			support: 2, total: 3, enforced: true, want: protocol.ContinueWithWarning, percent: 66,
			wantShownPercent: "inferred with 66% confidence — advisory"},
		{name: "31 of 34 on a rule that is not enforced only warns",
			support: 31, total: 34, enforced: false, want: protocol.ContinueWithWarning, percent: 91,
			wantShownPercent: "inferred with 91% confidence — advisory"},
		{name: "a rule with no components (0 of 0) only warns, at 0%, and does not panic",
			support: 0, total: 0, enforced: true, want: protocol.ContinueWithWarning, percent: 0,
			wantShownPercent: "inferred with 0% confidence — advisory"},
		{name: "a rule with a negative total only warns, at 0%",
			support: 3, total: -1, enforced: true, want: protocol.ContinueWithWarning, percent: 0,
			wantShownPercent: "inferred with 0% confidence — advisory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := reduxDeviation(tt.support, tt.total, tt.enforced)
			if got := d.Enforceable(); got != tt.enforceable {
				t.Errorf("Enforceable() = %v, want %v", got, tt.enforceable)
			}
			if got := d.ConfidencePercent(); got != tt.percent {
				t.Errorf("ConfidencePercent() = %d, want %d", got, tt.percent)
			}
			b := protocol.Decide(protocol.Facts{Deviations: []protocol.Deviation{d}}, now)
			checkShape(t, b)
			if b.NextAction != tt.want {
				t.Fatalf("next_action = %v, want %v (reason %q)", b.NextAction, tt.want, b.Reason.String())
			}
			wantCode := protocol.CodeRuleDeviation
			if tt.want == protocol.ContinueWithWarning {
				wantCode = protocol.CodeRuleAdvisory
			}
			if b.Reasons[0].Code != wantCode {
				t.Errorf("code = %s, want %s", b.Reasons[0].Code, wantCode)
			}
			if tt.want == protocol.Remediate {
				want := fmt.Sprintf("Use React Query — chosen for server state in %d of %d components.", tt.support, tt.total)
				if !strings.HasSuffix(b.Reason.String(), want) {
					t.Errorf("reason %q does not end %q", b.Reason.String(), want)
				}
				if !slices.Equal(b.AllowedScope, []string{"web/src/store.ts"}) {
					t.Errorf("allowed_scope = %q, want the deviating file", b.AllowedScope)
				}
			} else {
				if !strings.Contains(b.Reason.String(), tt.wantShownPercent) {
					t.Errorf("reason %q does not say %q", b.Reason.String(), tt.wantShownPercent)
				}
				if !strings.HasSuffix(b.Reason.String(), "advisory).") {
					t.Errorf("reason %q does not end as advisory", b.Reason.String())
				}
				if len(b.AllowedScope) != 0 {
					t.Errorf("an advisory deviation allows %q, want nothing", b.AllowedScope)
				}
			}
			if tt.wantNotShownInText != "" && strings.Contains(b.Reason.String(), tt.wantNotShownInText) {
				t.Errorf("reason %q shows %q", b.Reason.String(), tt.wantNotShownInText)
			}
		})
	}
}

// representative is one cause per state; CONTINUE's is nothing at all.
func representative(s protocol.State) protocol.Facts {
	for _, c := range causes() {
		if c.state == s {
			return c.facts()
		}
	}
	return protocol.Facts{}
}

func TestPrecedenceBetweenEveryPairOfStates(t *testing.T) {
	codeOf := map[protocol.State]protocol.Code{}
	for _, c := range causes() {
		if _, ok := codeOf[c.state]; !ok {
			codeOf[c.state] = c.code
		}
	}
	n := 0
	for i, hi := range protocol.States {
		for _, lo := range protocol.States[i+1:] {
			n++
			name := fmt.Sprintf("when %v and %v both fire, %v is next_action and %v is in also", hi, lo, hi, lo)
			if lo == protocol.Continue {
				name = fmt.Sprintf("%v outranks CONTINUE and leaves also empty", hi)
			}
			t.Run(name, func(t *testing.T) {
				for _, f := range []protocol.Facts{
					merge(representative(hi), representative(lo)),
					merge(representative(lo), representative(hi)),
				} {
					b := protocol.Decide(f, now)
					checkShape(t, b)
					if b.NextAction != hi {
						t.Errorf("next_action = %v, want %v", b.NextAction, hi)
					}
					if got := codesOf(b.Reasons); !slices.Equal(got, []protocol.Code{codeOf[hi]}) {
						t.Errorf("reasons = %v, want [%s]", got, codeOf[hi])
					}
					wantAlso := []protocol.Code{}
					if lo != protocol.Continue {
						wantAlso = []protocol.Code{codeOf[lo]}
					}
					if got := codesOf(b.Also); !slices.Equal(got, wantAlso) {
						t.Errorf("also = %v, want %v", got, wantAlso)
					}
				}
			})
		}
	}
	if n != 15 {
		t.Errorf("checked %d pairs of states, want 15 (six states)", n)
	}
}

// TestPrecedenceBetweenEveryPairOfCauses checks every pair of the
// seventeen causes, not just one per state: the more severe wins and the other is in
// also; two causes at one state are both reasons.
func TestPrecedenceBetweenEveryPairOfCauses(t *testing.T) {
	cs := causes()
	for i, a := range cs {
		for _, c := range cs[i+1:] {
			hi, lo := a, c
			if lo.state > hi.state {
				hi, lo = lo, hi
			}
			name := fmt.Sprintf("when %s and %s both fire, %v is next_action and %v is in also",
				hi.what, lo.what, hi.state, lo.state)
			if hi.state == lo.state {
				name = fmt.Sprintf("%s and %s are both reasons at %v", hi.what, lo.what, hi.state)
			}
			t.Run(name, func(t *testing.T) {
				b := protocol.Decide(merge(hi.facts(), lo.facts()), now)
				checkShape(t, b)
				if b.NextAction != hi.state {
					t.Errorf("next_action = %v, want %v", b.NextAction, hi.state)
				}
				all := append(codesOf(b.Reasons), codesOf(b.Also)...)
				slices.Sort(all)
				want := []protocol.Code{hi.code, lo.code}
				slices.Sort(want)
				if !slices.Equal(all, want) {
					t.Errorf("reasons+also = %v, want %v", all, want)
				}
				if hi.state == lo.state {
					if len(b.Reasons) != 2 || len(b.Also) != 0 {
						t.Errorf("reasons %v, also %v: want both in reasons", codesOf(b.Reasons), codesOf(b.Also))
					}
				} else if !slices.Equal(codesOf(b.Also), []protocol.Code{lo.code}) {
					t.Errorf("also = %v, want [%s]", codesOf(b.Also), lo.code)
				}
				// The order the facts arrive in changes nothing.
				if r := protocol.Decide(merge(lo.facts(), hi.facts()), now); !sameBrief(t, r, b) {
					t.Errorf("the brief depends on the order of the facts")
				}
			})
		}
	}
}

func TestAlsoCarriesEveryLowerReason(t *testing.T) {
	cs := causes()
	// Drop the most severe state's causes one state at a time: at every
	// step, every fact that fires is in reasons or in also.
	for _, top := range protocol.States {
		var fs []protocol.Facts
		var want []protocol.Code
		for _, c := range cs {
			if c.state <= top {
				fs = append(fs, c.facts())
				want = append(want, c.code)
			}
		}
		name := fmt.Sprintf("with one of everything up to %v, all %d facts are in reasons or also", top, len(want))
		if top == protocol.Continue {
			name = "with nothing at all, reasons and also are empty"
		}
		t.Run(name, func(t *testing.T) {
			b := protocol.Decide(merge(fs...), now)
			checkShape(t, b)
			if b.NextAction != top {
				t.Errorf("next_action = %v, want %v", b.NextAction, top)
			}
			if got := len(b.Reasons) + len(b.Also); got != len(want) {
				t.Errorf("len(reasons)+len(also) = %d, want %d", got, len(want))
			}
			got := append(codesOf(b.Reasons), codesOf(b.Also)...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("codes = %v, want %v", got, want)
			}
		})
	}
	t.Run(fmt.Sprintf("with one of everything, the brief is a HARD_STOP carrying all %d facts", len(cs)), func(t *testing.T) {
		b := protocol.Decide(everything(), now)
		if b.NextAction != protocol.HardStop || len(b.Reasons) != 1 || len(b.Reasons)+len(b.Also) != len(cs) {
			t.Errorf("next_action %v with %d reasons and %d in also, want HARD_STOP with 1 and %d",
				b.NextAction, len(b.Reasons), len(b.Also), len(cs)-1)
		}
	})
	t.Run("many facts at every state are all carried", func(t *testing.T) {
		f := busy()
		b := protocol.Decide(f, now)
		checkShape(t, b)
		if got, want := len(b.Reasons)+len(b.Also), firing(f); got != want {
			t.Errorf("len(reasons)+len(also) = %d, want %d", got, want)
		}
	})
}

// busy is a session with several facts at every state, some of the same
// age, for ordering and determinism tests.
func busy() protocol.Facts {
	f := everything()
	f.Violations = append(f.Violations,
		protocol.Violation{ID: "VIO-010", Policy: "No PII in logs", Severity: protocol.SeverityCritical, Match: "email", File: "web/log.go", At: at(5)},
		protocol.Violation{ID: "VIO-011", Policy: "No eval", Severity: protocol.SeverityHigh, Match: "eval(", File: "web/src/x.ts", At: at(2)},
		protocol.Violation{ID: "VIO-012", Policy: "Licence review", Severity: protocol.SeverityCritical, BlockMerge: true, Match: "AGPL", File: "go.mod", At: at(2)},
		lowViolation(),
	)
	f.Decisions = append(f.Decisions,
		protocol.Decision{Ref: "DEC-001", Question: "Keep the session store?", BlockedScope: []string{"internal/auth"}, AllowedScope: []string{"web"}, OpenedAt: at(3)},
		protocol.Decision{Ref: "DEC-003", Question: "Half-even rounding?", BlockedScope: []string{"internal/billing/round.go"}, AllowedScope: []string{"tests", "internal/auth"}, OpenedAt: at(1)},
	)
	f.Remediations = append(f.Remediations,
		protocol.Remediation{ID: "REM-003", Required: true, Instruction: "Add the index.", Files: []string{"migrations/0043.sql"}, CreatedAt: at(4)},
		protocol.Remediation{ID: "REM-004", Instruction: "Rename the helper.", CreatedAt: at(4)},
	)
	f.Deviations = append(f.Deviations,
		protocol.Deviation{ID: "DEV-003", Departure: "moment", Chosen: "date-fns", Concern: "dates", Support: 7, Total: 10, Enforced: true, Files: []string{"web/src/dates.ts"}, At: at(7)},
		protocol.Deviation{ID: "DEV-004", Departure: "axios", Chosen: "fetch", Concern: "http", Support: 16, Total: 23, Enforced: true, At: at(7)},
	)
	f.Breaches = append(f.Breaches,
		protocol.Breach{ID: "CL-003", Kind: protocol.MaxFilesChanged, Value: "20", Count: 31, At: at(8)},
	)
	f.Collisions = append(f.Collisions,
		protocol.Collision{ID: "COL-000", Symbol: "auth.User", OtherSession: "S-12", At: at(11)},
	)
	f.PermissionPrompts = append(f.PermissionPrompts,
		protocol.PermissionPrompt{ID: "PRM-000", Prompt: "Read the secrets file?", Tool: "Read", Paths: []string{".env"}, OpenedAt: at(3)},
		protocol.PermissionPrompt{ID: "PRM-002", Prompt: "Run the tests?", Tool: "Bash", OpenedAt: at(1)},
		protocol.PermissionPrompt{ID: "PRM-003", Prompt: "Edit the router?", Tool: "Edit", Paths: []string{"web", "internal/auth/session.go"}, OpenedAt: at(16)},
	)
	return f
}

// firing counts the facts that fire, by DESIGN.md's table.
func firing(f protocol.Facts) int {
	n := len(f.Violations) + len(f.Decisions) + len(f.PermissionPrompts) + len(f.Remediations) + len(f.Deviations) + len(f.Breaches) + len(f.Collisions)
	if f.Lifecycle.State == protocol.LifecycleArchitectureRevising || f.Lifecycle.State == protocol.LifecycleInterrupting {
		n++
	}
	if f.Pause != nil {
		n++
	}
	if f.HighRisk && f.Plan.Status != protocol.PlanApproved {
		n++
	}
	if f.Risk != nil && (f.Risk.Band == "high" || f.Risk.Band == "critical") {
		n++
	}
	return n
}

func TestReasonsAreOrderedByStateThenAgeThenRef(t *testing.T) {
	t.Run("gates at one state are ordered oldest first, and gates of one age by ref", func(t *testing.T) {
		f := protocol.Facts{Decisions: []protocol.Decision{
			{Ref: "DEC-001", Question: "Newest?", OpenedAt: at(20)},
			{Ref: "DEC-003", Question: "Same age, later ref?", OpenedAt: at(10)},
			{Ref: "DEC-002", Question: "Same age, earlier ref?", OpenedAt: at(10)},
		}}
		b := protocol.Decide(f, now)
		if got, want := refsOf(b.Reasons), []string{"DEC-002", "DEC-003", "DEC-001"}; !slices.Equal(got, want) {
			t.Errorf("refs = %v, want %v", got, want)
		}
		if want := "DEC-002 is waiting on a person: Same age, earlier ref?"; b.Reason.String() != want {
			t.Errorf("reason = %q, want the oldest gate's %q", b.Reason.String(), want)
		}
	})
	t.Run("also is ordered by state before age: a newer, more severe reason comes first", func(t *testing.T) {
		f := protocol.Facts{
			Violations: []protocol.Violation{
				{ID: "VIO-A", Policy: "Critical", Severity: protocol.SeverityCritical, At: at(30)},
				{ID: "VIO-B", Policy: "High", Severity: protocol.SeverityHigh, At: at(20)},
				{ID: "VIO-C", Policy: "Medium", Severity: protocol.SeverityMedium, At: at(1)},
			},
			Collisions: []protocol.Collision{{ID: "COL-A", Symbol: "x", OtherSession: "S-1", At: at(0)}},
			Decisions:  []protocol.Decision{{Ref: "DEC-009", Question: "?", OpenedAt: at(40)}},
		}
		b := protocol.Decide(f, now)
		if got, want := refsOf(b.Also), []string{"DEC-009", "VIO-B", "COL-A", "VIO-C"}; !slices.Equal(got, want) {
			t.Errorf("also refs = %v, want %v", got, want)
		}
	})
	t.Run("gates and permission prompts at one state are ordered together, oldest first, then by ref", func(t *testing.T) {
		f := protocol.Facts{
			Decisions: []protocol.Decision{
				{Ref: "DEC-001", Question: "Newest gate?", OpenedAt: at(20)},
				{Ref: "DEC-002", Question: "Gate as old as a prompt?", OpenedAt: at(10)},
			},
			PermissionPrompts: []protocol.PermissionPrompt{
				{ID: "PRM-009", Tool: "Bash", OpenedAt: at(5)},
				{ID: "PRM-001", Tool: "Edit", OpenedAt: at(10)},
			},
		}
		b := protocol.Decide(f, now)
		if got, want := refsOf(b.Reasons), []string{"PRM-009", "DEC-002", "PRM-001", "DEC-001"}; !slices.Equal(got, want) {
			t.Errorf("refs = %v, want %v", got, want)
		}
		if got, want := b.BlockedScope, []string{"tool:Bash", "tool:Edit"}; !slices.Equal(got, want) {
			t.Errorf("blocked_scope = %q, want %q", got, want)
		}
	})
	t.Run("a plan being revised is ordered among BLOCKED reasons by when the session entered the revising state", func(t *testing.T) {
		for _, tt := range []struct {
			since int
			want  []protocol.Code
		}{
			{0, []protocol.Code{protocol.CodePlanRevising, protocol.CodePaused, protocol.CodePlanNotApproved}},
			{1, []protocol.Code{protocol.CodePaused, protocol.CodePlanRevising, protocol.CodePlanNotApproved}}, // as old as the pause: the pause's empty ref sorts first
			{2, []protocol.Code{protocol.CodePaused, protocol.CodePlanNotApproved, protocol.CodePlanRevising}}, // same age and ref as the plan: code decides
			{30, []protocol.Code{protocol.CodePaused, protocol.CodePlanNotApproved, protocol.CodePlanRevising}},
		} {
			f := protocol.Facts{Pause: &protocol.Pause{At: at(1)}, HighRisk: true, Plan: protocol.Plan{Status: protocol.PlanProposed, ProposedAt: at(2)},
				Lifecycle: protocol.Lifecycle{State: protocol.LifecycleArchitectureRevising, Since: at(tt.since)}}
			b := protocol.Decide(f, now)
			if got := codesOf(b.Reasons); !slices.Equal(got, tt.want) {
				t.Errorf("revising since at(%d): codes = %v, want %v", tt.since, got, tt.want)
			}
		}
	})
	t.Run("warnings of different kinds are ordered oldest first", func(t *testing.T) {
		f := protocol.Facts{
			Risk:       &protocol.Risk{Score: 80, Band: "high", At: at(9)},
			Collisions: []protocol.Collision{{ID: "COL-A", Symbol: "x", OtherSession: "S-1", At: at(3)}},
			Remediations: []protocol.Remediation{
				{ID: "REM-A", Instruction: "a", CreatedAt: at(6)},
			},
		}
		b := protocol.Decide(f, now)
		if got, want := codesOf(b.Reasons), []protocol.Code{protocol.CodeCollision, protocol.CodeRemediationAdvisory, protocol.CodeRiskHigh}; !slices.Equal(got, want) {
			t.Errorf("codes = %v, want %v", got, want)
		}
	})
}

func TestDecideIsDeterministic(t *testing.T) {
	base := busy()
	want := protocol.Decide(base, now)
	checkShape(t, want)
	rng := rand.New(rand.NewPCG(2025, 6))
	for i := range 500 {
		f := busy()
		rng.Shuffle(len(f.Violations), func(i, j int) { f.Violations[i], f.Violations[j] = f.Violations[j], f.Violations[i] })
		rng.Shuffle(len(f.Decisions), func(i, j int) { f.Decisions[i], f.Decisions[j] = f.Decisions[j], f.Decisions[i] })
		rng.Shuffle(len(f.Remediations), func(i, j int) { f.Remediations[i], f.Remediations[j] = f.Remediations[j], f.Remediations[i] })
		rng.Shuffle(len(f.Deviations), func(i, j int) { f.Deviations[i], f.Deviations[j] = f.Deviations[j], f.Deviations[i] })
		rng.Shuffle(len(f.Breaches), func(i, j int) { f.Breaches[i], f.Breaches[j] = f.Breaches[j], f.Breaches[i] })
		rng.Shuffle(len(f.Collisions), func(i, j int) { f.Collisions[i], f.Collisions[j] = f.Collisions[j], f.Collisions[i] })
		rng.Shuffle(len(f.PermissionPrompts), func(i, j int) {
			f.PermissionPrompts[i], f.PermissionPrompts[j] = f.PermissionPrompts[j], f.PermissionPrompts[i]
		})
		got := protocol.Decide(f, now)
		if !sameBrief(t, got, want) {
			t.Fatalf("shuffle %d: the brief changed\n got reasons %v also %v\nwant reasons %v also %v",
				i, refsOf(got.Reasons), refsOf(got.Also), refsOf(want.Reasons), refsOf(want.Also))
		}
	}
}

func TestScopes(t *testing.T) {
	gate := func(ref string, age int, blocked, allowed []string) protocol.Decision {
		return protocol.Decision{Ref: ref, Question: "?", BlockedScope: blocked, AllowedScope: allowed, OpenedAt: at(age)}
	}
	tests := []struct {
		name             string
		facts            protocol.Facts
		want             protocol.State
		blocked, allowed []string
	}{
		{
			name: "a HARD_STOP blocks all work and allows nothing, whatever a gate in also allows",
			facts: merge(protocol.Facts{Violations: []protocol.Violation{criticalSecret()}},
				protocol.Facts{Decisions: []protocol.Decision{billingGate()}}),
			want:    protocol.HardStop,
			blocked: []string{"all work"}, allowed: []string{},
		},
		{
			name: "two critical violations block all work once",
			facts: protocol.Facts{Violations: []protocol.Violation{criticalSecret(),
				{ID: "VIO-010", Policy: "No PII in logs", Severity: protocol.SeverityCritical, At: at(6)}}},
			want:    protocol.HardStop,
			blocked: []string{"all work"}, allowed: []string{},
		},
		{
			name:    "a pause blocks all work in this session and allows nothing",
			facts:   protocol.Facts{Pause: pauseWithReason()},
			want:    protocol.Blocked,
			blocked: []string{"all work in this session"}, allowed: []string{},
		},
		{
			name: "a pause leaves allowed empty even when a plan reason also fires",
			facts: protocol.Facts{Pause: pauseWithReason(), HighRisk: true,
				Plan: protocol.Plan{Status: protocol.PlanProposed, ProposedAt: at(2)}},
			want:    protocol.Blocked,
			blocked: []string{"all work in this session", "any code change"}, allowed: []string{},
		},
		{
			name: "a pause newer than the plan reason still leaves allowed empty",
			facts: protocol.Facts{Pause: &protocol.Pause{Reason: "x", At: at(50)}, HighRisk: true,
				Plan: protocol.Plan{Status: protocol.PlanRejected, ProposedAt: at(2)}},
			want:    protocol.Blocked,
			blocked: []string{"any code change", "all work in this session"}, allowed: []string{},
		},
		{
			name:    "a plan that is not approved blocks any code change and allows reading the repository and revising the plan",
			facts:   protocol.Facts{HighRisk: true},
			want:    protocol.Blocked,
			blocked: []string{"any code change"}, allowed: []string{"reading the repository", "revising the plan"},
		},
		{
			name:    "a plan being revised blocks any code change and allows reading the repository and revising the plan",
			facts:   protocol.Facts{Lifecycle: revising()},
			want:    protocol.Blocked,
			blocked: []string{"any code change"}, allowed: []string{"reading the repository", "revising the plan"},
		},
		{
			name:    "a pause leaves allowed empty even while the plan is being revised",
			facts:   protocol.Facts{Pause: pauseWithReason(), Lifecycle: revising()},
			want:    protocol.Blocked,
			blocked: []string{"all work in this session", "any code change"}, allowed: []string{},
		},
		{
			name:    "a BLOCKED plan while the plan is revised ignores what a gate or prompt in also would block or allow",
			facts:   merge(protocol.Facts{Lifecycle: revising()}, protocol.Facts{Decisions: []protocol.Decision{billingGate()}}, prompt("PRM-001", 16, "Bash", "", "web")),
			want:    protocol.Blocked,
			blocked: []string{"any code change"}, allowed: []string{"reading the repository", "revising the plan"},
		},
		{
			name:    "a permission prompt blocks its tool as tool:NAME and its paths, and allows nothing",
			facts:   prompt("PRM-001", 1, "Bash", "Deploy?", "deploy.sh"),
			want:    protocol.DecisionRequired,
			blocked: []string{"tool:Bash", "deploy.sh"}, allowed: []string{},
		},
		{
			name: "a permission prompt and a gate merge their scopes as two gates do: what the prompt blocks the gate does not allow",
			facts: merge(prompt("PRM-001", 1, "Edit", "Edit the app?", "web/app.go", "migrations"),
				protocol.Facts{Decisions: []protocol.Decision{gate("DEC-001", 2, []string{"migrations", "internal/billing"}, []string{"web/app.go", "tests", "tool:Edit"})}}),
			want:    protocol.DecisionRequired,
			blocked: []string{"tool:Edit", "web/app.go", "migrations", "internal/billing"},
			allowed: []string{"tests"},
		},
		{
			name: "a permission prompt naming all work leaves nothing allowed, as a gate would",
			facts: merge(prompt("PRM-001", 1, "", "?", "all work"),
				protocol.Facts{Decisions: []protocol.Decision{gate("DEC-001", 2, []string{"migrations"}, []string{"web"})}}),
			want:    protocol.DecisionRequired,
			blocked: []string{"all work", "migrations"}, allowed: []string{},
		},
		{
			name:    "a gate's own scopes are the brief's scopes",
			facts:   protocol.Facts{Decisions: []protocol.Decision{gate("DEC-001", 1, []string{"migrations"}, []string{"web", "tests"})}},
			want:    protocol.DecisionRequired,
			blocked: []string{"migrations"}, allowed: []string{"web", "tests"},
		},
		{
			name: "two gates merge their scopes, deduplicated in order, and what one blocks the other does not allow",
			facts: protocol.Facts{Decisions: []protocol.Decision{
				gate("DEC-002", 2, []string{"internal/auth", "migrations"}, []string{"web", "views", "internal/billing"}),
				gate("DEC-001", 1, []string{"migrations", "internal/billing"}, []string{"web", "tests", "internal/auth", "tests"}),
			}},
			want:    protocol.DecisionRequired,
			blocked: []string{"migrations", "internal/billing", "internal/auth"},
			allowed: []string{"web", "tests", "views"},
		},
		{
			name: "a gate that blocks all work leaves nothing allowed",
			facts: protocol.Facts{Decisions: []protocol.Decision{
				gate("DEC-001", 1, []string{"all work"}, []string{"web"}),
				gate("DEC-002", 2, []string{"migrations"}, []string{"tests"}),
			}},
			want:    protocol.DecisionRequired,
			blocked: []string{"all work", "migrations"}, allowed: []string{},
		},
		{
			name: "a REMEDIATE allows the files named, across all its reasons, in order",
			facts: protocol.Facts{
				Remediations: []protocol.Remediation{{ID: "REM-1", Required: true, Instruction: "fix",
					Files: []string{"a.go", "b.go"}, CreatedAt: at(1)}},
				Violations: []protocol.Violation{{ID: "VIO-1", Policy: "p", Severity: protocol.SeverityHigh,
					File: "b.go", At: at(2)}},
				Deviations: []protocol.Deviation{reduxDeviation(31, 34, true)}, // at(7)
				Breaches:   []protocol.Breach{forbidPathBreach()},              // at(8)
			},
			want:    protocol.Remediate,
			blocked: []string{},
			allowed: []string{"a.go", "b.go", "web/src/store.ts", "migrations/0042_drop_billing.sql"},
		},
		{
			name: "a REMEDIATE does not allow the files of a warning in also",
			facts: protocol.Facts{
				Remediations: []protocol.Remediation{requiredRemediation(), advisoryRemediation()},
			},
			want:    protocol.Remediate,
			blocked: []string{}, allowed: []string{"internal/billing/charge.go"},
		},
		{
			name: "a CONTINUE_WITH_WARNING names no scope, even when its reasons name files",
			facts: protocol.Facts{
				Remediations: []protocol.Remediation{advisoryRemediation()},
				Violations:   []protocol.Violation{blockMergeViolation(), mediumViolation()},
				Deviations:   []protocol.Deviation{reduxDeviation(11, 20, true)},
				Risk:         highRisk("critical"),
				Collisions:   []protocol.Collision{collision()},
			},
			want:    protocol.ContinueWithWarning,
			blocked: []string{}, allowed: []string{},
		},
		{
			name:    "a CONTINUE has empty scopes",
			facts:   protocol.Facts{},
			want:    protocol.Continue,
			blocked: []string{}, allowed: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := protocol.Decide(tt.facts, now)
			checkShape(t, b)
			if b.NextAction != tt.want {
				t.Fatalf("next_action = %v, want %v", b.NextAction, tt.want)
			}
			if !slices.Equal(b.BlockedScope, tt.blocked) {
				t.Errorf("blocked_scope = %q, want %q", b.BlockedScope, tt.blocked)
			}
			if !slices.Equal(b.AllowedScope, tt.allowed) {
				t.Errorf("allowed_scope = %q, want %q", b.AllowedScope, tt.allowed)
			}
			for _, s := range b.AllowedScope {
				if slices.Contains(b.BlockedScope, s) {
					t.Errorf("%q is both blocked and allowed", s)
				}
			}
		})
	}
}

func TestContinueIsEmptyNotNull(t *testing.T) {
	b := protocol.Decide(protocol.Facts{}, now)
	if b.NextAction != protocol.Continue || b.Reason.String() != protocol.ContinueText {
		t.Errorf("got %v %q", b.NextAction, b.Reason.String())
	}
	if b.Reasons == nil || b.Also == nil || b.BlockedScope == nil || b.AllowedScope == nil {
		t.Fatalf("a list is nil: %#v", b)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"reasons", "also", "blocked_scope", "allowed_scope"} {
		if got := string(m[k]); got != "[]" {
			t.Errorf("%s marshals to %s, want []", k, got)
		}
	}
	if got := string(m["next_action"]); got != `"CONTINUE"` {
		t.Errorf("next_action marshals to %s", got)
	}
}

func TestBriefJSON(t *testing.T) {
	f := merge(protocol.Facts{Pause: pauseWithReason()}, protocol.Facts{Remediations: []protocol.Remediation{requiredRemediation()}},
		protocol.Facts{Collisions: []protocol.Collision{collision()}})
	b := protocol.Decide(f, now)
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a brief marshals with the wire field names and nothing else", func(t *testing.T) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		want := []string{"allowed_scope", "also", "blocked_scope", "generated_at", "next_action", "reason", "reasons"}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("fields = %v, want %v", got, want)
		}
		if got := string(m["next_action"]); got != `"BLOCKED"` {
			t.Errorf("next_action = %s, want \"BLOCKED\"", got)
		}
		if got := string(m["generated_at"]); got != `"2025-06-02T12:00:00Z"` {
			t.Errorf("generated_at = %s", got)
		}
		if got := string(m["blocked_scope"]); got != `["all work in this session"]` {
			t.Errorf("blocked_scope = %s", got)
		}
	})
	t.Run("a reason marshals its state as a wire name with code, ref, text and files", func(t *testing.T) {
		var m struct {
			Reasons []map[string]any `json:"reasons"`
			Also    []map[string]any `json:"also"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Reasons) != 1 || len(m.Also) != 2 {
			t.Fatalf("got %d reasons and %d in also", len(m.Reasons), len(m.Also))
		}
		if m.Reasons[0]["state"] != "BLOCKED" || m.Reasons[0]["code"] != "paused" {
			t.Errorf("reasons[0] = %v", m.Reasons[0])
		}
		rem := m.Also[0]
		want := map[string]any{"state": "REMEDIATE", "code": "remediation_required", "ref": "REM-001",
			"text":  "Fix this, then report again: Re-read billing.Charge: its signature changed.",
			"files": []any{"internal/billing/charge.go"}}
		if !reflect.DeepEqual(rem, want) {
			t.Errorf("also[0] =\n  %v\nwant\n  %v", rem, want)
		}
		if m.Also[1]["state"] != "CONTINUE_WITH_WARNING" {
			t.Errorf("also[1].state = %v", m.Also[1]["state"])
		}
		if _, ok := m.Also[1]["files"]; ok {
			t.Errorf("a reason with no files marshals files: %v", m.Also[1])
		}
	})
	t.Run("a permission reason marshals with its prompt's id as ref and its paths as files", func(t *testing.T) {
		raw, err := json.Marshal(protocol.Decide(protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{migrationPrompt()}}, now))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Reasons      []map[string]any `json:"reasons"`
			BlockedScope []string         `json:"blocked_scope"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"state": "DECISION_REQUIRED", "code": "permission_requested", "ref": "PRM-001",
			"text":  `Permission prompt PRM-001 asks to use Bash on migrations/0042_drop_billing.sql, db/seed.sql: "Run the migration?". A person must answer it; until then, do not use Bash on those paths.`,
			"files": []any{"migrations/0042_drop_billing.sql", "db/seed.sql"}}
		if len(m.Reasons) != 1 || !reflect.DeepEqual(m.Reasons[0], want) {
			t.Errorf("reasons =\n  %v\nwant\n  [%v]", m.Reasons, want)
		}
		if want := []string{"tool:Bash", "migrations/0042_drop_billing.sql", "db/seed.sql"}; !slices.Equal(m.BlockedScope, want) {
			t.Errorf("blocked_scope = %q, want %q", m.BlockedScope, want)
		}
	})
	t.Run("a brief reads back from its JSON", func(t *testing.T) {
		var back protocol.Brief
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if back.NextAction != b.NextAction || back.Reason.String() != b.Reason.String() || !back.GeneratedAt.Equal(b.GeneratedAt) ||
			!slices.Equal(back.BlockedScope, b.BlockedScope) || !slices.Equal(back.AllowedScope, b.AllowedScope) {
			t.Errorf("read back %+v\nfrom %+v", back, b)
		}
		for i, r := range append(back.Reasons, back.Also...) {
			orig := append(slices.Clone(b.Reasons), b.Also...)[i]
			if r.State != orig.State || r.Code != orig.Code || r.Ref != orig.Ref || r.Text.String() != orig.Text.String() || !slices.Equal(r.Files, orig.Files) {
				t.Errorf("reason %d read back as %+v, want %+v", i, r, orig)
			}
		}
	})
	t.Run("a brief with a state that does not exist does not marshal", func(t *testing.T) {
		bad := b
		bad.NextAction = protocol.State(42)
		if _, err := json.Marshal(bad); err == nil {
			t.Error("marshalled an invalid state")
		}
	})
}

func TestDecideStampsGeneratedAtInUTC(t *testing.T) {
	paris := time.FixedZone("CEST", 2*60*60)
	for _, f := range []protocol.Facts{{}, everything()} {
		when := time.Date(2001, 2, 3, 4, 5, 6, 7, paris)
		b := protocol.Decide(f, when)
		if !b.GeneratedAt.Equal(when) {
			t.Errorf("generated_at = %v, want %v", b.GeneratedAt, when)
		}
		if b.GeneratedAt.Location() != time.UTC {
			t.Errorf("generated_at is in %v, want UTC", b.GeneratedAt.Location())
		}
		if got := b.GeneratedAt.Format(time.RFC3339Nano); got != "2001-02-03T02:05:06.000000007Z" {
			t.Errorf("generated_at = %s", got)
		}
	}
}

func TestDecideDoesNotMutateItsFacts(t *testing.T) {
	t.Run("the facts are unchanged, slices and order included", func(t *testing.T) {
		f := busy()
		want := busy()
		protocol.Decide(f, now)
		if !reflect.DeepEqual(f, want) {
			t.Errorf("Decide changed its facts")
		}
	})
	t.Run("a gate's scope lists are not appended to, even with spare capacity", func(t *testing.T) {
		blocked := make([]string, 1, 4)
		allowed := make([]string, 1, 4)
		blocked[0], allowed[0] = "migrations", "web"
		spareB := blocked[:cap(blocked)]
		spareA := allowed[:cap(allowed)]
		spareB[1], spareB[2], spareB[3] = "b1", "b2", "b3"
		spareA[1], spareA[2], spareA[3] = "a1", "a2", "a3"
		f := protocol.Facts{Decisions: []protocol.Decision{
			{Ref: "DEC-001", Question: "?", BlockedScope: blocked, AllowedScope: allowed, OpenedAt: at(1)},
			{Ref: "DEC-002", Question: "?", BlockedScope: []string{"internal/auth"}, AllowedScope: []string{"tests"}, OpenedAt: at(2)},
		}}
		b := protocol.Decide(f, now)
		if !slices.Equal(spareB, []string{"migrations", "b1", "b2", "b3"}) || !slices.Equal(spareA, []string{"web", "a1", "a2", "a3"}) {
			t.Errorf("Decide wrote into the gate's lists: %q %q", spareB, spareA)
		}
		if !slices.Equal(b.BlockedScope, []string{"migrations", "internal/auth"}) || !slices.Equal(b.AllowedScope, []string{"web", "tests"}) {
			t.Errorf("scopes %q %q", b.BlockedScope, b.AllowedScope)
		}
		// And the brief's lists are its own.
		b.BlockedScope[0], b.AllowedScope[0] = "changed", "changed"
		if blocked[0] != "migrations" || allowed[0] != "web" {
			t.Errorf("the brief's scopes share memory with the gate's")
		}
	})
	t.Run("a permission prompt's paths are not appended to, even with spare capacity", func(t *testing.T) {
		paths := make([]string, 1, 4)
		paths[0] = "a.go"
		spare := paths[:cap(paths)]
		spare[1], spare[2], spare[3] = "s1", "s2", "s3"
		f := protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{
			{ID: "PRM-001", Tool: "Edit", Paths: paths, OpenedAt: at(1)},
			{ID: "PRM-002", Tool: "Bash", Paths: []string{"b.go"}, OpenedAt: at(2)},
		}}
		b := protocol.Decide(f, now)
		if !slices.Equal(spare, []string{"a.go", "s1", "s2", "s3"}) {
			t.Errorf("Decide wrote into the prompt's paths: %q", spare)
		}
		if want := []string{"tool:Edit", "a.go", "tool:Bash", "b.go"}; !slices.Equal(b.BlockedScope, want) {
			t.Errorf("blocked_scope = %q, want %q", b.BlockedScope, want)
		}
		b.BlockedScope[1] = "changed"
		if paths[0] != "a.go" {
			t.Errorf("the brief's scopes share memory with the prompt's paths")
		}
	})
}

// A reason says the same thing whatever else fired alongside it.
func TestAReasonsTextDoesNotDependOnWhatElseFired(t *testing.T) {
	all := protocol.Decide(everything(), now)
	got := map[protocol.Code]string{}
	for _, r := range append(slices.Clone(all.Reasons), all.Also...) {
		got[r.Code] = r.Text.String()
	}
	for _, c := range causes() {
		t.Run(c.what+" reads the same alone and with everything else", func(t *testing.T) {
			alone := protocol.Decide(c.facts(), now)
			if len(alone.Reasons) != 1 {
				t.Fatalf("%d reasons alone", len(alone.Reasons))
			}
			if got[c.code] != alone.Reason.String() {
				t.Errorf("with everything: %q\nalone: %q", got[c.code], alone.Reason.String())
			}
		})
	}
}

// A quoted reason is quoted as Go's %q would: a quote inside it cannot end
// the quotation early.
func TestQuotedReasonsAreQuotedExactly(t *testing.T) {
	for _, s := range []string{
		"Wrong branch",
		`Don't ship "v2" yet`,
		`C:\deploy`,
		"line one\nline two",
		"Ana's call — wait 🚦",
		"bell\x07",
		"zero\u200bwidth",
		"invalid \xff byte",
	} {
		t.Run(fmt.Sprintf("a pause because %q quotes it as %s", s, strconv.Quote(s)), func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{Pause: &protocol.Pause{Reason: s, At: at(1)}}, now)
			want := "A person paused this session: " + strconv.Quote(s) + ". "
			if !strings.HasPrefix(b.Reason.String(), want) {
				t.Errorf("reason %q does not start %q", b.Reason.String(), want)
			}
		})
		t.Run(fmt.Sprintf("a permission prompt asking %q quotes it as %s", s, strconv.Quote(s)), func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{PermissionPrompts: []protocol.PermissionPrompt{{ID: "PRM-001", Prompt: s, Tool: "Bash", OpenedAt: at(1)}}}, now)
			want := "Permission prompt PRM-001 asks to use Bash: " + strconv.Quote(s) + ". "
			if !strings.HasPrefix(b.Reason.String(), want) {
				t.Errorf("reason %q does not start %q", b.Reason.String(), want)
			}
		})
		t.Run(fmt.Sprintf("changes asked to a plan with %q quote it as %s", s, strconv.Quote(s)), func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{HighRisk: true, Plan: protocol.Plan{Status: protocol.PlanChangesRequested, Note: s}}, now)
			want := "its execution plan: " + strconv.Quote(s) + ". "
			if !strings.Contains(b.Reason.String(), want) {
				t.Errorf("reason %q does not contain %q", b.Reason.String(), want)
			}
		})
		t.Run(fmt.Sprintf("a plan rejected because %q quotes it as %s", s, strconv.Quote(s)), func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{HighRisk: true, Plan: protocol.Plan{Status: protocol.PlanRejected, Note: s}}, now)
			want := "its execution plan: " + strconv.Quote(s) + ". "
			if !strings.Contains(b.Reason.String(), want) {
				t.Errorf("reason %q does not contain %q", b.Reason.String(), want)
			}
		})
	}
}

func TestDecideIsDeterministicWithManyFacts(t *testing.T) {
	build := func() protocol.Facts {
		f := busy()
		for i := range 40 {
			f.Violations = append(f.Violations, protocol.Violation{ID: fmt.Sprintf("VIO-%03d", 100+i), Policy: "p",
				Severity: []protocol.Severity{protocol.SeverityCritical, protocol.SeverityHigh, protocol.SeverityLow}[i%3],
				File:     fmt.Sprintf("f%d.go", i%5), At: at(i % 4)})
			f.Decisions = append(f.Decisions, protocol.Decision{Ref: fmt.Sprintf("DEC-%03d", 100+i), Question: "?",
				BlockedScope: []string{fmt.Sprintf("b%d", i%6)}, AllowedScope: []string{fmt.Sprintf("b%d", i%7)}, OpenedAt: at(i % 3)})
			f.PermissionPrompts = append(f.PermissionPrompts, protocol.PermissionPrompt{ID: fmt.Sprintf("PRM-%03d", 100+i),
				Prompt: "?", Tool: []string{"Bash", "Edit", ""}[i%3], Paths: []string{fmt.Sprintf("b%d", i%5)}, OpenedAt: at(i % 3)})
		}
		return f
	}
	want := protocol.Decide(build(), now)
	checkShape(t, want)
	if got, n := len(want.Reasons)+len(want.Also), firing(build()); got != n {
		t.Fatalf("%d reasons for %d facts", got, n)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		f := build()
		rng.Shuffle(len(f.Violations), func(i, j int) { f.Violations[i], f.Violations[j] = f.Violations[j], f.Violations[i] })
		rng.Shuffle(len(f.Decisions), func(i, j int) { f.Decisions[i], f.Decisions[j] = f.Decisions[j], f.Decisions[i] })
		rng.Shuffle(len(f.PermissionPrompts), func(i, j int) {
			f.PermissionPrompts[i], f.PermissionPrompts[j] = f.PermissionPrompts[j], f.PermissionPrompts[i]
		})
		if got := protocol.Decide(f, now); !sameBrief(t, got, want) {
			t.Fatalf("shuffle %d: the brief changed", i)
		}
	}
	// The order is state, then age, then ref.
	f := build()
	age := map[string]time.Time{}
	for _, v := range f.Violations {
		age[v.ID] = v.At
	}
	for _, d := range f.Decisions {
		age[d.Ref] = d.OpenedAt
	}
	for _, p := range f.PermissionPrompts {
		age[p.ID] = p.OpenedAt
	}
	for _, m := range f.Remediations {
		age[m.ID] = m.CreatedAt
	}
	for _, d := range f.Deviations {
		age[d.ID] = d.At
	}
	for _, b := range f.Breaches {
		age[b.ID] = b.At
	}
	for _, c := range f.Collisions {
		age[c.ID] = c.At
	}
	all := append(slices.Clone(want.Reasons), want.Also...)
	checked := 0
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.State != b.State {
			if a.State < b.State {
				t.Errorf("%s (%v) before %s (%v)", a.Ref, a.State, b.Ref, b.State)
			}
			continue
		}
		ta, oka := age[a.Ref]
		tb, okb := age[b.Ref]
		if !oka || !okb {
			continue
		}
		checked++
		if ta.After(tb) || (ta.Equal(tb) && a.Ref > b.Ref) {
			t.Errorf("%s (%v) before %s (%v) at %v", a.Ref, ta.Format("15:04"), b.Ref, tb.Format("15:04"), a.State)
		}
	}
	if checked < 60 {
		t.Errorf("checked only %d neighbours", checked)
	}
}

// Two reasons alike in everything the order looks at keep the order their
// facts came in: the sort is stable.
func TestReasonsAlikeInEveryKeyKeepTheirOrder(t *testing.T) {
	rem := func(files ...string) protocol.Remediation {
		return protocol.Remediation{ID: "REM-001", Required: true, Instruction: "Fix it.", Files: files, CreatedAt: at(1)}
	}
	for _, order := range [][]string{{"a.go", "b.go"}, {"b.go", "a.go"}} {
		t.Run("remediations naming "+order[0]+" then "+order[1]+" stay in that order", func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{Remediations: []protocol.Remediation{rem(order[0]), rem(order[1])}}, now)
			if len(b.Reasons) != 2 || b.Reasons[0].Files[0] != order[0] || b.Reasons[1].Files[0] != order[1] {
				t.Errorf("reasons %+v", b.Reasons)
			}
			if !slices.Equal(b.AllowedScope, order) {
				t.Errorf("allowed_scope = %q, want %q", b.AllowedScope, order)
			}
		})
	}
}

func TestToolScope(t *testing.T) {
	t.Run("a tool's scope entry is tool: then its name, as a prompt about it blocks it", func(t *testing.T) {
		if got := protocol.ToolScope("Bash"); got != "tool:Bash" {
			t.Errorf("ToolScope(Bash) = %q", got)
		}
		b := protocol.Decide(prompt("PRM-001", 1, "mcp__github__create_pr", "Open the PR?"), now)
		if want := []string{protocol.ToolScope("mcp__github__create_pr")}; !slices.Equal(b.BlockedScope, want) {
			t.Errorf("blocked_scope = %q, want %q", b.BlockedScope, want)
		}
	})
}

func TestLifecycleRevising(t *testing.T) {
	for _, tt := range []struct {
		state string
		want  bool
	}{
		{protocol.LifecycleArchitectureRevising, true}, {protocol.LifecycleInterrupting, true},
		{"", false}, {"IDLE", false}, {"CONFIRMING", false}, {"EXECUTING", false}, {"Architecture_Revising", false},
	} {
		st, want := tt.state, tt.want
		t.Run(fmt.Sprintf("a session in lifecycle %q is revising: %v", st, want), func(t *testing.T) {
			if got := (protocol.Lifecycle{State: st}).Revising(); got != want {
				t.Errorf("Revising() = %v", got)
			}
		})
	}
}

// raisedBy is a required remediation a violation or a deviation raised.
func raisedBy(id, fact string, files ...string) protocol.Remediation {
	return protocol.Remediation{ID: id, Required: true, Instruction: "Fix what " + fact + " found.", Files: files,
		CreatedAt: at(6), For: fact}
}

func TestARaisedRemediationGivesItsOwnReasonOnlyWithoutItsFact(t *testing.T) {
	now := at(60)
	for _, tc := range []struct {
		name          string
		facts         protocol.Facts
		reasons, also []string // code:ref
	}{
		{"its high violation fires: one reason, the violation's",
			protocol.Facts{Violations: []protocol.Violation{highViolation()}, Remediations: []protocol.Remediation{raisedBy("REM-1", "VIO-002")}},
			[]string{"high_violation:VIO-002"}, nil},
		{"its enforced deviation fires: one reason, the deviation's",
			protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(31, 34, true)}, Remediations: []protocol.Remediation{raisedBy("REM-1", "DEV-001")}},
			[]string{"rule_deviation:DEV-001"}, nil},
		{"its violation is gone (closed): the remediation is remediation_required, not dropped",
			protocol.Facts{Remediations: []protocol.Remediation{raisedBy("REM-1", "VIO-002")}},
			[]string{"remediation_required:REM-1"}, nil},
		{"its deviation's rule is no longer enforced: the remediation still holds REMEDIATE, the deviation warns",
			protocol.Facts{Deviations: []protocol.Deviation{reduxDeviation(31, 34, false)}, Remediations: []protocol.Remediation{raisedBy("REM-1", "DEV-001")}},
			[]string{"remediation_required:REM-1"}, []string{"rule_advisory:DEV-001"}},
		{"a remediation naming another fact does not hide this one's",
			protocol.Facts{Violations: []protocol.Violation{highViolation()}, Remediations: []protocol.Remediation{raisedBy("REM-1", "VIO-777")}},
			[]string{"remediation_required:REM-1", "high_violation:VIO-002"}, nil}, // as old: then by ref
		{"two high violations, each with its remediation: two reasons, one a fact",
			protocol.Facts{Violations: []protocol.Violation{highViolation(), {ID: "VIO-020", Policy: "No eval", Severity: protocol.SeverityHigh,
				Match: "eval(", File: "web/app.js", At: at(7)}},
				Remediations: []protocol.Remediation{raisedBy("REM-1", "VIO-002"), raisedBy("REM-2", "VIO-020")}},
			[]string{"high_violation:VIO-002", "high_violation:VIO-020"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := protocol.Decide(tc.facts, now)
			checkShape(t, b)
			pairs := func(rs []protocol.Reason) []string {
				var out []string
				for _, r := range rs {
					out = append(out, string(r.Code)+":"+r.Ref)
				}
				return out
			}
			if got := pairs(b.Reasons); !slices.Equal(got, tc.reasons) {
				t.Errorf("reasons %v, want %v", got, tc.reasons)
			}
			if got := pairs(b.Also); !slices.Equal(got, tc.also) {
				t.Errorf("also %v, want %v", got, tc.also)
			}
		})
	}
}

func TestARaisedRemediationSaysWhatItsFactSays(t *testing.T) {
	d := reduxDeviation(31, 34, true)
	b := protocol.Decide(protocol.Facts{Deviations: []protocol.Deviation{d}}, at(60))
	if d.Instruction() != b.Reason.String() {
		t.Errorf("Instruction() %q, the reason %q: a rule's remediation must say what its reason says", d.Instruction(), b.Reason.String())
	}
	for _, tc := range []struct {
		v    protocol.Violation
		want bool
	}{
		{highViolation(), true}, {blockMergeViolation(), false}, {criticalSecret(), false}, {mediumViolation(), false}, {lowViolation(), false},
	} {
		if got := tc.v.Remediates(); got != tc.want {
			t.Errorf("%s (%s, block_merge %t).Remediates() = %t, want %t", tc.v.ID, tc.v.Severity, tc.v.BlockMerge, got, tc.want)
		}
	}
}

func TestGateExpiry(t *testing.T) {
	opened := at(0)
	stamp := at(200)
	tests := []struct {
		name    string
		ttl     time.Duration
		stamped time.Time
		now     time.Time
		want    bool
		at      time.Time
	}{
		{name: "no gate_ttl and no stamp: never expired", now: at(100000)},
		{name: "before the ttl runs out: not expired", ttl: time.Hour, now: at(59)},
		{name: "a nanosecond before: not expired", ttl: time.Hour, now: at(60).Add(-1)},
		{name: "when the ttl runs out: expired, at opened plus ttl", ttl: time.Hour, now: at(60), want: true, at: at(60)},
		{name: "after: expired, still at opened plus ttl", ttl: time.Hour, now: at(600), want: true, at: at(60)},
		{name: "after, and stamped by the sweep later: at opened plus ttl", ttl: time.Hour, stamped: stamp, now: at(600), want: true, at: at(60)},
		{name: "stamped, the ttl since lifted: expired at the stamp", stamped: stamp, now: at(600), want: true, at: stamp},
		{name: "stamped, the ttl since raised past the gate's age: expired at the stamp", ttl: 24 * time.Hour, stamped: stamp, now: at(600), want: true, at: stamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := protocol.GateExpiry(opened, tt.ttl, tt.stamped, tt.now)
			if ok != tt.want || !got.Equal(tt.at) {
				t.Errorf("GateExpiry = %v, %v; want %v, %v", got, ok, tt.at, tt.want)
			}
			d := protocol.Decision{OpenedAt: opened, TTL: tt.ttl, ExpiredAt: tt.stamped}
			if got2, ok2 := d.Expiry(tt.now); ok2 != ok || !got2.Equal(got) {
				t.Errorf("Decision.Expiry = %v, %v; GateExpiry said %v, %v", got2, ok2, got, ok)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{4 * time.Hour, "4h"},
		{90 * time.Minute, "1h30m"},
		{150 * time.Minute, "2h30m"},
		{45 * time.Minute, "45m"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{2*time.Hour + 30*time.Minute + 15*time.Second, "2h30m15s"},
		{30 * 24 * time.Hour, "720h"},
		{0, "0s"},
		{1500 * time.Millisecond, "1s"},
		{-90 * time.Minute, "-1h30m"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := protocol.FormatDuration(tt.d)
			if got != tt.want {
				t.Fatalf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
			back, err := time.ParseDuration(got)
			if err != nil || back != tt.d.Truncate(time.Second) {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, tt.d.Truncate(time.Second))
			}
		})
	}
}
