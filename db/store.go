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
	// wq and rq are the queries on each pool. On SQLite they are
	// prepared once the schema is current (see Migrate), and run
	// unprepared until then; on PostgreSQL they run through pgConn
	// (pgconn.go) from the start.
	wq, rq *Queries
	// prepared is true once Migrate has prepared the queries.
	prepared bool
	// watch are those told after each committed write (Subscribe).
	watch watchers
	// dsn is the PostgreSQL URL, for the connection that listens for
	// other replicas' changes (Listen); changes are told of them.
	dsn     string
	changes changeHandlers
	// version is SQLite's probe of other connections' commits
	// (DataVersion); nil on PostgreSQL.
	version *dataVersion
}

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
	// DataVersion's connection: like the readers', kept open for good.
	v, err := sql.Open("sqlite3", "file:"+path+"?"+rq.Encode())
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open database %s for its data version: %w", path, err)
	}
	v.SetMaxOpenConns(1)
	v.SetMaxIdleConns(1)
	v.SetConnMaxLifetime(0)
	return &Store{w: w, r: r, wq: New(w), rq: New(r), writeTimeout: 15 * time.Second,
		version: &dataVersion{db: v}}, nil
}

// Close closes the prepared statements, both pools and, on SQLite,
// DataVersion's connection.
func (s *Store) Close() error {
	err := errors.Join(s.rq.Close(), s.wq.Close(), s.r.Close(), s.w.Close())
	if s.version != nil {
		err = errors.Join(err, s.version.close())
	}
	return err
}

// prepare readies every query on the current schema: on SQLite it
// prepares them on both pools; on PostgreSQL, where pgx prepares each
// statement on first use, it prepares them once on the writer and closes
// them again, so that a query the schema does not accept fails here, at
// start, not on first use.
func (s *Store) prepare(ctx context.Context) error {
	if s.pg {
		q, err := Prepare(ctx, pgConn{s.w})
		if err != nil {
			return fmt.Errorf("prepare queries: %w", err)
		}
		return q.Close()
	}
	rq, err := Prepare(ctx, s.r)
	if err != nil {
		return fmt.Errorf("prepare queries: %w", err)
	}
	wq, err := Prepare(ctx, s.w)
	if err != nil {
		return errors.Join(fmt.Errorf("prepare queries: %w", err), rq.Close())
	}
	s.rq, s.wq = rq, wq
	return nil
}

// on returns the queries q in a transaction of q's pool.
func (s *Store) on(q *Queries, tx *sql.Tx) *Queries {
	if s.pg {
		return postgresQueries(tx)
	}
	return q.WithTx(tx)
}

// Writer is the writer connection, for migrations.
func (s *Store) Writer() *sql.DB { return s.w }

// Reader answers single-statement reads from the read pool. Use Read when
// several statements must see one snapshot.
func (s *Store) Reader() Querier { return s.rq }

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
	// DataVersion changes on every commit to the database, from any
	// process (dataversion.go); ok is false where it is not known cheaply.
	DataVersion(ctx context.Context) (v uint64, ok bool, err error)
}

var _ Transactor = (*Store)(nil)
