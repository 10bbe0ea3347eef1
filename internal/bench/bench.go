// Package bench is Madebook's load generator (cmd/madebook-bench): it
// serves Madebook on a throwaway database with a fleet of sessions
// loaded, then measures, side by side in one run, what an agent's calls
// cost against the cheapest route the server has (/healthz): requests
// per second with clients that wait for each answer (closed loop), and
// the 99th percentile latency at a fixed rate (open loop), printing each
// figure, its ratio to /healthz's, and the goals, each met or missed.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/madebook/madebook/db"
)

// closedRounds is how many turns the routes take in the closed loop with
// wrk (which runs whole seconds), openRounds with Go clients and in the
// open loop: the shorter the turns, the more alike a burst of other work
// on the machine weighs on each route's figures.
const (
	closedRounds = 5
	openRounds   = 25
)

// Config is a run's settings.
type Config struct {
	// Sessions is how many sessions the fleet holds.
	Sessions int
	// Duration is each route's closed loop.
	Duration time.Duration
	// OpenDuration is each route's open loop: its p99 is judged over
	// every sample, so it runs longer than the closed loop.
	OpenDuration time.Duration
	// Concurrency is the closed loop's clients.
	Concurrency int
	// Rate is the open loop's requests a second.
	Rate int
	// CPUProfile, when set, is where the closed loop's CPU profile goes.
	CPUProfile string
	// DB, when set, is a PostgreSQL server's URL: the run measures on a
	// throwaway database it creates there (and drops) instead of a SQLite
	// file.
	DB string
	// Wrk runs the closed loop with the wrk load generator (a separate
	// process) instead of Go clients in this process.
	Wrk bool
}

// Defaults are the settings of the figures in docs/benchmarks.md.
var Defaults = Config{Sessions: 5000, Duration: 5 * time.Second, OpenDuration: 15 * time.Second, Concurrency: 32, Rate: 1000}

// Check says what is wrong with the settings, naming the flags, or nil.
func (c Config) Check() error {
	if c.Sessions < 1 || c.Concurrency < 1 || c.Rate < 1 || c.Duration < 100*time.Millisecond || c.OpenDuration < 100*time.Millisecond {
		return errors.New("--sessions, --concurrency and --rate must be at least 1, --duration and --open-duration at least 100ms")
	}
	if c.DB != "" && !db.IsPostgres(c.DB) {
		return errors.New("--db is a PostgreSQL URL (postgres://…); without it the bench measures on a SQLite file")
	}
	return nil
}

// route is one of the routes measured: its name as reported, and the
// request it sends for the i-th turn.
type route struct {
	name string
	req  func(i int) *http.Request
}

// Run measures as cfg says and prints the figures on out.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	// The engine alone, first: on a small heap, as BenchmarkDecide runs,
	// not beside the 5,000 sessions the server caches.
	decide := measureDecide(out)
	dir, err := os.MkdirTemp("", "madebook-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dsn := filepath.Join(dir, "bench.db")
	if cfg.DB != "" {
		var drop func() error
		if dsn, drop, err = throwawayDatabase(ctx, cfg.DB); err != nil {
			return err
		}
		defer func() {
			if err := drop(); err != nil {
				fmt.Fprintf(out, "bench: %v\n", err)
			}
		}()
	}
	t, err := openTarget(ctx, dsn)
	if err != nil {
		return err
	}
	defer t.Close()
	fmt.Fprintf(out, "on %s\n", db.Describe(dsn))

	fmt.Fprintf(out, "loading %d sessions…\n", cfg.Sessions)
	fleet, err := loadFleet(ctx, t, cfg.Sessions)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	clock := &serverClock{route: routeName}
	srv := clock.serve(ln, t.handler)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	// The clients use the transport itself, as a load generator does: an
	// http.Client's redirects, cookies and deadlines would clone and check
	// every request's headers, more work on the agent routes' than on
	// /healthz's.
	client := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	routes := fleetRoutes(base, fleet)
	if err := warmUp(client, routes, len(fleet.sessions)); err != nil {
		return err
	}
	var script string
	if cfg.Wrk {
		if script, err = wrkScript(dir, fleet); err != nil {
			return err
		}
	}
	closedFig, err := closedLoop(ctx, cfg, client, routes, base, script, out)
	if err != nil {
		return err
	}
	openFig := openLoop(cfg, client, routes, clock, out)
	report(closedFig, openFig, decide, out)
	return nil
}

