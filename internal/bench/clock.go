package bench

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// serverClock times the server's own part of each answer: from the first
// byte of a request read off the connection to the last byte of its answer
// written (http.Server's StateIdle, which follows the answer's flush). The
// client's part (its goroutines, the loopback, the wake-ups of both ends)
// is alike for every route and is most of an open-loop latency on a small
// machine; the server's part is what differs from route to route.
type serverClock struct {
	route  func(*http.Request) string // the route a request is timed under; "" is not timed
	mu     sync.Mutex
	on     bool
	served map[string][]time.Duration
	// ended counts the answers written, timed or not: the server is done
	// with an answer a little after its client has read it.
	ended atomic.Int64
}

// clockedConn is a server connection that remembers when its request in
// hand began to arrive, and the route it is for.
type clockedConn struct {
	net.Conn
	start atomic.Int64 // the request's first byte, in clockNow's time; 0 between requests
	route atomic.Pointer[string]
}

func (c *clockedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.start.Load() == 0 {
		c.start.Store(clockNow())
	}
	return n, err
}

// clockNow is the monotonic clock in nanoseconds, never 0.
func clockNow() int64 { return int64(time.Since(clockEpoch)) + 1 }

var clockEpoch = time.Now()

type clockedListener struct{ net.Listener }

func (l clockedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &clockedConn{Conn: c}, nil
}

type connKey struct{}

// serve serves h on ln, timing every answer while the clock runs.
func (k *serverClock) serve(ln net.Listener, h http.Handler) *http.Server {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, ok := r.Context().Value(connKey{}).(*clockedConn); ok {
				route := k.route(r)
				c.route.Store(&route)
			}
			h.ServeHTTP(w, r)
		}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState: func(c net.Conn, s http.ConnState) {
			cc, ok := c.(*clockedConn)
			if !ok || s != http.StateIdle {
				return
			}
			start, route := cc.start.Swap(0), cc.route.Swap(nil)
			if start != 0 && route != nil && *route != "" {
				k.record(*route, time.Duration(clockNow()-start))
			}
			if start != 0 {
				k.ended.Add(1)
			}
		},
	}
	go srv.Serve(clockedListener{ln})
	return srv
}

func (k *serverClock) record(route string, d time.Duration) {
	k.mu.Lock()
	if k.on {
		k.served[route] = append(k.served[route], d)
	}
	k.mu.Unlock()
}

// run starts the clock afresh; stop stops it and returns what it timed,
// by route.
func (k *serverClock) run() {
	k.mu.Lock()
	k.on, k.served = true, map[string][]time.Duration{}
	k.mu.Unlock()
}

func (k *serverClock) stop() map[string][]time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.on = false
	return k.served
}

// routeName names the bench's routes as it reports them.
func routeName(r *http.Request) string {
	switch p := r.URL.Path; {
	case p == "/healthz", p == "/brief":
		return p
	case strings.HasSuffix(p, "/tool-calls/check"):
		return "check"
	}
	return ""
}
