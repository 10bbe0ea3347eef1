package main

import (
	"context"
	"errors"

	"github.com/madebook/madebook/internal/hook"
)

// hookInputError is a hook input the hook cannot act on: main prints it
// and exits 2, which Claude Code takes as a blocking error (the call does
// not run; Claude is shown the message).
type hookInputError struct{ err error }

func (e hookInputError) Error() string { return e.err.Error() }

func (e hookInputError) Unwrap() error { return e.err }

// runHookClaudeCode is `madebook hook claude-code`: a Claude Code command
// hook (hook.Command). It reads the event on stdin and prints the answer
// on stdout; it opens no database. The lean cmd/madebook-hook runs the
// same code and starts faster.
func runHookClaudeCode(ctx context.Context, c stdio, args []string) error {
	f := newFlags("hook claude-code", "madebook hook claude-code [--url URL] [--mission SLUG]", hookAbout)
	f.Notes = hookNotes
	base := f.String("url", hook.DefaultURL, "the `URL` Madebook serves at")
	f.Env["url"] = "MADEBOOK_URL"
	mission := f.String("mission", "", "the `SLUG` of the mission the Claude session works on")
	f.Env["mission"] = "MADEBOOK_MISSION"
	if err := f.parse(c, args); err != nil {
		return err
	}
	err := hook.NewCommand(c.getenv, *base, *mission).Run(ctx, c.stdin, c.stdout)
	var ie *hook.InputError
	if errors.As(err, &ie) {
		return hookInputError{err}
	}
	return err
}

// hookAbout and hookNotes are the hook's help.
const (
	hookAbout = "A Claude Code command hook (SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest,\n" +
		"PostToolUse, PostToolUseFailure, SubagentStart, Stop, SubagentStop, SessionEnd): the event's\n" +
		"JSON on stdin, the answer's JSON on stdout (nothing when a tool call may run). Each event is one\n" +
		"request to Madebook, which re-attaches the session whose external_id is Claude's session_id.\n" +
		"PreToolUse denies a call Madebook refuses, with the reason and what to do instead. When Madebook\n" +
		"does not answer, side-effecting tools are denied and read-only ones run (MADEBOOK_FAIL_OPEN=1:\n" +
		"all run). `madebook init claude-code` writes the settings; docs/agents.md has them."
	hookNotes = "Environment:\n" +
		"  MADEBOOK_KEY        the agent key, mbk_… (required)\n" +
		"  MADEBOOK_MISSION    the slug of the mission the Claude session works on (or --mission)\n" +
		"  MADEBOOK_FAIL_OPEN  1: let every tool run when Madebook does not answer\n" +
		"  CLAUDE_PROJECT_DIR  the project root (Claude Code sets it; else git's top level, else the cwd)\n\n" +
		"Exit status: 0 with an answer (a denial included); 2 when stdin is not a hook's JSON (Claude\n" +
		"Code blocks the call and shows the message) or a command-line mistake."
)
