package protocol_test

import (
	"testing"

	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/protocol/protocoltest"
)

// decideCases are the sessions the benchmarks decide: a quiet one
// (nothing in its way: most briefs), a typical waiting one (one open gate,
// a high-risk change), and the busy one above (17 reasons, every state).
func decideCases() []struct {
	name    string
	facts   protocol.Facts
	want    protocol.State
	reasons int
} {
	busy := protocoltest.Busy()
	gate := protocoltest.Waiting()
	return []struct {
		name    string
		facts   protocol.Facts
		want    protocol.State
		reasons int
	}{
		{"quiet", protocol.Facts{}, protocol.Continue, 0},
		{"gate", gate, protocol.DecisionRequired, 2},
		{"busy", busy, protocol.HardStop, 17},
	}
}

var benchNow = protocoltest.Now

// BenchmarkDecide is the decision alone, as Decide returns it: the next
// action, the reasons in order with their codes, refs and files, and the
// scopes, but no reason's words written out (what Next, the executor
// gate's check and a refused change need).
//
//	go test -run '^$' -bench Decide -benchmem ./internal/protocol
func BenchmarkDecide(b *testing.B) {
	for _, c := range decideCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var br protocol.Brief
			for b.Loop() {
				br = protocol.Decide(c.facts, benchNow)
			}
			if br.NextAction != c.want || len(br.Reasons)+len(br.Also) != c.reasons {
				b.Fatalf("unexpected brief: %v with %d+%d reasons", br.NextAction, len(br.Reasons), len(br.Also))
			}
		})
	}
}

// BenchmarkDecideWords is the decision and every reason's words written
// out as a string, as the console's preview reads them: the whole cost
// of a brief's words, which the decision alone no longer pays.
func BenchmarkDecideWords(b *testing.B) {
	for _, c := range decideCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				br := protocol.Decide(c.facts, benchNow)
				n = 0
				if len(br.Reasons) == 0 {
					n = len(br.Reason.String()) // ContinueText; else the first reason's words
				}
				for _, r := range br.Reasons {
					n += len(r.Text.String())
				}
				for _, r := range br.Also {
					n += len(r.Text.String())
				}
			}
			if n == 0 {
				b.Fatal("no words")
			}
		})
	}
}
