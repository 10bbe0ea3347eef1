// Command madebook-hook is Madebook's Claude Code command hook alone:
// `madebook-hook claude-code` is `madebook hook claude-code`, the same
// code (internal/hook's Command), in a binary without the server, which
// starts in a fraction of the time. Claude Code runs the hook before and
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
const usage = "usage: madebook-hook claude-code [--url URL] [--mission SLUG]"

// run is the program: its exit status. 0 with an answer (a denial
// included); 2 when stdin is not a hook's JSON (Claude Code blocks the
// call and shows the message) or the command line is wrong.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "claude-code" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	f := flag.NewFlagSet("madebook-hook claude-code", flag.ContinueOnError)
	f.SetOutput(stderr)
	f.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintln(stderr, "A Claude Code command hook: the event's JSON on stdin, the answer's JSON on stdout.")
		fmt.Fprintln(stderr, "It is `madebook hook claude-code` (see `madebook hook claude-code --help`).")
		f.PrintDefaults()
	}
	url := f.String("url", "", "the `URL` Madebook serves at (MADEBOOK_URL; default "+hook.DefaultURL+")")
	mission := f.String("mission", "", "the `SLUG` of the mission the Claude session works on (MADEBOOK_MISSION)")
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
	if err := hook.NewCommand(getenv, *url, *mission).Run(ctx, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "madebook-hook claude-code: "+err.Error())
		return 2
	}
	return 0
}
