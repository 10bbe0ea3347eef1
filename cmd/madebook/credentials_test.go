package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/testdb"
)

// cliErr runs a command that must fail and returns its error and stdout.
func cliErr(t *testing.T, getenv func(string) string, args ...string) (error, string) {
	t.Helper()
	out, err := cli(t, getenv, "", args...)
	if err == nil {
		t.Fatalf("madebook %s succeeded, want an error: %s", strings.Join(args, " "), out)
	}
	return err, out
}

// listRow is the line of a list's table whose second column is name.
func listRow(t *testing.T, out, name string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1); len(f) > 1 && f[1] == name {
			return f
		}
	}
	t.Fatalf("no row named %q in:\n%s", name, out)
	return nil
}

// Tokens and keys are made with a name and an expiry, listed without
// their secrets, and revoked one by one, from the command line.
func TestCredentialsFromTheCommandLine(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "password-123\n", "user", "add", "--email", "ann@example.com", "--role", "lead", "--db", path)
	plain := secretOf(t, mustCLI(t, "", "token", "create", "--email", "ann@example.com", "--db", path), tokenLine)
	laptop := secretOf(t, mustCLI(t, "", "token", "create", "--email", "ann@example.com", "--name", "laptop", "--expires", "90d", "--db", path), tokenLine)
	key := secretOf(t, mustCLI(t, "", "key", "create", "--name", "ci", "--expires", "1d12h", "--db", path), agentKeyLine)
	made := time.Now().UTC()

	t.Run("token list shows each token by id, name, owner and prefix, with its expiry, and no secret", func(t *testing.T) {
		out := mustCLI(t, "", "token", "list", "--db", path)
		for _, secret := range []string{plain, laptop} {
			if strings.Contains(out, secret[10:]) {
				t.Fatalf("the list holds a secret:\n%s", out)
			}
		}
		if !strings.HasPrefix(out, "ID  NAME") {
			t.Errorf("no header:\n%s", out)
		}
		row := listRow(t, out, "laptop")
		if row[2] != "ann@example.com" || row[3] != laptop[:10]+"…" || row[5] != "never" ||
			row[6] != made.Add(90*24*time.Hour).Format("2006-01-02 15:04") && row[6] != made.Add(90*24*time.Hour-time.Minute).Format("2006-01-02 15:04") ||
			row[7] != "active" {
			t.Errorf("laptop's row %q", row)
		}
		if row := listRow(t, out, "token "+made.Format("2006-01-02")); row[6] != "never" {
			t.Errorf("the default-named token's row %q", row)
		}
		if out := mustCLI(t, "", "token", "list", "--email", "nobody@example.com", "--db", path); strings.Contains(out, "ann@") {
			t.Errorf("--email kept another person's tokens:\n%s", out)
		}
	})
	t.Run("token list --format json has the same, and no secret", func(t *testing.T) {
		out := mustCLI(t, "", "token", "list", "--format", "json", "--db", path)
		var l struct {
			Tokens []struct {
				ID        int64      `json:"id"`
				Name      string     `json:"name"`
				Prefix    string     `json:"prefix"`
				ExpiresAt *time.Time `json:"expires_at"`
				State     string     `json:"state"`
			} `json:"tokens"`
		}
		if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Tokens) != 2 || l.Tokens[1].Name != "laptop" ||
			l.Tokens[1].Prefix != laptop[:10] || l.Tokens[1].ExpiresAt == nil || strings.Contains(out, laptop[10:]) {
			t.Fatalf("json list %s (%v)", out, err)
		}
	})
	t.Run("key list shows the key's expiry and who made it", func(t *testing.T) {
		out := mustCLI(t, "", "key", "list", "--db", path)
		row := listRow(t, out, "ci")
		if row[2] != key[:10]+"…" || row[4] != "cli" || row[5] != "never" || row[7] != "active" || strings.Contains(out, key[10:]) {
			t.Errorf("ci's row %q in\n%s", row, out)
		}
	})
	t.Run("a revoked token is refused by the API at once, and listed as revoked", func(t *testing.T) {
		srv := apiOn(t, path)
		if status, _ := call(t, http.MethodGet, srv.URL+"/api/v1/missions", laptop, ""); status != http.StatusOK {
			t.Fatalf("the laptop token before: %d", status)
		}
		id := listRow(t, mustCLI(t, "", "token", "list", "--db", path), "laptop")[0]
		out := mustCLI(t, "", "token", "revoke", id, "--db", path)
		if out != "revoked token "+id+" (laptop) of ann@example.com\n" {
			t.Errorf("stdout %q", out)
		}
		status, body := call(t, http.MethodGet, srv.URL+"/api/v1/missions", laptop, "")
		if status != http.StatusUnauthorized || !strings.Contains(body, "credential_revoked") {
			t.Errorf("the revoked token: %d %s", status, body)
		}
		if status, _ := call(t, http.MethodGet, srv.URL+"/api/v1/missions", plain, ""); status != http.StatusOK {
			t.Errorf("the other token: %d", status)
		}
		if row := listRow(t, mustCLI(t, "", "token", "list", "--db", path), "laptop"); row[7] != "revoked" {
			t.Errorf("laptop's row after revoking %q", row)
		}
		err, _ := cliErr(t, noEnv, "token", "revoke", id, "--db", path)
		if code, _ := outcome(err); code != 1 || !strings.Contains(err.Error(), "already revoked") {
			t.Errorf("revoking twice: exit %d, %v", code, err)
		}
	})
	t.Run("a revoked key is refused by the API at once", func(t *testing.T) {
		srv := apiOn(t, path)
		id := listRow(t, mustCLI(t, "", "key", "list", "--db", path), "ci")[0]
		if out := mustCLI(t, "", "key", "revoke", id, "--db", path); out != "revoked key "+id+" (ci)\n" {
			t.Errorf("stdout %q", out)
		}
		status, body := call(t, http.MethodPost, srv.URL+"/brief", key, `{"session":"x"}`)
		if status != http.StatusUnauthorized || !strings.Contains(body, "credential_revoked") {
			t.Errorf("the revoked key: %d %s", status, body)
		}
		err, _ := cliErr(t, noEnv, "key", "revoke", "9999", "--db", path)
		if !strings.Contains(err.Error(), "no agent key 9999") {
			t.Errorf("an unknown key: %v", err)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"an expiry that is not a lifetime", []string{"token", "create", "--email", "ann@example.com", "--expires", "soon"}, `"soon" is not a lifetime`},
		{"an expiry under a minute", []string{"key", "create", "--name", "brief", "--expires", "30s"}, "too short"},
		{"an expiry over a hundred years", []string{"key", "create", "--name", "long", "--expires", "36501d"}, "too long"},
		{"revoke without an id", []string{"token", "revoke"}, "needs one ID"},
		{"revoke with a name for an id", []string{"key", "revoke", "ci"}, `"ci" is not an id`},
		{"list in an unknown format", []string{"key", "list", "--format", "csv"}, "table or json"},
	} {
		t.Run(tc.name+" is a usage error that writes nothing", func(t *testing.T) {
			before := mustCLI(t, "", "key", "list", "--db", path) + mustCLI(t, "", "token", "list", "--db", path)
			err, out := cliErr(t, noEnv, append(tc.args, "--db", path)...)
			if code, msg := outcome(err); code != 2 || !strings.Contains(msg, tc.says) || out != "" {
				t.Errorf("exit %d, %q, stdout %q; want 2 saying %q", code, msg, out, tc.says)
			}
			if after := mustCLI(t, "", "key", "list", "--db", path) + mustCLI(t, "", "token", "list", "--db", path); after != before {
				t.Errorf("a refused command wrote:\n%s\n%s", before, after)
			}
		})
	}
}

