package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The server clock times each answer on a kept-alive connection by
// itself, under its route, from the request's first byte to the answer's
// last, and leaves untimed routes and stopped clocks out.
func TestServerClockTimesEachAnswer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const slow = 20 * time.Millisecond
	clock := &serverClock{route: func(r *http.Request) string {
		if name, ok := strings.CutPrefix(r.URL.Path, "/timed/"); ok {
			return name
		}
		return ""
	}}
	srv := clock.serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "slow") {
			time.Sleep(slow)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	client := &http.Transport{MaxConnsPerHost: 1} // one connection, kept alive
	defer client.CloseIdleConnections()
	get := func(path string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+path, nil)
		if err := benchDo(client, req); err != nil {
			t.Fatal(err)
		}
	}
	// An answer is timed once written, which its client may read first.
	ended := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); clock.ended.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d answers ended, want %d", clock.ended.Load(), n)
			}
		}
	}
	get("/timed/fast") // before the clock runs
	ended(1)
	clock.run()
	for _, p := range []string{"/timed/fast", "/timed/slow", "/timed/fast", "/untimed", "/timed/slow"} {
		get(p)
	}
	ended(6)
	served := clock.stop()
	get("/timed/fast") // after it stopped
	if len(served["fast"]) != 2 || len(served["slow"]) != 2 || len(served) != 2 {
		t.Fatalf("timed %v, want two fast and two slow answers", served)
	}
	for _, d := range served["slow"] {
		if d < slow {
			t.Errorf("a slow answer timed %s, under the %s it took", d, slow)
		}
	}
	for _, d := range served["fast"] {
		if d >= slow {
			t.Errorf("a fast answer timed %s: it took the slow one's time too", d)
		}
	}
}

// The open loop sends each route's share and gives each route its own
// answers.
func TestBenchOpenSendsEachRouteItsShare(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	turns := map[int]string{}
	client := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		status := http.StatusOK
		if r.URL.Path == "/b" {
			status = http.StatusTeapot
		}
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(""))}, nil
	})
	route := func(path string) func(int) *http.Request {
		return func(turn int) *http.Request {
			mu.Lock()
			turns[turn] += path
			mu.Unlock()
			r, _ := http.NewRequest(http.MethodGet, "http://x"+path, nil)
			return r
		}
	}
	lat, late, failed := benchOpen(client, []func(int) *http.Request{route("/a"), route("/b"), route("/c")}, 3000, 100*time.Millisecond, 7)
	if len(late) != 300 || len(lat[0]) != 100 || len(lat[1]) != 100 || len(lat[2]) != 100 {
		t.Fatalf("%d sent, answers by route %d %d %d; want 300, 100 each", len(late), len(lat[0]), len(lat[1]), len(lat[2]))
	}
	if failed[0] != 0 || failed[1] != 100 || failed[2] != 0 {
		t.Errorf("failed by route %v, want only /b's 100", failed)
	}
	for turn, sent := range turns {
		if turn < 7 || turn >= 107 {
			t.Fatalf("turn %d sent, want turns 7 to 106", turn)
		}
		if len(sent) != 6 || !strings.Contains(sent, "/a") || !strings.Contains(sent, "/b") || !strings.Contains(sent, "/c") {
			t.Fatalf("turn %d sent %s, want each route once", turn, sent)
		}
	}
}

// Each turn of the open loop takes every route once, in an order of its
// own.
func TestBenchOrderShufflesEachTurn(t *testing.T) {
	t.Parallel()
	order := benchOrder(3000, 3)
	seen := map[[3]int]bool{}
	for i := 0; i < len(order); i += 3 {
		turn := [3]int{order[i], order[i+1], order[i+2]}
		if turn[0]+turn[1]+turn[2] != 3 || turn[0] == turn[1] || turn[1] == turn[2] || turn[0] == turn[2] {
			t.Fatalf("turn %d is %v, want each route once", i/3, turn)
		}
		seen[turn] = true
	}
	if len(seen) != 6 { // all 3! orders, over 1,000 turns
		t.Errorf("the turns took %d of the 6 orders: %v", len(seen), seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
