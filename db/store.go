package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver
)

// Store is the database: one writer connection, through which every write
// transaction is serialised, and a small read-only pool that WAL lets read
// while the writer writes.
type Store struct {
	w, r         *sql.DB
	writeTimeout time.Duration
	// wq and rq are the queries prepared on each pool once the schema is
	// current (see Migrate); until then statements are prepared per call.
	wq, rq *Queries
	// watch are those told after each committed write (Subscribe).
	watch watchers
}

// Open opens (creating it if needed) the SQLite database at path. Every
// connection setting is in the DSN, so it holds for every pooled
// connection: WAL, synchronous FULL, foreign keys, a busy timeout, and
// immediate transactions on the writer.
func Open(path string) (*Store, error) {
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
	for _, q := range []*Queries{s.rq, s.wq} {
		if q != nil {
			err = errors.Join(err, q.Close())
		}
	}
	return errors.Join(err, s.r.Close(), s.w.Close())
}

// prepare prepares every query on both pools. It needs the current schema.
func (s *Store) prepare(ctx context.Context) error {
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

// on returns the queries for a transaction of the pool prepared as p.
func on(p *Queries, tx *sql.Tx) *Queries {
	if p == nil {
		return New(tx)
	}
	return p.WithTx(tx)
}

// Writer is the writer connection, for migrations.
func (s *Store) Writer() *sql.DB { return s.w }

// Reader answers single-statement reads from the read pool. Use Read when
// several statements must see one snapshot.
func (s *Store) Reader() Querier {
	if s.rq != nil {
		return s.rq
	}
	return New(s.r)
}

// Ping checks that both pools answer.
func (s *Store) Ping(ctx context.Context) error {
	return errors.Join(s.w.PingContext(ctx), s.r.PingContext(ctx))
}

// Read runs fn in one read transaction on the read pool: every statement in
// it sees the same snapshot.
func (s *Store) Read(ctx context.Context, fn func(Querier) error) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a read has nothing to undo
	if err := fn(on(s.rq, tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// Write runs fn in one immediate write transaction on the writer: all of it
// lands or none of it does. The caller's cancellation is deliberately not
// passed on (a cancel half-way must not split a use case); the write has a
// timeout of its own instead.
func (s *Store) Write(ctx context.Context, fn func(Querier) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.writeTimeout)
	defer cancel()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(on(s.wq, tx)); err != nil {
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
}

var _ Transactor = (*Store)(nil)
