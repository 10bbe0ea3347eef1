package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web"
)

// msgs is the log lines' messages, in order.
func msgs(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		m, _ := l["msg"].(string)
		out = append(out, m)
	}
	return out
}

const firstUserLine = "no users yet: create one with: echo 'a-long-password' | madebook user add --email you@example.com --role admin"

func TestServeFirstRunSaysWhatItDoes(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
	lines := waitForLog(t, s, func(m string) bool { return strings.HasPrefix(m, "no users yet") })
	got := msgs(lines)
	migrating, listening := slices.Index(got, "migrating"), slices.Index(got, "listening")
	if migrating < 0 || listening < migrating {
		t.Fatalf("log %q: want \"migrating\", then \"listening\"", got)
	}
	if lines[migrating]["db"] != path {
		t.Errorf("migrating names %v, want %s", lines[migrating]["db"], path)
	}
	hint := slices.IndexFunc(got, func(m string) bool { return strings.HasPrefix(m, "no users yet") })
	if hint < listening {
		t.Fatalf("log %q: no \"no users yet\" line after \"listening\"", got)
	}
	if want := firstUserLine + " --db " + path; got[hint] != want {
		t.Fatalf("hint %q, want %q", got[hint], want)
	}

	t.Run("the command it gives works as given", func(t *testing.T) {
		cmd := strings.SplitN(got[hint], "| madebook ", 2)[1]
		out, err := cli(t, noEnv, "a-long-password\n", strings.Fields(cmd)...)
		if err != nil || !strings.Contains(out, "added you@example.com (admin)") {
			t.Fatalf("madebook %s: %v, %q", cmd, err, out)
		}
	})
	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	t.Run("a database with users says nothing about them", func(t *testing.T) {
		s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs(s.logLines()) {
			if strings.HasPrefix(m, "no users yet") {
				t.Errorf("logged %q on a database with a user", m)
			}
		}
	})
	t.Run("the default database is not named", func(t *testing.T) {
		if got := firstUserHint(defaultDB); got != firstUserLine {
			t.Errorf("hint %q", got)
		}
		if got := firstUserHint("/tmp/my dbs/it's.db"); got != firstUserLine+` --db '/tmp/my dbs/it'\''s.db'` {
			t.Errorf("a path with a space and a quote: %q", got)
		}
	})
}

// waitForLog waits up to 10 s for a log line whose message matches, and
// returns the lines so far.
func waitForLog(t *testing.T, s *server, match func(msg string) bool) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if lines := s.logLines(); slices.ContainsFunc(msgs(lines), match) {
			return lines
		}
	}
	return s.logLines()
}

// demoBanner waits for the demo's banner among the log lines and returns
// its "Name   value" lines as a map.
func demoBanner(t *testing.T, s *server) map[string]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		fields := map[string]string{}
		for _, l := range s.logLines() {
			raw, _ := l["raw"].(string)
			for _, name := range []string{"Console", "Email", "Password", "API token", "Agent key"} {
				if v, ok := strings.CutPrefix(strings.TrimSpace(raw), name+" "); ok {
					fields[name] = strings.Fields(v)[0]
				}
			}
		}
		if len(fields) == 5 {
			return fields
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no demo banner within 20 s: %v", s.logLines())
	return nil
}

func TestServeDemo(t *testing.T) {
	t.Parallel()
	// MADEBOOK_DB is not the demo's database.
	notUsed := tempDB(t)
	s := startServe(t, envOf(map[string]string{"MADEBOOK_DB": notUsed}), "--demo", "--addr", "127.0.0.1:0")
	banner := demoBanner(t, s)
	if banner["Console"] != s.url || banner["Email"] != demoEmail {
		t.Errorf("banner %v, want the console at %s and %s", banner, s.url, demoEmail)
	}
	var dbPath string
	var raw []string // the banner is plain lines, logged as NOT JSON with their text
	for _, l := range s.logLines() {
		if l["msg"] == "migrating" {
			dbPath, _ = l["db"].(string)
		}
		r, _ := l["raw"].(string)
		raw = append(raw, r)
	}
	if dbPath == "" || dbPath == notUsed || !strings.Contains(strings.Join(raw, "\n"), "thrown away at exit (Ctrl-C): "+dbPath) {
		t.Fatalf("the demo database %q is not a throwaway one announced as such: %q", dbPath, raw)
	}
	if _, err := os.Stat(dbPath); err != nil {
		t.Fatalf("the demo database: %v", err)
	}

	t.Run("the Attention queue holds an item of every kind", func(t *testing.T) {
		items, _ := s.req(http.StatusOK, http.MethodGet, "/api/v1/attention", banner["API token"], nil)["items"].([]any)
		kinds := map[string]int{}
		for _, it := range items {
			k, _ := it.(map[string]any)["kind"].(string)
			kinds[k]++
		}
		for _, k := range []string{"decision", "plan", "paused", "violation", "ask", "remediation", "permission", "task"} {
			if kinds[k] == 0 {
				t.Errorf("no %s item: %v", k, kinds)
			}
		}
		if kinds["decision"] < 3 {
			t.Errorf("%d decision items, want two open gates and an expired one", kinds["decision"])
		}
		if first, _ := items[0].(map[string]any); first["kind"] != "decision" || first["expired"] != true || first["title"] != "Coupon codes" {
			t.Errorf("the first item is %v, want the gate that expired unanswered", first)
		}
	})

	t.Run("the printed email and password sign in to the console", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		defer c.CloseIdleConnections()
		res, err := c.PostForm(s.url+"/login", url.Values{"email": {banner["Email"]}, "password": {banner["Password"]}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign in: %d, want 303", res.StatusCode)
		}
		res, err = c.Get(s.url + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "Cart state") {
			t.Errorf("the Attention page: %d, without the demo's gate", res.StatusCode)
		}
	})

	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(dbPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the demo's directory %s is still there after shutdown (%v)", filepath.Dir(dbPath), err)
	}
	if _, err := os.Stat(notUsed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the demo touched MADEBOOK_DB (%v)", err)
	}
	for _, l := range s.logLines() {
		if l["level"] == "ERROR" || l["level"] == "WARN" {
			t.Errorf("logged %v", l)
		}
		if l["msg"] == "request" {
			t.Errorf("the demo logged a request line: %v", l)
		}
	}
	if got := msgs(s.logLines()); !slices.Contains(got, "stopped") {
		t.Errorf("no \"stopped\" line: %q", got)
	}
}

