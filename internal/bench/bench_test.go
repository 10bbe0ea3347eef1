package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A run measures the three routes both ways and prints each figure
// with its ratio to /healthz, and the goals; nothing fails.
func TestRunPrintsTheRatiosSideBySide(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	cfg := Config{Sessions: 30, Duration: 250 * time.Millisecond, OpenDuration: 250 * time.Millisecond, Concurrency: 2, Rate: 200}
	err := Run(context.Background(), cfg, &b)
	out := b.String()
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	for _, want := range []string{"loading 30 sessions", "closed loop: 2 clients", "µs CPU/req", "open loop: 200 req/s, the routes in a random order, 250ms of answers a route", "the sender's lateness included",
		"server's part p50", "the server's part alone",
		"goals (requests per second judged turn by turn, p99 over every sample", "noise: the middle half of the rounds' ratios"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	for _, route := range []string{"/healthz", "/brief", "check"} {
		if n := strings.Count(out, "\n  "+route+"  "); n != 2 {
			t.Errorf("%s has %d lines, want one per loop:\n%s", route, n, out)
		}
	}
	for _, goal := range []string{"/brief ≥ 0.80× /healthz req/s", "/brief p99 ≤ 2× /healthz p99", "check p99 ≤ /brief p99"} {
		line := out[strings.Index(out, "  "+goal):]
		line = line[:strings.IndexByte(line, '\n')]
		if !strings.HasSuffix(line, "  met") && !strings.HasSuffix(line, "  missed") {
			t.Errorf("the goal %q has no verdict: %q", goal, line)
		}
	}
	if strings.Contains(out, "failed") {
		t.Errorf("requests failed:\n%s", out)
	}
}

// Settings that cannot measure are refused before anything starts,
// naming the flag.
func TestRunRefusesNonsense(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		change func(*Config)
		flag   string
	}{
		{func(c *Config) { c.Rate = 0 }, "--rate"},
		{func(c *Config) { c.Sessions = 0 }, "--sessions"},
		{func(c *Config) { c.Duration = time.Millisecond }, "--duration"},
		{func(c *Config) { c.DB = "/tmp/bench.db" }, "--db"},
	} {
		cfg := Defaults
		c.change(&cfg)
		var out strings.Builder
		if err := Run(context.Background(), cfg, &out); err == nil || !strings.Contains(err.Error(), c.flag) || out.Len() > 0 {
			t.Errorf("%+v: %v, printed %q; want an error naming %s before anything runs", cfg, err, out.String(), c.flag)
		}
	}
	if err := Defaults.Check(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// pairedRatio is the median of each round's ratio, skipping rounds whose
// floor measured nothing: one slow turn moves it little.
func TestPairedRatioIsTheMedianOfTheRoundsRatios(t *testing.T) {
	for _, c := range []struct {
		route, floor []float64
		want         float64
	}{
		{[]float64{8, 9, 1}, []float64{10, 10, 10}, 0.8},         // the burst in round 3 moves nothing
		{[]float64{8, 6, 9, 7}, []float64{10, 10, 10, 10}, 0.75}, // even: the middle two's mean
		{[]float64{5, 8}, []float64{0, 10}, 0.8},                 // a floor of 0 is no round
		{[]float64{5, 8, 9}, []float64{10}, 0.5},                 // rounds the floor took part in
		{nil, nil, 0},
	} {
		if got := pairedRatio(c.route, c.floor); got != c.want {
			t.Errorf("pairedRatio(%v, %v) = %v, want %v", c.route, c.floor, got, c.want)
		}
	}
}

// pairedSpread is the first and third quartile of the rounds' ratios.
func TestPairedSpreadIsTheMiddleHalfOfTheRounds(t *testing.T) {
	route := []float64{5, 9, 7, 6, 8} // ratios 0.5 … 0.9 over a floor of 10
	floor := []float64{10, 10, 10, 10, 10}
	if lo, hi := pairedSpread(route, floor); lo != 0.6 || hi != 0.8 {
		t.Errorf("pairedSpread = %v–%v, want 0.6–0.8", lo, hi)
	}
	if lo, hi := pairedSpread(nil, nil); lo != 0 || hi != 0 {
		t.Errorf("no rounds: %v–%v", lo, hi)
	}
}

// A goal is met on its bound, and on the side its bound names.
func TestGoalVerdict(t *testing.T) {
	for _, c := range []struct {
		g    goal
		want string
	}{
		{goal{ratio: 0.81, bound: 0.8, atLeast: true}, "met"},
		{goal{ratio: 0.8, bound: 0.8, atLeast: true}, "met"},
		{goal{ratio: 0.79, bound: 0.8, atLeast: true}, "missed"},
		{goal{ratio: 1.99, bound: 2}, "met"},
		{goal{ratio: 1, bound: 1}, "met"},
		{goal{ratio: 1.01, bound: 1}, "missed"},
	} {
		if got := c.g.verdict(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.g, got, c.want)
		}
	}
}
