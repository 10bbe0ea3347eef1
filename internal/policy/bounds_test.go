package policy_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

func TestPatternsAreBoundedInLengthAndCost(t *testing.T) {
	pol := func(kind policy.Kind, pattern string) policy.Policy {
		return policy.Policy{Name: "P", Severity: protocol.SeverityHigh, Kind: kind, Pattern: pattern, Action: policy.ActionViolation}
	}
	for _, tc := range []struct {
		name string
		p    policy.Policy
		code string // "" accepted
	}{
		{"a 900,000-character regex is too long", pol(policy.KindContentRegex, strings.Repeat("a", 900_000)), "pattern_too_long"},
		{"a regex one character over the limit is too long", pol(policy.KindContentRegex, strings.Repeat("a", policy.MaxPattern+1)), "pattern_too_long"},
		{"a regex of exactly the limit is accepted", pol(policy.KindContentRegex, strings.Repeat("a", policy.MaxPattern)), ""},
		{"the limit counts characters, not bytes", pol(policy.KindContentRegex, strings.Repeat("é", policy.MaxPattern)), ""},
		{"a glob over the limit is too long", pol(policy.KindPathGlob, strings.Repeat("a/", policy.MaxPattern)), "pattern_too_long"},
		{"a dependency over the limit is too long", pol(policy.KindDependency, strings.Repeat("a", policy.MaxPattern+1)), "pattern_too_long"},
		{"a regex that keeps a thread alive per repeated any-character is too costly", pol(policy.KindContentRegex, `(?s).{900}x`), "pattern_too_costly"},
		{"so is a window of forty of anything", pol(policy.KindContentRegex, `[\s\S]{40}`), "pattern_too_costly"},
		{"a program over MaxProgram instructions is too costly", pol(policy.KindContentRegex, `[a-z]{999}[0-9]{999}[A-Z]{999}`), "pattern_too_costly"},
		{"a bounded class of forty is not", pol(policy.KindContentRegex, `\b[A-Za-z0-9/+=]{40}\b`), ""},
		{"nor a thousand letters", pol(policy.KindContentRegex, `(?i)[a-z]{990}x`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := policy.Validate(tc.p)
			got := ""
			if err != nil {
				got = errs.CodeOf(err)
			}
			if got != tc.code || (err != nil && errs.FieldOf(err) != "pattern") {
				t.Fatalf("code %q field %q (%v), want %q on pattern", got, errs.FieldOf(err), err, tc.code)
			}
		})
	}
	t.Run("the shipped secret patterns are well within the bounds", func(t *testing.T) {
		for _, p := range policy.SecretsInSource() {
			if err := policy.Validate(p); err != nil {
				t.Fatal(err)
			}
			if cost, size := policy.Cost(p.Pattern); cost > policy.MaxCost/4 || size > policy.MaxProgram/4 {
				t.Errorf("%q costs %.1f, %d instructions", p.Pattern, cost, size)
			}
		}
	})
	t.Run("the cost is the same on every run", func(t *testing.T) {
		a, _ := policy.Cost(`(?s)a.*b.*c`)
		b, _ := policy.Cost(`(?s)a.*b.*c`)
		if a != b || a == 0 {
			t.Fatalf("%v, %v", a, b)
		}
	})
}

// tick is a clock that advances by step on every reading.
type tick struct {
	at   time.Time
	step time.Duration
}

func (c *tick) now() time.Time { c.at = c.at.Add(c.step); return c.at }

func TestEvaluateMetered(t *testing.T) {
	ps := policy.SecretsInSource()
	for i := range ps {
		ps[i].ID = int64(i + 1)
	}
	ps = append(ps, policy.Policy{ID: 99, Name: "Slow", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex,
		Pattern: `(?s)a.*b.*c`, Action: policy.ActionViolation})
	set := mustCompile(t, ps)
	c := change.Change{Files: []change.File{
		{Path: "a.go", Content: "abc\nexport " + awsSecretKey + "=" + awsSecret + "\n"},
		{Path: "b.go", Content: "nothing here"},
	}}
	t.Run("finds what Evaluate finds and times each content policy", func(t *testing.T) {
		clock := &tick{step: time.Millisecond}
		m := &policy.Meter{Now: clock.now, Stop: func(policy.Policy) bool { return false }}
		got, err := set.EvaluateMetered(c, m)
		if err != nil || !reflect.DeepEqual(got, set.Evaluate(c)) || len(got) == 0 {
			t.Fatalf("%v (%v), want %v", got, err, set.Evaluate(c))
		}
		// "Slow" has no literal for the prefilter: it ran over both files,
		// reading the clock twice each time, one tick apart. A policy the
		// prefilter ruled out of a file is not timed there.
		if m.Costs[99] != 2*time.Millisecond || len(m.Costs) >= len(ps) {
			t.Fatalf("costs %v", m.Costs)
		}
	})
	t.Run("a stop ends it, naming the policy that cost most", func(t *testing.T) {
		m := &policy.Meter{Now: time.Now, Stop: func(policy.Policy) bool { return true },
			Costs: map[int64]time.Duration{99: time.Hour}}
		got, err := set.EvaluateMetered(c, m)
		var stop *policy.StoppedError
		if !errors.As(err, &stop) || got != nil || stop.Policy.ID != 99 || stop.Cost < time.Hour {
			t.Fatalf("%v, %v", got, err)
		}
	})
}
