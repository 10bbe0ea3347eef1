// Command madebook is the governance console for AI coding agents: the
// server (serve), the operator's commands (migrate, user add, key
// create|list|revoke, token create|list|revoke, audit, rules infer), the
// agent calls from a shell (agent), a project's setup for a coding agent
// (init claude-code|codex|gemini|copilot|cursor), the coding agents'
// hooks (hook claude-code|codex|gemini|copilot|cursor) and version. Each
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
	"strings"
	"syscall"

	"github.com/madebook/madebook/internal/agentcli"
	"github.com/madebook/madebook/internal/cliflag"
	"github.com/madebook/madebook/internal/hook"
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
// exit status, and what to print on stderr ("" for nothing). It is the
// one place errors become exit statuses: a usage mistake (a UsageError)
// is 2 with the usage of the command it was made in; every other failure
// is one line, "madebook CMD: why", and 1 (or an exitError's own code),
// without the usage.
func outcome(err error) (code int, msg string) {
	var (
		u   usageError
		e   exitError
		ae  agentcli.Exit
		cmd = "madebook"
	)
	var failed commandError
	if errors.As(err, &failed) {
		if failed.cmd != "" {
			cmd = "madebook " + failed.cmd
		}
		err = failed.err
	}
	switch {
	case errors.As(err, new(auditFailed)):
		return 1, "" // the reports on stdout already say what was found
	case errors.As(err, &ae):
		return ae.Code, "madebook agent: " + oneLine(ae.Msg)
	case errors.As(err, &u):
		if u.Cmd != "" {
			cmd = u.Cmd
		}
		return 2, cmd + ": " + oneLine(u.Msg) + "\n\n" + strings.TrimRight(u.Usage, "\n")
	case errors.As(err, new(hookInputError)):
		return 2, cmd + ": " + oneLine(err.Error())
	case errors.As(err, &e):
		return e.code, cmd + ": " + oneLine(err.Error())
	}
	return 1, cmd + ": " + oneLine(err.Error())
}

// commandError is a failure of the command cmd ("audit export"), as run
// returns it: outcome names the command before the reason.
type commandError struct {
	cmd string
	err error
}

func (e commandError) Error() string { return e.cmd + ": " + e.err.Error() }

func (e commandError) Unwrap() error { return e.err }

// oneLine is an error's text on one line: the lines a driver's error may
// hold (PostgreSQL's, one for each address tried) joined with "; ", or a
// space after a line ending in a colon.
func oneLine(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
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
	{"agent", "make an agent's calls from a shell, the JSON answer on stdout (agent --help)", runAgent},
	{"init claude-code", "set a project up for Claude Code governed by Madebook (.claude/settings.json, .mcp.json)", runInitClaudeCode},
	{"init codex", "set a project up for Codex CLI governed by Madebook (.codex/hooks.json, .codex/config.toml)", runInitCodex},
	{"init gemini", "set a project up for Gemini CLI governed by Madebook (.gemini/settings.json)", runInitGemini},
	{"init copilot", "set a project up for Copilot CLI governed by Madebook (.github/hooks/madebook.json, .mcp.json)", runInitCopilot},
	{"init cursor", "set a project up for Cursor governed by Madebook (.cursor/hooks.json, .cursor/mcp.json)", runInitCursor},
	{"hook claude-code", "a Claude Code command hook: the event's JSON on stdin, the answer's on stdout", runHookFor(hook.ClaudeCode)},
	{"hook codex", "a Codex CLI command hook: the event's JSON on stdin, the answer's on stdout", runHookFor(mustExecutor("codex"))},
	{"hook gemini", "a Gemini CLI command hook: the event's JSON on stdin, the answer's on stdout", runHookFor(mustExecutor("gemini"))},
	{"hook copilot", "a Copilot CLI command hook: the event's JSON on stdin, the answer's on stdout", runHookFor(mustExecutor("copilot"))},
	{"hook cursor", "a Cursor command hook: the event's JSON on stdin, the answer's on stdout", runHookFor(mustExecutor("cursor"))},
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
		return usageError{Cmd: "madebook", Msg: "no command given", Usage: topUsage(commands)}
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
	if err := cmd.run(ctx, c, rest); err != nil && !errors.Is(err, flag.ErrHelp) {
		return commandError{cmd: cmd.name, err: err}
	}
	return nil
}
