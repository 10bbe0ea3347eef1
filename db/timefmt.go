package db

import (
	"database/sql"
	"fmt"
	"time"
)

// timeLayout is how every time is stored: RFC 3339, UTC, with a fixed-width
// fraction so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// FormatTime renders t as it is stored.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// NullTime renders t as it is stored, or NULL when t is zero.
func NullTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: FormatTime(t), Valid: true}
}

// ParseTime reads a stored time. The empty string is the zero time.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}
