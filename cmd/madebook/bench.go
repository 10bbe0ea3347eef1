package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for --db

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/hook"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web"
)

// benchRounds is how many turns the routes take in the closed loop (wrk
// runs whole seconds), openRounds in the open loop: the shorter the
// turns, the more alike a burst of other work on the machine weighs on
// each route's latencies.
const (
	benchRounds = 5
	openRounds  = 25
)

// benchGoal is one of issue 14's goals: a ratio, judged against its
// bound, and the same ratio taken the other way (overall or turn by turn)
// for comparison.
type benchGoal struct {
	name         string
	ratio, other float64
	bound        float64
	atLeast      bool // the ratio must reach bound; else stay within it
}

func (g benchGoal) verdict() string {
	met := g.ratio <= g.bound
	if g.atLeast {
		met = g.ratio >= g.bound
	}
	if met {
		return "met"
	}
	return "missed"
}

// benchConfig is bench's settings.
type benchConfig struct {
	sessions int
	duration time.Duration // each route's closed loop
	// openDuration is each route's open loop: its p99 is judged over
	// every sample, so it runs longer than the closed loop.
	openDuration time.Duration
	concurrency  int
	rate         int
	// cpuProfile, when set, is where the closed loop's CPU profile goes.
	cpuProfile string
	// db, when set, is a PostgreSQL server's URL: bench measures on a
	// throwaway database it creates there (and drops) instead of a SQLite
	// file.
	db string
	// wrk, when set, runs the closed loop with the wrk load generator
	// (a separate process) instead of Go clients in bench's own process.
	wrk bool
}

