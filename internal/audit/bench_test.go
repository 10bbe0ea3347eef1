package audit_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/testkit"
)

// benchWant is what every report finds in a generated ledger, whatever its
// size: the result is the same at 10k and at 1M tool calls, so the time a
// report takes says how it scales with the tables, not with its rows.
var benchWant = map[string]int{
	audit.UnanswerableAsks:       3,
	audit.PrematureSideEffects:   5,
	audit.UndeliveredResolutions: 4,
	audit.StaleGates:             3,
}

// benchNow is the time the reports are run at in the benchmarks.
var benchNow = time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkReports runs each report on a ledger of 10k and of 1M tool
// calls (1M is skipped with -short). Goal: the 1M time at most twice the
// 10k time, and under 50 ms.
func BenchmarkReports(b *testing.B) {
	sizes := []struct {
		name  string
		calls int
	}{{"10k", 10_000}, {"1M", 1_000_000}}
	var mu sync.Mutex
	kits := map[int]*testkit.Kit{}
	kitOf := func(sub *testing.B, calls int) *testkit.Kit {
		mu.Lock()
		defer mu.Unlock()
		if k, ok := kits[calls]; ok {
			return k
		}
		// The database lives as long as the whole benchmark, so each size
		// is generated once for the four reports.
		k := testkit.New(b)
		start := time.Now()
		if err := fillLedger(k, calls); err != nil {
			sub.Fatal(err)
		}
		sub.Logf("generated %d tool calls in %s", calls, time.Since(start).Round(time.Millisecond))
		kits[calls] = k
		return k
	}
	for _, name := range audit.Names() {
		b.Run(name, func(b *testing.B) {
			for _, size := range sizes {
				b.Run(size.name, func(b *testing.B) {
					if size.calls > 10_000 && testing.Short() {
						b.Skip("1M tool calls: skipped with -short")
					}
					k := kitOf(b, size.calls)
					ctx := context.Background()
					opts := audit.Options{Now: benchNow}
					// One run first, so that the timing is of a warm page
					// cache, as on a server that has been up for a while.
					if _, err := k.Audit.Run(ctx, name, opts); err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						res, err := k.Audit.Run(ctx, name, opts)
						if err != nil {
							b.Fatal(err)
						}
						if len(res.Rows) != benchWant[name] {
							b.Fatalf("%s found %d rows, want %d", name, len(res.Rows), benchWant[name])
						}
					}
				})
			}
		})
	}
}

