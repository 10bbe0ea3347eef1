// Package testdb gives each test a fresh, empty database on the engine
// the tests run on: a SQLite file in the test's temporary directory by
// default, or, when MADEBOOK_TEST_DB is a postgres:// URL, a new
// PostgreSQL database on that server, dropped when the test ends.
//
//	MADEBOOK_TEST_DB='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' go test ./...
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for CREATE/DROP DATABASE
)

// Env is the variable that selects the engine the tests run on.
const Env = "MADEBOOK_TEST_DB"

// Postgres reports whether the tests run on PostgreSQL.
func Postgres() bool {
	v := os.Getenv(Env)
	return strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://")
}

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

// DSN returns where a fresh, empty database for tb is: a file path in
// tb.TempDir() on SQLite; on PostgreSQL the URL of a new database
// (mbt_ and random hex), dropped WITH (FORCE) when tb ends. Pass it to
// db.Open.
func DSN(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		return filepath.Join(tb.TempDir(), "madebook.db")
	}
	conn, err := admin()
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "mbt_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(os.Getenv(Env))
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

var placeholder = regexp.MustCompile(`\?`)

// Rebind turns a test's raw SQL written with SQLite's ? placeholders into
// the engine's: $1, $2, … on PostgreSQL. (Tests' SQL holds no ? in a
// string literal.)
func Rebind(query string) string {
	if !Postgres() {
		return query
	}
	n := 0
	return placeholder.ReplaceAllStringFunc(query, func(string) string {
		n++
		return fmt.Sprintf("$%d", n)
	})
}
