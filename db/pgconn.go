package db

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The queries on PostgreSQL. sqlc generates the queries once, for
// SQLite (the Go in this package); the same query files are portable
// SQL whose Go types are the same on both engines (postgres/typecheck
// checks it), so on PostgreSQL the same code runs over pgConn, which
// differs from SQLite in the two ways the engines do:
//
//   - placeholders: SQLite's ?NNN become PostgreSQL's $NNN, rewritten
//     once per statement text and cached;
//   - text PostgreSQL cannot hold (a NUL, bytes that are not UTF-8):
//     PostgreSQL refuses it even as an argument (SQLSTATE 22021) and
//     aborts the transaction, where SQLite finds no row that holds it. A
//     read given such text is answered as one that finds no row, without
//     sending it; a write sends it, and fails, as before.
//
// pgConn runs every statement unprepared as far as database/sql knows:
// pgx prepares each statement text on a connection the first time it
// runs there and keeps it in the connection's statement cache.

// pgConn is a pool or a transaction running the queries as PostgreSQL
// takes them.
type pgConn struct{ conn DBTX }

// postgresQueries returns the queries on PostgreSQL over conn, a pool or
// a transaction.
func postgresQueries(conn DBTX) *Queries { return New(pgConn{conn}) }

func (c pgConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.conn.ExecContext(ctx, pgStatementOf(query).text, args...)
}

func (c pgConn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return c.conn.PrepareContext(ctx, pgStatementOf(query).text)
}

func (c pgConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st := pgStatementOf(query)
	if st.read && pgRefuses(args) {
		return c.conn.QueryContext(ctx, noRow)
	}
	return c.conn.QueryContext(ctx, st.text, args...)
}

func (c pgConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st := pgStatementOf(query)
	if st.read && pgRefuses(args) {
		return c.conn.QueryRowContext(ctx, noRow)
	}
	return c.conn.QueryRowContext(ctx, st.text, args...)
}

// noRow is a statement that finds no row: the answer to a read given
// text no row can hold.
const noRow = "SELECT WHERE false"

// pgRefuses reports whether PostgreSQL would refuse one of args as text:
// a NUL, or bytes that are not UTF-8.
func pgRefuses(args []any) bool {
	for _, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case sql.NullString:
			s = v.String
		default:
			continue
		}
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return true
		}
	}
	return false
}

// pgStatement is one query as PostgreSQL runs it.
type pgStatement struct {
	// text is the query with PostgreSQL's placeholders.
	text string
	// read is true for a SELECT (or WITH … SELECT): refused text finds
	// no row.
	read bool
}

// pgStatements caches pgStatement by the SQLite query text. Only the
// generated queries run through pgConn, so it holds one entry per query
// at most.
var pgStatements sync.Map

// pgStatementOf returns query as PostgreSQL runs it.
func pgStatementOf(query string) *pgStatement {
	if st, ok := pgStatements.Load(query); ok {
		return st.(*pgStatement)
	}
	st, _ := pgStatements.LoadOrStore(query, &pgStatement{text: pgPlaceholders(query), read: isRead(query)})
	return st.(*pgStatement)
}

// pgPlaceholders rewrites SQLite's placeholders in query, ?NNN and ?, as
// PostgreSQL's $NNN, leaving string literals, quoted identifiers and
// comments as they are. A bare ? takes the number after the largest so
// far, as SQLite numbers it.
func pgPlaceholders(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	largest := 0
	for i := 0; i < len(query); {
		rest := query[i:]
		n := 1 // bytes to copy as they are
		switch {
		case rest[0] == '\'' || rest[0] == '"':
			// To the closing quote; a doubled quote inside is a closing
			// and an opening one, which the next turn copies likewise.
			n = len(rest)
			if j := strings.IndexByte(rest[1:], rest[0]); j >= 0 {
				n = j + 2
			}
		case strings.HasPrefix(rest, "--"):
			n = len(rest)
			if j := strings.IndexByte(rest, '\n'); j >= 0 {
				n = j + 1
			}
		case strings.HasPrefix(rest, "/*"):
			n = len(rest)
			if j := strings.Index(rest[2:], "*/"); j >= 0 {
				n = j + 4
			}
		case rest[0] == '?':
			digits := 1
			for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
				digits++
			}
			num := largest + 1
			if digits > 1 {
				num, _ = strconv.Atoi(rest[1:digits])
			}
			largest = max(largest, num)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(num))
			i += digits
			continue
		}
		b.WriteString(rest[:n])
		i += n
	}
	return b.String()
}

// isRead reports whether query's statement (after sqlc's "-- name:" line
// and any other comment lines) is a SELECT or a WITH.
func isRead(query string) bool {
	for line := range strings.Lines(query) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		word, _, _ := strings.Cut(line, " ")
		word = strings.ToUpper(word)
		return word == "SELECT" || word == "WITH"
	}
	return false
}
