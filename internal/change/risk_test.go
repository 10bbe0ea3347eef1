package change_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/protocol"
)

// shaped returns a change of files files, the first sensitive of them on
// default-sensitive paths (db/migrations/…) and the rest on ordinary ones,
// adding lines lines in all (all in the first file), and adding deps
// dependencies.
func shaped(files, lines, sensitive, deps int) change.Change {
	var c change.Change
	for i := range files {
		p := fmt.Sprintf("pkg/f%02d.go", i)
		if i < sensitive {
			p = fmt.Sprintf("db/migrations/%02d.sql", i)
		}
		f := change.File{Path: p}
		if i == 0 {
			f.Content = strings.Repeat("x\n", lines)
		}
		c.Files = append(c.Files, f)
	}
	for i := range deps {
		c.Dependencies = append(c.Dependencies, fmt.Sprintf("dep-%d", i))
	}
	return c
}

// points returns the points of each factor, by name, in Score's order.
type points struct{ files, lines, sensitive, deps int }

func pointsOf(t *testing.T, r change.Risk) points {
	t.Helper()
	names := make([]string, len(r.Factors))
	for i, f := range r.Factors {
		names[i] = f.Name
	}
	want := []string{change.FactorFiles, change.FactorLines, change.FactorSensitivePaths, change.FactorDependencies}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("factors %v, want %v", names, want)
	}
	return points{r.Factors[0].Points, r.Factors[1].Points, r.Factors[2].Points, r.Factors[3].Points}
}

