package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"
)

// killReceiver is a webhook endpoint that checks every delivery's
// signature, refuses while told to, and counts what it accepts by
// delivery id.
type killReceiver struct {
	t         *testing.T
	secret    string
	mu        sync.Mutex
	accepting bool
	tried     map[string]int
	accepted  map[string]int
}

func (r *killReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(req.Header.Get("X-Madebook-Timestamp") + "." + string(body)))
	if !hmac.Equal([]byte(req.Header.Get("X-Madebook-Signature")), []byte("sha256="+hex.EncodeToString(mac.Sum(nil)))) {
		r.t.Errorf("a delivery with a bad signature: %s", body)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("X-Madebook-Delivery")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tried[id]++
	if !r.accepting {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	r.accepted[id]++
}

// seen returns how many deliveries were tried and accepted.
func (r *killReceiver) seen() (tried, accepted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tried), len(r.accepted)
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNotificationsSurviveAKill causes notifications while the endpoint
// refuses them, kills the server with SIGKILL, starts a new one on the
// same database and lets the endpoint accept: every notification arrives,
// exactly once in the receiver's view.
func TestNotificationsSurviveAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	t.Parallel()
	path := tempDB(t)
	lead, agent := setupPeople(t, path)
	mustCLI(t, "admin-password-1\n", "user", "add", "--email", "admin@example.com", "--role", "admin", "--db", path)
	admin := secretOf(t, mustCLI(t, "", "token", "create", "--email", "admin@example.com", "--db", path), tokenLine)
	rcv := &killReceiver{t: t, secret: "kill-test-signing-secret", tried: map[string]int{}, accepted: map[string]int{}}
	endpoint := httptest.NewServer(rcv)
	t.Cleanup(endpoint.Close)
	bin := buildMadebook(t)

	first := startChild(t, bin, path, "--webhook-allow", "127.0.0.1/32") // the endpoint is on 127.0.0.1
	s := first.api()
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{"url": endpoint.URL,
		"secret": rcv.secret, "events": []string{"attention.created", "hard_stop"}})
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{"slug": "kill", "title": "Kill"})
	session, _ := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{
		"mission": "kill", "agent": "claude-code", "title": "Notify"})["id"].(string)
	const gates = 3
	for i := range gates {
		s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+session+"/decisions", agent, map[string]any{
			"title": fmt.Sprintf("Gate %d", i), "question": "Go on?"})
	}
	s.req(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+session+"/changes", agent, map[string]any{
		"files": []map[string]any{{"path": "deploy.sh", "content": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
	const want = gates + 1 // and one HARD_STOP
	waitFor(t, 30*time.Second, "every notification tried once", func() bool { tried, _ := rcv.seen(); return tried == want })

	first.kill()
	if st, ok := first.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("the first server ended with %v, not by SIGKILL", first.cmd.ProcessState)
	}
	rcv.mu.Lock()
	rcv.accepting = true
	rcv.mu.Unlock()

	second := startChild(t, bin, path, "--webhook-allow", "127.0.0.1/32")
	s = second.api()
	waitFor(t, 60*time.Second, "every notification delivered", func() bool {
		hooks, _ := s.req(http.StatusOK, http.MethodGet, "/api/v1/webhooks", admin, nil)["webhooks"].([]any)
		if len(hooks) != 1 {
			return false
		}
		ds, _ := hooks[0].(map[string]any)["deliveries"].([]any)
		delivered := 0
		for _, d := range ds {
			if d.(map[string]any)["status"] == "delivered" {
				delivered++
			}
		}
		return delivered == want
	})
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.accepted) != want {
		t.Errorf("the receiver has %d notifications, want %d", len(rcv.accepted), want)
	}
	for id, n := range rcv.accepted {
		if n != 1 {
			t.Errorf("delivery %s arrived %d times", id, n)
		}
	}
	for _, l := range second.logLines() {
		if l["level"] == "ERROR" || l["msg"] == "NOT JSON" {
			t.Errorf("the restarted server logged %v", l)
		}
	}
}

// TestServeSendsAHardStop: serve sends a HARD_STOP to a subscribed
// endpoint as soon as the change that trips it is reported, signed,
// linking to the violation under --public-url; the log says how long it
// took.
func TestServeSendsAHardStop(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	lead, agent := setupPeople(t, path)
	mustCLI(t, "admin-password-1\n", "user", "add", "--email", "admin@example.com", "--role", "admin", "--db", path)
	admin := secretOf(t, mustCLI(t, "", "token", "create", "--email", "admin@example.com", "--db", path), tokenLine)
	rcv := &killReceiver{t: t, secret: "serve-test-signing-secret", accepting: true, tried: map[string]int{}, accepted: map[string]int{}}
	got := make(chan map[string]any, 4)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rcv.ServeHTTP(w, r)
		var p map[string]any
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("payload %s: %v", body, err)
		}
		got <- p
	}))
	t.Cleanup(endpoint.Close)
	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--public-url", "https://madebook.example.com/",
		"--webhook-allow", "127.0.0.1/32") // the endpoint is on 127.0.0.1

	s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{"url": endpoint.URL,
		"secret": rcv.secret, "events": []string{"hard_stop"}})
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{"slug": "stop", "title": "Stop"})
	session, _ := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{
		"mission": "stop", "agent": "claude-code", "title": "Deploy"})["id"].(string)
	start := time.Now()
	res := s.req(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+session+"/changes", agent, map[string]any{
		"files": []map[string]any{{"path": "deploy.sh", "content": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
	vs, _ := res["violations"].([]any)
	if len(vs) != 1 {
		t.Fatalf("violations %v", res["violations"])
	}
	id := fmt.Sprint(vs[0].(map[string]any)["id"])
	var p map[string]any
	select {
	case p = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no HARD_STOP arrived within 30 s")
	}
	t.Logf("the HARD_STOP arrived %s after the change was reported", time.Since(start).Round(time.Millisecond))
	m, _ := p["madebook"].(map[string]any)
	if m["event"] != "hard_stop" || m["link"] != "https://madebook.example.com/attention/items/violation/"+session+"/"+id {
		t.Errorf("payload %v", p)
	}
	if _, accepted := rcv.seen(); accepted != 1 {
		t.Errorf("%d accepted", accepted)
	}
}
