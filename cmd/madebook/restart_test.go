package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// child is `madebook serve` running as a real process of the built binary,
// its JSON log read from its stdout.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	exited chan struct{}

	mu     sync.Mutex
	logs   []map[string]any
	stderr bytes.Buffer
}

// buildMadebook builds the binary once, into a temporary directory.
func buildMadebook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "madebook")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startChild starts `madebook serve --addr 127.0.0.1:0 --db path` (and
// any more flags) and waits for its "listening" log line, which carries
// the address. The process is killed when the test ends, if it is still
// running.
func startChild(t *testing.T, bin, path string, flags ...string) *child {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", path}, flags...)
	c := &child{t: t, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	c.cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		// Read every line until the process exits (a full pipe would stop
		// it), then reap it: Wait closes the pipe, so it comes after.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				line = map[string]any{"msg": "NOT JSON", "raw": sc.Text()}
			}
			c.mu.Lock()
			c.logs = append(c.logs, line)
			c.mu.Unlock()
			if line["msg"] == "listening" {
				a, _ := line["addr"].(string)
				select {
				case addr <- a:
				default:
				}
			}
		}
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() { c.kill() })
	select {
	case c.url = <-addr:
	case <-c.exited:
		t.Fatalf("serve exited before listening: %v\nstderr: %s", c.cmd.ProcessState, c.stderrText())
	case <-time.After(30 * time.Second):
		t.Fatalf("no \"listening\" log line within 30 s\nstderr: %s", c.stderrText())
	}
	return c
}

// kill sends SIGKILL, as a crash or an OOM killer would: no shutdown, no
// flush. It returns once the process is gone.
func (c *child) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		c.t.Errorf("kill: %v", err)
	}
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.t.Error("the process did not die within 15 s of SIGKILL")
	}
	httpClient.CloseIdleConnections()
}

func (c *child) stderrText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

func (c *child) logLines() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.logs)
}

// api is the child's HTTP API, through the e2e test's request helper.
func (c *child) api() *server { return &server{t: c.t, url: c.url} }

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// attentionLists reports whether GET /api/v1/attention lists the ask.
func attentionLists(s *server, token, ask string) bool {
	s.t.Helper()
	items, _ := s.req(http.StatusOK, http.MethodGet, "/api/v1/attention", token, nil)["items"].([]any)
	for _, it := range items {
		if m, _ := it.(map[string]any); m["kind"] == "ask" && m["ref"] == ask {
			return true
		}
	}
	return false
}

// errorOf returns the error object of an error answer.
func errorOf(m map[string]any) map[string]any {
	e, _ := m["error"].(map[string]any)
	return e
}

// TestAParkedRunSurvivesAKill parks a run on a question, kills the server
// with SIGKILL, starts a new one on the same database, and checks the
// question is still there to be answered: the run is still parked (a
// side-effecting call is refused, naming the ask), answering restores the
// outcome it parked from, and the run may then end.
func TestAParkedRunSurvivesAKill(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	lead, agent := setupPeople(t, path)
	bin := buildMadebook(t)

	first := startChild(t, bin, path)
	s := first.api()
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/missions", lead, map[string]any{"slug": "restart", "title": "Restart"})
	session, _ := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions", agent, map[string]any{
		"mission": "restart", "agent": "claude-code", "title": "Save a reading"})["id"].(string)
	run, _ := s.req(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+session+"/runs", agent,
		map[string]any{"name": "graph-ask-demo"})["id"].(string)
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", agent,
		map[string]any{"server": "mcp-monitor", "tool": "get_cpu_info", "side_effecting": false})
	asked := s.req(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/asks", agent, map[string]any{
		"prompt": "save this reading?", "options": map[string]string{"1": "Yes", "2": "No"}})
	ask, _ := asked["id"].(string)
	if ask == "" || asked["run_status"] != "parked" {
		t.Fatalf("ask: %v", asked)
	}
	listedBefore := attentionLists(s, lead, ask)
	if !listedBefore {
		t.Log("the Attention API does not list asks: checking the run is parked through a tool call instead")
	}

	first.kill()
	if st, ok := first.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("the first server ended with %v, not by SIGKILL", first.cmd.ProcessState)
	}

	second := startChild(t, bin, path)
	if second.url == first.url {
		t.Logf("the new server took the same address %s", second.url)
	}
	s = second.api()
	if listedBefore && !attentionLists(s, lead, ask) {
		t.Errorf("after the kill the Attention queue no longer lists ask %s", ask)
	}
	refused := s.req(http.StatusConflict, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", agent,
		map[string]any{"server": "Vodou-Recall", "tool": "memory_store"})
	if e := errorOf(refused); e["code"] != "run_parked" || e["ask"] != ask {
		t.Errorf("a side-effecting call after the restart: %v, want run_parked naming %s", refused, ask)
	}
	refused = s.req(http.StatusConflict, http.MethodPatch, "/api/v1/runs/"+run, agent, map[string]string{"status": "complete"})
	if e := errorOf(refused); e["code"] != "run_has_open_ask" || e["ask"] != ask {
		t.Errorf("finishing after the restart: %v, want run_has_open_ask naming %s", refused, ask)
	}

	answered := s.req(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask+"/answer", lead, map[string]string{"option": "1"})
	if answered["run_status"] != "running" || answered["answer"] != "1" {
		t.Fatalf("answer after the restart: %v, want run_status running", answered)
	}
	if attentionLists(s, lead, ask) {
		t.Errorf("the answered ask %s is still in the Attention queue", ask)
	}
	s.req(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", agent,
		map[string]any{"server": "Vodou-Recall", "tool": "memory_store"})
	done := s.req(http.StatusOK, http.MethodPatch, "/api/v1/runs/"+run, agent, map[string]string{"status": "complete"})
	if done["status"] != "complete" {
		t.Errorf("finish: %v", done)
	}

	for _, l := range second.logLines() {
		if l["level"] == "ERROR" || l["msg"] == "NOT JSON" {
			t.Errorf("the restarted server logged %v", l)
		}
		if st, _ := l["status"].(float64); l["msg"] == "request" && st >= 500 {
			t.Errorf("a request got %v: %v", st, l)
		}
	}
}
