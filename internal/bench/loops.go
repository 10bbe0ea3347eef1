package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// request is a request built once and sent many times.
type request struct {
	tmpl *http.Request
	body []byte
}

// newRequest builds a request to url, with the agent key and a JSON
// body when they are not empty.
func newRequest(method, url, key, body string) request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err) // bench's own URLs
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	b := request{tmpl: req}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		b.body = []byte(body)
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.body)), nil }
	}
	return b
}

// next is the request to send again: a copy sharing the URL and headers,
// which the client only reads, with a fresh body.
func (b request) next() *http.Request {
	req := new(http.Request)
	*req = *b.tmpl
	if b.body != nil {
		req.Body = io.NopCloser(bytes.NewReader(b.body))
	}
	return req
}

// do sends one request and reads its answer; a status over 299 is an
// error.
func do(client http.RoundTripper, req *http.Request) error {
	res, err := client.RoundTrip(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err == nil && res.StatusCode > 299 {
		err = fmt.Errorf("%s %s: status %d", req.Method, req.URL.Path, res.StatusCode)
	}
	return err
}

// runClosed runs clients that each send the next request when the last
// is answered, for d, and returns how many were answered and failed.
func runClosed(client http.RoundTripper, req func(int) *http.Request, clients int, d time.Duration) (int64, int64) {
	var done, failed, next atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if do(client, req(int(next.Add(1)))) != nil {
					failed.Add(1)
				} else {
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return done.Load(), failed.Load()
}

// runOpen sends rate requests a second for d, each at its scheduled
// time whether or not the ones before were answered, taking the routes
// reqs make in turn, each turn in a random order (so that no route always
// follows the same other); turns are counted from first, and each
// route's request of a turn is the one reqs makes for its count. It returns each route's latencies, measured
// from when each request was due (so a stalled server is not hidden by a
// waiting sender), how late the sender woke for each request (part of its
// latency), and how many of each route's failed.
func runOpen(client http.RoundTripper, reqs []func(int) *http.Request, rate int, d time.Duration, first int) (lat [][]time.Duration, late []time.Duration, failed []int64) {
	n := int(float64(rate) * d.Seconds())
	interval := time.Second / time.Duration(rate)
	order := shuffledTurns(n, len(reqs))
	all, late := make([]time.Duration, len(order)), make([]time.Duration, len(order))
	bad := make([]atomic.Int64, len(reqs))
	var wg sync.WaitGroup
	p := newPacer()
	start := time.Now()
	for i, k := range order {
		due := start.Add(time.Duration(i) * interval)
		p.sleepUntil(due)
		late[i] = time.Since(due)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if do(client, reqs[k](first+i/len(reqs))) != nil {
				bad[k].Add(1)
			}
			all[i] = time.Since(due)
		}()
	}
	p.close()
	wg.Wait()
	lat, failed = make([][]time.Duration, len(reqs)), make([]int64, len(reqs))
	for i, k := range order {
		lat[k] = append(lat[k], all[i])
	}
	for k := range reqs {
		failed[k] = bad[k].Load()
	}
	return lat, late, failed
}

// shuffledTurns is the routes of n requests, in turns of one request of
// each of the k routes in a random order (n is rounded down to whole
// turns).
func shuffledTurns(n, k int) []int {
	order := make([]int, n/k*k)
	for i := range order {
		order[i] = i % k
	}
	for t := 0; t < len(order); t += k {
		turn := order[t : t+k]
		rand.Shuffle(k, func(i, j int) { turn[i], turn[j] = turn[j], turn[i] })
	}
	return order
}
