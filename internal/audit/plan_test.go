package audit_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/testkit"
)

// allowedScans are the only indexes a report may read whole ("SCAN … USING
// INDEX"), and why each stays small however long Madebook runs. Every
// other SCAN fails the test: a SCAN of a table (tool_calls, runs, asks,
// decisions, sessions, …) or of any other index. SEARCH (a key lookup or
// an index range) is always allowed, and so is a temporary B-tree that
// sorts a report's own rows.
var allowedScans = map[string]string{
	// Partial: unanswered asks only, one per parked run (plus any row of
	// unanswerable-asks itself).
	"asks_open": "unanswered asks",
	// Partial and covering: one small entry per answered ask, read without
	// touching the asks table. premature-side-effects must look at every
	// answered ask once (any of them may have a call that ran ahead of it);
	// asks are the smallest ledger table, far fewer than tool calls.
	"asks_answered": "answered asks, index only",
	// Partial: resolved, undelivered gates, exactly the rows of
	// undelivered-resolutions (a brief delivers and removes them).
	"decisions_undelivered": "undelivered resolutions",
	// Every row of blocked_changes is a finding of blocked-changes (a
	// change report refused while its session was BLOCKED): the report is
	// the table, read in order through its index.
	"blocked_changes_by_time": "refused change reports, each a row of the report",
	// Every row of scope_breaches is a finding of premature-side-effects
	// (files a call changed inside a blocked scope): read in order
	// through its index.
	"scope_breaches_by_time": "breaches of a blocked scope, each a row of the report",
	// Partial: what was delivered and not acknowledged, one index a
	// deliverable table; an acknowledgement removes the row from it. The
	// report lists those past their lease or delivered again, most of it.
	"decisions_unacked_delivered":          "delivered, unacknowledged resolutions",
	"plans_unacked_delivered":              "delivered, unacknowledged plan answers",
	"permission_prompts_unacked_delivered": "delivered, unacknowledged permission answers",
	"remediations_unacked_delivered":       "delivered, unacknowledged remediations",
}

// mustUse is an index each query's plan must name: the path it was written
// for.
var mustUse = map[string][]string{
	"AuditUnanswerableAsks":       {"asks_open"},
	"AuditPrematureSideEffects":   {"asks_open", "asks_answered", "tool_calls_side_effects"},
	"AuditUndeliveredResolutions": {"decisions_undelivered"},
	"AuditStaleGates":             {"decisions_open_by_age"},
	"AuditBlockedChanges":         {"blocked_changes_by_time"},
	"AuditScopeBreaches":          {"scope_breaches_by_time"},
	"AuditUngovernedCalls":        {"scope_breaches_by_time"},
	"AuditUnacknowledgedDeliveries": {"decisions_unacked_delivered", "plans_unacked_delivered",
		"permission_prompts_unacked_delivered", "remediations_unacked_delivered"},
}

var (
	scanLine  = regexp.MustCompile(`^SCAN (\S+)(?: USING (?:COVERING )?INDEX (\S+))?`)
	bigTables = regexp.MustCompile(`\bSCAN (tool_calls|runs|asks|decisions|sessions)\b`)
	sqlcArg   = regexp.MustCompile(`sqlc\.n?arg\((\w+)\)`)
)

// auditQueries reads queries/audit.sql, the source sqlc generates from, as
// name → SQL with sqlc's parameters turned into "?".
func auditQueries(t testing.TB) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../queries/audit.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, block := range strings.Split(string(b), "-- name: ")[1:] {
		head, query, _ := strings.Cut(block, "\n")
		name := strings.Fields(head)[0]
		out[name] = sqlcArg.ReplaceAllString(query, "?")
	}
	return out
}

// TestEveryReportReadsOnlyThroughIndexes explains every query of
// queries/audit.sql on a migrated database holding rows of every kind,
// without ANALYZE (production never runs it, so the planner has no
// statistics), and fails on a plan that reads a whole large table.
func TestEveryReportReadsOnlyThroughIndexes(t *testing.T) {
	testkit.SkipOnPostgres(t, "reads SQLite's EXPLAIN QUERY PLAN")
	w := newWorld(t)
	for range 3 {
		w.cleanRun()
	}
	r := w.run("memory")
	w.call(r.ID, "Vodou-Recall", "memory_store", nil, nil)
	w.ask(r.ID, "save this reading?")
	w.kit.Clock.Advance(30 * time.Hour)
	w.resolve(w.gate("Undelivered").Ref)
	w.blockedChange("web/app.js")
	w.breach(r.ID, "db/migrations/0042.sql")

	conn := w.kit.SQL()
	var stats int
	if err := conn.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'`).Scan(&stats); err != nil {
		t.Fatal(err)
	}
	if stats != 0 {
		t.Fatal("the database has planner statistics; production runs without ANALYZE")
	}

	queries := auditQueries(t)
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"AuditBlockedChanges", "AuditPrematureSideEffects", "AuditScopeBreaches", "AuditStaleGates", "AuditUnacknowledgedDeliveries",
		"AuditUnanswerableAsks", "AuditUndeliveredResolutions", "AuditUngovernedCalls"}; !slices.Equal(names, want) {
		t.Fatalf("queries/audit.sql has %v, want %v", names, want)
	}
	for _, name := range names {
		t.Run(name+" reads no whole table", func(t *testing.T) {
			q := queries[name]
			rows, err := conn.Query("EXPLAIN QUERY PLAN "+q, make([]any, strings.Count(q, "?"))...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			for _, line := range plan {
				if bigTables.MatchString(line) {
					t.Errorf("full scan of a large table: %s", line)
				}
				m := scanLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				if _, ok := allowedScans[m[2]]; !ok {
					t.Errorf("%q reads a whole table or index; only %v may be scanned", line, keys(allowedScans))
				}
			}
			for _, idx := range mustUse[name] {
				if !strings.Contains(text, " INDEX "+idx) {
					t.Errorf("the plan does not use %s", idx)
				}
			}
			if t.Failed() {
				t.Logf("plan:\n%s", text)
			}
		})
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
