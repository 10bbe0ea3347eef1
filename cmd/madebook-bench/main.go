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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const (
	synopsis = "madebook-bench [--db postgres://…] [--sessions N] [--duration D] [--concurrency N] [--rate R] [--open-duration D] [--wrk] [--cpuprofile FILE] [--doc FILE]"
	about    = "Serve Madebook on a throwaway database with N sessions of one agent fleet (one in ten\n" +
		"with an open gate, each with the run a Claude Code hook opens, every one briefed\n" +
		"once), then measure over loopback HTTP: /healthz (the floor), POST /brief and the\n" +
		"check a Claude Code hook sends before a Bash command (POST /api/v1/sessions/ID/tool-calls/check,\n" +
		"naming its run; parsed where a gate blocks a path). Closed loop, one route at a time:\n" +
		"C clients for D each, requests per second. Open loop: R requests a second, the routes\n" +
		"interleaved in a random order, --open-duration of answers each: p50 and p99 latency,\n" +
		"and the server's part of them. Then protocol.Decide on three sessions. Prints each\n" +
		"figure and its ratio to /healthz's, and the goals, each met or missed; --doc also\n" +
		"writes the run into a Markdown file's figures section (docs/benchmarks.md)."
)

// run is the program: its exit status. 0 measured (or --help), 1 failed,
// 2 a usage mistake (with the usage on stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := bench.Defaults
	f := flag.NewFlagSet("madebook-bench", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	f.IntVar(&cfg.Sessions, "sessions", cfg.Sessions, "load `N` sessions")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measure each route's requests per second for `D`")
	f.DurationVar(&cfg.OpenDuration, "open-duration", cfg.OpenDuration, "measure each route's latency for `D` (15,000 samples at the default rate: a p99 is the 150th slowest)")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "`N` clients in the closed loop")
	f.IntVar(&cfg.Rate, "rate", cfg.Rate, "`R` requests a second in the open loop")
	f.StringVar(&cfg.DB, "db", "", "measure on PostgreSQL: a throwaway database created on the server of this postgres:// `URL` (its role may create databases) and dropped at the end; default a SQLite file in a temporary directory")
	f.BoolVar(&cfg.Wrk, "wrk", false, "run the closed loop with wrk (on PATH), a load generator outside this process")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the CPU profile of the closed loop (server and clients, one process) to `FILE`, for go tool pprof")
	doc := f.String("doc", "", "after the run, replace the figures section of the Markdown `FILE` (between its madebook-bench markers) with the run's output")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n\nFlags:\n", synopsis, about)
		f.SetOutput(w)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
	err := f.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return 0
	case err == nil && f.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", f.Arg(0))
	case err == nil:
		err = cfg.Check()
	}
	if err == nil && *doc != "" {
		err = bench.CheckDoc(*doc)
	}
	if err != nil {
		fmt.Fprintf(stderr, "madebook-bench: %v\n\n", err)
		usage(stderr)
		return 2
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
