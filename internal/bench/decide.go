package bench

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/protocol/protocoltest"
)

// decideGoal is how long protocol.Decide may take on the busy session.
const decideGoal = time.Microsecond

// measureDecide times protocol.Decide as internal/protocol's
// BenchmarkDecide does, on a quiet session (nothing in the way: most
// briefs), a waiting one and the busy one (protocoltest), prints the
// three and returns the busy session's time per decision.
func measureDecide(out io.Writer) time.Duration {
	var busy time.Duration
	fmt.Fprint(out, "protocol.Decide (testing.Benchmark):")
	for _, c := range []struct {
		name  string
		facts protocol.Facts
	}{{"quiet", protocol.Facts{}}, {"waiting", protocoltest.Waiting()}, {"busy", protocoltest.Busy()}} {
		r := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				protocol.Decide(c.facts, protocoltest.Now)
			}
		})
		d := time.Duration(r.NsPerOp())
		fmt.Fprintf(out, " %s %s", c.name, d)
		busy = d
	}
	fmt.Fprintln(out)
	return busy
}
