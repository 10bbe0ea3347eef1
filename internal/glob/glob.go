// Package glob matches slash-separated paths against patterns where `*`
// stays inside one path segment and `**` spans segments: `vendor/**`
// matches `vendor/lib/x.go`, `*.go` matches `main.go` but not `cmd/main.go`,
// and `**/*.go` matches both.
package glob

import (
	"fmt"
	"path"
	"strings"
)

// Valid reports whether pattern is well formed: `**` must be a whole
// segment, and the segments must be valid path.Match patterns.
func Valid(pattern string) error {
	if strings.TrimSpace(pattern) == "" {
		return fmt.Errorf("the pattern is empty")
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return fmt.Errorf("%q: ** must be a whole path segment", pattern)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("%q: %w", pattern, err)
		}
	}
	return nil
}

// Match reports whether the slash-separated path p matches pattern. A
// malformed pattern matches nothing (check it with Valid first).
func Match(pattern, p string) bool {
	return match(strings.Split(pattern, "/"), strings.Split(strings.TrimPrefix(p, "./"), "/"))
}

func match(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// ** matches zero or more whole segments.
			for i := 0; i <= len(segs); i++ {
				if match(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], segs[0])
		if err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
