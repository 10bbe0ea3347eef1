package db_test

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/testdb"
)

// TestTheBreachesMigrationKeepsEveryViolation migrates a database that
// holds violations, one of them referred to by the remediation it raised,
// to 00021 (which rebuilds violations on SQLite, so that a breach's
// violation needs no policy) and checks that every row, id and reference
// is kept, and that a violation is a policy's finding or a breach, never
// both or neither.
func TestTheBreachesMigrationKeepsEveryViolation(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	dialect := goose.DialectSQLite3
	if testdb.Postgres() {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, s.Writer(), db.Migrations(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 20); err != nil {
		t.Fatal(err)
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := s.Writer().ExecContext(ctx, testdb.Rebind(query), args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	const at = "2026-11-29T12:00:00.000000000Z"
	exec(`INSERT INTO agent_keys (id, name, key_hash, created_at) VALUES (1, 'agent', 'h', ?)`, at)
	exec(`INSERT INTO missions (id, slug, title, text, high_risk, evidence, contract, created_at, updated_at)
		VALUES (1, 'm', 'M', '', FALSE, '[]', '[]', ?, ?)`, at, at)
	exec(`INSERT INTO sessions (id, mission_id, agent_key_id, agent, title, lifecycle, created_at)
		VALUES ('ses_1', 1, 1, 'agent', 'work', 'IDLE', ?)`, at)
	exec(`INSERT INTO policies (id, name, severity, kind, pattern, action, created_at)
		VALUES (1, 'No eval', 'high', 'content_regex', 'eval', 'violation', ?)`, at)
	for _, id := range []int{3, 7} {
		exec(`INSERT INTO violations (id, session_id, policy_id, policy, severity, action, match, file, line, detected_at)
			VALUES (?, 'ses_1', 1, 'No eval', 'high', 'violation', 'eval', 'a.js', 4, ?)`, id, at)
	}
	exec(`INSERT INTO remediations (id, session_id, severity, instruction, files, source, created_at, violation_id)
		VALUES (1, 'ses_1', 'required', 'Fix it.', '[]', 'violation', ?, 7)`, at)

	if _, err := p.UpTo(ctx, 21); err != nil {
		t.Fatalf("migrating to 00021: %v", err)
	}
	var n, kept int64
	if err := s.Writer().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(id), 0) FROM violations
		WHERE policy_id = 1 AND breach_id IS NULL AND file = 'a.js' AND line = 4`).Scan(&n, &kept); err != nil {
		t.Fatal(err)
	}
	if n != 2 || kept != 10 {
		t.Fatalf("after 00021: %d violations (ids summing to %d), want 3 and 7", n, kept)
	}
	var ref int64
	if err := s.Writer().QueryRowContext(ctx, `SELECT v.id FROM remediations r JOIN violations v ON v.id = r.violation_id`).Scan(&ref); err != nil || ref != 7 {
		t.Fatalf("the remediation's violation: %d, %v; want 7", ref, err)
	}
	if _, err := s.Writer().ExecContext(ctx, `INSERT INTO violations (session_id, policy, severity, action, match, file, line, detected_at)
		VALUES ('ses_1', 'Nothing', 'critical', 'violation', '', '', 0, '`+at+`')`); err == nil {
		t.Error("a violation of no policy and no breach was stored")
	}

	// Down again: the breaches and their violations go, the rest stays.
	exec(`INSERT INTO runs (id, session_id, name, status, started_at) VALUES ('run_1', 'ses_1', 'hook', 'running', ?)`, at)
	exec(`INSERT INTO scope_breaches (id, session_id, run_id, server, tool, files, scope, decisions, detected_at)
		VALUES (1, 'ses_1', 'run_1', 'claude-code', 'Bash', '["db/x.sql"]', '[]', '[]', ?)`, at)
	exec(`INSERT INTO violations (id, session_id, breach_id, policy, severity, action, match, file, line, detected_at)
		VALUES (9, 'ses_1', 1, 'Blocked scope breached', 'critical', 'violation', 'Bash', 'db/x.sql', 0, ?)`, at)
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatalf("migrating 00021 down: %v", err)
	}
	if err := s.Writer().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(id), 0) FROM violations`).Scan(&n, &kept); err != nil {
		t.Fatal(err)
	}
	if n != 2 || kept != 10 {
		t.Fatalf("after 00021 down: %d violations (ids summing to %d), want 3 and 7", n, kept)
	}
}
