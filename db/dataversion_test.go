package db_test

import (
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/testdb"
)

func TestDataVersion(t *testing.T) {
	ctx := t.Context()
	if testdb.Postgres() {
		s := migrated(t)
		if v, ok, err := s.DataVersion(ctx); ok || err != nil {
			t.Fatalf("PostgreSQL: DataVersion = %d, %v, %v; want no version and no error", v, ok, err)
		}
		return
	}
	path := testdb.DSN(t)
	s, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	version := func() uint64 {
		t.Helper()
		v, ok, err := s.DataVersion(ctx)
		if err != nil || !ok {
			t.Fatalf("DataVersion = %d, %v, %v", v, ok, err)
		}
		return v
	}
	last := version()
	unchanged := func(what string) {
		t.Helper()
		if v := version(); v != last {
			t.Errorf("after %s: version %d, want it unchanged at %d", what, v, last)
		}
	}
	changed := func(what string) {
		t.Helper()
		v := version()
		if v <= last {
			t.Errorf("after %s: version %d, want more than %d", what, v, last)
		}
		last = v
	}

	unchanged("nothing")
	if _, err := s.Reader().CountUsers(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(ctx, func(q db.Querier) error { _, err := q.CountUsers(ctx); return err }); err != nil {
		t.Fatal(err)
	}
	unchanged("reads")
	boom := errors.New("boom")
	if err := s.Write(ctx, func(q db.Querier) error {
		_, err := q.CreateUser(ctx, user("rolled@example.com"))
		return errors.Join(err, boom)
	}); !errors.Is(err, boom) {
		t.Fatalf("the write: %v, want boom", err)
	}
	unchanged("a write rolled back")

	if err := s.Write(ctx, func(q db.Querier) error { _, err := q.CreateUser(ctx, user("own@example.com")); return err }); err != nil {
		t.Fatal(err)
	}
	changed("a commit through the store's own writer")

	other, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Write(ctx, func(q db.Querier) error { _, err := q.CreateUser(ctx, user("other@example.com")); return err }); err != nil {
		t.Fatal(err)
	}
	changed("a commit through a second store on the file (another process)")
	if _, _, err := other.DataVersion(ctx); err != nil {
		t.Fatal(err)
	}
	unchanged("another store's probe")

	// A plain connection, as the sqlite3 shell's, with no Madebook settings.
	shell, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	if _, err := shell.ExecContext(ctx, `UPDATE users SET role = 'viewer' WHERE email = 'own@example.com'`); err != nil {
		t.Fatal(err)
	}
	changed("an UPDATE from a plain connection")

	t.Run("concurrent probes agree while nothing commits", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 100 {
					if v, _, err := s.DataVersion(ctx); err != nil || v != last {
						t.Errorf("DataVersion = %d, %v; want %d", v, err, last)
						return
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("a commit before a call shows in its answer, while others probe", func(t *testing.T) {
		// Coalesced probes must never hand a caller an answer read before
		// it asked: each commit from another store is followed by a call
		// that must see it, with eight readers probing all the while.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, _, err := s.DataVersion(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for i := range 200 {
			before := version()
			if _, err := shell.ExecContext(ctx, `UPDATE users SET role = ? WHERE email = 'own@example.com'`, []string{"lead", "viewer"}[i%2]); err != nil {
				t.Fatal(err)
			}
			if v := version(); v <= before {
				t.Fatalf("commit %d: version %d after it, %d before: the call got an answer from before it", i, v, before)
			}
		}
		close(stop)
		wg.Wait()
	})

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, ok, err := s.DataVersion(ctx); err == nil || ok {
		t.Errorf("DataVersion after Close = %v, %v; want an error", ok, err)
	}
}
