package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/testdb"
)

// open opens a store on a fresh, empty database (a file, or a PostgreSQL
// database: testdb.EmptyDSN), closed when the test ends.
func open(t *testing.T) (*db.Store, string) {
	t.Helper()
	path := testdb.EmptyDSN(t)
	s, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// migrated opens a store on a fresh, migrated database.
func migrated(t *testing.T) *db.Store {
	t.Helper()
	s, err := db.Open(testdb.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMigrate(t *testing.T) {
	dir := "migrations"
	if testdb.Postgres() {
		dir = filepath.Join("postgres", "migrations")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	s, path := open(t)
	ctx := t.Context()

	t.Run("a fresh database gets every migration", func(t *testing.T) {
		n, err := s.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(files) {
			t.Fatalf("Migrate applied %d migrations, want %d (%v)", n, len(files), files)
		}
		var tables int
		list := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN `
		if testdb.Postgres() {
			list = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN `
		}
		if err := s.Writer().QueryRowContext(ctx, list+
			`('users', 'api_tokens', 'agent_keys', 'missions', 'sessions', 'plans', 'decisions', 'remediations', 'events')`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 9 {
			t.Fatalf("the schema has %d of the 9 tables", tables)
		}
	})

	t.Run("a second Migrate applies nothing and returns 0", func(t *testing.T) {
		n, err := s.Migrate(ctx)
		if err != nil || n != 0 {
			t.Fatalf("Migrate = %d, %v; want 0, nil", n, err)
		}
	})

	t.Run("the store still works after migrating twice", func(t *testing.T) {
		if err := s.Write(ctx, func(q db.Querier) error {
			_, err := q.CreateAgentKey(ctx, db.CreateAgentKeyParams{Name: "a", KeyHash: "h", CreatedAt: db.FormatTime(time.Now())})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reader().GetAgentKeyByName(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the same database opened again applies nothing and keeps its rows", func(t *testing.T) {
		again, err := db.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		n, err := again.Migrate(ctx)
		if err != nil || n != 0 {
			t.Fatalf("Migrate = %d, %v; want 0, nil", n, err)
		}
		if _, err := again.Reader().GetAgentKeyByName(ctx, "a"); err != nil {
			t.Fatalf("the reopened database lost its row: %v", err)
		}
	})
}

func TestOpenRefusesNoPath(t *testing.T) {
	if s, err := db.Open(""); err == nil {
		s.Close()
		t.Fatal("Open(\"\") opened a database")
	}
}

// user is a user row to write.
func user(email string) db.CreateUserParams {
	return db.CreateUserParams{Email: email, PasswordHash: "x", Role: "lead", CreatedAt: db.FormatTime(time.Now())}
}

func TestWriteRollsBackEverythingOnError(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	boom := errors.New("boom")
	err := s.Write(ctx, func(q db.Querier) error {
		if _, err := q.CreateUser(ctx, user("a@example.com")); err != nil {
			return err
		}
		if _, err := q.CreateAgentKey(ctx, db.CreateAgentKeyParams{Name: "k", KeyHash: "h", CreatedAt: "t"}); err != nil {
			return err
		}
		// Inside the transaction the rows are there.
		if _, err := q.GetUserByEmail(ctx, "a@example.com"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write returned %v, want the function's error", err)
	}
	for what, err := range map[string]error{
		"the user":      errOf(s.Reader().GetUserByEmail(ctx, "a@example.com")),
		"the agent key": errOf(s.Reader().GetAgentKeyByName(ctx, "k")),
	} {
		if !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("%s survived the rollback (err %v)", what, err)
		}
	}
	t.Run("the writer is free again afterwards", func(t *testing.T) {
		if err := s.Write(ctx, func(q db.Querier) error { _, err := q.CreateUser(ctx, user("a@example.com")); return err }); err != nil {
			t.Fatal(err)
		}
	})
}

// errOf returns just the error of a call.
func errOf[T any](_ T, err error) error { return err }

func TestWriteIgnoresTheCallersCancellation(t *testing.T) {
	s := migrated(t)
	tests := []struct {
		name string
		// write runs inside the transaction with the caller's context and
		// its cancel.
		write func(ctx context.Context, cancel context.CancelFunc, q db.Querier) error
	}{
		{"a cancel after the statements still commits them", func(ctx context.Context, cancel context.CancelFunc, q db.Querier) error {
			if _, err := q.CreateUser(ctx, user("after@example.com")); err != nil {
				return err
			}
			cancel()
			time.Sleep(20 * time.Millisecond) // let database/sql see the cancel, if it was watching
			return nil
		}},
		{"a cancel between two statements commits both", func(ctx context.Context, cancel context.CancelFunc, q db.Querier) error {
			if _, err := q.CreateUser(ctx, user("first@example.com")); err != nil {
				return err
			}
			cancel()
			time.Sleep(20 * time.Millisecond)
			_, err := q.CreateUser(context.WithoutCancel(ctx), user("second@example.com"))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wrote []string
			err := s.Write(ctx, func(q db.Querier) error {
				err := tt.write(ctx, cancel, q)
				for _, email := range []string{"after@example.com", "first@example.com", "second@example.com"} {
					if _, err := q.GetUserByEmail(context.Background(), email); err == nil {
						wrote = append(wrote, email)
					}
				}
				return err
			})
			if err != nil {
				t.Fatalf("Write failed: %v", err)
			}
			if ctx.Err() == nil {
				t.Fatal("the test did not cancel the caller's context")
			}
			if len(wrote) == 0 {
				t.Fatal("the test wrote nothing")
			}
			for _, email := range wrote {
				if _, err := s.Reader().GetUserByEmail(t.Context(), email); err != nil {
					t.Errorf("%s was not committed: %v", email, err)
				}
			}
		})
	}
}

func TestWriteReleasesTheWriterWhenTheFunctionPanics(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach the caller")
			}
		}()
		s.Write(ctx, func(q db.Querier) error { //nolint:errcheck // it panics
			if _, err := q.CreateUser(ctx, user("panic@example.com")); err != nil {
				return err
			}
			panic("a bug in a use case")
		})
	}()
	done := make(chan error, 1)
	go func() {
		done <- s.Write(ctx, func(q db.Querier) error { _, err := q.CreateUser(ctx, user("next@example.com")); return err })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the next write failed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the next write is still waiting for the writer 5s after a panic")
	}
	if _, err := s.Reader().GetUserByEmail(ctx, "panic@example.com"); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("the panicking write's row is there (err %v)", err)
	}
}

func TestReadSeesOneSnapshot(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	if err := s.Write(ctx, func(q db.Querier) error { _, err := q.CreateUser(ctx, user("one@example.com")); return err }); err != nil {
		t.Fatal(err)
	}
	err := s.Read(ctx, func(q db.Querier) error {
		if _, err := q.GetUserByEmail(ctx, "one@example.com"); err != nil {
			return err
		}
		// A write commits while the read is open...
		if err := s.Write(ctx, func(w db.Querier) error { _, err := w.CreateUser(ctx, user("two@example.com")); return err }); err != nil {
			return err
		}
		// ...and the read does not see it.
		if _, err := q.GetUserByEmail(ctx, "two@example.com"); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("the read saw a row committed after it began (err %v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reader().GetUserByEmail(ctx, "two@example.com"); err != nil {
		t.Fatalf("a read begun after the write does not see it: %v", err)
	}
}

func TestReaderCannotWrite(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	_, err := s.Reader().CreateAgentKey(ctx, db.CreateAgentKeyParams{Name: "r", KeyHash: "h", CreatedAt: "t"})
	if err == nil {
		t.Fatal("the read pool wrote a row")
	}
	err = s.Read(ctx, func(q db.Querier) error {
		_, err := q.CreateAgentKey(ctx, db.CreateAgentKeyParams{Name: "r", KeyHash: "h", CreatedAt: "t"})
		return err
	})
	if err == nil {
		t.Fatal("a write in Read succeeded")
	}
	if _, err := s.Reader().GetAgentKeyByName(ctx, "r"); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("the row is there (err %v)", err)
	}
}

// Two stores on one database are two replicas: their write transactions
// still run one at a time (SQLite's writer lock; PostgreSQL's advisory
// lock), so a use case's read inside Write still holds when it writes.
// Each write reads a counter and writes it plus one: a lost update would
// leave the count short.
func TestWritesAreSerialisedAcrossStores(t *testing.T) {
	a, dsn := open(t)
	if _, err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, err := db.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const writers, each = 8, 10
	errc := make(chan error, writers)
	for i := range writers {
		s := a
		if i%2 == 1 {
			s = b
		}
		go func() {
			for range each {
				err := s.Write(ctx, func(q db.Querier) error {
					n := 0
					v, err := q.GetSetting(ctx, "counter")
					switch {
					case errors.Is(err, sql.ErrNoRows):
					case err != nil:
						return err
					default:
						if n, err = strconv.Atoi(v); err != nil {
							return err
						}
					}
					return q.SetSetting(ctx, db.SetSettingParams{Key: "counter", Value: strconv.Itoa(n + 1)})
				})
				if err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range writers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	v, err := a.Reader().GetSetting(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if v != strconv.Itoa(writers*each) {
		t.Fatalf("counter = %s after %d increments: writes interleaved", v, writers*each)
	}
}

// A key no row can hold (a NUL, bytes that are not UTF-8) finds nothing
// on either engine: SQLite has no such row, and PostgreSQL, which refuses
// such text even as an argument, answers no rows rather than an error,
// and the transaction the read is in goes on.
func TestAKeyNoRowCanHoldFindsNothing(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	for _, key := range []string{"ses_\x00", "ses_\xff\xfe"} {
		if _, err := s.Reader().GetSession(ctx, key); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("GetSession(%q): %v, want sql.ErrNoRows", key, err)
		}
		rows, err := s.Reader().ListOpenBreaches(ctx, key)
		if err != nil || len(rows) != 0 {
			t.Errorf("ListOpenBreaches(%q) = %v, %v; want no rows", key, rows, err)
		}
		err = s.Write(ctx, func(q db.Querier) error {
			if _, err := q.GetSession(ctx, key); !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("GetSession(%q) in a write: %v, want sql.ErrNoRows", key, err)
			}
			if _, err := q.CountUsers(ctx); err != nil {
				return fmt.Errorf("the next statement in the write: %w", err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// The text PostgreSQL refuses as an argument (SQLSTATE 22021) is the text
// the queries answer as finding no row without sending it (pgconn.go).
func TestPgRefusesWhatPostgreSQLRefuses(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("PostgreSQL only: its refusal of text it cannot hold")
	}
	s := migrated(t)
	for _, text := range []string{
		"", "ses_1", "é", "日本", "\U0001F600", "\uFFFD", "\uFFFE", "\U0010FFFF",
		"\x00", "a\x00b", "\xff", "\xc3", "\xc0\x80", "\xe0\x80\x80",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
	} {
		var got string
		err := s.Writer().QueryRowContext(t.Context(), `SELECT CAST($1 AS TEXT)`, text).Scan(&got)
		var pe *pgconn.PgError
		refused := errors.As(err, &pe) && pe.Code == "22021"
		if err != nil && !refused {
			t.Fatalf("SELECT %q: %v", text, err)
		}
		if db.PgRefuses([]any{text}) != refused || db.PgRefuses([]any{sql.NullString{String: text, Valid: true}}) != refused {
			t.Errorf("%q: PostgreSQL refuses it: %v; pgRefuses says otherwise", text, refused)
		}
	}
}
