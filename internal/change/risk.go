package change

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/protocol"
)

// The risk bands, least risky first.
const (
	BandLow      = "low"
	BandMedium   = "medium"
	BandHigh     = "high"
	BandCritical = "critical"
)

// The factor names, in the order Score lists them.
const (
	FactorFiles          = "files"
	FactorLines          = "lines"
	FactorSensitivePaths = "sensitive_paths"
	FactorDependencies   = "dependencies"
)

// The scoring. Each factor is capped on its own, and the total is capped at
// MaxScore (the caps add up to 110, so a change that maxes every factor is
// still 100).
const (
	PointsPerFile = 2  // for every file the change touches
	FilesCap      = 30 // reached at 15 files

	LinesPerPoint = 25 // one point for every whole 25 lines added
	LinesCap      = 30 // reached at 750 lines

	PointsPerSensitivePath = 15 // for every file on a sensitive path
	SensitivePathsCap      = 30 // reached at 2 such files

	PointsPerDependency = 5  // for every dependency added
	DependenciesCap     = 20 // reached at 4 dependencies

	MaxScore = 100
)

// The band thresholds: a score below MediumFrom is low, below HighFrom
// medium, below CriticalFrom high, and from CriticalFrom on critical.
const (
	MediumFrom   = 30
	HighFrom     = 60
	CriticalFrom = 80
)

// Risk is the scored risk of a session's change, with the factors that make
// up the score so that the console can show how it was reached.
type Risk struct {
	Score int    `json:"score"`
	Band  string `json:"band"`
	// Gate is what the change needs before it merges at this band; empty
	// when it needs nothing beyond the usual.
	Gate    string   `json:"gate"`
	Factors []Factor `json:"factors"`
}

// Factor is one term of the score: its points after its cap, and a
// sentence saying how they were reached.
type Factor struct {
	Name   string `json:"name"`
	Points int    `json:"points"`
	Detail string `json:"detail"`
}

// RiskOptions are what a workspace adds to the scoring.
type RiskOptions struct {
	// Sensitive reports whether a changed path is sensitive, e.g. because a
	// path_glob policy matches it. Nil means DefaultSensitiveGlobs.
	Sensitive func(path string) bool
	// Gates maps a band to the gate the change needs before merge. A band
	// missing from the map takes its DefaultGates entry; a band mapped to ""
	// needs nothing.
	Gates map[string]string
}

// DefaultSensitiveGlobs returns the globs of the paths that count as
// sensitive when RiskOptions.Sensitive is nil. It returns a new slice each
// time.
func DefaultSensitiveGlobs() []string {
	return []string{
		"**/migrations/**",
		"**/auth/**",
		"**/*secret*",
		"**/.github/workflows/**",
		"**/Dockerfile",
		"**/*.tf",
	}
}

// DefaultGates returns the gate each band needs before merge when
// RiskOptions.Gates does not name one. It returns a new map each time.
func DefaultGates() map[string]string {
	return map[string]string{
		BandLow:      "",
		BandMedium:   "a reviewer's approval",
		BandHigh:     "a lead's review and passing tests",
		BandCritical: "a lead's review, passing tests and a second approver",
	}
}

// SensitiveGlobs returns a RiskOptions.Sensitive that marks a path sensitive
// when any of the globs matches it (a malformed glob matches nothing).
func SensitiveGlobs(globs ...string) func(path string) bool {
	globs = append([]string(nil), globs...)
	return func(p string) bool {
		for _, g := range globs {
			if glob.Match(g, p) {
				return true
			}
		}
		return false
	}
}

var defaultSensitive = SensitiveGlobs(DefaultSensitiveGlobs()...)

// BandFor returns the band of a score: low below 30, medium below 60, high
// below 80, critical from 80 on.
func BandFor(score int) string {
	switch {
	case score >= CriticalFrom:
		return BandCritical
	case score >= HighFrom:
		return BandHigh
	case score >= MediumFrom:
		return BandMedium
	default:
		return BandLow
	}
}

// Score scores a change from 0 to 100. It is pure and deterministic, and
// the factors are always the same four, in this order, even at 0 points:
//
//   - files: 2 points for every file in the change, at most 30;
//   - lines: 1 point for every whole 25 lines the change adds (File.Lines,
//     binary files skipped), at most 30;
//   - sensitive_paths: 15 points for every file on a sensitive path
//     (opts.Sensitive, or DefaultSensitiveGlobs), at most 30;
//   - dependencies: 5 points for every dependency added, at most 20.
//
// The total is capped at 100. The band is BandFor(score) and the gate is
// the band's entry in opts.Gates, or else in DefaultGates.
func Score(c Change, opts RiskOptions) Risk {
	sensitive := opts.Sensitive
	if sensitive == nil {
		sensitive = defaultSensitive
	}

	files := len(c.Files)
	lines := 0
	var paths []string
	for _, f := range c.Files {
		if t := f.Text(); !Binary(t) {
			lines += f.Lines()
		}
		if f.Path != "" && sensitive(f.Path) {
			paths = append(paths, f.Path)
		}
	}
	deps := 0
	for _, d := range c.Dependencies {
		if d != "" {
			deps++
		}
	}

	factors := []Factor{
		{Name: FactorFiles, Points: capped(files*PointsPerFile, FilesCap),
			Detail: count(files, "file", "files") + " changed, " + strconv.Itoa(PointsPerFile) + " points each" + capNote(files*PointsPerFile, FilesCap) + "."},
		{Name: FactorLines, Points: capped(lines/LinesPerPoint, LinesCap),
			Detail: count(lines, "line", "lines") + " added, 1 point for every " + strconv.Itoa(LinesPerPoint) + capNote(lines/LinesPerPoint, LinesCap) + "."},
		{Name: FactorSensitivePaths, Points: capped(len(paths)*PointsPerSensitivePath, SensitivePathsCap),
			Detail: sensitiveDetail(paths)},
		{Name: FactorDependencies, Points: capped(deps*PointsPerDependency, DependenciesCap),
			Detail: count(deps, "dependency", "dependencies") + " added, " + strconv.Itoa(PointsPerDependency) + " points each" + capNote(deps*PointsPerDependency, DependenciesCap) + "."},
	}
	score := 0
	for _, f := range factors {
		score += f.Points
	}
	score = capped(score, MaxScore)

	band := BandFor(score)
	gate, ok := opts.Gates[band]
	if !ok {
		gate = DefaultGates()[band]
	}
	return Risk{Score: score, Band: band, Gate: gate, Factors: factors}
}

// Fact is the risk as the protocol engine reads it, stamped at.
func (r Risk) Fact(at time.Time) *protocol.Risk {
	return &protocol.Risk{Score: r.Score, Band: r.Band, Gate: r.Gate, At: at}
}

func capped(points, limit int) int { return min(points, limit) }

func capNote(points, limit int) string {
	if points > limit {
		return ", capped at " + strconv.Itoa(limit)
	}
	return ""
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func sensitiveDetail(paths []string) string {
	if len(paths) == 0 {
		return "No sensitive paths."
	}
	pts := len(paths) * PointsPerSensitivePath
	names := sortedSet(slices.Clone(paths))
	more := ""
	if len(names) > maxNamed {
		more = " and " + strconv.Itoa(len(names)-maxNamed) + " more"
		names = names[:maxNamed]
	}
	return count(len(paths), "sensitive path", "sensitive paths") + " (" + strings.Join(names, ", ") + more + "), " +
		strconv.Itoa(PointsPerSensitivePath) + " points each" + capNote(pts, SensitivePathsCap) + "."
}

// maxNamed is how many sensitive paths a factor's detail names.
const maxNamed = 5
