package bench

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The open loop sends each route's share and gives each route its own
// answers.
func TestRunOpenSendsEachRouteItsShare(t *testing.T) {
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
	lat, late, failed := runOpen(client, []func(int) *http.Request{route("/a"), route("/b"), route("/c")}, 3000, 100*time.Millisecond, 7)
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
func TestShuffledTurnsShuffleEachTurn(t *testing.T) {
	t.Parallel()
	order := shuffledTurns(3000, 3)
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
