// Command madebook-hook is Madebook's command hook alone: `madebook-hook
// claude-code` (codex, gemini, copilot, cursor) is `madebook hook claude-code`, the same
// code (internal/hook's Command), in a binary without the server, which
// starts in a fraction of the time. The agent runs the hook before and
// after every tool call, so its start is paid on each. Built with
// CGO_ENABLED=0 it is static and starts faster still (net and os/user
// then skip the C library): see docs/benchmarks.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/madebook/madebook/internal/hook"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// usage is the command line.
const usage = "usage: madebook-hook claude-code|codex|gemini|copilot|cursor [--url URL] [--mission SLUG] [--event EVENT]"

// run is the program: its exit status. 0 with an answer (a denial
// included); 2 when stdin is not a hook's JSON (the executor blocks the
// call and shows the message) or the command line is wrong.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	var e *hook.Executor
	if len(args) > 0 {
		e, _ = hook.ExecutorOf(args[0])
	}
	if e == nil {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	f := flag.NewFlagSet("madebook-hook "+e.Name, flag.ContinueOnError)
	f.SetOutput(stderr)
	f.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintf(stderr, "A %s command hook: the event's JSON on stdin, the answer on stdout.\n", e.Title)
		fmt.Fprintf(stderr, "It is `madebook hook %s` (see `madebook hook %s --help`).\n", e.Name, e.Name)
		f.PrintDefaults()
	}
	url := f.String("url", "", "the `URL` Madebook serves at (MADEBOOK_URL; default "+hook.DefaultURL+")")
	mission := f.String("mission", "", "the `SLUG` of the mission the session works on (MADEBOOK_MISSION)")
	event := f.String("event", "", "the `EVENT` the hook is configured on, for an executor whose events do not name themselves (copilot)")
	if err := f.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if f.NArg() > 0 {
		fmt.Fprintf(stderr, "madebook-hook: unexpected argument %q\n%s\n", f.Arg(0), usage)
		return 2
	}
	c := hook.NewCommand(e, getenv, *url, *mission)
	c.Event = *event
	if err := c.Run(ctx, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "madebook-hook "+e.Name+": "+err.Error())
		return 2
	}
	return 0
}
