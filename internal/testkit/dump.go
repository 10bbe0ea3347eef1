package testkit

import (
	"context"
	"fmt"
	"strings"
)

// CellSeparator separates the cells of a row in Dump, each "column=value".
const CellSeparator = " | "

// Dump returns every row of every table of the kit's database, in rowid
// order, each row one line of "column=value" cells joined by
// CellSeparator, keyed by table (a table with no row has an empty list).
// It is what "a refused call changed nothing" compares, and what a scan
// for a leaked secret reads.
func (k *Kit) Dump() map[string][]string {
	k.TB.Helper()
	ctx := context.Background()
	conn := k.Store.Writer()
	rows, err := conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
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

// dumpTable returns one table's rows as Dump renders them.
func (k *Kit) dumpTable(ctx context.Context, table string) []string {
	k.TB.Helper()
	return k.Rows(fmt.Sprintf(`SELECT * FROM %q ORDER BY rowid`, table))
}

// Rows runs a query on the kit's database and returns its rows as Dump
// renders them: one line of "column=value" cells each. Tests compare
// them before and after a call that must change nothing in those columns.
func (k *Kit) Rows(query string, args ...any) []string {
	k.TB.Helper()
	rows, err := k.Store.Writer().QueryContext(context.Background(), query, args...)
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
			if b, ok := v.([]byte); ok {
				v = string(b)
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
