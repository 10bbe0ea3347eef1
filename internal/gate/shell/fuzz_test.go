package shell_test

import (
	"fmt"
	"testing"

	"github.com/madebook/madebook/internal/gate/shell"
)

// FuzzAnalyze analyzes any command: Analyze does not panic (its recover,
// which would report "Madebook failed to analyze it", never fires),
// returns at most MaxEffects effects, each of a valid kind, an Undecidable
// one with a reason and a Read or Write one with paths, none empty; and it
// says the same twice.
func FuzzAnalyze(f *testing.F) {
	for _, rs := range rows {
		for _, r := range rs {
			f.Add(r.cmd)
		}
	}
	// A script that is the command itself: every script analyzes it again.
	self := func(cmd string) shell.Options {
		return shell.Options{Home: "/home/u", Script: func(string) (string, bool) { return cmd, true }}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, o := range []shell.Options{{}, self(cmd)} {
			es := shell.Analyze(cmd, o)
			if len(es) > shell.MaxEffects {
				t.Fatalf("%d effects", len(es))
			}
			for _, e := range es {
				switch e.Kind {
				case shell.Undecidable:
					if e.Why == "" {
						t.Fatalf("an Undecidable without a reason: %+v", e)
					}
					if e.Why == "Madebook failed to analyze it" {
						t.Fatalf("Analyze panicked")
					}
				case shell.Read, shell.Write:
					if len(e.Paths) == 0 {
						t.Fatalf("a %s without paths: %+v", e.Kind, e)
					}
					for _, p := range e.Paths {
						if p.Name == "" {
							t.Fatalf("an empty path: %+v", e)
						}
					}
				default:
					t.Fatalf("kind %d: %+v", e.Kind, e)
				}
			}
			if again := shell.Analyze(cmd, o); fmt.Sprint(again) != fmt.Sprint(es) {
				t.Fatalf("two analyses differ:\n%+v\n%+v", es, again)
			}
		}
	})
}