// fleetRoutes are the measured routes over the fleet: /healthz, the
// brief and the hook's check, each request built once, as wrk's are (the
// clients' work per request is then alike on every route, and the ratios
// measure the server, not the building of a POST).
func fleetRoutes(base string, f fleet) []route {
	briefs, checks := make([]request, len(f.sessions)), make([]request, len(f.sessions))
	for i, id := range f.sessions {
		key := f.keys[i%len(f.keys)]
		briefs[i] = newRequest(http.MethodPost, base+"/brief", key, `{"session":"`+id+`"}`)
		checks[i] = newRequest(http.MethodPost, base+"/api/v1/sessions/"+id+"/tool-calls/check", key, checkBody(f.runs[i]))
	}
	healthz := newRequest(http.MethodGet, base+"/healthz", "", "")
	return []route{
		{"/healthz", func(int) *http.Request { return healthz.next() }},
		{"/brief", func(i int) *http.Request { return briefs[i%len(briefs)].next() }},
		{"check", func(i int) *http.Request { return checks[i%len(checks)].next() }},
	}
}

// warmUp briefs every session once and has its hook check once: the
// steady state of agents at work.
func warmUp(client http.RoundTripper, routes []route, sessions int) error {
	for i := range sessions {
		for _, r := range routes[1:] {
			if err := do(client, r.req(i)); err != nil {
				return fmt.Errorf("warming up: %w", err)
			}
		}
	}
	return nil
}

// closedFigures are the closed loop's figures, by route.
type closedFigures struct {
	rps    map[string]float64   // requests per second, over the whole loop
	paired map[string]float64   // its ratio to /healthz's, turn by turn
	turns  map[string][]float64 // each round's requests per second
}

// closedLoop has the routes take turns, in rounds, so that a machine
// busy with something else for a while weighs on each of them alike;
// each round's ratios compare turns taken side by side. It prints each
// route's requests per second and CPU per request.
func closedLoop(ctx context.Context, cfg Config, client http.RoundTripper, routes []route, base, script string, out io.Writer) (closedFigures, error) {
	rounds, clients := openRounds, "Go clients in this process"
	if cfg.Wrk {
		rounds, clients = closedRounds, "wrk"
	}
	slice := cfg.Duration / time.Duration(rounds)
	fmt.Fprintf(out, "closed loop: %d clients, %s a route (in %d turns); CPU per request: the server's and its clients' (%s)\n",
		cfg.Concurrency, cfg.Duration, rounds, clients)
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return closedFigures{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return closedFigures{}, err
		}
		defer pprof.StopCPUProfile()
	}
	fig := closedFigures{rps: map[string]float64{}, paired: map[string]float64{}, turns: map[string][]float64{}}
	answered, failed := map[string]int64{}, map[string]int64{}
	cpu, took := map[string]time.Duration{}, map[string]time.Duration{}
	for range rounds {
		for _, r := range routes {
			var n, bad int64
			var wrkCPU time.Duration
			before, start := processCPU(), time.Now()
			if cfg.Wrk {
				var err error
				if n, bad, wrkCPU, err = runWrk(ctx, base, script, r.name, cfg.Concurrency, slice); err != nil {
					return closedFigures{}, err
				}
			} else {
				n, bad = runClosed(client, r.req, cfg.Concurrency, slice)
			}
			turn := time.Since(start)
			took[r.name] += turn
			fig.turns[r.name] = append(fig.turns[r.name], float64(n)/turn.Seconds())
			cpu[r.name] += processCPU() - before + wrkCPU
			answered[r.name] += n
			failed[r.name] += bad
		}
	}
	perReq := map[string]float64{}
	for _, r := range routes {
		fig.rps[r.name] = float64(answered[r.name]) / took[r.name].Seconds()
		perReq[r.name] = float64(cpu[r.name].Microseconds()) / float64(max(answered[r.name], 1))
		fig.paired[r.name] = pairedRatio(fig.turns[r.name], fig.turns["/healthz"])
		fmt.Fprintf(out, "  %-9s %9.0f req/s  %5.2f× /healthz (turn by turn %4.2f×)   %5.1f µs CPU/req  %5.2f× /healthz%s\n", r.name, fig.rps[r.name],
			fig.rps[r.name]/fig.rps["/healthz"], fig.paired[r.name], perReq[r.name], perReq[r.name]/perReq["/healthz"], failures(failed[r.name]))
	}
	return fig, nil
}

// openFigures are the open loop's figures, by route.
type openFigures struct {
	p99       map[string]time.Duration // over every sample
	pairedP99 map[string]float64       // its ratio to /healthz's, turn by turn
	serverP99 map[string]time.Duration // the server's part alone
	turnP99   map[string][]float64     // each round's p99
}