// fillLedger writes a ledger of calls tool calls into the kit's database
// in one transaction with prepared statements: calls/10 runs of ten calls
// (a third of them side-effecting) over calls/1000 sessions, calls/100
// gates, and a fixed set of 50 asks: 40 asked and answered before the
// run's first write, 5 answered after one (premature), 2 parked and
// waiting, 3 unanswered on runs that ended anyway (unanswerable). Of the
// gates, 4 are resolved and undelivered, 3 open for two days (stale), 3
// open for an hour, and the rest resolved and delivered.
func fillLedger(k *testkit.Kit, calls int) error {
	ctx := context.Background()
	lead, _ := k.Lead()
	agent, _ := k.Agent()
	slug := k.Mission(lead, false)
	var missionID int64
	w := k.SQL()
	if err := w.QueryRowContext(ctx, `SELECT id FROM missions WHERE slug = ?`, slug).Scan(&missionID); err != nil {
		return err
	}

	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = tx.PrepareContext(ctx, q)
		return s
	}
	insSession := prep(`INSERT INTO sessions (id, mission_id, agent_key_id, agent, title, lifecycle, created_at) VALUES (?, ?, ?, 'bench', 'work', 'IDLE', ?)`)
	insRun := prep(`INSERT INTO runs (id, session_id, name, status, started_at, ended_at) VALUES (?, ?, 'bench', ?, ?, ?)`)
	insAsk := prep(`INSERT INTO asks (id, run_id, prompt, options, parked_from, created_at, answer, answered_at, answered_by) VALUES (?, ?, 'go on?', '{"1":"Yes","2":"No"}', 'running', ?, ?, ?, ?)`)
	// A run's ten calls in one statement: a tenth of the round trips.
	insCalls := prep(`INSERT INTO tool_calls (run_id, server, tool, is_side_effecting, started_at, recorded_at) VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?, 'mcp', ?, ?, ?, ?), `, 10), ", "))
	insDecision := prep(`INSERT INTO decisions (id, ref, session_id, title, question, proposal, blocked_scope, allowed_scope, opened_at,
		resolution, instruction, resolved_at, resolved_by, delivered_at) VALUES (?, ?, ?, 'Gate', 'Go on?', '', '[]', '[]', ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	exec := func(s *sql.Stmt, args ...any) {
		if err == nil {
			_, err = s.ExecContext(ctx, args...)
		}
	}

	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return db.FormatTime(base.Add(d)) }
	sessions := max(calls/1000, 10)
	for i := range sessions {
		exec(insSession, fmt.Sprintf("ses_b%07d", i), missionID, agent.KeyID, at(0))
	}
	runs := calls / 10
	// The asked runs, spread over the table: ask i is on run i*(runs/50).
	asked := map[int]int{}
	for i := range 50 {
		asked[i*(runs/50)] = i
	}
	for r := range runs {
		id := fmt.Sprintf("run_b%08d", r)
		start := time.Duration(r) * 10 * time.Second
		status, ended := "complete", sql.NullString{String: at(start + 10*time.Second), Valid: true}
		i, isAsked := asked[r]
		writes := true
		if isAsked && i >= 45 { // unanswered: the run only reads
			writes = false
			if i < 47 {
				status, ended = "parked", sql.NullString{}
			}
		}
		exec(insRun, id, fmt.Sprintf("ses_b%07d", r%sessions), status, at(start), ended)
		if isAsked {
			answer, answeredAt, by := sql.NullString{}, sql.NullString{}, sql.NullInt64{}
			switch {
			case i < 40: // answered before the first write (at +2s)
				answer, answeredAt, by = sql.NullString{String: "1", Valid: true}, sql.NullString{String: at(start + 500*time.Millisecond), Valid: true}, sql.NullInt64{Int64: lead.UserID, Valid: true}
			case i < 45: // answered after the first write: premature
				answer, answeredAt, by = sql.NullString{String: "1", Valid: true}, sql.NullString{String: at(start + 2500*time.Millisecond), Valid: true}, sql.NullInt64{Int64: lead.UserID, Valid: true}
			}
			exec(insAsk, fmt.Sprintf("ask_b%02d", i), id, at(start+100*time.Millisecond), answer, answeredAt, by)
		}
		args := make([]any, 0, 50)
		for c := range 10 {
			write := writes && c%3 == 2
			tool := "read"
			if write {
				tool = "write"
			}
			t := at(start + time.Duration(c)*time.Second)
			args = append(args, id, tool, write, t, t)
		}
		exec(insCalls, args...)
	}
	decisions := max(calls/100, 20)
	for d := range decisions {
		ref := fmt.Sprintf("DEC-%03d", d+1)
		session := fmt.Sprintf("ses_b%07d", d%sessions)
		opened := db.FormatTime(benchNow.Add(-72 * time.Hour))
		resolved := sql.NullString{String: db.FormatTime(benchNow.Add(-70 * time.Hour)), Valid: true}
		resolution, instruction, by := "Yes.", "Go on.", sql.NullInt64{Int64: lead.UserID, Valid: true}
		delivered := sql.NullString{String: db.FormatTime(benchNow.Add(-69 * time.Hour)), Valid: true}
		switch {
		case d < 4: // resolved, never delivered
			delivered = sql.NullString{}
		case d < 10: // open: 3 for two days, 3 for an hour
			opened = db.FormatTime(benchNow.Add(-48 * time.Hour))
			if d >= 7 {
				opened = db.FormatTime(benchNow.Add(-time.Hour))
			}
			resolved, resolution, instruction, by, delivered = sql.NullString{}, "", "", sql.NullInt64{}, sql.NullString{}
		}
		exec(insDecision, d+1, ref, session, opened, resolution, instruction, resolved, by, delivered)
	}
	if err != nil {
		return fmt.Errorf("generate the ledger: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Fold the write-ahead log into the database, as SQLite's automatic
	// checkpoints do on a server over time, so that reads do not wade
	// through the one huge transaction's log.
	_, err = w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
