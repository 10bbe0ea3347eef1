package bench

import (
	"fmt"
	"slices"
	"syscall"
	"time"
)

// goal is one of the speed goals: a figure, judged against its
// bound, and the same ratio taken the other way (overall or turn by turn)
// for comparison.
type goal struct {
	name         string
	ratio, other float64
	bound        float64
	atLeast      bool // the ratio must reach bound; else stay within it
}

func (g goal) verdict() string {
	met := g.ratio <= g.bound
	if g.atLeast {
		met = g.ratio >= g.bound
	}
	if met {
		return "met"
	}
	return "missed"
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
