// Package rules is Madebook's architecture rules: what a workspace chose for
// a concern (e.g. React Query for server state), the departures from that
// choice, how a session's change is found to depart, and how rules are
// inferred from a repository.
//
// Everything here is pure: Deviations reads a change, Infer reads an fs.FS,
// and neither touches the database, the network or the clock.
//
// # How a departure is matched
//
// A Rule carries only names, as the API takes them. A departure (and the
// chosen approach, for Validate) is resolved to import matchers by Matchers:
// when it is the display name or an alias of an alternative in Catalogue
// ("Redux Toolkit", "redux-toolkit") it stands for that alternative's
// imports ("@reduxjs/toolkit"); otherwise the string itself is the import
// path or package name ("@reduxjs/toolkit", "github.com/gin-gonic/gin").
// Rules therefore keep no copy of the catalogue: inferred rules and rules a
// person typed are stored alike, and a catalogue fix reaches both.
//
// An import or a dependency matches a matcher when it is the matcher or lies
// under it, segment by segment and ignoring case: "lodash" matches
// "lodash/fp" but not "lodash-es"; "github.com/labstack/echo" matches
// "github.com/labstack/echo/v4".
//
// The texts an agent is told are the protocol's own: ToFact turns a
// deviation into a protocol.Deviation, which protocol.Decide words as
// "redux-toolkit departs from this workspace's approach. Use React Query —
// chosen for server state in 31 of 34 components."
package rules

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// Rule is a workspace's choice for one concern.
type Rule struct {
	ID         int64    `json:"id"`
	Concern    string   `json:"concern"`    // e.g. "server state"
	Chosen     string   `json:"chosen"`     // e.g. "React Query"
	Departures []string `json:"departures"` // e.g. "Redux Toolkit", "swr"
	Support    int      `json:"support"`    // components that use Chosen
	Total      int      `json:"total"`      // components that address Concern
	Enforced   bool     `json:"enforced"`
}

// Validate reports the first thing wrong with the rule, as an errs.Invalid
// error with code invalid_rule and the field it is about.
func (r Rule) Validate() error {
	bad := func(field, format string, args ...any) error {
		return errs.E(errs.Invalid, "invalid_rule", format, args...).In(field)
	}
	concern, chosen := strings.TrimSpace(r.Concern), strings.TrimSpace(r.Chosen)
	if concern == "" {
		return bad("concern", "A rule needs a concern: what it decides, e.g. \"server state\".")
	}
	if chosen == "" {
		return bad("chosen", "A rule needs a chosen approach: what this workspace uses for %s, e.g. \"React Query\".", concern)
	}
	if len(r.Departures) == 0 {
		return bad("departures", "A rule needs at least one departure: what a change must not use instead of %s.", chosen)
	}
	chosenMs := Matchers(chosen)
	for i, d := range r.Departures {
		d = strings.TrimSpace(d)
		if d == "" {
			return bad("departures", "Departure %d is empty: name what a change must not use instead of %s.", i+1, chosen)
		}
		if strings.EqualFold(d, chosen) {
			return bad("departures", "%q is the chosen approach, so it cannot also be a departure.", d)
		}
		for _, e := range r.Departures[:i] {
			if strings.EqualFold(strings.TrimSpace(e), d) {
				return bad("departures", "%q is listed twice among the departures.", d)
			}
		}
		for _, dm := range Matchers(d) {
			for _, cm := range chosenMs {
				if matches(cm, dm) {
					return bad("departures", "Departure %q would flag %s itself, which is imported as %q.", d, chosen, cm)
				}
			}
		}
	}
	if r.Support <= 0 {
		return bad("support", "Support must be at least 1: it counts the components that use %s.", chosen)
	}
	if r.Support > r.Total {
		return bad("total", "Support (%d) cannot be more than total (%d): total counts every component that addresses %s, those using %s included.",
			r.Support, r.Total, concern, chosen)
	}
	return nil
}

// Deviation is a change's departure from one rule.
type Deviation struct {
	RuleID    int64    `json:"rule_id"`
	Departure string   `json:"departure"` // as the rule spells it
	Files     []string `json:"files"`     // sorted; empty when only a dependency departs
}

// Deviations returns the change's departures from the rules: one per rule
// and departure, in order of rule ID (rules with equal IDs in the order
// given) and then of the rule's departures.
//
// A change departs when it adds a dependency that matches the departure, or
// when a changed Go, JavaScript or TypeScript file imports it. Only what the
// change puts in counts: a diff's added lines, never its removed ones.
// Binary files are skipped. The files listed are those that import the
// departure and, for a departing dependency, the go.mod or package.json the
// change touches that names it. Rules that do not Validate are skipped: a
// reason built from one would contradict itself.
func Deviations(rules []Rule, c change.Change) []Deviation {
	type source struct {
		path    string
		imports []string
	}
	var sources []source
	type manifest struct{ path, lower string } // go.mod or package.json
	var manifests []manifest
	for _, f := range c.Files {
		text := f.Text()
		if text == "" || change.Binary(text) {
			continue
		}
		if base := path.Base(f.Path); base == "go.mod" || base == "package.json" {
			manifests = append(manifests, manifest{f.Path, strings.ToLower(text)})
			continue
		}
		if lang, ok := langOf(f.Path); ok {
			if imps := importsOf(lang, text, f.Diff != ""); len(imps) > 0 {
				sources = append(sources, source{f.Path, imps})
			}
		}
	}
	var deps []string
	for _, d := range c.Dependencies {
		if n := normalizeDependency(d); n != "" {
			deps = append(deps, n)
		}
	}

	order := make([]int, len(rules))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rules[a].ID, rules[b].ID) })

	var out []Deviation
	for _, ri := range order {
		r := rules[ri]
		if r.Validate() != nil {
			continue
		}
		for _, dep := range r.Departures {
			dep = strings.TrimSpace(dep)
			ms := Matchers(dep)
			hit := false
			var files []string
			for _, s := range sources {
				if usesAny(s.imports, ms) {
					hit = true
					files = append(files, s.path)
				}
			}
			for _, d := range deps {
				if !matchesAny(d, ms) {
					continue
				}
				hit = true
				for _, m := range manifests {
					if strings.Contains(m.lower, strings.ToLower(d)) {
						files = append(files, m.path)
					}
				}
			}
			if !hit {
				continue
			}
			slices.Sort(files)
			out = append(out, Deviation{RuleID: r.ID, Departure: dep, Files: append([]string{}, slices.Compact(files)...)})
		}
	}
	return out
}

// ToFact is the deviation as the protocol engine reads it, worded from the
// rule. The caller sets ID and At: the stored row's reference and when the
// deviation was found.
func ToFact(r Rule, d Deviation) protocol.Deviation {
	return protocol.Deviation{
		Departure: d.Departure,
		Chosen:    r.Chosen,
		Concern:   r.Concern,
		Support:   r.Support,
		Total:     r.Total,
		Enforced:  r.Enforced,
		Files:     slices.Clone(d.Files),
	}
}
