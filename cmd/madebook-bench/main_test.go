package main

import (
	"context"
	"strings"
	"testing"
)

// --help prints the usage and every flag on stdout and succeeds; a
// mistake exits 2 with the usage on stderr, measuring nothing.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{"--help"}, 0, "Usage:\n  madebook-bench", ""},
		{[]string{"-h"}, 0, "-open-duration D", ""},
		{[]string{"--rate", "0"}, 2, "", "--rate must be at least 1"},
		{[]string{"--db", "bench.db"}, 2, "", "--db is a PostgreSQL URL"},
		{[]string{"--bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"--doc", "../../README.md"}, 2, "", "README.md has no section to write"},
		{[]string{"--doc", "missing.md"}, 2, "", "missing.md: no such file"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", c.args, code, c.code, stderr.String())
		}
		if c.code == 0 && (!strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stdout.String(), "-sessions N") || stderr.Len() > 0) {
			t.Errorf("%q: stdout %q, stderr %q; want the usage on stdout", c.args, stdout.String(), stderr.String())
		}
		if c.code == 2 && (!strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "Usage:") || stdout.Len() > 0) {
			t.Errorf("%q: stderr %q, stdout %q; want %q and the usage on stderr", c.args, stderr.String(), stdout.String(), c.want)
		}
	}
}
