package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/madebook/madebook/internal/hook"
)

// hookInputError is a hook input the hook cannot act on: main prints it
// and exits 2, which Claude Code takes as a blocking error (the call does
// not run; Claude is shown the message).
type hookInputError struct{ err error }

func (e hookInputError) Error() string { return e.err.Error() }

func (e hookInputError) Unwrap() error { return e.err }

// mustExecutor is the hook's adapter of the executor name, which the
// command table names: a name it does not have is a programming error.
func mustExecutor(name string) *hook.Executor {
	e, ok := hook.ExecutorOf(name)
	if !ok {
		panic("madebook: no hook adapter for " + name)
	}
	return e
}

// runHookFor is `madebook hook EXECUTOR`: the executor's command hook
// (hook.Command). It reads the event on stdin and gives the answer as
// the executor reads it (stdout, stderr, the exit status); it opens no
// database. The lean cmd/madebook-hook runs the same code and starts
// faster.
func runHookFor(e *hook.Executor) func(ctx context.Context, c stdio, args []string) error {
	return func(ctx context.Context, c stdio, args []string) error {
		usage := "madebook hook " + e.Name + " [--url URL] [--mission SLUG]"
		if e.EventArg {
			usage += " --event EVENT"
		}
		f := newFlags("hook "+e.Name, usage, hookAbout(e))
		f.Notes = hookNotes(e)
		base := f.String("url", hook.DefaultURL, "the `URL` Madebook serves at")
		f.Env["url"] = "MADEBOOK_URL"
		mission := f.String("mission", "", "the `SLUG` of the mission the "+e.Title+" session works on")
		f.Env["mission"] = "MADEBOOK_MISSION"
		var event *string
		if e.EventArg {
			event = f.String("event", "", "the `EVENT` the hook is configured on ("+e.Title+"'s events do not name themselves)")
		}
		if err := f.parse(c, args); err != nil {
			return err
		}
		cmd := hook.NewCommand(e, c.getenv, *base, *mission)
		if event != nil {
			if _, ok := e.Events[*event]; !ok {
				return f.Fail("--event %q is not one of %s's events the hook answers: %s", *event, e.Title, strings.Join(hookEvents(e), ", "))
			}
			cmd.Event = *event
		}
		err := cmd.Run(ctx, c.stdin, c.stdout, c.stderr)
		var ie *hook.InputError
		if errors.As(err, &ie) {
			return hookInputError{err}
		}
		return err
	}
}

// hookAbout is the hook's help.
func hookAbout(e *hook.Executor) string {
	return "A " + e.Title + " command hook: the event's JSON on stdin, the answer as " + e.Title + " reads it\n" +
		"on stdout (nothing when a tool call may run), on the events\n  " + strings.Join(hookEvents(e), ", ") + ".\n" +
		"Each event is one request to Madebook, which re-attaches the session whose external_id is\n" +
		"the " + e.Title + " session's id. A call Madebook refuses is denied, with the reason and what to do\n" +
		"instead. When Madebook does not answer, side-effecting tools are denied and read-only ones\n" +
		"run (MADEBOOK_FAIL_OPEN=1: all run). `madebook init " + e.Name + "` writes the settings;\n" +
		"docs/agents.md has them."
}

// hookNotes is the hook's environment and exit status.
func hookNotes(e *hook.Executor) string {
	vars := [][2]string{
		{"MADEBOOK_KEY", "the agent key, mbk_… (required)"},
		{"MADEBOOK_MISSION", "the slug of the mission the " + e.Title + " session works on (or --mission)"},
		{"MADEBOOK_FAIL_OPEN", "1: let every tool run when Madebook does not answer"},
	}
	if e.ProjectDir != "" {
		vars = append(vars, [2]string{e.ProjectDir, "the project root (" + e.Title + " sets it; else git's top level, else the cwd)"})
	}
	s := "Environment:\n"
	for _, v := range vars {
		s += fmt.Sprintf("  %-21s%s\n", v[0], v[1])
	}
	return s + "\nExit status: 0 with an answer (a denial included); 2 when stdin is not a hook's JSON\n" +
		"(" + e.Title + " blocks the call and shows the message) or a command-line mistake."
}
