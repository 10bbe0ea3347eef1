package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/db/chain"
	"github.com/madebook/madebook/internal/app"
)

// runAuditExport is `madebook audit export`: the timeline and the
// activity record, each row one JSON line with its place in the hash
// chain (db/chain), on stdout or in a file.
func runAuditExport(ctx context.Context, c stdio, args []string) error {
	f := newFlags("audit export", "madebook audit export [--since T] [--out FILE] [--db PATH]",
		"Write the timeline (every session's events) and the activity record (every admin\n"+
			"action) as JSON lines, one row a line, each with its chain's prev_hash and hash, for a\n"+
			"SIEM or an archive. `madebook audit verify` checks such a file. The rows come from one\n"+
			"snapshot of the database, the timeline's first, each chain in the order it was written.")
	since := f.String("since", "", "start each chain at its first row at or after `T` (RFC 3339, or a date: 2026-11-29); "+
		"its first prev_hash is then the hash of the row before")
	out := f.String("out", "", "write the lines to `FILE` and a summary on stdout, instead of the lines on stdout")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	from := ""
	if *since != "" {
		t, err := parseSince(*since)
		if err != nil {
			return f.Fail("--since %q is not a time such as 2026-11-29T12:00:00Z or a date such as 2026-11-29", *since)
		}
		from = db.FormatTime(t)
	}
	// Exporting a path that holds no database would create an empty one.
	if err := existingDB(*path); err != nil {
		return err
	}
	w := c.stdout
	var file *os.File
	if *out != "" {
		var err error
		if file, err = os.Create(*out); err != nil {
			return err
		}
		w = file
	}
	var ts []chain.Tally // what was written of each chain, for the summary
	err := withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		var line []byte
		if err := a.Store.ExportChains(ctx, from, func(r chain.Row) error {
			if len(ts) == 0 || ts[len(ts)-1].Chain != r.Chain {
				ts = append(ts, chain.Tally{Chain: r.Chain, FirstID: r.ID, FirstPrev: r.PrevHash})
			}
			t := &ts[len(ts)-1]
			t.Rows, t.LastID, t.LastHash = t.Rows+1, r.ID, r.Hash
			var err error
			if line, err = chain.AppendLine(line[:0], r); err != nil {
				return err
			}
			_, err = bw.Write(line)
			return err
		}); err != nil {
			return err
		}
		return bw.Flush()
	})
	if file != nil {
		err = errors.Join(err, file.Close())
	}
	if err != nil {
		return err
	}
	if file == nil {
		return nil
	}
	n := 0
	for _, t := range ts {
		n += t.Rows
	}
	_, err = fmt.Fprintf(c.stdout, "exported %s to %s (`madebook audit verify %s` checks it):\n%s", rowCount(n), *out, *out, tallies(ts))
	return err
}

// parseSince reads --since: an RFC 3339 time, or a date (midnight UTC).
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}

// anchors is --anchor, given once per hash.
type anchors []string

func (a *anchors) String() string { return strings.Join(*a, ",") }

func (a *anchors) Set(s string) error {
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 {
		return errors.New("an anchor is a row's hash: 64 hex digits")
	}
	*a = append(*a, strings.ToLower(s))
	return nil
}

// runAuditVerify is `madebook audit verify`: it checks the hash chain of
// an export and exits 1 naming the first row that breaks it.
func runAuditVerify(_ context.Context, c stdio, args []string) error {
	f := newFlags("audit verify", "madebook audit verify FILE|- [--anchor HASH ...]",
		"Check the hash chain of a file `madebook audit export` wrote (- reads stdin): every\n"+
			"row's hash against its content, and every row's prev_hash against the row before it in\n"+
			"its chain. Exit 0 saying how many rows verified and each chain's last hash; exit 1\n"+
			"naming the first row that does not (its chain and id, and whether its own hash or its\n"+
			"link is wrong). A file that starts mid-chain (export --since) verifies from its first\n"+
			"row, whose prev_hash is taken as given. Needs no database.")
	f.Notes = "Keep each chain's last hash apart from the database (a ticket, a log, another system):\n" +
		"someone able to write the database can rewrite a whole chain with new hashes, and only a\n" +
		"hash kept earlier shows it. --anchor HASH then fails unless some row still has that hash."
	var anchor anchors
	f.Var(&anchor, "anchor", "fail unless a row has the hash `HASH`, kept from an earlier export (repeat for more)")
	files, err := f.parseArgs(c, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return f.Fail("audit verify needs one FILE (or - for stdin), not %d", len(files))
	}
	name, in := files[0], c.stdin
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	} else {
		name = "stdin"
	}
	v, err := chain.Verify(in, anchor...)
	var (
		b  *chain.Break
		le *chain.LineError
		ae *chain.AnchorError
	)
	if errors.As(err, &b) || errors.As(err, &le) || errors.As(err, &ae) {
		return exitError{code: 1, err: fmt.Errorf("%s: %w (%s before it verified)", name, err, rowCount(v.Rows()))}
	} else if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	held := "every hash and every link holds"
	if len(anchor) > 0 {
		held += fmt.Sprintf(", and %s", countOf(len(anchor), "the anchor is a row's hash", "every anchor is a row's hash"))
	}
	_, err = fmt.Fprintf(c.stdout, "verified %s of %s: %s.\n%s", rowCount(v.Rows()), name, held, tallies(v.Tallies()))
	return err
}

// countOf is one or many, by n.
func countOf(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rowCount is "1 row" or "n rows".
func rowCount(n int) string { return fmt.Sprintf("%d %s", n, countOf(n, "row", "rows")) }

// tallies is one line per chain: its rows, ids, where it starts and its
// last hash.
func tallies(ts []chain.Tally) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, t := range ts {
		start := "from the genesis"
		if !t.FromGenesis() {
			start = fmt.Sprintf("mid-chain: row %d's prev_hash %s taken as given", t.FirstID, t.FirstPrev)
		}
		fmt.Fprintf(tw, "  %s\t%s, ids %d to %d, %s; last hash %s\n", t.Chain, rowCount(t.Rows), t.FirstID, t.LastID, start, t.LastHash)
	}
	tw.Flush()
	return b.String()
}
