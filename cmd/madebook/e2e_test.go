package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
)

// server is `madebook serve` running in a goroutine, its JSON log read
// from a pipe.
type server struct {
	t      *testing.T
	url    string
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	logs []map[string]any
}

// startServe runs run(ctx, ["madebook","serve",args…]) and waits for its
// "listening" log line, which carries the address.
func startServe(t *testing.T, getenv func(string) string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{t: t, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"madebook", "serve"}, args...), getenv, strings.NewReader(""), pw)
		pw.Close()
		s.done <- err
	}()
	addr := make(chan string, 1)
	go func() {
		// Read every line until run returns: the logger must never block.
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				line = map[string]any{"msg": "NOT JSON", "raw": sc.Text()}
			}
			s.mu.Lock()
			s.logs = append(s.logs, line)
			s.mu.Unlock()
			if line["msg"] == "listening" {
				a, _ := line["addr"].(string)
				select {
				case addr <- a:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case s.url = <-addr:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("serve returned before listening: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no \"listening\" log line within 20 s")
	}
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || strings.HasSuffix(s.url, ":0") {
		t.Fatalf("listening addr %q, want http://127.0.0.1:PORT", s.url)
	}
	return s
}

// stop cancels serve's context and returns run's error, failing if it takes
// over 10 s.
func (s *server) stop() error {
	s.t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for Cleanup
		return err
	case <-time.After(10 * time.Second):
		s.t.Fatal("run did not return within 10 s of the context's cancellation")
		return nil
	}
}

func (s *server) logLines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logs)
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// req sends a JSON request and decodes a JSON object answer, failing unless
// the status is want.
func (s *server) req(want int, method, path, secret string, body any) map[string]any {
	s.t.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		s.t.Fatalf("%s %s: not a JSON object: %s", method, path, raw)
	}
	return m
}

// brief is the agent's typed view of a brief.
type brief struct {
	Session      string `json:"session"`
	NextAction   string `json:"next_action"`
	Reason       string `json:"reason"`
	Reasons      []struct{ State, Code, Ref, Text string }
	BlockedScope []string `json:"blocked_scope"`
	AllowedScope []string `json:"allowed_scope"`
	Decisions    []struct{ Ref string }
	Resolutions  []struct {
		Ref         string `json:"ref"`
		Resolution  string `json:"resolution"`
		Instruction string `json:"instruction"`
		ResolvedBy  string `json:"resolved_by"`
	} `json:"resolutions"`
	GeneratedAt time.Time `json:"generated_at"`
}

func (s *server) brief(key, session string) brief {
	s.t.Helper()
	m := s.req(http.StatusOK, http.MethodPost, "/brief", key, map[string]string{"session": session})
	raw, _ := json.Marshal(m)
	var b brief
	if err := json.Unmarshal(raw, &b); err != nil {
		s.t.Fatal(err)
	}
	if b.Session != session {
		s.t.Errorf("brief for %q, want %q", b.Session, session)
	}
	return b
}

func (b brief) codes() []string {
	var out []string
	for _, r := range b.Reasons {
		out = append(out, r.Code)
	}
	return out
}

// setupPeople creates a lead with a token and an agent key on the database
// with run()'s own sub-commands, and returns the secrets.
func setupPeople(t *testing.T, path string) (leadToken, agentKey string) {
	t.Helper()
	mustCLI(t, "lead-password-1\n", "user", "add", "--email", "lead@example.com", "--role", "lead", "--db", path)
	leadToken = secretOf(t, mustCLI(t, "", "token", "create", "--email", "lead@example.com", "--db", path), tokenLine)
	agentKey = secretOf(t, mustCLI(t, "", "key", "create", "--name", "claude", "--db", path), agentKeyLine)
	return leadToken, agentKey
}

