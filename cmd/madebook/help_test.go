package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/agentcli"
)

// helpCases are every way to ask for help, and a line the answer must
// hold.
func helpCases() []struct {
	args []string
	want string
} {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "madebook COMMAND"},
		{[]string{"-h"}, "madebook COMMAND"},
		{[]string{"help"}, "madebook COMMAND"},
		{[]string{"help", "serve"}, "madebook serve [--addr ADDR]"},
		{[]string{"help", "user"}, "madebook user add"},
		{[]string{"help", "user", "add"}, "--email EMAIL"},
		{[]string{"help", "agent"}, "MADEBOOK_SESSION"},
		{[]string{"agent", "help", "run", "start"}, "--parent RUN"},
	}
	// The agent's sub-commands are a table of their own under "agent".
	var agentCommands []command
	for _, name := range agentcli.Names() {
		agentCommands = append(agentCommands, command{name: name})
	}
	for _, table := range []struct {
		prefix []string
		cmds   []command
	}{{nil, commands}, {[]string{"agent"}, agentCommands}} {
		for _, c := range table.cmds {
			words := append(append([]string{}, table.prefix...), strings.Fields(c.name)...)
			name := "madebook " + strings.Join(words, " ")
			for _, h := range []string{"--help", "-h"} {
				cases = append(cases, struct {
					args []string
					want string
				}{append(words[:len(words):len(words)], h), name})
			}
			if len(words) > len(table.prefix)+1 {
				cases = append(cases, struct {
					args []string
					want string
				}{append(words[:len(words)-1:len(words)-1], "--help"), name})
			}
		}
	}
	return cases
}

func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Parallel()
	for _, c := range helpCases() {
		t.Run(strings.Join(c.args, " ")+" prints its usage and succeeds", func(t *testing.T) {
			t.Parallel()
			// Every command would open MADEBOOK_DB: help must not.
			path := tempDB(t)
			out, err := cli(t, envOf(map[string]string{"MADEBOOK_DB": path}), "", c.args...)
			if err != nil {
				t.Fatalf("error %v, want none (exit 0)", err)
			}
			if !strings.HasPrefix(out, "Usage:\n") || !strings.Contains(out, c.want) {
				t.Errorf("stdout does not start with Usage: or lacks %q:\n%s", c.want, out)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("asking for help created the database (%v)", err)
			}
		})
	}
}

func TestEveryCommandsHelpNamesItsFlags(t *testing.T) {
	t.Parallel()
	for cmd, wants := range map[string][]string{
		"serve":          {"--addr ADDR", "default 127.0.0.1:8080; or MADEBOOK_ADDR", "--db PATH", "default ./madebook.db; or MADEBOOK_DB", "--secure-cookies", "MADEBOOK_SECURE_COOKIES", "--demo", "-h, --help"},
		"migrate":        {"--db PATH", "--db-password-file FILE", "or MADEBOOK_DB_PASSWORD_FILE"},
		"user add":       {"--email EMAIL", "--role ROLE", "admin, lead or viewer", "stdin"},
		"key create":     {"--name NAME", "--expires D", "--token-max-age D", "or MADEBOOK_TOKEN_MAX_AGE", "--db-password-file FILE"},
		"key list":       {"--format FORMAT", "--db PATH"},
		"key revoke":     {"madebook key revoke ID", "credential_revoked"},
		"token create":   {"--email EMAIL", "--name NAME", "--expires D", "or MADEBOOK_TOKEN_MAX_AGE", "refused (not shortened)"},
		"token list":     {"--email EMAIL", "--format FORMAT"},
		"token revoke":   {"madebook token revoke ID"},
		"audit":          {"--format FORMAT", "--older-than AGE", "default 24h", "--min-age AGE", "default 5m", "undelivered-resolutions", "stale-gates"},
		"rules infer":    {"--repo PATH", "--apply"},
		"audit export":   {"--since T", "--out FILE", "--db PATH", "prev_hash"},
		"agent brief":    {"--exit-on-state", "(default true)", "6 HARD_STOP", "--exit-on-state=false"},
		"agent complete": {"--exit-on-state", "exits 0 when the call succeeded"},
		"audit verify":   {"--anchor HASH", "FILE|-", "taken as given", "Keep each chain's last hash"},
	} {
		out := mustCLI(t, "", append(strings.Fields(cmd), "--help")...)
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("madebook %s --help lacks %q:\n%s", cmd, w, out)
			}
		}
	}
}

