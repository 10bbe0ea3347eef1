package audit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
)

// TestACorruptRowIsAnErrorNamingIt writes, with raw SQL, a time Madebook
// never writes into a row each report reads, and checks that the report
// returns a *db.CorruptRowError naming the table, the row and the column
// instead of panicking.
func TestACorruptRowIsAnErrorNamingIt(t *testing.T) {
	// "2020-01-01 00:00:00" sorts before every stored time and
	// "9999-12-31 never" after them, so the reports' text comparisons still
	// select the rows; neither is RFC 3339.
	const early, late = "2020-01-01 00:00:00", "9999-12-31 never"
	for _, tc := range []struct {
		name   string
		report string
		// corrupt sets up the world and damages one row; it returns the
		// row's key and the table and column it expects named.
		corrupt func(w *world) (table, row, column string)
	}{
		{"an unanswerable ask's created_at", audit.UnanswerableAsks, func(w *world) (string, string, string) {
			// The trigger that keeps a run holding a question from ending
			// guards the run's status: end it with the ask answered, then
			// take the answer back.
			r := w.run("ended")
			a := w.ask(r.ID, "go on?")
			w.answer(a.ID)
			w.exec(`UPDATE runs SET status = 'failed' WHERE id = ?`, r.ID)
			w.exec(`UPDATE asks SET answer = NULL, answered_at = NULL, created_at = ? WHERE id = ?`, early, a.ID)
			return "asks", a.ID, "created_at"
		}},
		{"a premature call's started_at", audit.PrematureSideEffects, func(w *world) (string, string, string) {
			r := w.run("writes")
			c := w.call(r.ID, "fs", "write_file", ptr(true), nil)
			w.ask(r.ID, "write it?")
			w.exec(`UPDATE tool_calls SET started_at = ? WHERE id = ?`, early, c.ID)
			return "tool_calls", itoa(c.ID), "started_at"
		}},
		{"an answered ask's answered_at", audit.PrematureSideEffects, func(w *world) (string, string, string) {
			r := w.run("writes")
			w.call(r.ID, "fs", "write_file", ptr(true), nil)
			a := w.ask(r.ID, "write it?")
			w.answer(a.ID)
			w.exec(`UPDATE asks SET answered_at = ? WHERE id = ?`, late, a.ID)
			return "asks", a.ID, "answered_at"
		}},
		{"a breach's detected_at", audit.PrematureSideEffects, func(w *world) (string, string, string) {
			b := w.breach(w.run("hook").ID, "db/migrations/0042.sql")
			w.exec(`UPDATE scope_breaches SET detected_at = ? WHERE id = ?`, late, b.ID)
			return "scope_breaches", itoa(b.ID), "detected_at"
		}},
		{"an undelivered resolution's resolved_at", audit.UndeliveredResolutions, func(w *world) (string, string, string) {
			d := w.gate("Schema")
			w.resolve(d.Ref)
			w.exec(`UPDATE decisions SET resolved_at = ? WHERE ref = ?`, early, d.Ref)
			return "decisions", d.Ref, "resolved_at"
		}},
		{"a stale gate's opened_at", audit.StaleGates, func(w *world) (string, string, string) {
			d := w.gate("Schema")
			w.exec(`UPDATE decisions SET opened_at = ? WHERE ref = ?`, early, d.Ref)
			return "decisions", d.Ref, "opened_at"
		}},
		{"an unacknowledged delivery's delivered_at", audit.UnacknowledgedDeliveries, func(w *world) (string, string, string) {
			d := w.gate("Schema")
			w.resolve(d.Ref)
			w.briefNoAck()
			w.exec(`UPDATE decisions SET delivered_at = ? WHERE ref = ?`, early, d.Ref)
			return "decisions", d.Ref, "delivered_at"
		}},
	} {
		t.Run(tc.name+" fails "+tc.report+" with an error naming the row", func(t *testing.T) {
			w := newWorld(t)
			table, row, column := tc.corrupt(w)
			w.kit.Clock.Advance(time.Hour)
			for _, run := range []func() error{
				func() error { _, err := w.kit.Audit.Run(context.Background(), tc.report, audit.Options{}); return err },
				func() error { _, err := w.kit.Audit.RunAll(context.Background(), audit.Options{}); return err },
			} {
				err := run()
				var bad *db.CorruptRowError
				if !errors.As(err, &bad) {
					t.Fatalf("error %v, want a *db.CorruptRowError", err)
				}
				if bad.Table != table || bad.Row != row || bad.Column != column {
					t.Errorf("names %s %s %s, want %s %s %s", bad.Table, bad.Row, bad.Column, table, row, column)
				}
				msg := err.Error()
				for _, want := range []string{tc.report, table, row, column} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not name %q", msg, want)
					}
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("message %q is more than one line", msg)
				}
			}
		})
	}
}

// exec runs raw SQL on the kit's database: the way to write what Madebook
// never writes.
func (w *world) exec(query string, args ...any) {
	w.t.Helper()
	if _, err := w.kit.SQL().ExecContext(context.Background(), query, args...); err != nil {
		w.t.Fatal(err)
	}
}