// TestServeEndToEnd starts the real binary's run() on port 0 and walks a
// high-risk mission from plan to pause over real HTTP.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	lead, agent := setupPeople(t, path)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)

	if got := s.req(http.StatusOK, http.MethodGet, "/healthz", "", nil); got["status"] != "ok" {
		t.Errorf("healthz: %v", got)
	}
	m := s.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{
		"slug": "billing-cleanup", "title": "Billing cleanup", "text": "Retire the legacy billing tables.",
		"high_risk": true, "evidence": []string{"tests"}})
	if m["slug"] != "billing-cleanup" || m["high_risk"] != true {
		t.Errorf("mission: %v", m)
	}
	sess := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{
		"mission": "billing-cleanup", "agent": "claude-code", "title": "Drop the legacy table"})
	id, _ := sess["id"].(string)
	if id == "" || sess["mission"] != "billing-cleanup" || sess["agent"] != "claude" || sess["agent_label"] != "claude-code" || sess["lifecycle"] != "IDLE" {
		t.Fatalf("session: %v", sess)
	}

	t.Log("a high-risk mission without an approved plan is BLOCKED")
	b := s.brief(agent, id)
	if b.NextAction != "BLOCKED" || !reflect.DeepEqual(b.codes(), []string{"plan_not_approved"}) || len(b.BlockedScope) == 0 {
		t.Fatalf("brief before a plan: %+v", b)
	}
	if time.Since(b.GeneratedAt) > time.Minute || b.GeneratedAt.Location() != time.UTC {
		t.Errorf("generated_at %v is not the real clock in UTC", b.GeneratedAt)
	}

	p := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/plan", agent, map[string]any{
		"summary":       "Read the schema, then ask before dropping anything.",
		"initial_steps": []map[string]any{{"id": "read", "tool": "read_file", "side_effecting": false}}})
	if p["status"] != "proposed" {
		t.Fatalf("plan on a high-risk mission: %v, want status proposed", p)
	}
	if b := s.brief(agent, id); b.NextAction != "BLOCKED" || !reflect.DeepEqual(b.codes(), []string{"plan_not_approved"}) {
		t.Fatalf("a proposed plan unblocked the session: %+v", b)
	}
	if p := s.req(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/plan/approve", lead, map[string]string{"note": "Go."}); p["status"] != "approved" {
		t.Errorf("approve: %v", p)
	}

	t.Log("with the plan approved the agent continues, told once of the lead's answer")
	if b := s.brief(agent, id); b.NextAction != "CONTINUE" || len(b.Resolutions) != 1 || b.Resolutions[0].Ref != "PLAN-1" ||
		b.Resolutions[0].Resolution != "approved" || b.Resolutions[0].Instruction != "Go." {
		t.Fatalf("brief after approval: %+v", b)
	}
	if b := s.brief(agent, id); len(b.Resolutions) != 0 {
		t.Fatalf("the answer was delivered again: %+v", b)
	}

	d := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", agent, map[string]any{
		"title": "Schema", "question": "Drop the legacy billing table?", "proposal": "Drop it.",
		"blocked_scope": []string{"db/migrations"}, "allowed_scope": []string{"web/", "views/"}})
	ref, _ := d["ref"].(string)
	if ref != "DEC-001" || d["status"] != "open" {
		t.Fatalf("decision: %v", d)
	}
	b = s.brief(agent, id)
	if b.NextAction != "DECISION_REQUIRED" || len(b.Reasons) != 1 || b.Reasons[0].Code != "decision_open" || b.Reasons[0].Ref != ref {
		t.Fatalf("brief with an open gate: %+v", b)
	}
	if !reflect.DeepEqual(b.BlockedScope, []string{"db/migrations"}) || !reflect.DeepEqual(b.AllowedScope, []string{"web/", "views/"}) {
		t.Errorf("scopes %v / %v, want the gate's", b.BlockedScope, b.AllowedScope)
	}
	if !strings.Contains(b.Reason, "Drop the legacy billing table?") {
		t.Errorf("reason %q does not ask the question", b.Reason)
	}

	r := s.req(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", lead, map[string]string{
		"resolution": "Keep the table for now.", "instruction": "Archive the rows; leave db/migrations alone."})
	if r["status"] != "resolved" {
		t.Errorf("resolve: %v", r)
	}
	b = s.brief(agent, id)
	if len(b.Resolutions) != 1 || b.Resolutions[0].Ref != ref ||
		b.Resolutions[0].Instruction != "Archive the rows; leave db/migrations alone." ||
		b.Resolutions[0].Resolution != "Keep the table for now." || b.Resolutions[0].ResolvedBy != "lead@example.com" {
		t.Fatalf("the brief after the resolve does not deliver it: %+v", b.Resolutions)
	}
	if b.NextAction != "CONTINUE" || len(b.Decisions) != 0 {
		t.Errorf("brief after delivery: %+v", b)
	}
	if b := s.brief(agent, id); len(b.Resolutions) != 0 {
		t.Fatalf("the resolution was delivered twice: %+v", b.Resolutions)
	}

	const why = "Waiting on the DBA's review of the archive job."
	if got := s.req(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/pause", lead, map[string]string{"reason": why}); got["paused"] != true {
		t.Errorf("pause: %v", got)
	}
	b = s.brief(agent, id)
	if b.NextAction != "BLOCKED" || !strings.Contains(b.Reason, why) || len(b.Reasons) == 0 || b.Reasons[0].Code != "paused" {
		t.Fatalf("brief after the pause: %+v", b)
	}

	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatalf("run returned %v after the context was cancelled, want nil", err)
	}
	var msgs []string
	for _, l := range s.logLines() {
		msg, _ := l["msg"].(string)
		msgs = append(msgs, msg)
		if l["level"] == "ERROR" {
			t.Errorf("an error was logged: %v", l)
		}
		if msg == "request" {
			if st, _ := l["status"].(float64); st >= 500 {
				t.Errorf("a request got %v: %v", st, l)
			}
		}
	}
	for _, want := range []string{"listening", "request", "shutting down", "stopped"} {
		if !slices.Contains(msgs, want) {
			t.Errorf("no %q log line in %v", want, msgs)
		}
	}
}

