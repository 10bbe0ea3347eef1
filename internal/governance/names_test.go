package governance_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// ghToken is a GitHub token put together at run time (see the policy
// package's fixtures).
var ghToken = "gh" + "p_" + strings.Repeat("Zx9q", 9)

// TestSecretsInPathsAndDependenciesAreViolationsAndNeverStored reports a
// token in a dependency URL and in a path: each is a critical violation
// naming where it was, the session's detail shows the redacted path, and
// no table of the database holds the token.
func TestSecretsInPathsAndDependenciesAreViolationsAndNeverStored(t *testing.T) {
	e := newChangeEnv(t, false)
	s := e.session(t)
	dep := "git+https://" + "x-access-token:" + ghToken + "@github.com/acme/lib.git"
	res := e.report(t, s, change.Change{
		Files:        []change.File{file("config/"+ghToken+".env", "A=1\n"), file("web/app.go", "package web\n")},
		Dependencies: []string{dep},
	})
	var got []string
	for _, v := range res.Violations {
		got = append(got, v.Severity+" "+v.Match+" @"+v.File)
	}
	want := []string{
		"critical GitHub token (in the path) @config/[REDACTED].env",
		"critical GitHub token in the dependency git+https://x-access-token:[REDACTED]@github.com/acme/lib.git @",
		"critical credential in URL in the dependency git+https://x-access-token:[REDACTED]@github.com/acme/lib.git @",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("violations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b := e.brief(t, s); b.NextAction != protocol.HardStop {
		t.Fatalf("brief %s, want HARD_STOP", b.NextAction)
	}
	d, err := e.kit.Gov.Sessions.Get(e.ctx, e.lead, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Change == nil || !reflect.DeepEqual(d.Change.Files, []string{"config/[REDACTED].env", "web/app.go"}) {
		t.Fatalf("the session's change: %+v", d.Change)
	}
	if strings.Contains(fmt.Sprintf("%+v", d), ghToken) {
		t.Errorf("the session's detail holds the token")
	}
	for table, rows := range e.kit.Dump() {
		for _, r := range rows {
			if strings.Contains(r, ghToken) || strings.Contains(r, ghToken[4:20]) {
				t.Errorf("table %s holds the token: %s", table, r)
			}
		}
	}
	// The same report again finds the same violations, no new ones.
	again := e.report(t, s, change.Change{Files: []change.File{file("config/"+ghToken+".env", "A=1\n")}, Dependencies: []string{dep}})
	if len(again.Violations) != 3 || again.Violations[0].ID != res.Violations[0].ID {
		t.Fatalf("reported again: %+v", again.Violations)
	}
}

// TestAChangeWithABadNameIsRefusedAndWritesNothing refuses, for each list of
// a change report, an entry with a control character or over its limit,
// naming the field, and proves the database unchanged.
func TestAChangeWithABadNameIsRefusedAndWritesNothing(t *testing.T) {
	e := newChangeEnv(t, false)
	s := e.session(t)
	long := func(n int) string { return strings.Repeat("é", n) }
	cases := []struct {
		name, code, field string
		c                 change.Change
	}{
		{"a path with a NUL", "invalid_characters", "files", change.Change{Files: []change.File{file("a\x00.go", "")}}},
		{"a path with an ESC sequence", "invalid_characters", "files", change.Change{Files: []change.File{file("\x1b]0;pwned\x07.go", "")}}},
		{"a path with a newline", "invalid_characters", "files", change.Change{Files: []change.File{file("a\nb.go", "")}}},
		{"a path over 1000 characters", "files_too_long", "files", change.Change{Files: []change.File{file(long(1001), "")}}},
		{"a dependency with a control character", "invalid_characters", "dependencies", change.Change{Dependencies: []string{"left\x1b[2Kpad"}}},
		{"a dependency over 2000 characters", "dependencies_too_long", "dependencies", change.Change{Dependencies: []string{long(2001)}}},
		{"a changed symbol with a tab", "invalid_characters", "symbols_changed", change.Change{SymbolsChanged: []string{"a\tb"}}},
		{"a used symbol over 500 characters", "symbols_used_too_long", "symbols_used", change.Change{SymbolsUsed: []string{long(501)}}},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			before := e.kit.Dump()
			_, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, s, c.c)
			if errs.CodeOf(err) != c.code || errs.FieldOf(err) != c.field || errs.KindOf(err) != errs.Invalid {
				t.Fatalf("got %v (%s about %q), want %s about %s", err, errs.CodeOf(err), errs.FieldOf(err), c.code, c.field)
			}
			if after := e.kit.Dump(); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused change wrote to the database")
			}
		})
	}
	t.Run("a file's content may hold control characters: it is code, scanned, never shown", func(t *testing.T) {
		if _, err := e.kit.Gov.Changes.Report(e.ctx, e.agent, s, change.Change{Files: []change.File{file("page.txt", "a\fb\x1b[0m\r\n")}}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAPlanThatCouldNeverFinishIsRefusedAndWritesNothing proposes plans
// whose steps wait on a step the plan lacks, or on each other, and one
// with an over-long option label: each is 422 naming the step or the
// field, and nothing is written.
func TestAPlanThatCouldNeverFinishIsRefusedAndWritesNothing(t *testing.T) {
	w := newWorld(t)
	s := w.Session(w.agent, w.risky)
	cases := []struct {
		name, code, step, field string
		p                       plan.Plan
	}{
		{"a step waiting on a step the plan lacks", "unknown_dependency", "b", "",
			plan.Plan{InitialSteps: []plan.Step{{ID: "a"}, {ID: "b", DependsOn: []string{"ghost"}}}}},
		// Found by FuzzPlanChecks: an empty reference was told as a circle.
		{"a step waiting on an empty id", "unknown_dependency", "b", "",
			plan.Plan{InitialSteps: []plan.Step{{ID: "a"}, {ID: "b", DependsOn: []string{""}}}}},
		{"two steps waiting on each other", "dependency_cycle", "a", "",
			plan.Plan{InitialSteps: []plan.Step{{ID: "a", DependsOn: []string{"b"}}, {ID: "b", DependsOn: []string{"a"}}}}},
		{"an option label of 100,000 characters", "label_too_long", "", `stopping_points[0].options["1"].label`,
			plan.Plan{StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "ok?",
				Options: map[string]plan.Option{"1": {Label: strings.Repeat("x", 100_000)}}}}}},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			before := w.Dump()
			_, err := w.Gov.Plans.Propose(t.Context(), w.agent, s, governance.PlanInput{Summary: "Do it", Plan: c.p})
			e, ok := errs.As(err)
			if !ok || e.Code != c.code || e.Kind != errs.Invalid || e.Field != c.field || (c.step != "" && e.Details["step"] != c.step) {
				t.Fatalf("got %v (%+v), want %s about step %q, field %q", err, e, c.code, c.step, c.field)
			}
			if !reflect.DeepEqual(before, w.Dump()) {
				t.Errorf("a refused plan wrote to the database")
			}
		})
	}
}
