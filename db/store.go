package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver
)

// Store is the database. On SQLite: one writer connection, through which
// every write transaction is serialised, and a small read-only pool that
// WAL lets read while the writer writes. On PostgreSQL (pg.go): a writer
// pool whose write transactions are serialised by one advisory lock, held
// to each commit, across every replica, and a read-only pool.
type Store struct {
	w, r         *sql.DB
	writeTimeout time.Duration
	// pg is true on PostgreSQL.
	pg bool
	// wq and rq are the queries prepared on each pool once the schema is
	// current (see Migrate); until then statements are prepared per call.
	wq, rq prepared
	// watch are those told after each committed write (Subscribe).
	watch watchers
	// dsn is the PostgreSQL URL, for the connection that listens for
	// other replicas' changes (Listen); changes are told of them.
	dsn     string
	changes changeHandlers
}

// prepared is one engine's queries prepared on one pool.
type prepared interface {
	Querier
	// withTx returns the queries in a transaction of the pool.
	withTx(tx *sql.Tx) Querier
	Close() error
}

// sqlitePrepared are the SQLite queries prepared on a pool.
type sqlitePrepared struct{ *Queries }

func (p sqlitePrepared) withTx(tx *sql.Tx) Querier { return p.WithTx(tx) }

// IsPostgres reports whether dsn names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the database dsn names: a postgres:// or postgresql:// URL
// is PostgreSQL (see openPostgres), anything else the path of a SQLite
// file, created if needed.
func Open(dsn string) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(dsn)
	}
	return openSQLite(dsn)
}

// openSQLite opens (creating it if needed) the SQLite database at path.
// Every connection setting is in the DSN, so it holds for every pooled
// connection: WAL, synchronous FULL, foreign keys, a busy timeout, and
// immediate transactions on the writer.
func openSQLite(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: no path given")
	}
	common := url.Values{}
	common.Set("_busy_timeout", "5000")
	common.Set("_foreign_keys", "on")
	wq := url.Values{}
	for k, v := range common {
		wq[k] = v
	}
	wq.Set("_journal_mode", "WAL")
	wq.Set("_synchronous", "FULL")
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite3", "file:"+path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.Ping(); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	rq := url.Values{}
	for k, v := range common {
		rq[k] = v
	}
	rq.Set("_query_only", "1")
	r, err := sql.Open("sqlite3", "file:"+path+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	r.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{w: w, r: r, writeTimeout: 15 * time.Second}, nil
}

// Close closes the prepared statements and both pools.
func (s *Store) Close() error {
	var err error
	for _, q := range []prepared{s.rq, s.wq} {
		if q != nil {
			err = errors.Join(err, q.Close())
		}
	}
	return errors.Join(err, s.r.Close(), s.w.Close())
}

// prepare prepares every query on both pools. It needs the current schema.
func (s *Store) prepare(ctx context.Context) error {
	rq, err := s.prepareOn(ctx, s.r)
	if err != nil {
		return fmt.Errorf("prepare queries: %w", err)
	}
	wq, err := s.prepareOn(ctx, s.w)
	if err != nil {
		return errors.Join(fmt.Errorf("prepare queries: %w", err), rq.Close())
	}
	s.rq, s.wq = rq, wq
	return nil
}

// prepareOn prepares the engine's queries on one pool.
func (s *Store) prepareOn(ctx context.Context, pool *sql.DB) (prepared, error) {
	if s.pg {
		return preparePostgres(ctx, pool)
	}
	q, err := Prepare(ctx, pool)
	if err != nil {
		return nil, err
	}
	return sqlitePrepared{q}, nil
}

// on returns the queries for a transaction of the pool prepared as p.
func (s *Store) on(p prepared, tx *sql.Tx) Querier {
	switch {
	case p != nil:
		return p.withTx(tx)
	case s.pg:
		return postgresQueries(tx)
	}
	return New(tx)
}

// Writer is the writer connection, for migrations.
func (s *Store) Writer() *sql.DB { return s.w }

// Reader answers single-statement reads from the read pool. Use Read when
// several statements must see one snapshot.
func (s *Store) Reader() Querier {
	switch {
	case s.rq != nil:
		return s.rq
	case s.pg:
		return postgresQueries(s.r)
	}
	return New(s.r)
}

// Ping checks that both pools answer.
func (s *Store) Ping(ctx context.Context) error {
	return errors.Join(s.w.PingContext(ctx), s.r.PingContext(ctx))
}

// Read runs fn in one read transaction on the read pool: every statement in
// it sees the same snapshot (on PostgreSQL: REPEATABLE READ, READ ONLY).
func (s *Store) Read(ctx context.Context, fn func(Querier) error) error {
	var opts *sql.TxOptions
	if s.pg {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := s.r.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a read has nothing to undo
	if err := fn(s.on(s.rq, tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// Write runs fn in one immediate write transaction on the writer: all of it
// lands or none of it does, and no other write transaction runs meanwhile
// (on PostgreSQL, in any replica: see lockWriter). The caller's
// cancellation is deliberately not passed on (a cancel half-way must not
// split a use case); the write has a timeout of its own instead.
func (s *Store) Write(ctx context.Context, fn func(Querier) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.writeTimeout)
	defer cancel()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if s.pg {
		if err := lockWriter(ctx, tx); err != nil {
			return errors.Join(err, tx.Rollback())
		}
	}
	if err := fn(s.on(s.wq, tx)); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.watch.committed()
	return nil
}

// Transactor is what domain services need of the database: single reads,
// snapshot reads, atomic writes, and word that writes committed. *Store
// implements it.
type Transactor interface {
	Reader() Querier
	Read(ctx context.Context, fn func(Querier) error) error
	Write(ctx context.Context, fn func(Querier) error) error
	Subscribe() (<-chan struct{}, func())
	// OnChange has fn told what other replicas' writes changed (listen.go).
	OnChange(fn func(Notice))
}

var _ Transactor = (*Store)(nil)