// TestUsageColumnsAreAligned checks every table of every help text (the
// commands, the flags, the audit reports): in each, the second column
// starts at the same place on every line.
func TestUsageColumnsAreAligned(t *testing.T) {
	t.Parallel()
	texts := map[string]string{"madebook --help": mustCLI(t, "", "--help")}
	for _, c := range helpCases() {
		texts["madebook "+strings.Join(c.args, " ")] = mustCLI(t, "", c.args...)
	}
	tables := 0
	for name, text := range texts {
		for _, block := range strings.Split(text, "\n\n") {
			var rows []string
			for _, line := range strings.Split(block, "\n") {
				if strings.HasPrefix(line, "  ") {
					rows = append(rows, line)
				}
			}
			if len(rows) < 2 {
				continue
			}
			tables++
			want := secondColumn(rows[0])
			for _, r := range rows {
				if got := secondColumn(r); got < 0 || got != want {
					t.Errorf("%s: the second column of %q starts at %d, want %d as in %q", name, r, got, want, rows[0])
				}
			}
		}
	}
	if tables < len(commands)+2 {
		t.Errorf("checked %d tables, want one at least for each command and the top usage", tables)
	}
	t.Run("the check finds a misaligned row", func(t *testing.T) {
		if secondColumn("  --db PATH   x") == secondColumn("  --addr ADDR   x") {
			t.Error("secondColumn does not tell the rows apart")
		}
	})
}

// secondColumn is where a table row's second column starts: the first
// character after a run of two spaces or more past the indentation, or -1.
func secondColumn(row string) int {
	i := len(row) - len(strings.TrimLeft(row, " "))
	for gap := 0; i < len(row); i++ {
		if row[i] != ' ' {
			if gap >= 2 {
				return i
			}
			gap = 0
			continue
		}
		gap++
	}
	return -1
}

// TestExitCodes runs the built binary: help is 0, a usage mistake 2 with
// the usage on stderr, another failure 1 with one line.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	path := tempDB(t)
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"serve", "--help"}, 0, "madebook serve [--addr ADDR]", ""},
		{[]string{"user", "--help"}, 0, "madebook user add", ""},
		{[]string{"key", "-h"}, 0, "madebook key create", ""},
		{[]string{"help"}, 0, "madebook COMMAND", ""},
		{[]string{"frobnicate"}, 2, "", "unknown command \"frobnicate\""},
		{nil, 2, "", "no command given"},
		{[]string{"serve", "--bogus"}, 2, "", "madebook serve [--addr ADDR]"},
		{[]string{"audit", "--db", path}, 1, "", "madebook audit: no database at " + path + ":"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := runBinary(t, bin, []string{"MADEBOOK_DB=", "MADEBOOK_ADDR="}, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), c.stdout) || (c.stdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to hold %q", stdout.String(), c.stdout)
			}
			if !strings.Contains(stderr.String(), c.stderr) || (c.stderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want it to hold %q", stderr.String(), c.stderr)
			}
			if c.code == 2 && !strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("a usage mistake does not show the usage: %q", stderr.String())
			}
			if c.code == 1 && (strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "Usage:")) {
				t.Errorf("a failure is not one line without the usage: %q", stderr.String())
			}
		})
	}
}

// runBinary runs the built binary with args, in this process's environment
// plus env, and returns its exit status, stdout and stderr.
func runBinary(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr *strings.Builder) {
	t.Helper()
	return runBinaryIn(t, bin, env, "", args...)
}

// runBinaryIn is runBinary with stdin.
func runBinaryIn(t *testing.T, bin string, env []string, stdin string, args ...string) (code int, stdout, stderr *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	stdout, stderr = &strings.Builder{}, &strings.Builder{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout, stderr
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout, stderr
}