// Under MADEBOOK_TOKEN_MAX_AGE a create must ask for an expiry within it:
// one without, or a longer one, is refused, not shortened.
func TestTheMaximumAgeFromTheEnvironment(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "password-123\n", "user", "add", "--email", "ann@example.com", "--role", "lead", "--db", path)
	env := envOf(map[string]string{"MADEBOOK_TOKEN_MAX_AGE": "30d", "MADEBOOK_DB": path})
	for _, args := range [][]string{
		{"token", "create", "--email", "ann@example.com"},
		{"token", "create", "--email", "ann@example.com", "--expires", "31d"},
		{"key", "create", "--name", "forever"},
		{"key", "create", "--name", "long", "--expires", "720h1m"},
	} {
		err, out := cliErr(t, env, args...)
		if code, msg := outcome(err); code != 1 || !strings.Contains(msg, "30d") || !strings.Contains(msg, "MADEBOOK_TOKEN_MAX_AGE") || out != "" {
			t.Errorf("madebook %s: exit %d, %q, stdout %q; want 1 naming the maximum", strings.Join(args, " "), code, msg, out)
		}
	}
	if out := mustCLI(t, "", "token", "list", "--db", path); strings.Count(out, "\n") != 1 {
		t.Errorf("a refused create wrote a token:\n%s", out)
	}
	if out, err := cli(t, env, "", "key", "create", "--name", "month", "--expires", "30d"); err != nil {
		t.Errorf("a key of the maximum age: %v", err)
	} else {
		secretOf(t, out, agentKeyLine)
	}
	if out, err := cli(t, noEnv, "", "key", "create", "--name", "flag", "--token-max-age", "1h", "--expires", "2h", "--db", path); err == nil ||
		!strings.Contains(err.Error(), "1h") {
		t.Errorf("--token-max-age 1h let a 2h key through: %q %v", out, err)
	}
	err, _ := cliErr(t, envOf(map[string]string{"MADEBOOK_TOKEN_MAX_AGE": "a while", "MADEBOOK_DB": path}), "key", "create", "--name", "x")
	if code, msg := outcome(err); code != 2 || !strings.Contains(msg, `MADEBOOK_TOKEN_MAX_AGE="a while"`) {
		t.Errorf("a maximum that is not a lifetime: exit %d, %q", code, msg)
	}
}

