package db

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Stored reads the columns of one stored row into domain values. A reader
// that cannot convert its column returns the zero value and Stored keeps
// the first such failure; Err then names the table, the row and the
// column, e.g. `corrupt stored data: decisions row DEC-004, column
// blocked_scope: not a JSON list: invalid character 'x' …`. Madebook never writes such a value, so the
// error means the database was edited by hand or damaged: a server fault
// (errs kind Internal), never the caller's, and never a panic.
type Stored struct {
	table string
	row   any
	err   *CorruptRowError
}

// CorruptRowError is a stored row Madebook cannot read: a value it never
// writes (a malformed time, a list that is not JSON), put there by hand
// or by damage. It names the table, the row and the column, so that a
// person can find and mend it.
type CorruptRowError struct {
	// Table is the table the row is in.
	Table string
	// Row is the row's key: an id, or a gate's reference.
	Row string
	// Column is the column holding the bad value.
	Column string
	// Err says what is wrong with the value.
	Err error
}

// Error says which row is corrupt and how, on one line.
func (e *CorruptRowError) Error() string {
	return fmt.Sprintf("corrupt stored data: %s row %s, column %s: %v", e.Table, e.Row, e.Column, e.Err)
}

// Unwrap returns what is wrong with the value.
func (e *CorruptRowError) Unwrap() error { return e.Err }

// StoredRow starts reading the row of table whose key (an id, a
// reference) is row.
func StoredRow(table string, row any) *Stored { return &Stored{table: table, row: row} }

// Time reads a stored time.
func (s *Stored) Time(column, v string) time.Time {
	t, err := ParseTime(v)
	if err != nil {
		s.fail(column, err)
	}
	return t
}

// NullTime reads a nullable stored time; NULL is the zero time.
func (s *Stored) NullTime(column string, v sql.NullString) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return s.Time(column, v.String)
}

// TimePtr reads a nullable stored time; NULL is nil, so that JSON leaves
// the field out.
func (s *Stored) TimePtr(column string, v sql.NullString) *time.Time {
	if !v.Valid {
		return nil
	}
	t := s.Time(column, v.String)
	return &t
}

// List reads a JSON list of strings; `[]` is an empty list, not nil.
func (s *Stored) List(column, v string) []string {
	list := []string{}
	s.JSON(column, v, &list)
	return list
}

// JSON decodes a JSON column into dst, a pointer to a list or an object.
func (s *Stored) JSON(column, v string, dst any) {
	if err := json.Unmarshal([]byte(v), dst); err != nil {
		what := "object"
		if k := reflect.TypeOf(dst).Elem().Kind(); k == reflect.Slice || k == reflect.Array {
			what = "list"
		}
		s.fail(column, fmt.Errorf("not a JSON %s: %w", what, err))
	}
}

// Err returns the first column that did not convert as a
// *CorruptRowError, or nil.
func (s *Stored) Err() error {
	if s.err == nil {
		return nil
	}
	return s.err
}

// fail keeps what is wrong with column unless an earlier column already
// failed.
func (s *Stored) fail(column string, err error) {
	if s.err == nil {
		s.err = &CorruptRowError{Table: s.table, Row: fmt.Sprint(s.row), Column: column, Err: err}
	}
}
