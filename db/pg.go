package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// writerLockKey is the PostgreSQL advisory lock every write transaction
// holds until it commits or rolls back: "madebook" in ASCII, as a number.
// One key for every write makes writes one at a time across every
// replica on the database, as SQLite's single writer makes them one at a
// time in a process, so a use case's reads inside Write still hold when
// it writes.
const writerLockKey int64 = 0x6d616465626f6f6b

// Pool sizes on PostgreSQL. Writes run one at a time (writerLockKey), so
// a few writer connections only let the next write be ready to take the
// lock; reads run side by side.
const (
	pgWriterConns = 4
	pgReaderConns = 16
)

// openPostgres opens the PostgreSQL database at the URL dsn through pgx's
// database/sql driver: a writer pool and a read pool whose sessions are
// read-only (default_transaction_read_only), so that a read cannot write
// by mistake. It creates no database: the URL's database must exist.
func openPostgres(dsn string) (*Store, error) {
	wcfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	rcfg := wcfg.Copy()
	where := fmt.Sprintf("postgres %s:%d/%s", wcfg.Host, wcfg.Port, wcfg.Database)
	w := stdlib.OpenDB(*wcfg)
	w.SetMaxOpenConns(pgWriterConns)
	w.SetMaxIdleConns(pgWriterConns)
	w.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", where, err)
	}
	// Read-only once connected, not as a startup parameter: a startup
	// default_transaction_read_only makes every member answer
	// target_session_attrs=read-write's question "read-only", so a URL
	// naming a cluster's members would find no primary to read from.
	r := stdlib.OpenDB(*rcfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SET default_transaction_read_only = on")
		return err
	}))
	r.SetMaxOpenConns(pgReaderConns)
	r.SetMaxIdleConns(pgReaderConns)
	r.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{
		w: w, r: r, wq: postgresQueries(w), rq: postgresQueries(r),
		pg: true, dsn: dsn, writeTimeout: 15 * time.Second,
	}, nil
}

// lockWriter takes the writers' advisory lock in tx; PostgreSQL releases
// it when tx ends.
func lockWriter(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, writerLockKey); err != nil {
		return fmt.Errorf("begin write: take the writers' lock: %w", err)
	}
	return nil
}

// Describe names the database dsn opens for logs and messages: a
// PostgreSQL URL with its password masked, or the SQLite path as given.
func Describe(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "a PostgreSQL URL that does not parse"
	}
	return u.Redacted()
}

// HasPassword reports whether dsn is a PostgreSQL URL that holds a
// password.
func HasPassword(dsn string) bool {
	if !IsPostgres(dsn) {
		return false
	}
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// WithPassword returns the PostgreSQL URL dsn with the password put in
// it, for a password kept out of the command line (a file, the
// environment). The URL must name its user and hold no password of its
// own.
func WithPassword(dsn, password string) (string, error) {
	if !IsPostgres(dsn) {
		return "", errors.New("a password applies only to a postgres:// URL, not a SQLite file")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("the postgres:// URL does not parse")
	}
	if u.User == nil || u.User.Username() == "" {
		return "", fmt.Errorf("the URL %s names no user: write postgres://USER@HOST/DATABASE", u.Redacted())
	}
	if _, ok := u.User.Password(); ok {
		return "", fmt.Errorf("the URL %s holds a password already: give it once", u.Redacted())
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String(), nil
}
