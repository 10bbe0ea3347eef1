package change_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/protocol"
)

// touching returns a change that touches the given paths.
func touching(paths ...string) change.Change {
	c := change.Change{}
	for _, p := range paths {
		c.Files = append(c.Files, change.File{Path: p, Content: "x\n"})
	}
	return c
}

func TestBreaches(t *testing.T) {
	withDeps := func(c change.Change, deps ...string) change.Change {
		c.Dependencies = deps
		return c
	}
	cases := []struct {
		name    string
		clauses []change.Clause
		change  change.Change
		want    []protocol.Breach
	}{
		{
			name:    "a forbidden path the change touches is a breach naming that path",
			clauses: []change.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}},
			change:  touching("main.go", "vendor/lib/x.go"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.ForbidPath, Value: "vendor/**", Found: []string{"vendor/lib/x.go"}}},
		},
		{
			name:    "a forbidden path lists every matching path sorted and once",
			clauses: []change.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}},
			change:  touching("vendor/z.go", "vendor/a/b.go", "app.go", "vendor/z.go"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.ForbidPath, Value: "vendor/**", Found: []string{"vendor/a/b.go", "vendor/z.go"}}},
		},
		{
			name:    "a forbidden path the change does not touch is kept",
			clauses: []change.Clause{{Kind: protocol.ForbidPath, Value: "vendor/**"}},
			change:  touching("src/vendor/x.go", "main.go"),
			want:    nil,
		},
		{
			name:    "a required path with no matching change is a breach with nothing found",
			clauses: []change.Clause{{Kind: protocol.RequirePath, Value: "docs/**"}},
			change:  touching("main.go"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.RequirePath, Value: "docs/**"}},
		},
		{
			name:    "a required path is breached by a change with no files",
			clauses: []change.Clause{{Kind: protocol.RequirePath, Value: "docs/**"}},
			change:  change.Change{},
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.RequirePath, Value: "docs/**"}},
		},
		{
			name:    "a file with no path does not satisfy a required path",
			clauses: []change.Clause{{Kind: protocol.RequirePath, Value: "**"}},
			change:  change.Change{Files: []change.File{{Content: "x\n"}}},
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.RequirePath, Value: "**"}},
		},
		{
			name:    "a required path the change touches is kept",
			clauses: []change.Clause{{Kind: protocol.RequirePath, Value: "docs/**"}},
			change:  touching("main.go", "docs/guide/intro.md"),
			want:    nil,
		},
		{
			name:    "a forbidden dependency the change adds is a breach naming it",
			clauses: []change.Clause{{Kind: protocol.ForbidDependency, Value: "left-pad"}},
			change:  withDeps(touching("package.json"), "react", "left-pad"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.ForbidDependency, Value: "left-pad", Found: []string{"left-pad"}}},
		},
		{
			name:    "a forbidden dependency matches exactly, not as a prefix",
			clauses: []change.Clause{{Kind: protocol.ForbidDependency, Value: "left-pad"}},
			change:  withDeps(touching("package.json"), "left-pad-extra", "my-left-pad"),
			want:    nil,
		},
		{
			name:    "a forbidden dependency ending in a star forbids every dependency with that prefix",
			clauses: []change.Clause{{Kind: protocol.ForbidDependency, Value: "@types/*"}},
			change:  withDeps(touching("package.json"), "@types/react", "react", "@types/node", "@types/node"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.ForbidDependency, Value: "@types/*", Found: []string{"@types/node", "@types/react"}}},
		},
		{
			name:    "a star alone forbids every dependency the change adds, but an empty name is not one",
			clauses: []change.Clause{{Kind: protocol.ForbidDependency, Value: "*"}},
			change:  withDeps(touching("go.mod"), "", "golang.org/x/text"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.ForbidDependency, Value: "*", Found: []string{"golang.org/x/text"}}},
		},
		{
			name:    "a forbidden dependency the change does not add is kept",
			clauses: []change.Clause{{Kind: protocol.ForbidDependency, Value: "left-pad"}},
			change:  withDeps(touching("package.json"), "react"),
			want:    nil,
		},
		{
			name:    "more files than the contract allows is a breach counting them",
			clauses: []change.Clause{{Kind: protocol.MaxFilesChanged, Value: "2"}},
			change:  touching("a.go", "b.go", "c.go"),
			want:    []protocol.Breach{{ID: "clause-1", Kind: protocol.MaxFilesChanged, Value: "2", Count: 3}},
		},
		{
			name:    "exactly as many files as the contract allows is kept",
			clauses: []change.Clause{{Kind: protocol.MaxFilesChanged, Value: "2"}},
			change:  touching("a.go", "b.go"),
			want:    nil,
		},
		{
			name: "a max_files_changed clause that is not a positive whole number is skipped",
			clauses: []change.Clause{
				{Kind: protocol.MaxFilesChanged, Value: "two"},
				{Kind: protocol.MaxFilesChanged, Value: "0"},
				{Kind: protocol.MaxFilesChanged, Value: "-1"},
			},
			change: touching("a.go", "b.go", "c.go"),
			want:   nil,
		},
		{
			name: "a clause of an unknown kind, with no value or with a malformed glob is skipped",
			clauses: []change.Clause{
				{Kind: "forbid_everything", Value: "**"},
				{Kind: protocol.ForbidPath, Value: "  "},
				{Kind: protocol.RequirePath, Value: ""},
				{Kind: protocol.ForbidDependency, Value: ""},
				{Kind: protocol.RequirePath, Value: "docs/[/x"},
			},
			change: touching("a.go"),
			want:   nil,
		},
		{
			name: "breaches come in clause order with ids from their place in the contract",
			clauses: []change.Clause{
				{Kind: protocol.MaxFilesChanged, Value: "1"},
				{Kind: protocol.MaxFilesChanged, Value: "bad"},
				{Kind: protocol.RequirePath, Value: "a.go"},
				{Kind: protocol.ForbidPath, Value: "vendor/**"},
			},
			change: touching("vendor/x.go", "a.go"),
			want: []protocol.Breach{
				{ID: "clause-1", Kind: protocol.MaxFilesChanged, Value: "1", Count: 2},
				{ID: "clause-4", Kind: protocol.ForbidPath, Value: "vendor/**", Found: []string{"vendor/x.go"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := change.Breaches(tc.clauses, tc.change)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Breaches =\n %#v\nwant\n %#v", got, tc.want)
			}
		})
	}
}

