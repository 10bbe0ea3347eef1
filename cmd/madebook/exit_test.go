package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exited is how one in-process run ended, as main would end it: the exit
// status, stderr (the warnings, then outcome's message) and stdout.
type exited struct {
	code           int
	stdout, stderr string
}

// runExit runs the command line in process and returns what main would
// print and exit with.
func runExit(t *testing.T, getenv func(string) string, args ...string) exited {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := runStdio(ctx, append([]string{"madebook"}, args...),
		stdio{getenv: getenv, stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
	r := exited{stdout: stdout.String()}
	if err != nil {
		var msg string
		r.code, msg = outcome(err)
		if msg != "" {
			stderr.WriteString(msg + "\n")
		}
	}
	r.stderr = stderr.String()
	return r
}

// TestAUsageMistakeExits2WithTheUsage: an unknown flag, a required flag or
// operand left out, a value a flag cannot take, an argument too many, in
// any command: one line naming the command and the mistake, then that
// command's usage, exit 2, nothing on stdout.
func TestAUsageMistakeExits2WithTheUsage(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "", "migrate", "--db", path)
	for _, c := range []struct {
		args  []string
		first string // the first line of stderr
		usage string // the usage that follows
	}{
		{[]string{"frobnicate"}, `madebook: unknown command "frobnicate"`, "madebook COMMAND"},
		{[]string{"key"}, "madebook: key needs a sub-command", "madebook key create"},
		{[]string{"audit", "--db", path, "--bogus"}, "madebook audit: flag provided but not defined: -bogus", "madebook audit [REPORT ..."},
		{[]string{"audit", "--db", path, "--format", "xml"}, `madebook audit: --format is table, json or csv, not "xml"`, "madebook audit [REPORT ..."},
		{[]string{"key", "create", "--db", path}, "madebook key create: key create needs --name", "madebook key create --name NAME"},
		{[]string{"key", "create", "--name", "k", "--expires", "soon", "--db", path}, "madebook key create: invalid value \"soon\" for flag -expires", "madebook key create --name NAME"},
		{[]string{"migrate", "--db", path, "extra"}, `madebook migrate: unexpected argument "extra"`, "madebook migrate [--db PATH|URL]"},
		{[]string{"serve", "--delivery-lease", "soon", "--db", path}, "madebook serve: invalid value \"soon\" for flag -delivery-lease", "madebook serve [--addr ADDR]"},
		{[]string{"user", "add", "--email", "a@example.com", "--role", "owner", "--db", path}, `madebook user add: --role "owner" is not a role`, "madebook user add"},
		{[]string{"token", "revoke", "abc", "--db", path}, `madebook token revoke: token revoke: "abc" is not an id`, "madebook token revoke ID"},
		{[]string{"audit", "verify"}, "madebook audit verify: audit verify needs one FILE", "madebook audit verify FILE|-"},
		{[]string{"audit", "export", "--since", "yesterday", "--db", path}, `madebook audit export: --since "yesterday" is not a time`, "madebook audit export"},
		{[]string{"rules", "infer", "--db", path}, "madebook rules infer: rules infer needs --repo", "madebook rules infer --repo PATH"},
		{[]string{"init", "claude-code", "--url", "ftp://x", "--dir", t.TempDir()}, "madebook init claude-code: --url (or MADEBOOK_URL)", "madebook init claude-code"},
		{[]string{"agent", "brief", "extra"}, `madebook agent brief: unexpected argument "extra"`, "madebook agent brief [--session ID]"},
		{[]string{"agent", "frobnicate"}, `madebook agent: unknown command "frobnicate"`, "madebook agent SUBCOMMAND"},
		{[]string{"hook", "claude-code", "--bogus"}, "madebook hook claude-code: flag provided but not defined: -bogus", "madebook hook claude-code"},
		{[]string{"version", "extra"}, `madebook version: unexpected argument "extra"`, "madebook version"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runExit(t, noEnv, c.args...)
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if r.code != 2 || !strings.HasPrefix(first, c.first) {
				t.Fatalf("exit %d, first line %q; want 2 and %q", r.code, first, c.first)
			}
			if !strings.HasPrefix(rest, "\nUsage:\n") || !strings.Contains(rest, c.usage) {
				t.Errorf("stderr after the error is not the usage of %q:\n%s", c.usage, rest)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

// TestAFailureExits1WithOneLine: whatever is not a mistake in the command
// line (a file or a database that is not there, a database that does not
// answer, a refusal of the service) is one line on stderr, "madebook CMD:
// why", without the usage, and exit 1.
func TestAFailureExits1WithOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "madebook.db")
	mustCLI(t, "", "migrate", "--db", path)
	missing := filepath.Join(dir, "missing.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String() // nothing listens there once closed
	l.Close()
	for _, c := range []struct {
		args []string
		env  map[string]string
		line string // what stderr's one line starts with
		has  string // and holds
	}{
		{[]string{"audit", "--db", missing}, nil, "madebook audit: no database at " + missing, "--db"},
		{[]string{"audit", "export", "--db", missing}, nil, "madebook audit export: no database at " + missing, ""},
		{[]string{"key", "list", "--db", missing}, nil, "madebook key list: no database at " + missing, ""},
		{[]string{"token", "list"}, map[string]string{"MADEBOOK_DB": missing}, "madebook token list: no database at " + missing, "MADEBOOK_DB"},
		{[]string{"key", "revoke", "1", "--db", missing}, nil, "madebook key revoke: no database at " + missing, ""},
		{[]string{"token", "revoke", "1", "--db", missing}, nil, "madebook token revoke: no database at " + missing, ""},
		{[]string{"migrate", "--db", filepath.Join(dir, "no", "such", "dir", "x.db")}, nil, "madebook migrate: open database", "no such file or directory"},
		{[]string{"audit", "--db", "postgres://nobody@" + closed + "/x"}, nil, "madebook audit: open database", "connect"},
		{[]string{"audit", "verify", filepath.Join(dir, "export.jsonl")}, nil, "madebook audit verify: open ", "no such file"},
		{[]string{"rules", "infer", "--repo", filepath.Join(dir, "repo")}, nil, "madebook rules infer: ", "is not a directory"},
		{[]string{"key", "revoke", "9999", "--db", path}, nil, "madebook key revoke: ", "no agent key 9999"},
		{[]string{"token", "create", "--email", "ghost@example.com", "--db", path}, nil, "madebook token create: ", "ghost@example.com"},
		{[]string{"agent", "brief"}, map[string]string{"MADEBOOK_URL": "http://" + closed, "MADEBOOK_KEY": "mbk_k", "MADEBOOK_SESSION": "s"},
			"madebook agent: Madebook does not answer at http://" + closed, ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runExit(t, envOf(c.env), c.args...)
			if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, c.line) || !strings.Contains(r.stderr, c.has) {
				t.Fatalf("exit %d, stderr %q; want 1 and one line starting %q holding %q", r.code, r.stderr, c.line, c.has)
			}
			if strings.Contains(r.stderr, "Usage:") {
				t.Errorf("a failure shows the usage: %q", r.stderr)
			}
		})
	}
	// The commands that read (or revoke) refused the missing database
	// without creating it.
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only command created %s (%v)", missing, err)
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":                                  "plain",
		"connect:\n\ta: refused\n\tb: refused\n": "connect: a: refused; b: refused",
		"\n  two\n\nlines  \n":                   "two; lines",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
