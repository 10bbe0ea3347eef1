package glob_test

import (
	"testing"

	"github.com/madebook/madebook/internal/glob"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"vendor/**", "vendor/lib/x.go", true},
		{"vendor/**", "vendor/x.go", true},
		{"vendor/**", "vendor", true},
		{"vendor/**", "src/vendor/x.go", false},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "cmd/madebook/main.go", true},
		{"**/*.go", "main.js", false},
		{"config/*.sh", "config/deploy.sh", true},
		{"config/*.sh", "config/prod/deploy.sh", false},
		{"db/**/migrations/*.sql", "db/migrations/1.sql", true},
		{"db/**/migrations/*.sql", "db/a/b/migrations/1.sql", true},
		{"**", "anything/at/all", true},
		{"a/?.go", "a/b.go", true},
		{"a/[bc].go", "a/c.go", true},
		{"a/[bc].go", "a/d.go", false},
		{"./x.go", "x.go", false},
		{"x.go", "./x.go", true},
		{"a/[", "a/[", false},
	}
	for _, tc := range cases {
		if got := glob.Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestValid(t *testing.T) {
	for _, p := range []string{"vendor/**", "*.go", "**/*.go", "a/[bc].go"} {
		if err := glob.Valid(p); err != nil {
			t.Errorf("Valid(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "a**/b", "a/[", "x/**y"} {
		if err := glob.Valid(p); err == nil {
			t.Errorf("Valid(%q) accepted a malformed pattern", p)
		}
	}
}
