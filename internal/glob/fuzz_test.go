package glob_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/glob"
)

// FuzzGlob matches any path against any pattern: Match never fails on a
// malformed pattern (it matches nothing), a valid pattern without
// metacharacters matches exactly itself, and `**/` before a valid pattern
// matches everything the pattern matches.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"vendor/**", "vendor/lib/x.go"}, {"*.go", "main.go"}, {"**/*.go", "cmd/main.go"},
		{"a/**b", "a/b"}, {"[", "["}, {"x/[]]y", "x/]y"}, {`\`, `\`}, {"", ""}, {"**", ""}, {"./a", "./a"}, {"a//b", "a//b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		// Patterns past the policy limit are refused before they are
		// matched; each ** multiplies the work by the path's segments.
		if len(pattern) > 200 || strings.Count(pattern, "**") > 4 || len(path) > 500 {
			return
		}
		m := glob.Match(pattern, path)
		if glob.Valid(pattern) != nil {
			return
		}
		if !strings.ContainsAny(pattern, `*?[\`) && !strings.HasPrefix(pattern, "./") && m != (strings.TrimPrefix(path, "./") == pattern) {
			t.Fatalf("Match(%q, %q) = %v for a literal pattern", pattern, path, m)
		}
		if m && !glob.Match("**/"+pattern, path) {
			t.Fatalf("Match(%q, %q) but not with **/ before it", pattern, path)
		}
	})
}
