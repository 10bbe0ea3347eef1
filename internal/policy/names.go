package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/madebook/madebook/internal/change"
)

// Redacted is what takes a secret's place in a path or a dependency that
// held one.
const Redacted = "[REDACTED]"

// SecretGroup is the name of the capture group that marks, in a
// content_regex pattern, the part of a match that is the secret: in a path
// or a dependency only that part is redacted (the password of a URL's
// user:password@, say). A match without it is redacted whole.
const SecretGroup = "secret"

// ScanNames runs the set's content_regex policies over the change's file
// paths and dependencies, as over a file's text: a credential in a path or
// in a dependency URL (git+https://user:<token>@host/…) is as much a secret
// as one in a file. It returns the change with every match replaced by
// Redacted (the SecretGroup part of it, when the pattern marks one), and a
// finding per policy and path or dependency that it matched. A path's
// finding names the redacted path as its File and says "in the path"; a
// dependency's names the redacted dependency in its Match. The change c is
// not modified: the one returned has its own Files and Dependencies.
func (s *Set) ScanNames(c change.Change) (change.Change, []Finding) {
	if s == nil || len(s.content) == 0 {
		return c, nil
	}
	var out []Finding
	files, copiedFiles := c.Files, false
	for i, f := range c.Files {
		clean, hits := s.scanName(f.Path)
		if len(hits) == 0 {
			continue
		}
		if !copiedFiles {
			files, copiedFiles = slices.Clone(c.Files), true
		}
		files[i].Path = clean
		for _, h := range hits {
			h.File = clean
			h.Match += " (in the path)"
			out = append(out, h)
		}
	}
	deps, copiedDeps := c.Dependencies, false
	for i, d := range c.Dependencies {
		clean, hits := s.scanName(d)
		if len(hits) == 0 {
			continue
		}
		if !copiedDeps {
			deps, copiedDeps = slices.Clone(c.Dependencies), true
		}
		deps[i] = clean
		for _, h := range hits {
			h.Match += " in the dependency " + clean
			out = append(out, h)
		}
	}
	c.Files, c.Dependencies = files, deps
	return c, out
}

// scanName returns name with every match of the content policies redacted,
// and a finding (without File) per policy that matched, by policy order.
func (s *Set) scanName(name string) (string, []Finding) {
	type span struct{ from, to int }
	var spans []span
	var hits []Finding
	for _, p := range s.content {
		all := p.re.FindAllStringSubmatchIndex(name, -1)
		if all == nil {
			continue
		}
		hits = append(hits, p.finding(p.label(name, all[0]), "", 0).Finding)
		g := p.re.SubexpIndex(SecretGroup)
		for _, loc := range all {
			sp := span{loc[0], loc[1]}
			if g > 0 && loc[2*g] >= 0 {
				sp = span{loc[2*g], loc[2*g+1]}
			}
			spans = append(spans, sp)
		}
	}
	if len(spans) == 0 {
		return name, nil
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	at, redacted := 0, false
	for _, sp := range spans {
		if sp.from == sp.to {
			continue
		}
		if redacted && sp.from <= at {
			at = max(at, sp.to) // overlaps the span just redacted: extend it
			continue
		}
		b.WriteString(name[at:sp.from])
		b.WriteString(Redacted)
		at, redacted = sp.to, true
	}
	b.WriteString(name[at:])
	return b.String(), hits
}

// defaults is the "Secrets in source" set, compiled once, for RedactSecrets.
var defaults = sync.OnceValue(func() *Set {
	s, err := Compile(SecretsInSource())
	if err != nil {
		panic(fmt.Sprintf("the default secrets policies do not compile: %v", err))
	}
	return s
})

// RedactSecrets returns name with whatever the default "Secrets in source"
// patterns find in it replaced by Redacted, as ScanNames would: for the
// paths an agent names where no policy set is at hand (a tool call's
// paths, a permission prompt's), so that they are never stored with a
// secret in them.
func RedactSecrets(name string) string {
	clean, _ := defaults().scanName(name)
	return clean
}
