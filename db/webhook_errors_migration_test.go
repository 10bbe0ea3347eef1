package db_test

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/testdb"
)

// TestTheWebhookErrorsMigrationForgetsWhatEndpointsSaid migrates a
// database whose failed deliveries quote what their endpoints answered,
// and the HTTP client's errors with the URL in them, to 00026: each is
// the fixed phrase the sender now records, and a removed endpoint's
// "endpoint removed" and a delivered row stay as they were.
func TestTheWebhookErrorsMigrationForgetsWhatEndpointsSaid(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 25); err != nil {
		t.Fatal(err)
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := s.Writer().ExecContext(ctx, testdb.Rebind(query), args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	const at = "2026-11-29T12:00:00.000000000Z"
	exec(`INSERT INTO webhooks (id, url, secret, events, created_at) VALUES (1, 'https://hooks.slack.com/services/T0/B0/SECRET', 's', '["hard_stop"]', ?)`, at)
	rows := []struct {
		id     int
		status any
		before any
		want   any
	}{
		{1, 500, "HTTP 500 Internal Server Error: db password is hunter2", "HTTP 500 from the endpoint"},
		{2, 302, "HTTP 302 Found", "HTTP 302 from the endpoint (redirects are not followed)"},
		{3, nil, `Post "https://hooks.slack.com/services/T0/B0/SECRET": dial tcp 10.0.0.1:443: connect: connection refused`, "connection refused"},
		{4, nil, `Post "https://hooks.slack.com/services/T0/B0/SECRET": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, "timed out"},
		{5, nil, `Post "https://hooks.slack.com/services/T0/B0/SECRET": dial tcp: lookup hooks.slack.com: no such host`, "host name not found"},
		{6, nil, `Post "https://hooks.slack.com/services/T0/B0/SECRET": tls: failed to verify certificate`, "request failed"},
		{7, nil, "endpoint removed", "endpoint removed"},
		{8, 200, nil, nil},
	}
	for _, r := range rows {
		exec(`INSERT INTO outbox (id, webhook_id, event, payload, created_at, attempts, next_attempt_at, last_status, last_error)
			VALUES (?, 1, 'hard_stop', '{}', ?, 1, ?, ?, ?)`, r.id, at, at, r.status, r.before)
	}
	if _, err := p.UpTo(ctx, 26); err != nil {
		t.Fatalf("migrating to 00026: %v", err)
	}
	for _, r := range rows {
		var got *string
		if err := s.Writer().QueryRowContext(ctx, testdb.Rebind(`SELECT last_error FROM outbox WHERE id = ?`), r.id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		switch want, _ := r.want.(string); {
		case r.want == nil && got != nil:
			t.Errorf("row %d: %q, want NULL", r.id, *got)
		case r.want != nil && (got == nil || *got != want):
			t.Errorf("row %d: %v, want %q", r.id, got, want)
		}
	}
	if _, err := p.DownTo(ctx, 25); err != nil {
		t.Fatalf("down from 00026: %v", err)
	}
}
