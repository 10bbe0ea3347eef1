// Package testdb gives each test a fresh database on the engine the tests
// run on: a SQLite file in the test's temporary directory by default, or,
// when MADEBOOK_TEST_DB is a postgres:// URL, a new PostgreSQL database on
// that server (a copy of a migrated template), dropped when the test ends.
//
//	MADEBOOK_TEST_DB='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' go test ./...
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for CREATE/DROP DATABASE

	"github.com/madebook/madebook/db"
)

// Env is the variable that selects the engine the tests run on.
const Env = "MADEBOOK_TEST_DB"

// Postgres reports whether the tests run on PostgreSQL.
func Postgres() bool { return db.IsPostgres(os.Getenv(Env)) }

// SkipOnPostgres skips a test that is about SQLite only, saying why.
func SkipOnPostgres(tb testing.TB, why string) {
	tb.Helper()
	if Postgres() {
		tb.Skipf("SQLite only: %s", why)
	}
}

var (
	serverOnce sync.Once
	server     *sql.DB
	serverErr  error
)

// admin is one connection pool per test binary to MADEBOOK_TEST_DB's
// database, where the tests' databases are created and dropped.
func admin() (*sql.DB, error) {
	serverOnce.Do(func() {
		server, serverErr = sql.Open("pgx", os.Getenv(Env))
		if serverErr == nil {
			server.SetMaxOpenConns(4)
			serverErr = server.Ping()
		}
		if serverErr != nil {
			serverErr = fmt.Errorf("%s: %w", Env, serverErr)
		}
	})
	return server, serverErr
}

// DSN returns where a fresh database for tb is: a file path in
// tb.TempDir() (empty: db.Open creates it) on SQLite; on PostgreSQL the
// URL of a new database (mbt_ and random hex), already migrated as a copy
// of the template (see template), and dropped WITH (FORCE) when tb ends.
// Pass it to db.Open; Migrate then finds nothing to apply.
func DSN(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		return filepath.Join(tb.TempDir(), "madebook.db")
	}
	tpl, err := template()
	if err != nil {
		tb.Fatal(err)
	}
	return create(tb, tpl)
}

// EmptyDSN is DSN without the migrations: a new, empty PostgreSQL
// database (or a SQLite path), for a test of migrating itself.
func EmptyDSN(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		return filepath.Join(tb.TempDir(), "madebook.db")
	}
	if _, err := admin(); err != nil {
		tb.Fatal(err)
	}
	return create(tb, "")
}

// create makes a database, a copy of tpl (or, with tpl "", an empty one
// in the tests' locale), dropped when tb ends, and returns its URL.
func create(tb testing.TB, tpl string) string {
	tb.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	name := "mbt_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := underLock(ctx, "pg_advisory_lock_shared", func(conn *sql.Conn) error {
		// FILE_COPY: a copy of the template's files, much faster here than
		// PostgreSQL 15's default of writing every page to the WAL.
		q := "CREATE DATABASE " + name + " TEMPLATE " + tpl + " STRATEGY FILE_COPY"
		if tpl == "" {
			q = "CREATE DATABASE " + name + " " + locale
		}
		_, err := conn.ExecContext(ctx, q)
		return err
	})
	if err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := server.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	return dsnOf(name)
}

// dsnOf is MADEBOOK_TEST_DB's URL with the database name.
func dsnOf(name string) string {
	u, err := url.Parse(os.Getenv(Env))
	if err != nil {
		panic(fmt.Sprintf("%s: %v", Env, err)) // admin() parsed it already
	}
	u.Path = "/" + name
	return u.String()
}

// locale is the tests' databases' own text order: ICU's en-US, which
// sorts "a A b B" where bytes sort "A B a b". Every column Madebook
// compares is COLLATE "C"; a query that sorted or compared by the
// database's locale instead would differ from SQLite here, and fail.
const locale = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"

// templateLock is the advisory lock (on the server's MADEBOOK_TEST_DB
// database) that orders test processes around the template: held shared
// to copy it, exclusively to create it.
const templateLock int64 = 0x6d62745f74706c // "mbt_tpl"

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// template returns the name of a migrated database the tests' databases
// are copies of: mbt_tpl_ and a digest of the PostgreSQL migrations, made
// once and kept on the server for every later run (copying it is much
// faster than migrating a new database). A template of other migrations
// is dropped when a new one is made.
func template() (string, error) {
	templateOnce.Do(func() {
		if _, templateErr = admin(); templateErr != nil {
			return
		}
		var digest string
		if digest, templateErr = migrationsDigest(); templateErr != nil {
			return
		}
		templateName = "mbt_tpl_" + digest
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		templateErr = underLock(ctx, "pg_advisory_lock", func(conn *sql.Conn) error {
			var exists bool
			if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`,
				templateName).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return nil
			}
			rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'mbt\_tpl\_%'`)
			if err != nil {
				return err
			}
			var stale []string
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					rows.Close()
					return err
				}
				stale = append(stale, n)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			for _, n := range stale {
				if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n+" WITH (FORCE)"); err != nil {
					return err
				}
			}
			// Made under another name and renamed when migrated, so that
			// a run killed half-way leaves no half-made template.
			building := "mbt_" + digest + "_building"
			if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building+" "+locale); err != nil {
				return err
			}
			if err := migrate(ctx, dsnOf(building)); err != nil {
				return fmt.Errorf("migrate the template: %w", err)
			}
			_, err = conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+templateName)
			return err
		})
		if templateErr != nil {
			templateErr = fmt.Errorf("test database template: %w", templateErr)
		}
	})
	return templateName, templateErr
}

// migrate migrates the database at dsn and closes it.
func migrate(ctx context.Context, dsn string) error {
	s, err := db.Open(dsn)
	if err != nil {
		return err
	}
	_, err = s.Migrate(ctx)
	return errors.Join(err, s.Close())
}

// migrationsDigest is a digest of the tests' locale and the PostgreSQL
// migrations' names and contents (12 hex digits).
func migrationsDigest() (string, error) {
	fsys := db.Migrations("postgres://")
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", locale)
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12], err
}

// underLock runs fn on one admin connection while it holds the template
// lock (lock names the function: pg_advisory_lock or
// pg_advisory_lock_shared).
func underLock(ctx context.Context, lock string, fn func(*sql.Conn) error) error {
	conn, err := server.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT "+lock+"($1)", templateLock); err != nil {
		return err
	}
	unlock := strings.Replace(lock, "_lock", "_unlock", 1)
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT "+unlock+"($1)", templateLock) //nolint:errcheck // the lock goes with the session anyway
	return fn(conn)
}

// Rebind turns a test's raw SQL written with SQLite's ? placeholders into
// the engine's: $1, $2, … on PostgreSQL. A ? inside a '…' string literal
// is text, not a placeholder.
func Rebind(query string) string {
	if !Postgres() {
		return query
	}
	var b strings.Builder
	n, quoted := 0, false
	for _, r := range query {
		switch {
		case r == '\'':
			quoted = !quoted // '' inside a literal toggles twice
		case r == '?' && !quoted:
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
