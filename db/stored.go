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
// column, e.g. `decisions row DEC-004: blocked_scope is not a JSON list:
// invalid character 'x' …`. Madebook never writes such a value, so the
// error means the database was edited by hand or damaged: a server fault
// (errs kind Internal), never the caller's, and never a panic.
type Stored struct {
	table string
	row   any
	err   error
}

// StoredRow starts reading the row of table whose key (an id, a
// reference) is row.
func StoredRow(table string, row any) *Stored { return &Stored{table: table, row: row} }

// Time reads a stored time.
func (s *Stored) Time(column, v string) time.Time {
	t, err := ParseTime(v)
	if err != nil {
		s.fail(fmt.Errorf("%s: %w", column, err))
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
		s.fail(fmt.Errorf("%s is not a JSON %s: %w", column, what, err))
	}
}

// Err returns the first column that did not convert, naming the table and
// the row, or nil.
func (s *Stored) Err() error {
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("%s row %v: %w", s.table, s.row, s.err)
}

// fail keeps err unless an earlier column already failed.
func (s *Stored) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}