func TestBreachesGiveTheEngineItsTexts(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		clause    change.Clause
		change    change.Change
		wantText  string
		wantFiles []string
	}{
		{
			name:      "a forbidden path tells the agent to undo the changes it names",
			clause:    change.Clause{Kind: protocol.ForbidPath, Value: "vendor/**"},
			change:    touching("main.go", "vendor/lib/x.go"),
			wantText:  "The mission contract forbids changes to vendor/**; this change touches vendor/lib/x.go. Undo those changes.",
			wantFiles: []string{"vendor/lib/x.go"},
		},
		{
			name:     "a missing required path tells the agent to make that change",
			clause:   change.Clause{Kind: protocol.RequirePath, Value: "docs/**"},
			change:   touching("main.go"),
			wantText: "The mission contract requires a change to docs/**; this change has none. Make that change.",
		},
		{
			name:     "a forbidden dependency tells the agent to remove it",
			clause:   change.Clause{Kind: protocol.ForbidDependency, Value: "left-pad"},
			change:   change.Change{Files: []change.File{{Path: "package.json"}}, Dependencies: []string{"left-pad"}},
			wantText: "The mission contract forbids the dependency left-pad; this change adds left-pad. Remove it.",
		},
		{
			name:     "too many files tells the agent to narrow the change",
			clause:   change.Clause{Kind: protocol.MaxFilesChanged, Value: "2"},
			change:   touching("a.go", "b.go", "c.go"),
			wantText: "The mission contract allows at most 2 changed files; this change touches 3. Narrow the change.",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			breaches := change.Breaches([]change.Clause{tc.clause}, tc.change)
			b := protocol.Decide(protocol.Facts{Breaches: breaches}, now)
			if b.NextAction != protocol.Remediate {
				t.Fatalf("next_action = %v, want REMEDIATE (breaches %#v)", b.NextAction, breaches)
			}
			if len(b.Reasons) != 1 {
				t.Fatalf("reasons = %#v, want one", b.Reasons)
			}
			r := b.Reasons[0]
			if r.Code != protocol.CodeContractViolated || r.Ref != "clause-1" {
				t.Errorf("code, ref = %q, %q; want contract_violated, clause-1", r.Code, r.Ref)
			}
			if r.Text.String() != tc.wantText {
				t.Errorf("text =\n %q\nwant\n %q", r.Text.String(), tc.wantText)
			}
			if b.Reason.String() != tc.wantText {
				t.Errorf("reason = %q, want the breach's text", b.Reason.String())
			}
			if !reflect.DeepEqual(r.Files, tc.wantFiles) {
				t.Errorf("files = %#v, want %#v", r.Files, tc.wantFiles)
			}
		})
	}
}

func TestAKeptContractLeavesTheAgentToContinue(t *testing.T) {
	clauses := []change.Clause{
		{Kind: protocol.ForbidPath, Value: "vendor/**"},
		{Kind: protocol.RequirePath, Value: "**/*_test.go"},
		{Kind: protocol.ForbidDependency, Value: "left-pad"},
		{Kind: protocol.MaxFilesChanged, Value: "5"},
	}
	c := change.Change{
		Files:        []change.File{{Path: "internal/x/x.go"}, {Path: "internal/x/x_test.go"}},
		Dependencies: []string{"golang.org/x/text"},
	}
	breaches := change.Breaches(clauses, c)
	if breaches != nil {
		t.Fatalf("Breaches = %#v, want none", breaches)
	}
	if b := protocol.Decide(protocol.Facts{Breaches: breaches}, time.Time{}); b.NextAction != protocol.Continue {
		t.Errorf("next_action = %v, want CONTINUE", b.NextAction)
	}
}

func TestDependencyMatch(t *testing.T) {
	cases := []struct {
		name       string
		value, dep string
		want       bool
	}{
		{"an exact name matches itself", "left-pad", "left-pad", true},
		{"an exact name does not match a longer name", "left-pad", "left-pad2", false},
		{"an exact name does not match a shorter name", "left-pad", "left", false},
		{"a trailing star matches the prefix with more after it", "github.com/evil/*", "github.com/evil/pkg", true},
		{"a trailing star matches the bare prefix", "lodash*", "lodash", true},
		{"a trailing star does not match another prefix", "github.com/evil/*", "github.com/good/pkg", false},
		{"a star alone matches any dependency", "*", "anything", true},
		{"a star inside the value is literal", "a*b", "axb", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := change.DependencyMatch(tc.value, tc.dep); got != tc.want {
				t.Errorf("DependencyMatch(%q, %q) = %v, want %v", tc.value, tc.dep, got, tc.want)
			}
		})
	}
}
