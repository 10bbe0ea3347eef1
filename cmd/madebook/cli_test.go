package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web"
)

// noEnv is a getenv with nothing set.
func noEnv(string) string { return "" }

// envOf is a getenv reading from m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// cli runs one command to completion and returns its stdout.
func cli(t *testing.T, getenv func(string) string, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, append([]string{"madebook"}, args...), getenv, strings.NewReader(stdin), &out)
	return out.String(), err
}

// mustCLI runs a command that must succeed.
func mustCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := cli(t, noEnv, stdin, args...)
	if err != nil {
		t.Fatalf("madebook %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func tempDB(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "madebook.db")
}

var (
	agentKeyLine = regexp.MustCompile(`^mbk_[A-Za-z0-9_-]{43}$`)
	tokenLine    = regexp.MustCompile(`^mbt_[A-Za-z0-9_-]{43}$`)
)

// secretOf checks that out is exactly one line holding one secret of the
// pattern, and returns it.
func secretOf(t *testing.T, out string, pattern *regexp.Regexp) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1 || !pattern.MatchString(lines[0]) || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout %q: want exactly one line matching %s", out, pattern)
	}
	return lines[0]
}

// apiOn serves the API on the database at path, as serve would, for
// checking that a secret printed by the CLI works.
func apiOn(t *testing.T, path string) *httptest.Server {
	t.Helper()
	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv := httptest.NewServer(web.NewServer(web.Deps{Auth: auth.NewService(store, time.Now),
		Gov: governance.New(store, time.Now, governance.Options{}), Health: store.Ping, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, method, url, secret, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestUserAddReadsThePasswordFromStdin(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	out := mustCLI(t, "correct-horse-battery\n", "user", "add", "--email", "Lead@Example.com", "--role", "lead", "--db", path)
	if !strings.Contains(out, "lead@example.com") || !strings.Contains(out, "lead") {
		t.Errorf("stdout %q does not confirm the user", out)
	}
	// Without a trailing newline too, and with a Windows line end.
	mustCLI(t, "second-password", "user", "add", "--email", "viewer@example.com", "--role", "viewer", "--db", path)
	mustCLI(t, "third-password\r\n", "user", "add", "--email", "admin@example.com", "--role", "admin", "--db", path)

	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := auth.NewService(store, time.Now)
	ctx := context.Background()
	for _, c := range []struct {
		email, password string
		role            auth.Role
	}{{"lead@example.com", "correct-horse-battery", auth.Lead}, {"viewer@example.com", "second-password", auth.Viewer},
		{"admin@example.com", "third-password", auth.Admin}} {
		u, err := a.CheckPassword(ctx, c.email, c.password)
		if err != nil {
			t.Errorf("%s cannot sign in with the password from stdin: %v", c.email, err)
			continue
		}
		if u.Role != c.role {
			t.Errorf("%s has role %s, want %s", c.email, u.Role, c.role)
		}
	}
	if _, err := a.CheckPassword(ctx, "lead@example.com", "correct-horse-battery\n"); err == nil {
		t.Error("the line end was kept in the password")
	}
}

func TestUserAddRefusals(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "password-123\n", "user", "add", "--email", "dup@example.com", "--role", "lead", "--db", path)
	cases := []struct {
		name, stdin string
		args        []string
		mention     string
	}{
		{"a duplicate email", "password-456\n", []string{"--email", "dup@example.com", "--role", "viewer"}, "dup@example.com"},
		{"a duplicate email in other case", "password-456\n", []string{"--email", "DUP@example.com", "--role", "viewer"}, "dup@example.com"},
		{"no password on stdin", "", []string{"--email", "new@example.com", "--role", "lead"}, "password"},
		{"an empty password line", "\n", []string{"--email", "new@example.com", "--role", "lead"}, "password"},
		{"a short password", "short\n", []string{"--email", "new@example.com", "--role", "lead"}, "8 characters"},
		{"a bad email", "password-456\n", []string{"--email", "not-an-email", "--role", "lead"}, "not-an-email"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := cli(t, noEnv, c.stdin, append(append([]string{"user", "add"}, c.args...), "--db", path)...)
			if err == nil {
				t.Fatalf("no error; stdout %q", out)
			}
			var u usageError
			if errors.As(err, &u) {
				t.Errorf("a usage error for bad content: %v", err)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q does not mention %q", err, c.mention)
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
		})
	}
	// Only the first user exists.
	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := auth.NewService(store, time.Now).CheckPassword(context.Background(), "dup@example.com", "password-123"); err != nil {
		t.Errorf("the first user's password changed: %v", err)
	}
	var n int
	if err := store.Writer().QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d users (%v), want 1", n, err)
	}
}

func TestCommandLineMistakesAreUsageErrors(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	cases := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"an unknown command", []string{"frobnicate", "--db", path}},
		{"user with no sub-command", []string{"user", "--db", path}},
		{"an unknown user sub-command", []string{"user", "delete", "--email", "a@example.com", "--db", path}},
		{"an unknown key sub-command", []string{"key", "revoke", "--db", path}},
		{"user add without --role", []string{"user", "add", "--email", "a@example.com", "--db", path}},
		{"user add without --email", []string{"user", "add", "--role", "lead", "--db", path}},
		{"user add with an unknown role", []string{"user", "add", "--email", "a@example.com", "--role", "owner", "--db", path}},
		{"key create without --name", []string{"key", "create", "--db", path}},
		{"token create without --email", []string{"token", "create", "--db", path}},
		{"an unknown flag", []string{"migrate", "--bogus", "--db", path}},
		{"a flag of another command", []string{"migrate", "--addr", ":1", "--db", path}},
		{"a flag without its value", []string{"migrate", "--db"}},
		{"an unexpected argument", []string{"migrate", "--db", path, "extra"}},
		{"an unexpected argument after key create", []string{"key", "create", "--name", "a", "--db", path, "b"}},
		{"a delivery lease under a second", []string{"serve", "--delivery-lease", "500ms", "--db", path}},
		{"a delivery lease that is not a duration", []string{"serve", "--delivery-lease", "soon", "--db", path}},
		{"a public URL that is not absolute", []string{"serve", "--public-url", "madebook.example.com", "--db", path}},
		{"a public URL that is not http", []string{"serve", "--public-url", "ftp://madebook.example.com", "--db", path}},
		{"an expiry sweep under a second", []string{"serve", "--expiry-sweep", "100ms", "--db", path}},
		{"an expiry sweep that is not a duration", []string{"serve", "--expiry-sweep", "often", "--db", path}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := cli(t, noEnv, "password-123\n", c.args...)
			var u usageError
			if !errors.As(err, &u) {
				t.Fatalf("error %v (%T), want a usageError; stdout %q", err, err, out)
			}
			if !strings.Contains(err.Error(), "Usage:") {
				t.Errorf("the usage error does not show the usage: %q", err)
			}
			if out != "" {
				t.Errorf("stdout %q on a usage error", out)
			}
		})
	}
	// The command line is checked whole before the database is touched:
	// a mistake leaves no stray database behind.
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error created the database %s (%v)", path, err)
	}
	t.Run("help prints the usage and succeeds", func(t *testing.T) {
		out, err := cli(t, noEnv, "", "help")
		if err != nil || !strings.Contains(out, "madebook serve") {
			t.Errorf("help: %v, %q", err, out)
		}
	})
}

