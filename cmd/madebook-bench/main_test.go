package main

import (
	"context"
	"strings"
	"testing"
)

// --help prints the usage and every flag on stdout and succeeds; a
// mistake exits 2 with the usage on stderr, measuring nothing; a --doc
// file it cannot write into exits 1 with one line, before measuring.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{"--help"}, 0, "Usage:\n  madebook-bench", ""},
		{[]string{"-h"}, 0, "--open-duration D", ""},
		{[]string{"--rate", "0"}, 2, "", "--rate must be at least 1"},
		{[]string{"--db", "bench.db"}, 2, "", "--db is a PostgreSQL URL"},
		{[]string{"--bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"--doc", "../../README.md"}, 1, "", "README.md has no section to write"},
		{[]string{"--doc", "missing.md"}, 1, "", "missing.md: no such file"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", c.args, code, c.code, stderr.String())
		}
		if c.code == 0 && (!strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stdout.String(), "--sessions N") || stderr.Len() > 0) {
			t.Errorf("%q: stdout %q, stderr %q; want the usage on stdout", c.args, stdout.String(), stderr.String())
		}
		if c.code == 1 && (!strings.HasPrefix(stderr.String(), "madebook-bench: --doc: ") || !strings.Contains(stderr.String(), c.want) ||
			strings.Count(stderr.String(), "\n") != 1 || stdout.Len() > 0) {
			t.Errorf("%q: stderr %q, stdout %q; want one line saying %q", c.args, stderr.String(), stdout.String(), c.want)
		}
		if c.code == 2 && (!strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "Usage:") || stdout.Len() > 0) {
			t.Errorf("%q: stderr %q, stdout %q; want %q and the usage on stderr", c.args, stderr.String(), stdout.String(), c.want)
		}
	}
}

// TestHelpSpeaksPlainly: the help names no issue, no internal package or
// function and none of the words only the code's authors use.
func TestHelpSpeaksPlainly(t *testing.T) {
	t.Parallel()
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	help := stdout.String()
	for _, word := range []string{"issue", "#", "protocol.", "internal/", "fleet", "turn by turn", "the floor"} {
		if strings.Contains(strings.ToLower(help), word) {
			t.Errorf("the help says %q:\n%s", word, help)
		}
	}
}
