package db

import "testing"

func TestPgPlaceholders(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"numbered", "SELECT a FROM t WHERE id = ?1 AND b < ?2", "SELECT a FROM t WHERE id = $1 AND b < $2"},
		{"a number used twice", "UPDATE t SET at = ?1 WHERE id = ?2 AND at < ?1", "UPDATE t SET at = $1 WHERE id = $2 AND at < $1"},
		{"several digits", "VALUES (?9, ?10, ?11)", "VALUES ($9, $10, $11)"},
		{"bare", "VALUES (?, ?, ?)", "VALUES ($1, $2, $3)"},
		{"bare after numbered, as SQLite numbers them", "WHERE a = ?2 AND b = ? AND c = ?1 AND d = ?", "WHERE a = $2 AND b = $3 AND c = $1 AND d = $4"},
		{"in a string literal", "WHERE a = '?1' AND b = ?1", "WHERE a = '?1' AND b = $1"},
		{"a doubled quote in a literal", "WHERE a = 'it''s ?' AND b = ?", "WHERE a = 'it''s ?' AND b = $1"},
		{"in a quoted identifier", `SELECT "what?" FROM t WHERE id = ?1`, `SELECT "what?" FROM t WHERE id = $1`},
		{"in a line comment", "-- name: X :one\n-- which one?\nSELECT ?1", "-- name: X :one\n-- which one?\nSELECT $1"},
		{"in a block comment", "SELECT /* ?1 */ ?1", "SELECT /* ?1 */ $1"},
		{"an unterminated literal", "SELECT '?1", "SELECT '?1"},
		{"none", "SELECT 1", "SELECT 1"},
	} {
		if got := pgPlaceholders(c.in); got != c.want {
			t.Errorf("%s: pgPlaceholders(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		"-- name: GetX :one\nSELECT id FROM x WHERE id = ?1":                  true,
		"-- name: ListX :many\nselect id from x":                              true,
		"-- name: CountX :one\nWITH scope AS (SELECT 1)\nSELECT * FROM scope": true,
		"-- name: CreateX :one\nINSERT INTO x (id) VALUES (?1) RETURNING id":  false,
		"-- name: SetX :execrows\nUPDATE x SET a = ?1":                        false,
		"-- name: DeleteX :exec\n\n  DELETE FROM x":                           false,
	} {
		if got := isRead(q); got != want {
			t.Errorf("isRead(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestPgStatementOfIsCached(t *testing.T) {
	q := "-- name: TestPgStatementOfIsCached :one\nSELECT ?1"
	a, b := pgStatementOf(q), pgStatementOf(q)
	if a != b {
		t.Error("the second look-up rewrote the statement again")
	}
	if a.text != "-- name: TestPgStatementOfIsCached :one\nSELECT $1" || !a.read {
		t.Errorf("pgStatementOf = %+v", *a)
	}
}
