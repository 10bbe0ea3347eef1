package bench

import (
	"io"
	"net"
	"net/http"
	"strings"
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
		if err := do(client, req); err != nil {
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