func TestServeDemoRefusesDB(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	out, err := cli(t, noEnv, "", "serve", "--demo", "--db", path)
	var u usageError
	if !errors.As(err, &u) || out != "" {
		t.Fatalf("serve --demo --db: %v, stdout %q; want a usage error", err, out)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database was created (%v)", err)
	}
}

// TestTheSimulatedAgentOpensGatesUpToItsCap plays the demo at a fast pace
// and checks that the agent opens gates until its cap, then stops, and
// returns when its context ends.
func TestTheSimulatedAgentOpensGatesUpToItsCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := openApp(ctx, tempDB(t), governance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	srv := httptest.NewServer(a.handler(web.Deps{}))
	defer srv.Close()

	demoCtx, cancel := context.WithCancel(ctx)
	var banner bytes.Buffer
	done := make(chan error, 1)
	pace := demoPace{briefEvery: 5 * time.Millisecond, gateEvery: 10 * time.Millisecond, maxGates: 3}
	go func() { done <- runDemo(demoCtx, a, srv.URL, pace, &banner, logger) }()

	openGates := func() int {
		var gates int
		if err := a.store.Writer().QueryRowContext(ctx, `SELECT COUNT(*) FROM decisions WHERE resolved_at IS NULL`).Scan(&gates); err != nil {
			t.Fatal(err)
		}
		return gates
	}
	deadline := time.Now().Add(10 * time.Second)
	const seeded = 3 // two open gates and one expired
	for openGates() < seeded+pace.maxGates && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(10 * pace.gateEvery)
	if n := openGates(); n != seeded+pace.maxGates {
		t.Errorf("%d open gates, want the seeding's %d and the agent's %d", n, seeded, pace.maxGates)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runDemo: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the simulated agent did not stop with its context")
	}
	if got := strings.Count(logs.String(), `"msg":"demo agent opened a gate"`); got != pace.maxGates {
		t.Errorf("%d \"opened a gate\" lines, want %d:\n%s", got, pace.maxGates, logs.String())
	}
	if strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("the agent logged a failure:\n%s", logs.String())
	}
}

// --metrics-addr serves /metrics on a listener of its own, without a
// token; on the main listener the same path takes an admin's token.
func TestServeMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", tempDB(t), "--metrics-addr", "127.0.0.1:0")
	lines := waitForLog(t, s, func(m string) bool { return m == "listening" })
	var metricsURL, mainURL string
	for _, l := range lines {
		switch l["msg"] {
		case "metrics":
			metricsURL, _ = l["addr"].(string)
		case "listening":
			mainURL, _ = l["addr"].(string)
		}
	}
	if metricsURL == "" || mainURL == "" {
		t.Fatalf("no metrics or listening line: %v", lines)
	}
	res, err := httpClient.Get(mainURL + "/metrics")
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics on the main listener without a token: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
	if res, err = httpClient.Get(metricsURL); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "madebook_attention_items") ||
		!strings.Contains(string(body), `madebook_request_duration_seconds_count{method="GET",route="/metrics"} 1`) {
		t.Fatalf("GET %s: %d\n%s", metricsURL, res.StatusCode, body)
	}
	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesAGateCapBelowOne(t *testing.T) {
	t.Parallel()
	if out, err := cli(t, noEnv, "", "serve", "--db", tempDB(t), "--max-open-gates", "0"); err == nil || !strings.Contains(err.Error(), "--max-open-gates") {
		t.Fatalf("serve --max-open-gates 0: %v %q", err, out)
	}
}