func TestKeyCreatePrintsAWorkingKeyOnce(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	key := secretOf(t, mustCLI(t, "", "key", "create", "--name", "claude-1", "--db", path), agentKeyLine)
	key2 := secretOf(t, mustCLI(t, "", "key", "create", "--name", "claude-2", "--db", path), agentKeyLine)
	if key == key2 {
		t.Error("two keys have the same secret")
	}
	out, err := cli(t, noEnv, "", "key", "create", "--name", "claude-1", "--db", path)
	if err == nil || !strings.Contains(err.Error(), "claude-1") || out != "" {
		t.Errorf("a duplicate key name: %v, stdout %q", err, out)
	}

	srv := apiOn(t, path)
	if status, body := call(t, http.MethodGet, srv.URL+"/api/v1/missions", key, ""); status != http.StatusOK {
		t.Errorf("the printed key: %d %s", status, body)
	}
	// It acts as an agent: it may open a session, and not create a mission.
	if status, body := call(t, http.MethodPost, srv.URL+"/api/v1/missions", key, `{"slug":"m","title":"T"}`); status != http.StatusForbidden {
		t.Errorf("an agent key created a mission: %d %s", status, body)
	}
	if status, _ := call(t, http.MethodGet, srv.URL+"/api/v1/missions", key[:len(key)-2], ""); status != http.StatusUnauthorized {
		t.Errorf("a truncated key: %d, want 401", status)
	}
	// The secret is stored only as a hash.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) {
		t.Error("the key's secret is in the database file")
	}
}

