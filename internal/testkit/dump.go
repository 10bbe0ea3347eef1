package testkit

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/madebook/madebook/internal/testdb"
)

// CellSeparator separates the cells of a row in Dump, each "column=value".
const CellSeparator = " | "

// Dump returns every row of every table of the kit's database, in rowid
// order (on PostgreSQL, which has no rowid: primary key order), each row one line of "column=value" cells joined by
// CellSeparator, keyed by table (a table with no row has an empty list).
// It is what "a refused call changed nothing" compares, and what a scan
// for a leaked secret reads.
func (k *Kit) Dump() map[string][]string {
	k.TB.Helper()
	ctx := context.Background()
	conn := k.Store.Writer()
	rows, err := conn.QueryContext(ctx, tablesQuery(false))
	if err != nil {
		k.TB.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			k.TB.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		k.TB.Fatal(err)
	}
	out := make(map[string][]string, len(tables))
	for _, table := range tables {
		out[table] = k.dumpTable(ctx, table)
	}
	return out
}

// tablesQuery lists the database's tables by name (their names in one
// column, name); internal leaves out SQLite's own (sqlite_sequence).
func tablesQuery(internal bool) string {
	if testdb.Postgres() {
		return `SELECT table_name AS name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	if internal {
		return `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	}
	return `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
}

// dumpTable returns one table's rows as Dump renders them.
func (k *Kit) dumpTable(ctx context.Context, table string) []string {
	k.TB.Helper()
	return k.Rows(fmt.Sprintf(`SELECT * FROM %q ORDER BY %s`, table, k.rowOrder(table)))
}

// rowOrder is the order Dump lists a table's rows in: rowid on SQLite;
// on PostgreSQL the primary key's columns, or every column for a table
// without one.
func (k *Kit) rowOrder(table string) string {
	k.TB.Helper()
	if !testdb.Postgres() {
		return "rowid"
	}
	var cols []string
	for _, c := range k.Rows(`SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = CAST(? AS regclass) AND i.indisprimary
		ORDER BY array_position(i.indkey, a.attnum)`, quoteIdent(table)) {
		cols = append(cols, quoteIdent(strings.TrimPrefix(c, "attname=")))
	}
	if len(cols) == 0 {
		for _, c := range k.columns(table) {
			cols = append(cols, quoteIdent(c))
		}
	}
	return strings.Join(cols, ", ")
}

// columns returns a table's columns in their order.
func (k *Kit) columns(table string) []string {
	k.TB.Helper()
	q := fmt.Sprintf(`SELECT name FROM pragma_table_info(%s)`, quoteSQL(table))
	if testdb.Postgres() {
		q = fmt.Sprintf(`SELECT column_name AS name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position`, quoteSQL(table))
	}
	var out []string
	for _, c := range k.Rows(q) {
		out = append(out, strings.TrimPrefix(c, "name="))
	}
	return out
}

// quoteIdent quotes s as an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Rows runs a query on the kit's database and returns its rows as Dump
// renders them: one line of "column=value" cells each. The query is
// written with ? placeholders on either engine (testdb.Rebind). Tests compare
// them before and after a call that must change nothing in those columns.
func (k *Kit) Rows(query string, args ...any) []string {
	k.TB.Helper()
	rows, err := k.Store.Writer().QueryContext(context.Background(), testdb.Rebind(query), args...)
	if err != nil {
		k.TB.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		k.TB.Fatal(err)
	}
	out := []string{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			k.TB.Fatal(err)
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			switch b := v.(type) {
			case []byte:
				v = string(b)
			case bool:
				// As SQLite stores a boolean, so that a row reads the
				// same on either engine.
				v = 0
				if b {
					v = 1
				}
			}
			cells[i] = fmt.Sprintf("%s=%v", cols[i], v)
		}
		out = append(out, strings.Join(cells, CellSeparator))
	}
	if err := rows.Err(); err != nil {
		k.TB.Fatal(err)
	}
	return out
}

// Fingerprint is a cheap stand-in for Dump where a test compares the
// database before and after thousands of calls (a fuzz target), and a full
// dump of a database that grows with every call would cost more than the
// call: for every table, its row count and, for a table without a
// session_id column, the total length of its rows' quoted cells (an
// update that keeps every cell's length, such as one timestamp for
// another, goes unseen there), and then, in full, every row of session
// (its sessions row and every row whose session_id is it), which is where
// a call about a session writes; an update of another session's rows goes
// unseen. session "" skips the rows.
func (k *Kit) Fingerprint(session string) string {
	k.TB.Helper()
	k.fpOnce.Do(func() { k.fpTables = k.fingerprintTables() })
	var b strings.Builder
	for _, t := range k.fpTables {
		var count int64
		var size float64
		if err := k.Store.Writer().QueryRow(t.summary).Scan(&count, &size); err != nil {
			k.TB.Fatalf("fingerprint %s: %v", t.name, err)
		}
		fmt.Fprintf(&b, "%s=%d/%.0f\n", t.name, count, size)
		if session == "" {
			continue
		}
		switch {
		case t.name == "sessions":
			b.WriteString(strings.Join(k.Rows(`SELECT * FROM sessions WHERE id = ?`, session), "\n"))
		case t.bySession:
			b.WriteString(strings.Join(k.Rows(fmt.Sprintf(`SELECT * FROM %q WHERE session_id = ? ORDER BY %s`, t.name, t.order), session), "\n"))
		}
	}
	return b.String()
}

// fingerprintTable is how Fingerprint reads one table.
type fingerprintTable struct {
	name      string
	summary   string // count and total length
	bySession bool   // has a session_id column
	order     string // the order of its rows (rowOrder)
}

// fingerprintTables reads the schema once: every table and its columns.
func (k *Kit) fingerprintTables() []fingerprintTable {
	k.TB.Helper()
	var out []fingerprintTable
	for _, name := range k.Rows(tablesQuery(true)) {
		name = strings.TrimPrefix(name, "name=")
		var lengths []string
		t := fingerprintTable{name: name, order: k.rowOrder(name)}
		for _, col := range k.columns(name) {
			if testdb.Postgres() {
				lengths = append(lengths, fmt.Sprintf("length(quote_nullable(%q))", col))
			} else {
				lengths = append(lengths, fmt.Sprintf("length(quote(%q))", col))
			}
			t.bySession = t.bySession || col == "session_id"
		}
		t.summary = fmt.Sprintf(`SELECT count(*), total(%s) FROM %q`, strings.Join(lengths, " + "), name)
		if testdb.Postgres() {
			t.summary = fmt.Sprintf(`SELECT count(*), CAST(COALESCE(sum(%s), 0) AS float8) FROM %q`, strings.Join(lengths, " + "), name)
		}
		if t.bySession || name == "sessions" {
			// The tables that grow with every session (events above all)
			// are counted only: their rows of the session are compared
			// in full, and summing every row's length on every call
			// would cost more than the call as they grow.
			t.summary = fmt.Sprintf(`SELECT count(*), 0 FROM %q`, name)
		}
		out = append(out, t)
	}
	return out
}

// quoteSQL quotes s as an SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// SQL is the kit's writer connection for a test's raw SQL, written with
// SQLite's ? placeholders on either engine (testdb.Rebind turns them into
// $1, $2, … on PostgreSQL).
type SQL struct{ *sql.DB }

// SQL returns the kit's writer connection for raw SQL.
func (k *Kit) SQL() SQL { return SQL{k.Store.Writer()} }

// Exec runs a statement.
func (d SQL) Exec(query string, args ...any) (sql.Result, error) {
	return d.DB.Exec(testdb.Rebind(query), args...)
}

// ExecContext runs a statement.
func (d SQL) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.DB.ExecContext(ctx, testdb.Rebind(query), args...)
}

// Query runs a query.
func (d SQL) Query(query string, args ...any) (*sql.Rows, error) {
	return d.DB.Query(testdb.Rebind(query), args...)
}

// QueryContext runs a query.
func (d SQL) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.DB.QueryContext(ctx, testdb.Rebind(query), args...)
}

// QueryRow runs a query of one row.
func (d SQL) QueryRow(query string, args ...any) *sql.Row {
	return d.DB.QueryRow(testdb.Rebind(query), args...)
}

// QueryRowContext runs a query of one row.
func (d SQL) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.DB.QueryRowContext(ctx, testdb.Rebind(query), args...)
}

// Prepare prepares a statement.
func (d SQL) Prepare(query string) (*sql.Stmt, error) { return d.DB.Prepare(testdb.Rebind(query)) }