// Two `serve`s on one database and the command line beside them: a
// credential revoked by any of them is refused by every server on its
// next request, and its last use is on disk after a graceful shutdown.
func TestServeRefusesARevokedCredentialAtOnce(t *testing.T) {
	t.Parallel()
	path := testdb.DSN(t)
	lead, agent := setupPeople(t, path)
	mustCLI(t, "admin-password-1\n", "user", "add", "--email", "admin@example.com", "--role", "admin", "--db", path)
	admin := secretOf(t, mustCLI(t, "", "token", "create", "--email", "admin@example.com", "--name", "ops", "--expires", "1h", "--db", path), tokenLine)
	env := envOf(map[string]string{"MADEBOOK_DB": path})
	a := startServe(t, env, "--addr", "127.0.0.1:0")
	b := startServe(t, env, "--addr", "127.0.0.1:0")
	a.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{"slug": "m", "title": "M"})
	id, _ := a.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{"mission": "m"})["id"].(string)
	a.brief(agent, id)
	b.brief(agent, id)
	b.req(http.StatusOK, http.MethodGet, "/api/v1/missions", lead, nil)

	keys := a.req(http.StatusOK, http.MethodGet, "/api/v1/keys", admin, nil)["keys"].([]any)
	keyID := int64(keys[0].(map[string]any)["id"].(float64))
	a.req(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/keys/%d", keyID), admin, nil)
	for _, s := range []*server{b, a} {
		if m := s.req(http.StatusUnauthorized, http.MethodPost, "/brief", agent, map[string]string{"session": id}); !strings.Contains(fmt.Sprint(m), "credential_revoked") {
			t.Errorf("%s: %v", s.url, m)
		}
	}
	tokenID := listRow(t, mustCLI(t, "", "token", "list", "--email", "lead@example.com", "--db", path), "token "+time.Now().UTC().Format("2006-01-02"))[0]
	mustCLI(t, "", "token", "revoke", tokenID, "--db", path)
	for _, s := range []*server{a, b} {
		s.req(http.StatusUnauthorized, http.MethodGet, "/api/v1/missions", lead, nil)
	}
	httpClient.CloseIdleConnections()
	for _, s := range []*server{a, b} {
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
	row := listRow(t, mustCLI(t, "", "key", "list", "--db", path), "claude")
	if row[5] == "never" || row[7] != "revoked" {
		t.Errorf("after shutdown the key's row is %q: want its last use and revoked", row)
	}
}