func TestTokenCreatePrintsAWorkingTokenOnce(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "password-123\n", "user", "add", "--email", "lead@example.com", "--role", "lead", "--db", path)
	mustCLI(t, "password-123\n", "user", "add", "--email", "viewer@example.com", "--role", "viewer", "--db", path)
	lead := secretOf(t, mustCLI(t, "", "token", "create", "--email", "lead@example.com", "--db", path), tokenLine)
	lead2 := secretOf(t, mustCLI(t, "", "token", "create", "--email", "LEAD@example.com", "--db", path), tokenLine)
	viewer := secretOf(t, mustCLI(t, "", "token", "create", "--email", "viewer@example.com", "--db", path), tokenLine)
	if lead == lead2 {
		t.Error("two tokens have the same secret")
	}

	srv := apiOn(t, path)
	for i, tok := range []string{lead, lead2} {
		status, body := call(t, http.MethodPost, srv.URL+"/api/v1/missions", tok, `{"slug":"m`+string(rune('a'+i))+`","title":"T"}`)
		if status != http.StatusCreated {
			t.Errorf("the printed lead token %d cannot create a mission: %d %s", i, status, body)
		}
	}
	if status, body := call(t, http.MethodPost, srv.URL+"/api/v1/missions", viewer, `{"slug":"mz","title":"T"}`); status != http.StatusForbidden {
		t.Errorf("a viewer's token created a mission: %d %s", status, body)
	}
	if status, _ := call(t, http.MethodGet, srv.URL+"/api/v1/missions", viewer, ""); status != http.StatusOK {
		t.Errorf("a viewer's token cannot read missions: %d", status)
	}

	out, err := cli(t, noEnv, "", "token", "create", "--email", "ghost@example.com", "--db", path)
	if err == nil || !strings.Contains(err.Error(), "ghost@example.com") {
		t.Errorf("a token for an unknown email: %v", err)
	}
	if out != "" {
		t.Errorf("stdout %q for an unknown email", out)
	}
}

func TestTheDatabaseComesFromMADEBOOK_DBWithoutDB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fromEnv := filepath.Join(dir, "from-env.db")
	fromFlag := filepath.Join(dir, "from-flag.db")
	env := envOf(map[string]string{"MADEBOOK_DB": fromEnv})

	out, err := cli(t, env, "", "migrate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, fromEnv) {
		t.Errorf("migrate says %q, want it to name %s", out, fromEnv)
	}
	if _, err := os.Stat(fromEnv); err != nil {
		t.Fatalf("MADEBOOK_DB was not used: %v", err)
	}
	if _, err := cli(t, env, "password-123\n", "user", "add", "--email", "env@example.com", "--role", "lead"); err != nil {
		t.Fatal(err)
	}
	// token create finds the user MADEBOOK_DB's database holds.
	out, err = cli(t, env, "", "token", "create", "--email", "env@example.com")
	if err != nil {
		t.Fatalf("token create on MADEBOOK_DB: %v", err)
	}
	secretOf(t, out, tokenLine)

	// --db wins over the environment.
	if _, err := cli(t, env, "", "token", "create", "--email", "env@example.com", "--db", fromFlag); err == nil {
		t.Error("--db did not override MADEBOOK_DB: the user was found")
	}
	if _, err := os.Stat(fromFlag); err != nil {
		t.Errorf("--db was not used: %v", err)
	}
}
