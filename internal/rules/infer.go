package rules

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/madebook/madebook/internal/change"
)

// MaxFileSize is the largest source file Infer reads; larger ones (bundles,
// generated code) are skipped.
const MaxFileSize = 1 << 20

// skipDir reports whether Infer leaves a directory out: version control,
// dependencies, test fixtures and hidden directories.
func skipDir(name string) bool {
	switch name {
	case ".git", "node_modules", "vendor", "testdata":
		return true
	}
	return strings.HasPrefix(name, ".")
}

// Infer proposes rules from a repository. A component is a directory that
// holds source files (.go, .js, .jsx, .ts, .tsx, .mjs, .cjs, .mts, .cts);
// for each concern of the Catalogue, Infer counts the components that import
// each alternative, and proposes a rule for every concern at least two
// components address: chosen is the most used alternative (the first in
// the catalogue on a tie), departures are the concern's other alternatives,
// support counts the components using chosen and total those using any of
// the concern's alternatives. Inferred rules are advisory (not Enforced)
// until a person enforces them, and come in catalogue order with no ID.
//
// Infer skips .git, node_modules, vendor, testdata and hidden directories,
// symbolic links, binary files and files over MaxFileSize.
func Infer(fsys fs.FS) ([]Rule, error) {
	// uses[dir][concern][alternative] is set when a file in dir imports it.
	uses := map[string]map[int]map[int]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		lang, ok := langOf(p)
		if !ok {
			return nil
		}
		text, ok, err := readSource(fsys, p, d)
		if err != nil || !ok {
			return err
		}
		imps := importsOf(lang, text, false)
		if len(imps) == 0 {
			return nil
		}
		dir := path.Dir(p)
		for ci, c := range Catalogue {
			if c.Lang != lang {
				continue
			}
			for ai, a := range c.Alternatives {
				if !usesAny(imps, a.Imports) {
					continue
				}
				if uses[dir] == nil {
					uses[dir] = map[int]map[int]bool{}
				}
				if uses[dir][ci] == nil {
					uses[dir][ci] = map[int]bool{}
				}
				uses[dir][ci][ai] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inferring rules: %w", err)
	}

	rules := []Rule{}
	for ci, c := range Catalogue {
		counts := make([]int, len(c.Alternatives))
		total := 0
		for _, byConcern := range uses {
			alts := byConcern[ci]
			if len(alts) == 0 {
				continue
			}
			total++
			for ai := range alts {
				counts[ai]++
			}
		}
		if total < 2 {
			continue
		}
		best := 0
		for ai, n := range counts {
			if n > counts[best] {
				best = ai
			}
		}
		r := Rule{Concern: c.Name, Chosen: c.Alternatives[best].Name, Departures: []string{}, Support: counts[best], Total: total}
		for ai, a := range c.Alternatives {
			if ai != best {
				r.Departures = append(r.Departures, a.Name)
			}
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// readSource reads a source file for Infer: ok is false when it is over
// MaxFileSize or binary.
func readSource(fsys fs.FS, p string, d fs.DirEntry) (string, bool, error) {
	info, err := d.Info()
	if err != nil {
		return "", false, err
	}
	if info.Size() > MaxFileSize {
		return "", false, nil
	}
	f, err := fsys.Open(p)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > MaxFileSize || change.Binary(string(b)) {
		return "", false, nil
	}
	return string(b), true, nil
}

// usesAny reports whether one of imps matches one of ms.
func usesAny(imps, ms []string) bool {
	for _, imp := range imps {
		if matchesAny(imp, ms) {
			return true
		}
	}
	return false
}
