package audit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/input"
)

// WriteCSV writes the report as CSV (RFC 4180): a header line of column
// names, then a line per row. A cell that a spreadsheet would run as a
// formula (it starts with =, +, -, @, a tab or a carriage return: agents
// write prompts and tool names) is prefixed with a single quote, and a
// control character other than newline and tab, or a bidirectional
// formatting character, is written as a visible marker (⟨U+001B⟩; see
// input.Visible), so that printing the CSV to a terminal cannot move
// the cursor, retitle the window or reorder what it shows.
func WriteCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.Columns); err != nil {
		return fmt.Errorf("write %s CSV: %w", r.Report.Name, err)
	}
	line := make([]string, len(r.Columns))
	for _, row := range r.Rows {
		for i, cell := range row {
			line[i] = defuse(input.Visible(cell))
		}
		if err := cw.Write(line); err != nil {
			return fmt.Errorf("write %s CSV: %w", r.Report.Name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write %s CSV: %w", r.Report.Name, err)
	}
	return nil
}

// defuse keeps a spreadsheet from reading a cell as a formula.
func defuse(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// WriteJSON writes the results as one JSON object, {"reports":[{"report",
// "rows"}, …]}.
func WriteJSON(w io.Writer, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"reports": results}); err != nil {
		return fmt.Errorf("write audit JSON: %w", err)
	}
	return nil
}

// maxCell is the widest a table cell is printed; CSV and JSON keep all of it.
const maxCell = 60

// WriteTable writes the report for a terminal: a heading, an aligned table
// of its rows (if any), and the count, "0 rows — passing" or "N rows".
// Control characters in cells (an agent's prompt may hold newlines or
// escape sequences) are printed as spaces, bidirectional formatting
// characters as a visible marker (⟨U+202E⟩), and long cells are cut.
func WriteTable(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", r.Report.Name, r.Report.Title)
	if len(r.Rows) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(r.Columns, "\t"))
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = cell(c)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write %s table: %w", r.Report.Name, err)
		}
	}
	b.WriteString(Count(len(r.Rows)) + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write %s table: %w", r.Report.Name, err)
	}
	return nil
}

// Count says how many rows a report found: "0 rows — passing", "1 row",
// "N rows".
func Count(n int) string {
	switch n {
	case 0:
		return "0 rows — passing"
	case 1:
		return "1 row"
	default:
		return fmt.Sprintf("%d rows", n)
	}
}

// cell is a value as a table shows it: one line, no control characters,
// bidirectional formatting characters shown,
// at most maxCell characters, "-" for empty.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	s = input.Visible(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s))
	if utf8.RuneCountInString(s) > maxCell {
		s = string([]rune(s)[:maxCell-1]) + "…"
	}
	return s
}
