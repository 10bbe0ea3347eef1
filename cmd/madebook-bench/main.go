// Command madebook-bench is Madebook's load generator (internal/bench):
// it serves Madebook on a throwaway database with a fleet of sessions,
// then measures /brief and the executor's check against /healthz, side
// by side in one run. docs/benchmarks.md says how to read its output.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/madebook/madebook/internal/bench"
	"github.com/madebook/madebook/internal/cliflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const (
	synopsis = "madebook-bench [--db postgres://…] [--sessions N] [--duration D] [--concurrency N] [--rate R] [--open-duration D] [--wrk] [--cpuprofile FILE] [--doc FILE]"
	about    = "Measure how fast Madebook answers its agents. It starts Madebook on a throwaway database\n" +
		"(a SQLite file, or a PostgreSQL database with --db) holding N agent sessions, a tenth\n" +
		"of them waiting on a person's decision, then sends requests over loopback HTTP to:\n" +
		"  GET /healthz, the baseline every other figure is compared with;\n" +
		"  POST /brief, what an agent asks before it acts;\n" +
		"  POST /api/v1/sessions/ID/tool-calls/check, what the Claude Code hook asks before a\n" +
		"  shell command runs.\n" +
		"Throughput (the closed loop): C clients send requests back to back for D on each\n" +
		"endpoint, in requests per second. Latency (the open loop): R requests a second, the\n" +
		"endpoints mixed in a random order, for --open-duration each: p50 and p99, and the time\n" +
		"spent in the server. It also times the decision engine alone. Each figure is printed\n" +
		"with its ratio to /healthz's, then the targets, each met or missed."
	notes = "Exit status: 0 measured (or --help); 1 the run failed, with one line on stderr;\n" +
		"2 a mistake on the command line, with this usage on stderr.\n" +
		"docs/benchmarks.md says how to read the figures; --doc docs/benchmarks.md refreshes them."
)

// run is the program: its exit status. 0 measured (or --help), 1 failed
// (one line on stderr), 2 a usage mistake (with the usage on stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := bench.Defaults
	f := cliflag.New("madebook-bench", synopsis, about)
	f.Notes = notes
	f.IntVar(&cfg.Sessions, "sessions", cfg.Sessions, "load `N` sessions")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measure each endpoint's throughput for `D`")
	f.DurationVar(&cfg.OpenDuration, "open-duration", cfg.OpenDuration, "measure each endpoint's latency for `D` (15,000 samples at the default rate: a p99 is the 150th slowest)")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "`N` clients in the throughput measurement")
	f.IntVar(&cfg.Rate, "rate", cfg.Rate, "`R` requests a second in the latency measurement")
	f.StringVar(&cfg.DB, "db", "", "measure on PostgreSQL: a throwaway database created on the server of this postgres:// `URL` (its role may create databases) and dropped at the end; default a SQLite file in a temporary directory")
	f.BoolVar(&cfg.Wrk, "wrk", false, "measure throughput with wrk (on PATH), a load generator outside this process")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the CPU profile of the throughput measurement (server and clients, one process) to `FILE`, for go tool pprof")
	doc := f.String("doc", "", "after the run, write its figures into the Markdown `FILE`, between its two madebook-bench comment lines")
	rest, err := f.ParseArgs(args, func(string) string { return "" }, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err == nil && len(rest) > 0:
		err = f.Fail("unexpected argument %q", rest[0])
	case err == nil:
		if check := cfg.Check(); check != nil {
			err = f.Fail("%v", check)
		}
	}
	var u cliflag.UsageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "madebook-bench: %s\n\n%s", u.Msg, u.Usage)
		return 2
	} else if err != nil {
		fmt.Fprintf(stderr, "madebook-bench: %v\n", err)
		return 1
	}
	// The file --doc names is checked before the run, not after it.
	if *doc != "" {
		if err := bench.CheckDoc(*doc); err != nil {
			fmt.Fprintf(stderr, "madebook-bench: --doc: %v\n", err)
			return 1
		}
	}
	var output bytes.Buffer
	if err := bench.Run(ctx, cfg, io.MultiWriter(stdout, &output)); err != nil {
		fmt.Fprintf(stderr, "madebook-bench: %v\n", err)
		return 1
	}
	if *doc != "" {
		if err := bench.WriteDoc(*doc, cfg, output.String(), time.Now()); err != nil {
			fmt.Fprintf(stderr, "madebook-bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote the figures into %s\n", *doc)
	}
	return 0
}
