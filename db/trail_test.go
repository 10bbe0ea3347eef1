package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/db/chain"
	"github.com/madebook/madebook/internal/testdb"
)

const trailAt = "2026-11-29T12:00:00.000000Z"

// withSession adds the rows an event needs (an agent key, a mission, a
// session ses_1) with raw SQL.
func withSession(t *testing.T, s *db.Store) {
	t.Helper()
	exec(t, s, `INSERT INTO agent_keys (id, name, key_hash, created_at) VALUES (1, 'agent', 'h', ?)`, trailAt)
	exec(t, s, `INSERT INTO missions (id, slug, title, text, high_risk, evidence, contract, created_at, updated_at)
		VALUES (1, 'm', 'M', '', FALSE, '[]', '[]', ?, ?)`, trailAt, trailAt)
	exec(t, s, `INSERT INTO sessions (id, mission_id, agent_key_id, agent, title, lifecycle, created_at)
		VALUES ('ses_1', 1, 1, 'agent', 'work', 'IDLE', ?)`, trailAt)
}

func exec(t *testing.T, s *db.Store, query string, args ...any) {
	t.Helper()
	if _, err := s.Writer().ExecContext(t.Context(), testdb.Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// appendBoth adds n events and n activity entries through the writers,
// one write each.
func appendBoth(t *testing.T, s *db.Store, n int) {
	t.Helper()
	for i := range n {
		if err := s.Write(t.Context(), func(q db.Querier) error {
			if err := db.AppendEvent(t.Context(), q, db.NewEvent{SessionID: "ses_1", At: trailAt, Actor: "agent:agent",
				Kind: "task.progress", Ref: fmt.Sprint(i)}); err != nil {
				return err
			}
			return db.AppendActivity(t.Context(), q, db.NewActivity{At: trailAt, Actor: "ann@example.com", Action: "tool.set",
				Target: fmt.Sprintf("tool %d", i), AfterJSON: sql.NullString{String: `{"side_effecting":true}`, Valid: true}})
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// verifyStored exports the database's chains (since, "" for all) through
// their JSON lines and verifies them, failing the test if they do not.
func verifyStored(t *testing.T, s *db.Store, since string) *chain.Verifier {
	t.Helper()
	var b []byte
	if err := s.ExportChains(t.Context(), since, func(r chain.Row) (err error) {
		b, err = chain.AppendLine(b, r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v, err := chain.Verify(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("the stored chains do not verify: %v", err)
	}
	return v
}

// tally is the verifier's tally of one chain.
func tally(v *chain.Verifier, name string) chain.Tally {
	for _, t := range v.Tallies() {
		if t.Chain == name {
			return t
		}
	}
	return chain.Tally{}
}

func TestTheTrailIsAppendOnly(t *testing.T) {
	s := migrated(t)
	withSession(t, s)
	appendBoth(t, s, 3)
	refusals := []struct{ name, query, want string }{
		{"an event's detail cannot be changed", `UPDATE events SET detail = 'nothing happened' WHERE id = 2`, "events_append_only"},
		{"an event's hash cannot be changed", `UPDATE events SET hash = prev_hash WHERE id = 3`, "events_append_only"},
		{"an event cannot be deleted", `DELETE FROM events WHERE id = 2`, "events_append_only"},
		{"the timeline cannot be emptied", `DELETE FROM events`, "events_append_only"},
		{"an activity entry's actor cannot be changed", `UPDATE admin_activity SET actor = 'someone@else' WHERE id = 1`,
			"admin_activity_append_only"},
		{"an activity entry's after state cannot be set to NULL", `UPDATE admin_activity SET after_json = NULL WHERE id = 1`,
			"admin_activity_append_only"},
		{"an activity entry cannot be deleted", `DELETE FROM admin_activity WHERE id = 3`, "admin_activity_append_only"},
		{"an event that does not chain onto the last cannot be added",
			`INSERT INTO events (id, session_id, at, actor, kind, prev_hash, hash) VALUES (10, 'ses_1', 't', 'a', 'k', '` +
				chain.Genesis + `', '` + chain.Genesis + `')`, "events_chain_broken"},
		{"an event without hashes cannot be added", `INSERT INTO events (session_id, at, actor, kind) VALUES ('ses_1', 't', 'a', 'k')`,
			"events_chain_broken"},
		{"an activity entry that does not chain cannot be added",
			`INSERT INTO admin_activity (id, at, actor, action, target, prev_hash, hash) VALUES (10, 't', 'a', 'x', 'y', '` +
				chain.Genesis + `', '` + chain.Genesis + `')`, "admin_activity_chain_broken"},
	}
	if testdb.Postgres() {
		refusals = append(refusals,
			struct{ name, query, want string }{"the timeline cannot be truncated", `TRUNCATE events`, "events_append_only"},
			struct{ name, query, want string }{"the activity record cannot be truncated", `TRUNCATE admin_activity`, "admin_activity_append_only"})
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Writer().ExecContext(t.Context(), c.query)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want the database to refuse it (%s)", c.query, err, c.want)
			}
		})
	}
	t.Run("every row is still there and the chains verify", func(t *testing.T) {
		v := verifyStored(t, s, "")
		if tally(v, chain.Events).Rows != 3 || tally(v, chain.Activity).Rows != 3 {
			t.Errorf("tallies %+v", v.Tallies())
		}
	})
}

func TestABusyTrailVerifies(t *testing.T) {
	s := migrated(t)
	withSession(t, s)
	appendBoth(t, s, 1) // the first rows chain onto the genesis
	appendBoth(t, s, 40)
	exec(t, s, `INSERT INTO sessions (id, mission_id, agent_key_id, agent, title, lifecycle, created_at)
		VALUES ('ses_2', 1, 1, 'agent', 'more', 'IDLE', ?)`, trailAt)
	// Many events in one transaction, on two sessions, with every kind of
	// text a timeline holds.
	if err := s.Write(t.Context(), func(q db.Querier) error {
		for i := range 2500 {
			if err := db.AppendEvent(t.Context(), q, db.NewEvent{SessionID: []string{"ses_1", "ses_2"}[i%2],
				At: fmt.Sprintf("2026-11-29T13:%02d:%02d.000000Z", i/60%60, i%60), Actor: "person:ann@example.com",
				Kind: "decision.resolved", Ref: "DEC-001", Detail: "Keep it.\n\"Quoted\", <b>é</b> \u2028 \\"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v := verifyStored(t, s, "")
	if e, a := tally(v, chain.Events), tally(v, chain.Activity); e.Rows != 2541 || !e.FromGenesis() || a.Rows != 41 || !a.FromGenesis() {
		t.Errorf("tallies %+v", v.Tallies())
	}
	t.Run("an export since a time starts mid-chain and verifies", func(t *testing.T) {
		v := verifyStored(t, s, "2026-11-29T13:30:00.000000Z")
		e := tally(v, chain.Events)
		// The first event at 13:30:00 is the 1,800th of the 2,500.
		if e.FirstID != 41+1800+1 || e.FromGenesis() || e.LastID != 2541 || tally(v, chain.Activity).Rows != 0 {
			t.Errorf("tallies %+v", v.Tallies())
		}
	})
}

// TestRowsOlderThanTheChainAreChainedOnce migrates a database that holds
// events and activity entries to 00024 and checks that they are chained,
// that the chain verifies, and that new rows chain onto them.
func TestRowsOlderThanTheChainAreChainedOnce(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 22); err != nil {
		t.Fatal(err)
	}
	withSession(t, s)
	for i := 1; i <= 5; i++ {
		exec(t, s, `INSERT INTO events (session_id, at, actor, kind, ref, detail) VALUES ('ses_1', ?, 'agent:agent', 'task.created', ?, '')`,
			trailAt, fmt.Sprint(i))
	}
	exec(t, s, `INSERT INTO admin_activity (at, actor, action, target, before_json, after_json) VALUES (?, 'cli', 'key.create', 'key 1', NULL, '{}')`, trailAt)
	exec(t, s, `INSERT INTO admin_activity (at, actor, action, target, before_json, after_json) VALUES (?, 'cli', 'key.revoke', 'key 1', '{}', '{}')`, trailAt)

	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	appendBoth(t, s, 2)
	v := verifyStored(t, s, "")
	if e, a := tally(v, chain.Events), tally(v, chain.Activity); e.Rows != 7 || !e.FromGenesis() || a.Rows != 4 || !a.FromGenesis() {
		t.Errorf("tallies %+v", v.Tallies())
	}
	var unchained int
	if err := s.Writer().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM events WHERE hash = '') + (SELECT COUNT(*) FROM admin_activity WHERE hash = '')`).
		Scan(&unchained); err != nil || unchained != 0 {
		t.Errorf("%d rows left unchained (%v)", unchained, err)
	}
	t.Run("migrating again chains nothing and changes nothing", func(t *testing.T) {
		before := tally(verifyStored(t, s, ""), chain.Events).LastHash
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if after := tally(verifyStored(t, s, ""), chain.Events).LastHash; after != before {
			t.Errorf("the head moved from %s to %s", before, after)
		}
	})
	t.Run("a chained row cannot be chained again", func(t *testing.T) {
		_, err := s.Writer().ExecContext(ctx, testdb.Rebind(`UPDATE events SET prev_hash = ?, hash = ? WHERE id = 1`), chain.Genesis, chain.Genesis)
		if err == nil || !strings.Contains(err.Error(), "events_append_only") {
			t.Errorf("error %v, want events_append_only", err)
		}
	})
}

// TestConcurrentWritersLeaveOneChain has many goroutines add events at
// once: through Store.Write (the writers' lock on PostgreSQL), and, on
// PostgreSQL, through transactions of their own that skip that lock, so
// that only the schema's chain lock and link check stand between them and
// a fork. Every event that committed is in one unbroken chain.
func TestConcurrentWritersLeaveOneChain(t *testing.T) {
	s := migrated(t)
	withSession(t, s)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errc := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errc <- s.Write(context.Background(), func(q db.Querier) error {
					return db.AppendEvent(context.Background(), q, db.NewEvent{SessionID: "ses_1", At: trailAt, Actor: "agent:agent",
						Kind: "task.progress", Ref: fmt.Sprintf("%d.%d", w, i)})
				})
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := tally(verifyStored(t, s, ""), chain.Events).Rows; got != writers*each {
		t.Errorf("%d events in the chain, want %d", got, writers*each)
	}

	t.Run("writers outside the store's lock are refused, never forked", func(t *testing.T) {
		if !testdb.Postgres() {
			t.Skip("SQLite has one writer connection: no two transactions write at once")
		}
		committed := writers * each
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					err := rawAppend(s.Writer(), fmt.Sprintf("raw %d.%d", w, i))
					if err == nil {
						mu.Lock()
						committed++
						mu.Unlock()
					} else if !strings.Contains(err.Error(), "events_chain_broken") && !strings.Contains(err.Error(), "events_chain_link") &&
						!strings.Contains(err.Error(), "events_pkey") {
						t.Errorf("append: %v", err)
					}
				}
			}()
		}
		wg.Wait()
		if committed == writers*each {
			t.Fatal("no writer outside the lock committed: the test proved nothing")
		}
		t.Logf("%d of %d appends outside the lock committed", committed-writers*each, writers*each)
		if got := tally(verifyStored(t, s, ""), chain.Events).Rows; got != committed {
			t.Errorf("%d events in the chain, want the %d that committed", got, committed)
		}
	})
}

// rawAppend adds one event in a transaction of its own on pool, without
// the store's writers' lock.
func rawAppend(pool *sql.DB, ref string) error {
	ctx := context.Background()
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	err = db.AppendEvent(ctx, db.PostgresQueries(tx), db.NewEvent{SessionID: "ses_1", At: trailAt, Actor: "agent:raw", Kind: "task.progress", Ref: ref})
	if err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}
