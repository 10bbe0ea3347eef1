// Command madebook is the governance console for AI coding agents: the
// server (serve), the operator's commands (migrate, user add, key
// create|list|revoke, token create|list|revoke, audit, rules infer), the
// agent calls from a shell (agent), a project's Claude Code setup (init
// claude-code), the Claude Code hook (hook claude-code) and version. Each
// command is in its own file; this one holds main, run and the table of
// commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/madebook/madebook/internal/agentcli"
	"github.com/madebook/madebook/internal/cliflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout)
	stop()
	if err == nil {
		return
	}
	code, msg := outcome(err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	os.Exit(code)
}

// outcome is how the program ends after run returned err (not nil): the
// exit status, and what to print on stderr ("" for nothing).
func outcome(err error) (code int, msg string) {
	var (
		u  usageError
		e  exitError
		ae agentcli.Exit
	)
	switch {
	case errors.As(err, new(auditFailed)):
		return 1, "" // the reports on stdout already say what was found
	case errors.As(err, &ae):
		return ae.Code, "madebook agent: " + ae.Msg
	case errors.As(err, new(hookInputError)):
		return 2, "madebook " + err.Error()
	case errors.As(err, &u):
		return 2, "madebook: " + err.Error()
	case errors.As(err, &e):
		return e.code, "madebook: " + err.Error()
	}
	return 1, "madebook: " + err.Error()
}

// commands is every command, in the order `madebook --help` lists them.
var commands = []command{
	{"serve", "migrate the database, then serve the console and the API (--demo: a throwaway demo)", runServe},
	{"migrate", "bring the database's schema up to date", runMigrate},
	{"user add", "add a person who signs in to the console (password: one line on stdin)", runUserAdd},
	{"key create", "print a new agent key, once (--expires 90d: it stops working then)", runKeyCreate},
	{"key list", "list the agent keys: name, prefix, created, last used, expires, state", runKeyList},
	{"key revoke", "revoke an agent key by its id: refused from its next request on", runKeyRevoke},
	{"token create", "print a new personal API token, once (--expires 90d: it stops working then)", runTokenCreate},
	{"token list", "list the personal API tokens: name, owner, prefix, created, last used, expires, state", runTokenList},
	{"token revoke", "revoke a personal API token by its id: refused from its next request on", runTokenRevoke},
	{"audit", "run the audit reports; exit 1 if any finds rows", runAudit},
	{"audit export", "write the timeline and the activity record as hash-chained JSON lines", runAuditExport},
	{"audit verify", "check an export's hash chain; exit 1 naming the first row that breaks it", runAuditVerify},
	{"rules infer", "propose architecture rules from a repository's imports", runRulesInfer},
	{"agent", "make an agent's calls from a shell; exit status by next_action (agent --help)", runAgent},
	{"init claude-code", "set a project up for Claude Code governed by Madebook (.claude/settings.json, .mcp.json)", runInitClaudeCode},
	{"hook claude-code", "a Claude Code command hook: the event's JSON on stdin, the answer's on stdout", runHookClaudeCode},
	{"version", "print the version, the commit it was built from and the Go version (also --version)", runVersion},
}

// run is the whole program: main only calls it. Warnings go to the
// process's stderr (runStdio takes another).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	return runStdio(ctx, args, stdio{getenv: getenv, stdin: stdin, stdout: stdout, stderr: os.Stderr})
}

// runStdio is run with every stream given.
func runStdio(ctx context.Context, args []string, c stdio) error {
	stdout := c.stdout
	if len(args) < 2 {
		return usageError{Msg: "no command given", Usage: topUsage(commands)}
	}
	args = args[1:]
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	if cliflag.IsHelp(args[0]) {
		if args[0] != "help" || len(args) == 1 {
			_, err := io.WriteString(stdout, topUsage(commands))
			return err
		}
		args = append(args[1:], "--help") // help COMMAND is COMMAND --help
	}
	cmd, rest, err := find(commands, "madebook", topUsage(commands), args)
	if err != nil {
		return err
	}
	if err := cmd.run(ctx, c, rest); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}