func TestScoreFactors(t *testing.T) {
	file := func(p string) change.File { return change.File{Path: p} }
	cases := []struct {
		name   string
		change change.Change
		opts   change.RiskOptions
		want   points
		score  int
	}{
		{"an empty change scores nothing", change.Change{}, change.RiskOptions{}, points{}, 0},
		{"each file is worth two points", shaped(7, 0, 0, 0), change.RiskOptions{}, points{files: 14}, 14},
		{"fourteen files are worth twenty-eight points", shaped(14, 0, 0, 0), change.RiskOptions{}, points{files: 28}, 28},
		{"files reach their cap of thirty at fifteen", shaped(15, 0, 0, 0), change.RiskOptions{}, points{files: 30}, 30},
		{"files past fifteen stay at the cap", shaped(40, 0, 0, 0), change.RiskOptions{}, points{files: 30}, 30},
		{"fewer than twenty-five lines are worth nothing", shaped(1, 24, 0, 0), change.RiskOptions{}, points{files: 2}, 2},
		{"twenty-five lines are worth one point", shaped(1, 25, 0, 0), change.RiskOptions{}, points{files: 2, lines: 1}, 3},
		{"lines count whole twenty-fives only", shaped(1, 749, 0, 0), change.RiskOptions{}, points{files: 2, lines: 29}, 31},
		{"lines reach their cap of thirty at seven hundred and fifty", shaped(1, 750, 0, 0), change.RiskOptions{}, points{files: 2, lines: 30}, 32},
		{"lines past seven hundred and fifty stay at the cap", shaped(1, 5000, 0, 0), change.RiskOptions{}, points{files: 2, lines: 30}, 32},
		{
			"lines are summed over the files before they are scored",
			change.Change{Files: []change.File{{Path: "a.go", Content: strings.Repeat("x\n", 13)}, {Path: "b.go", Content: strings.Repeat("x\n", 12)}}},
			change.RiskOptions{}, points{files: 4, lines: 1}, 5,
		},
		{
			"a diff counts only the lines it adds",
			change.Change{Files: []change.File{{Path: "a.go", Diff: "--- a/a.go\n+++ b/a.go\n" + strings.Repeat("-old\n", 100) + strings.Repeat("+new\n", 50)}}},
			change.RiskOptions{}, points{files: 2, lines: 2}, 4,
		},
		{
			"a binary file adds no lines",
			change.Change{Files: []change.File{{Path: "logo.png", Content: "\x00" + strings.Repeat("x\n", 100)}}},
			change.RiskOptions{}, points{files: 2}, 2,
		},
		{"a migration is a sensitive path", change.Change{Files: []change.File{file("db/migrations/0001.sql")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"an auth package is a sensitive path", change.Change{Files: []change.File{file("internal/auth/login.go")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"a secrets file is a sensitive path", change.Change{Files: []change.File{file("config/secrets.yaml")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"a CI workflow is a sensitive path", change.Change{Files: []change.File{file(".github/workflows/ci.yml")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"a Dockerfile at the root is a sensitive path", change.Change{Files: []change.File{file("Dockerfile")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"a nested Dockerfile is a sensitive path", change.Change{Files: []change.File{file("build/api/Dockerfile")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{"a Terraform file is a sensitive path", change.Change{Files: []change.File{file("infra/main.tf")}}, change.RiskOptions{}, points{files: 2, sensitive: 15}, 17},
		{
			"paths that only look like sensitive ones are not sensitive",
			change.Change{Files: []change.File{file("internal/authz/x.go"), file("migrations.go"), file("Dockerfile.md"), file("main.tfvars")}},
			change.RiskOptions{}, points{files: 8}, 8,
		},
		{"sensitive paths reach their cap of thirty at two", shaped(2, 0, 2, 0), change.RiskOptions{}, points{files: 4, sensitive: 30}, 34},
		{"sensitive paths past two stay at the cap", shaped(5, 0, 5, 0), change.RiskOptions{}, points{files: 10, sensitive: 30}, 40},
		{
			"a workspace's own sensitive paths replace the defaults",
			change.Change{Files: []change.File{file("billing/charge.go"), file("db/migrations/0001.sql")}},
			change.RiskOptions{Sensitive: change.SensitiveGlobs("billing/**")},
			points{files: 4, sensitive: 15}, 19,
		},
		{
			"a file with no path is never sensitive",
			change.Change{Files: []change.File{{Content: "x\n"}}},
			change.RiskOptions{Sensitive: func(string) bool { return true }},
			points{files: 2}, 2,
		},
		{"each dependency added is worth five points", shaped(0, 0, 0, 1), change.RiskOptions{}, points{deps: 5}, 5},
		{"dependencies reach their cap of twenty at four", shaped(0, 0, 0, 4), change.RiskOptions{}, points{deps: 20}, 20},
		{"dependencies past four stay at the cap", shaped(0, 0, 0, 9), change.RiskOptions{}, points{deps: 20}, 20},
		{"an empty dependency name is not a dependency", change.Change{Dependencies: []string{"", "left-pad", ""}}, change.RiskOptions{}, points{deps: 5}, 5},
		{"the total is capped at one hundred", shaped(20, 1000, 3, 6), change.RiskOptions{}, points{files: 30, lines: 30, sensitive: 30, deps: 20}, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := change.Score(tc.change, tc.opts)
			if got := pointsOf(t, r); got != tc.want {
				t.Errorf("points %+v, want %+v", got, tc.want)
			}
			if r.Score != tc.score {
				t.Errorf("score %d, want %d", r.Score, tc.score)
			}
		})
	}
}

func TestScoreDetails(t *testing.T) {
	cases := []struct {
		name   string
		change change.Change
		want   []string
	}{
		{
			name:   "an empty change explains its zeroes",
			change: change.Change{},
			want: []string{
				"0 files changed, 2 points each.",
				"0 lines added, 1 point for every 25.",
				"No sensitive paths.",
				"0 dependencies added, 5 points each.",
			},
		},
		{
			name: "a change under the caps names what it counted",
			change: change.Change{
				Files:        []change.File{{Path: "internal/auth/a.go", Content: strings.Repeat("x\n", 60)}},
				Dependencies: []string{"left-pad"},
			},
			want: []string{
				"1 file changed, 2 points each.",
				"60 lines added, 1 point for every 25.",
				"1 sensitive path (internal/auth/a.go), 15 points each.",
				"1 dependency added, 5 points each.",
			},
		},
		{
			name:   "a change exactly at the caps is not called capped, and a sixth sensitive path is one more",
			change: shaped(15, 750, 6, 4),
			want: []string{
				"15 files changed, 2 points each.",
				"750 lines added, 1 point for every 25.",
				"6 sensitive paths (db/migrations/00.sql, db/migrations/01.sql, db/migrations/02.sql, db/migrations/03.sql, db/migrations/04.sql and 1 more), 15 points each, capped at 30.",
				"4 dependencies added, 5 points each.",
			},
		},
		{
			name:   "a change over the caps says where each was capped and names at most five sensitive paths, sorted",
			change: shaped(16, 800, 7, 5),
			want: []string{
				"16 files changed, 2 points each, capped at 30.",
				"800 lines added, 1 point for every 25, capped at 30.",
				"7 sensitive paths (db/migrations/00.sql, db/migrations/01.sql, db/migrations/02.sql, db/migrations/03.sql, db/migrations/04.sql and 2 more), 15 points each, capped at 30.",
				"5 dependencies added, 5 points each, capped at 20.",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := change.Score(tc.change, change.RiskOptions{})
			var got []string
			for _, f := range r.Factors {
				got = append(got, f.Detail)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("details\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

func TestBands(t *testing.T) {
	cases := []struct {
		name   string
		change change.Change
		score  int
		band   string
	}{
		{"twenty-nine is low", shaped(1, 675, 0, 0), 29, change.BandLow},
		{"thirty is medium", shaped(1, 700, 0, 0), 30, change.BandMedium},
		{"fifty-nine is medium", shaped(15, 725, 0, 0), 59, change.BandMedium},
		{"sixty is high", shaped(15, 750, 0, 0), 60, change.BandHigh},
		{"seventy-nine is high", shaped(15, 725, 1, 1), 79, change.BandHigh},
		{"eighty is critical", shaped(15, 750, 1, 1), 80, change.BandCritical},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := change.Score(tc.change, change.RiskOptions{})
			if r.Score != tc.score || r.Band != tc.band {
				t.Errorf("score %d band %q, want %d %q", r.Score, r.Band, tc.score, tc.band)
			}
			if got := change.BandFor(tc.score); got != tc.band {
				t.Errorf("BandFor(%d) = %q, want %q", tc.score, got, tc.band)
			}
		})
	}
	for _, tc := range []struct {
		score int
		band  string
	}{{0, change.BandLow}, {100, change.BandCritical}} {
		if got := change.BandFor(tc.score); got != tc.band {
			t.Errorf("BandFor(%d) = %q, want %q", tc.score, got, tc.band)
		}
	}
}

func TestGates(t *testing.T) {
	low, medium, high, critical := shaped(1, 0, 0, 0), shaped(1, 700, 0, 0), shaped(15, 750, 0, 0), shaped(15, 750, 1, 1)
	custom := map[string]string{
		change.BandMedium:   "a green CI run",
		change.BandHigh:     "the security team's sign-off",
		change.BandCritical: "",
	}
	cases := []struct {
		name   string
		change change.Change
		gates  map[string]string
		want   string
	}{
		{"a low change needs no gate by default", low, nil, ""},
		{"a medium change needs a reviewer's approval by default", medium, nil, "a reviewer's approval"},
		{"a high change needs a lead's review and passing tests by default", high, nil, "a lead's review and passing tests"},
		{"a critical change needs a second approver as well by default", critical, nil, "a lead's review, passing tests and a second approver"},
		{"a workspace's gate replaces the default for its band", high, custom, "the security team's sign-off"},
		{"a workspace's gate for medium replaces the default", medium, custom, "a green CI run"},
		{"a band a workspace maps to nothing needs no gate", critical, custom, ""},
		{"a workspace may give the low band a gate", low, map[string]string{change.BandLow: "a nod"}, "a nod"},
		{"a band missing from a workspace's gates falls back to the default", high, map[string]string{change.BandLow: "a nod"}, "a lead's review and passing tests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := change.Score(tc.change, change.RiskOptions{Gates: tc.gates}).Gate; got != tc.want {
				t.Errorf("gate %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDefaultsAreCopies(t *testing.T) {
	g := change.DefaultGates()
	g[change.BandHigh] = "nothing"
	if got := change.DefaultGates()[change.BandHigh]; got != "a lead's review and passing tests" {
		t.Errorf("changing DefaultGates' map changed the default to %q", got)
	}
	s := change.DefaultSensitiveGlobs()
	s[0] = "nothing"
	if got := change.DefaultSensitiveGlobs()[0]; got != "**/migrations/**" {
		t.Errorf("changing DefaultSensitiveGlobs' slice changed the default to %q", got)
	}
	if r := change.Score(shaped(1, 0, 1, 0), change.RiskOptions{}); r.Factors[2].Points != 15 {
		t.Errorf("a migration scores %d sensitive points after the copies changed, want 15", r.Factors[2].Points)
	}
}

func TestRiskFact(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := change.Score(shaped(15, 750, 0, 0), change.RiskOptions{})
	want := &protocol.Risk{Score: 60, Band: "high", Gate: "a lead's review and passing tests", At: at}
	if got := r.Fact(at); !reflect.DeepEqual(got, want) {
		t.Errorf("Fact = %#v, want %#v", got, want)
	}
}

func TestRiskThroughTheEngine(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		change change.Change
		opts   change.RiskOptions
		state  protocol.State
		text   string
	}{
		{
			name:   "a high-risk change warns and names the score, band and gate",
			change: shaped(15, 750, 0, 0),
			state:  protocol.ContinueWithWarning,
			text:   "This change scores 60 of 100, high risk. Before it merges it needs a lead's review and passing tests. Keep working.",
		},
		{
			name:   "a critical-risk change warns and names the score, band and gate",
			change: shaped(20, 1000, 3, 6),
			state:  protocol.ContinueWithWarning,
			text:   "This change scores 100 of 100, critical risk. Before it merges it needs a lead's review, passing tests and a second approver. Keep working.",
		},
		{
			name:   "a high-risk change names a workspace's own gate",
			change: shaped(15, 750, 0, 0),
			opts:   change.RiskOptions{Gates: map[string]string{change.BandHigh: "the security team's sign-off"}},
			state:  protocol.ContinueWithWarning,
			text:   "This change scores 60 of 100, high risk. Before it merges it needs the security team's sign-off. Keep working.",
		},
		{
			name:   "a medium-risk change just continues",
			change: shaped(15, 725, 0, 0),
			state:  protocol.Continue,
			text:   protocol.ContinueText,
		},
		{
			name:   "a low-risk change just continues",
			change: shaped(1, 10, 0, 0),
			state:  protocol.Continue,
			text:   protocol.ContinueText,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := protocol.Decide(protocol.Facts{Risk: change.Score(tc.change, tc.opts).Fact(now)}, now)
			if b.NextAction != tc.state {
				t.Fatalf("next_action = %v, want %v", b.NextAction, tc.state)
			}
			if b.Reason.String() != tc.text {
				t.Errorf("reason =\n %q\nwant\n %q", b.Reason.String(), tc.text)
			}
			if tc.state == protocol.ContinueWithWarning {
				if len(b.Reasons) != 1 || b.Reasons[0].Code != protocol.CodeRiskHigh {
					t.Errorf("reasons = %#v, want one risk_high", b.Reasons)
				}
			}
		})
	}
}
