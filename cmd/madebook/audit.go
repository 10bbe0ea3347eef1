package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/audit"
)

// auditFailed is what the audit command returns when a report found rows:
// main exits 1 for it and prints nothing more.
type auditFailed struct{ reports []string }

func (a auditFailed) Error() string {
	return "audit: rows found by " + strings.Join(a.reports, ", ")
}

// runAudit is `madebook audit`: it runs the named audit reports (all of
// them if none) and exits 1 if any found rows.
func runAudit(ctx context.Context, c stdio, args []string) error {
	f := newFlags("audit", "madebook audit [REPORT ... | --report NAME] [--format table|json|csv] [--out DIR] [--db PATH] [--older-than 24h] [--min-age 5m] [--delivery-lease 2m]",
		"Run the audit reports (every one unless named) on one snapshot of the database and\n"+
			"print them. Passing is zero rows; the command exits 1 if any report found rows, so\n"+
			"CI can gate on it, and 2 on corrupt stored data (naming the table and row).\n"+
			"A CSV holds one report: --format csv prints the one --report NAME picks (or the one\n"+
			"REPORT named), or writes each report to DIR/NAME.csv with --out DIR.")
	f.Notes = "Reports:\n" + reportList() + "\nAges are Go durations (90m, 36h) or whole days (7d).\n\n" +
		"The timeline and the activity record, hash-chained (each answers --help):\n" + trailCommands()
	path := f.dbFlag()
	format := f.String("format", "table", "`FORMAT`: table, json (one object, every report) or csv (one report)")
	report := f.String("report", "", "run only the report `NAME` (with --format csv: its CSV alone on stdout)")
	outDir := f.String("out", "", "with --format csv, write each report to `DIR`/NAME.csv (DIR is created if need be), saying which on stderr")
	olderThan := f.String("older-than", "24h", "stale-gates lists gates open longer than `AGE`")
	minAge := f.String("min-age", "5m",
		"undelivered-resolutions lists gates resolved longer ago than `AGE`: a younger resolution is still on its way")
	lease := f.String("delivery-lease", "2m",
		"unacknowledged-deliveries lists deliveries not acknowledged within `D`, the server's lease (serve --delivery-lease)")
	f.Env["delivery-lease"] = "MADEBOOK_DELIVERY_LEASE"
	reports, err := f.parseArgs(c, args)
	if err != nil {
		return err
	}
	if *report != "" {
		if len(reports) > 0 {
			return f.Fail("--report %s and the reports %s: give one or the other", *report, strings.Join(reports, ", "))
		}
		reports = []string{*report}
	}
	for _, n := range reports {
		if _, err := audit.Lookup(n); err != nil {
			return f.Fail("unknown audit report %q: choose from %s", n, strings.Join(audit.Names(), ", "))
		}
	}
	if *format != "table" && *format != "json" && *format != "csv" {
		return f.Fail("--format is table, json or csv, not %q", *format)
	}
	switch {
	case *outDir != "" && *format != "csv":
		return f.Fail("--out writes one CSV file per report: give --format csv with it")
	case *format == "csv" && *outDir == "" && len(reports) != 1:
		return f.Fail("a CSV holds one report: pick it with --report NAME (one of %s), "+
			"or give --out DIR to write one NAME.csv per report", strings.Join(audit.Names(), ", "))
	}
	opts := audit.Options{}
	if opts.OlderThan, err = audit.ParseOlderThan(*olderThan); err != nil {
		return f.Fail("--older-than %q is not an age such as 36h, 90m or 7d", *olderThan)
	}
	if opts.MinAge, err = audit.ParseMinAge(*minAge); err != nil {
		return f.Fail("--min-age %q is not an age such as 10m, 2h or 1d", *minAge)
	}
	if opts.Lease, err = audit.ParseLease(*lease); err != nil || opts.Lease == 0 {
		return f.Fail("--delivery-lease %q is not a duration such as 2m or 30s", *lease)
	}
	// Auditing a path that holds no database would create an empty one,
	// and pass.
	if err := existingDB(*path); err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		results, err := a.Audit.RunAll(ctx, opts, reports...)
		if errors.As(err, new(*db.CorruptRowError)) {
			return exitError{code: 2, err: err}
		} else if err != nil {
			return err
		}
		if *outDir != "" {
			return writeAuditCSVs(*outDir, results, c.stderr)
		}
		return printAudit(c.stdout, results, *format)
	})
}

// writeAuditCSVs writes each result to dir/NAME.csv, creating dir if need
// be, and names each file written on stderr. It returns auditFailed if
// any report found rows.
func writeAuditCSVs(dir string, results []audit.Result, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for _, r := range results {
		name := filepath.Join(dir, r.Report.Name+".csv")
		file, err := os.Create(name)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		err = audit.WriteCSV(file, r)
		if err = errors.Join(err, file.Close()); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if stderr != nil {
			fmt.Fprintf(stderr, "madebook audit: wrote %s (%s)\n", name, rowCount(len(r.Rows)))
		}
	}
	if failing := failingReports(results); len(failing) > 0 {
		return auditFailed{failing}
	}
	return nil
}

// failingReports are the names of the results that found rows.
func failingReports(results []audit.Result) []string {
	var names []string
	for _, r := range results {
		if !r.Passing() {
			names = append(names, r.Report.Name)
		}
	}
	return names
}

// trailCommands are audit export and audit verify, one a line.
func trailCommands() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  %s\t%s\n", "madebook audit export [--since T] [--out FILE]", "write them as JSON lines with their chain's hashes")
	fmt.Fprintf(tw, "  %s\t%s\n", "madebook audit verify FILE|- [--anchor HASH]", "check such a file; exit 1 naming the first row that breaks it")
	tw.Flush()
	return b.String()
}

// reportList is each report's name and what it finds, one a line.
func reportList() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, r := range audit.Reports() {
		fmt.Fprintf(tw, "  %s\t%s\n", r.Name, r.Finds)
	}
	tw.Flush()
	return b.String()
}

// printAudit prints the results in the format: table, one JSON object, or
// the CSV of the one result (runAudit lets csv through with one report
// only). It returns auditFailed if any report found rows.
func printAudit(w io.Writer, results []audit.Result, format string) error {
	failing := failingReports(results)
	var err error
	switch format {
	case "json":
		err = audit.WriteJSON(w, results)
	case "csv":
		for i := 0; i < len(results) && err == nil; i++ {
			err = audit.WriteCSV(w, results[i])
		}
	default:
		for i := 0; i < len(results) && err == nil; i++ {
			if i > 0 {
				_, err = fmt.Fprintln(w)
			}
			if err == nil {
				err = audit.WriteTable(w, results[i])
			}
		}
		if err == nil {
			if len(failing) == 0 {
				_, err = fmt.Fprintf(w, "\n%d of %d reports pass.\n", len(results), len(results))
			} else {
				_, err = fmt.Fprintf(w, "\n%d of %d reports found rows: %s.\n", len(failing), len(results), strings.Join(failing, ", "))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("print the audit: %w", err)
	}
	if len(failing) > 0 {
		return auditFailed{failing}
	}
	return nil
}