// openLoop sends cfg.Rate requests a second, the routes interleaved in a
// random order, so that each route's answers meet the same machine and
// follow the same others, and prints each route's p50 and p99.
func openLoop(cfg Config, client http.RoundTripper, routes []route, clock *serverClock, out io.Writer) openFigures {
	reqs := make([]func(int) *http.Request, len(routes))
	for k, r := range routes {
		reqs[k] = r.req
	}
	lats := make([][]time.Duration, len(routes))
	var lateness []time.Duration
	fig := openFigures{p99: map[string]time.Duration{}, pairedP99: map[string]float64{}, serverP99: map[string]time.Duration{}, turnP99: map[string][]float64{}}
	failed := map[string]int64{}
	clock.run()
	next := 0 // each round goes on through the fleet's sessions where the last stopped
	for range openRounds {
		lat, late, bad := runOpen(client, reqs, cfg.Rate, cfg.OpenDuration*time.Duration(len(routes))/openRounds, next)
		next += len(lat[0])
		lateness = append(lateness, late...)
		for k, r := range routes {
			lats[k] = append(lats[k], lat[k]...)
			fig.turnP99[r.name] = append(fig.turnP99[r.name], float64(percentile(lat[k], 0.99)))
			failed[r.name] += bad[k]
		}
	}
	served := clock.stop()
	fmt.Fprintf(out, "open loop: %d req/s, the routes in a random order, %s of answers a route (in %d rounds); latency from when each request was due, the sender's lateness included (p50 %s, p99 %s); the server's part: first byte of a request read to last byte of its answer written\n",
		cfg.Rate, cfg.OpenDuration, openRounds, percentile(lateness, 0.50).Round(time.Microsecond), percentile(lateness, 0.99).Round(time.Microsecond))
	for k, r := range routes {
		p50 := percentile(lats[k], 0.50)
		fig.p99[r.name] = percentile(lats[k], 0.99)
		fig.pairedP99[r.name] = pairedRatio(fig.turnP99[r.name], fig.turnP99["/healthz"])
		fig.serverP99[r.name] = percentile(served[r.name], 0.99)
		fmt.Fprintf(out, "  %-9s p50 %8s  p99 %8s  %5.2f× /healthz p99 (turn by turn %4.2f×)   server's part p50 %6s  p99 %6s%s\n", r.name, p50.Round(time.Microsecond),
			fig.p99[r.name].Round(time.Microsecond), float64(fig.p99[r.name])/float64(fig.p99["/healthz"]), fig.pairedP99[r.name],
			percentile(served[r.name], 0.50).Round(time.Microsecond), fig.serverP99[r.name].Round(time.Microsecond), failures(failed[r.name]))
	}
	return fig
}

// report prints the node's ceiling, the goals, each met or missed, and
// how much the rounds' ratios strayed.
func report(c closedFigures, o openFigures, decide time.Duration, out io.Writer) {
	fmt.Fprintf(out, "ceiling: %.0f briefs a second from one node; agents briefing every 10 s: about %.0f\n", c.rps["/brief"], c.rps["/brief"]*10)
	fmt.Fprintln(out, "goals (requests per second judged turn by turn, p99 over every sample; the other way in brackets):")
	for _, g := range []goal{
		{"/brief ≥ 0.80× /healthz req/s", c.paired["/brief"], c.rps["/brief"] / c.rps["/healthz"], 0.80, true},
		{"/brief p99 ≤ 2× /healthz p99", float64(o.p99["/brief"]) / float64(o.p99["/healthz"]), o.pairedP99["/brief"], 2, false},
		{"check p99 ≤ /brief p99", float64(o.p99["check"]) / float64(o.p99["/brief"]), pairedRatio(o.turnP99["check"], o.turnP99["/brief"]), 1, false},
	} {
		fmt.Fprintf(out, "  %-31s %5.2f× (%4.2f×)  %s\n", g.name, g.ratio, g.other, g.verdict())
	}
	fmt.Fprintf(out, "  (check p99 over /brief p99, the server's part alone: %.2f×)\n", float64(o.serverP99["check"])/float64(o.serverP99["/brief"]))
	fmt.Fprintf(out, "  %-31s %s  %s\n", "protocol.Decide ≤ 1µs (busy)", decide, goal{ratio: float64(decide), bound: float64(decideGoal)}.verdict())
	spread := func(route, floor []float64) string {
		lo, hi := pairedSpread(route, floor)
		return fmt.Sprintf("%.2f–%.2f×", lo, hi)
	}
	fmt.Fprintf(out, "noise: the middle half of the rounds' ratios: /brief req/s %s, /brief p99 %s, check p99 over /brief's %s (a goal inside its range is within this machine's noise)\n",
		spread(c.turns["/brief"], c.turns["/healthz"]), spread(o.turnP99["/brief"], o.turnP99["/healthz"]), spread(o.turnP99["check"], o.turnP99["/brief"]))
}