// runBench is `madebook bench`: it serves Madebook on a throwaway
// database with sessions loaded, then measures, side by side in one run,
// what an agent's calls cost against the cheapest route the server has
// (/healthz): requests per second with clients that wait for each answer
// (closed loop), and the 99th percentile latency at a fixed rate (open
// loop), printing each figure and its ratio to /healthz's.
func runBench(ctx context.Context, c stdio, args []string) error {
	f := newFlags("bench", "madebook bench [--db postgres://…] [--sessions N] [--duration D] [--concurrency N] [--rate R] [--open-duration D] [--wrk] [--cpuprofile FILE]",
		"Serve Madebook on a throwaway database with N sessions of one agent fleet (one in ten\n"+
			"with an open gate, each with the run a Claude Code hook opens, every one briefed\n"+
			"once), then measure over loopback HTTP: /healthz (the floor), POST /brief and the\n"+
			"check a Claude Code hook sends before a Bash command (POST /api/v1/sessions/ID/tool-calls/check,\n"+
			"naming its run; parsed where a gate blocks a path). Closed loop, one route at a time: C clients for D each, requests per\n"+
			"second. Open loop: R requests a second, the routes interleaved in a random order,\n"+
			"--open-duration of answers each: p50 and p99 latency, and the server's part of them.\n"+
			"Prints each figure and its ratio to /healthz's, and the goals, each met or missed.")
	var cfg benchConfig
	f.IntVar(&cfg.sessions, "sessions", 5000, "load `N` sessions")
	f.DurationVar(&cfg.duration, "duration", 5*time.Second, "measure each route's requests per second for `D`")
	f.DurationVar(&cfg.openDuration, "open-duration", 15*time.Second, "measure each route's latency for `D` (15,000 samples at the default rate: a p99 is the 150th slowest)")
	f.IntVar(&cfg.concurrency, "concurrency", 32, "`N` clients in the closed loop")
	f.IntVar(&cfg.rate, "rate", 1000, "`R` requests a second in the open loop")
	f.StringVar(&cfg.db, "db", "", "measure on PostgreSQL: a throwaway database created on the server of this postgres:// `URL` (its role may create databases) and dropped at the end; default a SQLite file in a temporary directory")
	f.BoolVar(&cfg.wrk, "wrk", false, "run the closed loop with wrk (on PATH), a load generator outside bench's process, as the figures of issue 14 were taken")
	f.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write the CPU profile of the closed loop (server and clients, one process) to `FILE`, for go tool pprof")
	if err := f.parse(c, args); err != nil {
		return err
	}
	if cfg.sessions < 1 || cfg.concurrency < 1 || cfg.rate < 1 || cfg.duration < 100*time.Millisecond || cfg.openDuration < 100*time.Millisecond {
		return f.fail("--sessions, --concurrency and --rate must be at least 1, --duration and --open-duration at least 100ms")
	}
	dir, err := os.MkdirTemp("", "madebook-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dsn := filepath.Join(dir, "bench.db")
	if cfg.db != "" {
		if !db.IsPostgres(cfg.db) {
			return f.fail("--db is a PostgreSQL URL (postgres://…); without it bench measures on a SQLite file")
		}
		var drop func() error
		if dsn, drop, err = benchDatabase(ctx, cfg.db); err != nil {
			return err
		}
		defer func() {
			if err := drop(); err != nil {
				fmt.Fprintf(c.stdout, "bench: %v\n", err)
			}
		}()
	}
	a, err := openApp(ctx, dsn, governance.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(c.stdout, "on %s\n", db.Describe(dsn))

	fmt.Fprintf(c.stdout, "loading %d sessions…\n", cfg.sessions)
	fleet, err := benchLoad(ctx, a, cfg.sessions)
	if err != nil {
		return err
	}
	keys, ids := fleet.keys, fleet.sessions
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	clock := &serverClock{route: benchRoute}
	srv := clock.serve(ln, a.handler(web.Deps{}))
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	// The clients use the transport itself, as a load generator does: an
	// http.Client's redirects, cookies and deadlines would clone and check
	// every request's headers, more work on the agent routes' than on
	// /healthz's.
	client := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}

	// Every request is built once, as wrk's are: the clients' work per
	// request is then alike on every route, and the ratios measure the
	// server, not the building of a POST.
	briefs, checks := make([]benchRequest, len(ids)), make([]benchRequest, len(ids))
	for i, id := range ids {
		key := keys[i%len(keys)]
		briefs[i] = newBenchRequest(http.MethodPost, base+"/brief", key, `{"session":"`+id+`"}`)
		checks[i] = newBenchRequest(http.MethodPost, base+"/api/v1/sessions/"+id+"/tool-calls/check", key, benchCheckBody(fleet.runs[i]))
	}
	healthz := newBenchRequest(http.MethodGet, base+"/healthz", "", "")
	brief := func(i int) *http.Request { return briefs[i%len(briefs)].next() }
	check := func(i int) *http.Request { return checks[i%len(checks)].next() }
	health := func(int) *http.Request { return healthz.next() }
	// Every session briefs once and its hook checks once: the steady
	// state of agents at work.
	for i := range ids {
		if err := benchDo(client, brief(i)); err != nil {
			return fmt.Errorf("warming up: %w", err)
		}
		if err := benchDo(client, check(i)); err != nil {
			return fmt.Errorf("warming up: %w", err)
		}
	}
	routes := []struct {
		name string
		req  func(int) *http.Request
	}{{"/healthz", health}, {"/brief", brief}, {"check", check}}

	// The routes take turns, in rounds, so that a machine busy with
	// something else for a while weighs on each of them alike; each
	// round's ratios compare turns taken side by side.
	rounds, clients := openRounds, "Go clients in this process"
	if cfg.wrk {
		rounds, clients = benchRounds, "wrk"
	}
	slice := cfg.duration / time.Duration(rounds)
	fmt.Fprintf(c.stdout, "closed loop: %d clients, %s a route (in %d turns); CPU per request: the server's and its clients' (%s)\n",
		cfg.concurrency, cfg.duration, rounds, clients)
	answered, failed := map[string]int64{}, map[string]int64{}
	if cfg.cpuProfile != "" {
		out, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
	}
	var script string
	if cfg.wrk {
		if script, err = wrkScript(dir, fleet); err != nil {
			return err
		}
	}
	cpu, took := map[string]time.Duration{}, map[string]time.Duration{}
	turns := map[string][]float64{} // each round's requests per second, by route
	for range rounds {
		for _, r := range routes {
			var n, bad int64
			var wrkCPU time.Duration
			before, start := processCPU(), time.Now()
			if cfg.wrk {
				n, bad, wrkCPU, err = benchWrk(ctx, base, script, r.name, cfg.concurrency, slice)
				if err != nil {
					return err
				}
			} else {
				n, bad = benchClosed(client, r.req, cfg.concurrency, slice)
			}
			turn := time.Since(start)
			took[r.name] += turn
			turns[r.name] = append(turns[r.name], float64(n)/turn.Seconds())
			cpu[r.name] += processCPU() - before + wrkCPU
			answered[r.name] += n
			failed[r.name] += bad
		}
	}
	pprof.StopCPUProfile()
	rps, perReq, paired := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, r := range routes {
		rps[r.name] = float64(answered[r.name]) / took[r.name].Seconds()
		perReq[r.name] = float64(cpu[r.name].Microseconds()) / float64(max(answered[r.name], 1))
		paired[r.name] = pairedRatio(turns[r.name], turns["/healthz"])
		fmt.Fprintf(c.stdout, "  %-9s %9.0f req/s  %5.2f× /healthz (turn by turn %4.2f×)   %5.1f µs CPU/req  %5.2f× /healthz%s\n", r.name, rps[r.name],
			rps[r.name]/rps["/healthz"], paired[r.name], perReq[r.name], perReq[r.name]/perReq["/healthz"], failures(failed[r.name]))
	}
	// The open loop interleaves the routes, in a random order, so that each
	// route's answers meet the same machine and follow the same others.
	reqs := make([]func(int) *http.Request, len(routes))
	for k, r := range routes {
		reqs[k] = r.req
	}
	lats := make([][]time.Duration, len(routes))
	var lateness []time.Duration
	turnP99 := map[string][]float64{} // each round's p99, by route
	clear(failed)
	clock.run()
	next := 0 // each round goes on through the fleet's sessions where the last stopped
	for range openRounds {
		lat, late, bad := benchOpen(client, reqs, cfg.rate, cfg.openDuration*time.Duration(len(routes))/openRounds, next)
		next += len(lat[0])
		lateness = append(lateness, late...)
		for k, r := range routes {
			lats[k] = append(lats[k], lat[k]...)
			turnP99[r.name] = append(turnP99[r.name], float64(percentile(lat[k], 0.99)))
			failed[r.name] += bad[k]
		}
	}
	served := clock.stop()
	fmt.Fprintf(c.stdout, "open loop: %d req/s, the routes in a random order, %s of answers a route (in %d rounds); latency from when each request was due, the sender's lateness included (p50 %s, p99 %s); the server's part: first byte of a request read to last byte of its answer written\n",
		cfg.rate, cfg.openDuration, openRounds, percentile(lateness, 0.50).Round(time.Microsecond), percentile(lateness, 0.99).Round(time.Microsecond))
	p99, pairedP99, serverP99 := map[string]time.Duration{}, map[string]float64{}, map[string]time.Duration{}
	for k, r := range routes {
		p50 := percentile(lats[k], 0.50)
		p99[r.name] = percentile(lats[k], 0.99)
		pairedP99[r.name] = pairedRatio(turnP99[r.name], turnP99["/healthz"])
		serverP99[r.name] = percentile(served[r.name], 0.99)
		fmt.Fprintf(c.stdout, "  %-9s p50 %8s  p99 %8s  %5.2f× /healthz p99 (turn by turn %4.2f×)   server's part p50 %6s  p99 %6s%s\n", r.name, p50.Round(time.Microsecond),
			p99[r.name].Round(time.Microsecond), float64(p99[r.name])/float64(p99["/healthz"]), pairedP99[r.name],
			percentile(served[r.name], 0.50).Round(time.Microsecond), serverP99[r.name].Round(time.Microsecond), failures(failed[r.name]))
	}
	fmt.Fprintf(c.stdout, "ceiling: %.0f briefs a second from one node; agents briefing every 10 s: about %.0f\n", rps["/brief"], rps["/brief"]*10)
	fmt.Fprintln(c.stdout, "goals (requests per second judged turn by turn, p99 over every sample; the other way in brackets):")
	for _, g := range []benchGoal{
		{"/brief ≥ 0.80× /healthz req/s", paired["/brief"], rps["/brief"] / rps["/healthz"], 0.80, true},
		{"/brief p99 ≤ 2× /healthz p99", float64(p99["/brief"]) / float64(p99["/healthz"]), pairedP99["/brief"], 2, false},
		{"check p99 ≤ /brief p99", float64(p99["check"]) / float64(p99["/brief"]), pairedRatio(turnP99["check"], turnP99["/brief"]), 1, false},
	} {
		fmt.Fprintf(c.stdout, "  %-31s %5.2f× (%4.2f×)  %s\n", g.name, g.ratio, g.other, g.verdict())
	}
	fmt.Fprintf(c.stdout, "  (check p99 over /brief p99, the server's part alone: %.2f×)\n", float64(serverP99["check"])/float64(serverP99["/brief"]))
	spread := func(route, floor []float64) string {
		lo, hi := pairedSpread(route, floor)
		return fmt.Sprintf("%.2f–%.2f×", lo, hi)
	}
	fmt.Fprintf(c.stdout, "noise: the middle half of the rounds' ratios: /brief req/s %s, /brief p99 %s, check p99 over /brief's %s (a goal inside its range is within this machine's noise)\n",
		spread(turns["/brief"], turns["/healthz"]), spread(turnP99["/brief"], turnP99["/healthz"]), spread(turnP99["check"], turnP99["/brief"]))
	return nil
}

// benchKeys is how many agent keys the bench's fleet shares out its
// sessions over: each key stays within the default rate limits, which
// the server it measures enforces as serve does.
const benchKeys = 10

// benchFleet is the agents bench measures: their keys' secrets, and for
// each session its id and the run its Claude Code hook holds its calls
// in (the i-th session is the i-th key's mod benchKeys).
type benchFleet struct {
	keys, sessions, runs []string
}

// benchLoad makes benchKeys agent keys and n sessions on one mission, one
// in ten with an open gate, each with the run a Claude Code hook opens.
func benchLoad(ctx context.Context, a *app, n int) (benchFleet, error) {
	var f benchFleet
	u, err := a.auth.AddUser(ctx, auth.CommandLine("bench"), "bench@example.com", "bench-password-123", auth.Lead)
	if err != nil {
		return f, err
	}
	lead := auth.Actor{UserID: u.ID, Email: u.Email, Role: u.Role}
	if _, err := a.gov.Missions.Create(ctx, lead, governance.MissionInput{Slug: "bench", Title: "Bench"}); err != nil {
		return f, err
	}
	f.keys = make([]string, benchKeys)
	agents := make([]auth.Actor, benchKeys)
	for i := range f.keys {
		if f.keys[i], err = a.auth.CreateKey(ctx, auth.CommandLine("bench"), fmt.Sprintf("bench-agent-%d", i+1)); err != nil {
			return f, err
		}
		if agents[i], err = a.auth.Authenticate(ctx, f.keys[i]); err != nil {
			return f, err
		}
	}
	runs := ledger.NewService(a.store, time.Now, a.gov.Briefs, a.gov.Notify)
	f.sessions, f.runs = make([]string, n), make([]string, n)
	for i := range f.sessions {
		agent := agents[i%benchKeys]
		s, err := a.gov.Sessions.Create(ctx, agent, governance.SessionInput{Mission: "bench", Title: fmt.Sprintf("work %d", i)})
		if err != nil {
			return f, err
		}
		f.sessions[i] = s.ID
		r, _, err := runs.OpenRun(ctx, agent, s.ID, hook.RunName, "", fmt.Sprintf("claude-session-%d", i))
		if err != nil {
			return f, err
		}
		f.runs[i] = r.ID
		if i%10 == 0 {
			if _, err := a.gov.Decisions.Open(ctx, agent, s.ID, governance.DecisionInput{Title: "Schema",
				Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}}); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// benchCheckBody is the check a Claude Code hook sends before a Bash
// command, on the run it holds the session's calls in, with the working
// directory Claude Code reports and the project root: in a session whose
// gate blocks db/migrations (one in ten) the command is parsed and what it
// touches compared with the scope, the gate's dearest check.
func benchCheckBody(run string) string {
	return `{"tool":"Bash","input":{"command":"cd web && go test ./... 2>&1 | tail -20","description":"Run the web tests"},` +
		`"cwd":"/home/dev/shop","root":"/home/dev/shop","home":"/home/dev","run":"` + run + `"}`
}

// benchRequest is a request built once and sent many times.
type benchRequest struct {
	tmpl *http.Request
	body []byte
}

// newBenchRequest builds a request to url, with the agent key and a JSON
// body when they are not empty.
func newBenchRequest(method, url, key, body string) benchRequest {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err) // bench's own URLs
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	b := benchRequest{tmpl: req}
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
func (b benchRequest) next() *http.Request {
	req := new(http.Request)
	*req = *b.tmpl
	if b.body != nil {
		req.Body = io.NopCloser(bytes.NewReader(b.body))
	}
	return req
}

// benchDo sends one request and reads its answer; a status over 299 is an
// error.
func benchDo(client http.RoundTripper, req *http.Request) error {
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

// pairedRatio is the median, over the rounds, of a route's figure in its
// turn (requests per second, or p99) over another's in the same round:
// turns taken side by side, so that a burst of other work on the machine,
// which weighs on one turn, moves the median little where it moves the
// totals.
func pairedRatio(route, floor []float64) float64 {
	rs := turnRatios(route, floor)
	if len(rs) == 0 {
		return 0
	}
	if n := len(rs); n%2 == 0 {
		return (rs[n/2-1] + rs[n/2]) / 2
	}
	return rs[len(rs)/2]
}

// pairedSpread is the middle half of the rounds' ratios (their first and
// third quartiles): how far one round's ratio strays from the next's on
// this machine. A goal inside it is within the machine's noise.
func pairedSpread(route, floor []float64) (lo, hi float64) {
	rs := turnRatios(route, floor)
	if len(rs) == 0 {
		return 0, 0
	}
	at := func(q float64) float64 { return rs[int(q*float64(len(rs)-1)+0.5)] }
	return at(0.25), at(0.75)
}

// turnRatios are each round's ratio of route to floor, sorted, leaving
// out the rounds where floor measured nothing.
func turnRatios(route, floor []float64) []float64 {
	var rs []float64
	for i := range min(len(route), len(floor)) {
		if floor[i] > 0 {
			rs = append(rs, route[i]/floor[i])
		}
	}
	slices.Sort(rs)
	return rs
}

// processCPU is the CPU time this process has used so far, user and
// system: the server's, and with Go clients theirs too (with wrk, bench
// adds wrk's own). Both ends' CPU per request is what a closed loop on a
// busy machine divides its cores by, and it holds steadier than requests
// per second when other work shares the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchClosed runs clients that each send the next request when the last
// is answered, for d, and returns how many were answered and failed.
func benchClosed(client http.RoundTripper, req func(int) *http.Request, clients int, d time.Duration) (int64, int64) {
	var done, failed, next atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if benchDo(client, req(int(next.Add(1)))) != nil {
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

// benchOpen sends rate requests a second for d, each at its scheduled
// time whether or not the ones before were answered, taking the routes
// reqs make in turn, each turn in a random order (so that no route always
// follows the same other); turns are counted from first, and each
// route's request of a turn is the one reqs makes for its count. It returns each route's latencies, measured
// from when each request was due (so a stalled server is not hidden by a
// waiting sender), how late the sender woke for each request (part of its
// latency), and how many of each route's failed.
func benchOpen(client http.RoundTripper, reqs []func(int) *http.Request, rate int, d time.Duration, first int) (lat [][]time.Duration, late []time.Duration, failed []int64) {
	n := int(float64(rate) * d.Seconds())
	interval := time.Second / time.Duration(rate)
	order := benchOrder(n, len(reqs))
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
			if benchDo(client, reqs[k](first+i/len(reqs))) != nil {
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

// benchOrder is the routes of n requests, in turns of one request of
// each of the k routes in a random order (n is rounded down to whole
// turns).
func benchOrder(n, k int) []int {
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

// percentile is the p-th latency (0 < p ≤ 1) of lat, which it sorts.
func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(float64(len(lat))*p))]
}

// failures says how many requests failed, when any did.
func failures(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  (%d failed)", n)
}

// wrkScript writes the Lua script that has wrk send the bench's requests
// (the route is wrk's first argument: /healthz, /brief or check), each
// request the next session of the fleet with its key, and returns its
// path.
func wrkScript(dir string, f benchFleet) (string, error) {
	var b strings.Builder
	table := func(n int, at func(int) string) {
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", at(i))
		}
		b.WriteByte('}')
	}
	b.WriteString("local ids, keys, checks = ")
	table(len(f.sessions), func(i int) string { return f.sessions[i] })
	b.WriteString(", ")
	table(len(f.sessions), func(i int) string { return f.keys[i%len(f.keys)] })
	b.WriteString(", ")
	table(len(f.sessions), func(i int) string { return benchCheckBody(f.runs[i]) })
	// Every request is formatted once, in init, so that wrk's own work per
	// request is one table lookup on every route alike: the ratios then
	// measure the server, not Lua building a POST.
	b.WriteString(`
local reqs, n = {}, 0
init = function(args)
  local route = args[1] or "/healthz"
  for k = 1, #ids do
    local h = {["Authorization"] = "Bearer " .. keys[k], ["Content-Type"] = "application/json"}
    if route == "/healthz" then
      reqs[k] = wrk.format("GET", "/healthz")
    elseif route == "/brief" then
      reqs[k] = wrk.format("POST", "/brief", h, '{"session":"' .. ids[k] .. '"}')
    else
      reqs[k] = wrk.format("POST", "/api/v1/sessions/" .. ids[k] .. "/tool-calls/check", h, checks[k])
    end
  end
end
request = function()
  n = n + 1
  return reqs[(n % #reqs) + 1]
end
`)
	path := filepath.Join(dir, "bench.lua")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// benchWrk runs wrk against route for d with the given connections and
// returns how many requests were answered and how many of those failed
// (a status over 299, or a socket error).
func benchWrk(ctx context.Context, base, script, route string, conns int, d time.Duration) (int64, int64, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "wrk", "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))+"s",
		"-s", script, base, "--", route)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("wrk: %w: %s", err, out)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var answered, failed int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			answered, _ = strconv.ParseInt(f[0], 10, 64)
		case strings.HasPrefix(line, "  Non-2xx or 3xx responses:") && len(f) > 0:
			n, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			failed += n
		case strings.HasPrefix(line, "  Socket errors:"):
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				failed += n
			}
		}
	}
	if answered == 0 {
		return 0, 0, 0, fmt.Errorf("wrk answered nothing: %s", out)
	}
	return answered, failed, cpu, nil
}

// benchDatabase creates a throwaway database on the PostgreSQL server of
// url and returns its URL and a function that drops it.
func benchDatabase(ctx context.Context, url string) (string, func() error, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return "", nil, fmt.Errorf("--db: %w", err)
	}
	server, err := sql.Open("pgx", url)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("madebook_bench_%d", time.Now().UnixNano())
	if _, err := server.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		server.Close()
		return "", nil, fmt.Errorf("create the bench's database on %s: %w", db.Describe(url), err)
	}
	u.Path = "/" + name
	return u.String(), func() error {
		defer server.Close()
		if _, err := server.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop the bench's database %s: %w", name, err)
		}
		return nil
	}, nil
}