// TestShutdownFlushesLastBriefAt briefs once and cancels at once: the
// brief's time must be in the database after run returns (it is kept in
// memory and flushed in batches, the last batch on shutdown). The address
// and the database come from MADEBOOK_ADDR and MADEBOOK_DB.
func TestShutdownFlushesLastBriefAt(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	lead, agent := setupPeople(t, path)
	s := startServe(t, envOf(map[string]string{"MADEBOOK_DB": path, "MADEBOOK_ADDR": "127.0.0.1:0"}))
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{"slug": "small", "title": "Small"})
	id, _ := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{"mission": "small"})["id"].(string)

	before := time.Now().UTC().Truncate(time.Microsecond)
	s.brief(agent, id)
	after := time.Now().UTC()
	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}

	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	actor, err := auth.NewService(store, time.Now).Authenticate(ctx, lead)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh service has nothing in memory: what it shows is on disk.
	got, err := governance.New(store, time.Now, governance.Options{}).Sessions.Get(ctx, actor, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastBriefAt == nil {
		t.Fatal("last_brief_at is empty after a brief and a graceful shutdown")
	}
	if got.LastBriefAt.Before(before) || got.LastBriefAt.After(after) {
		t.Errorf("last_brief_at %v, want between %v and %v", got.LastBriefAt, before, after)
	}
	if !strings.Contains(fmt.Sprint(s.logLines()), "stopped") {
		t.Error("no \"stopped\" log line")
	}
}

func TestServeFailsCleanlyWhenTheAddressIsTaken(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
	addr := strings.TrimPrefix(s.url, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, []string{"madebook", "serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "b.db")}, noEnv, strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("serve on a taken address: %v, want an error naming %s", err, addr)
	}
}

// TestShutdownEndsPushStreams keeps a lead's push stream open (as an open
// Attention page does) and stops the server: serve must not wait on the
// stream, which never ends by itself, but return at once, the stream
// ended.
func TestShutdownEndsPushStreams(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "lead-password-1\n", "user", "add", "--email", "lead@example.com", "--role", "lead", "--db", path)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := browser.PostForm(s.url+"/login", url.Values{"email": {"lead@example.com"}, "password": {"lead-password-1"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/" {
		t.Fatalf("sign in: %d at %s", res.StatusCode, res.Request.URL)
	}
	stream, err := browser.Get(s.url + "/attention/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if ct := stream.Header.Get("Content-Type"); stream.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("stream: %d %s", stream.StatusCode, ct)
	}
	first, err := bufio.NewReader(stream.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "retry: ") {
		t.Fatalf("first line %q (%v)", first, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stream.Body)
		ended <- err
	}()

	start := time.Now()
	if err := s.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("shutting down with a stream open took %s, want at once", took)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream ended with %v, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the stream is still open after the server stopped")
	}
}
