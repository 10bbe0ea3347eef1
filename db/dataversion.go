package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// DataVersion returns a number that changes whenever any connection, in
// this process or another, commits to the database, and that never comes
// back to an earlier value while the store is open: a cache entry read at
// version v is current as long as DataVersion still returns v. ok is
// false where there is no cheap probe (PostgreSQL: another replica's
// commit is only known after a round trip, as dear as the read a cache
// would save); callers then read every time.
func (s *Store) DataVersion(ctx context.Context) (v uint64, ok bool, err error) {
	if s.version == nil {
		return 0, false, nil
	}
	v, err = s.version.read(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("data version: %w", err)
	}
	return v, true, nil
}

// dataVersion probes SQLite's PRAGMA data_version
// (https://sqlite.org/pragma.html#pragma_data_version) on a connection of
// its own that never writes, so every commit (the writer's, another
// process's, a sqlite3 shell's) changes its value. The statement is
// prepared once for the connection's life and run through the driver
// directly: about 1.8 µs and one allocation, against 4.5 µs through
// database/sql.
type dataVersion struct {
	db *sql.DB // one connection, query-only

	mu   sync.Mutex
	conn *sql.Conn   // nil until the first read, and after a failed one
	stmt driver.Stmt // PRAGMA data_version, prepared on conn
	dest [1]driver.Value
	// raw is data_version as last read on conn. It is SQLite's 32-bit
	// counter of the changes this connection saw, which a new connection
	// starts afresh; gen counts the changes of raw, and a new connection
	// as one more, so that a version once returned never returns.
	raw int64
	gen uint64
}

// read returns the current version.
func (d *dataVersion) read(ctx context.Context) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fresh := d.conn == nil
	if fresh {
		c, err := d.db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		d.conn = c
	}
	var raw int64
	err := d.conn.Raw(func(dc any) error {
		if d.stmt == nil {
			c, ok := dc.(*sqlite3.SQLiteConn)
			if !ok {
				return fmt.Errorf("unexpected driver connection %T", dc)
			}
			st, err := c.Prepare("PRAGMA data_version")
			if err != nil {
				return err
			}
			d.stmt = st
		}
		// Without the caller's context: the pragma takes microseconds,
		// and a cancellable one costs a watcher each time.
		rows, err := d.stmt.(driver.StmtQueryContext).QueryContext(context.Background(), nil)
		if err != nil {
			return err
		}
		err = rows.Next(d.dest[:])
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		var ok bool
		if raw, ok = d.dest[0].(int64); !ok {
			return fmt.Errorf("PRAGMA data_version returned %T", d.dest[0])
		}
		return nil
	})
	if err != nil {
		return 0, errors.Join(err, d.drop())
	}
	if fresh || raw != d.raw {
		d.raw = raw
		d.gen++
	}
	return d.gen, nil
}

// drop closes the statement and the connection; the next read opens
// them again. The caller holds d.mu.
func (d *dataVersion) drop() error {
	if d.conn == nil {
		return nil
	}
	var err error
	if d.stmt != nil {
		err = d.conn.Raw(func(any) error { return d.stmt.Close() })
		d.stmt = nil
	}
	err = errors.Join(err, d.conn.Close())
	d.conn = nil
	return err
}

// close closes the connection and its pool.
func (d *dataVersion) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return errors.Join(d.drop(), d.db.Close())
}
