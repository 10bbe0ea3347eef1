package policy_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/policy"
)

// TestScanNamesFindsAndRedactsSecretsInPathsAndDependencies runs the
// default set over paths and dependencies: what it finds is a finding
// naming where, and the secret is gone from the change it returns.
func TestScanNamesFindsAndRedactsSecretsInPathsAndDependencies(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	gitDep := "git+https://" + "x-access-token:" + ghToken + "@github.com/acme/lib.git"
	cases := []struct {
		name      string
		in        change.Change
		wantPaths []string
		wantDeps  []string
		want      []string // the findings' Match, File
	}{
		{"a token in a dependency URL is redacted to its scheme, user and host",
			change.Change{Dependencies: []string{"left-pad", gitDep}}, nil,
			[]string{"left-pad", "git+https://x-access-token:[REDACTED]@github.com/acme/lib.git"},
			[]string{"GitHub token in the dependency git+https://x-access-token:[REDACTED]@github.com/acme/lib.git|",
				"credential in URL in the dependency git+https://x-access-token:[REDACTED]@github.com/acme/lib.git|"}},
		{"a token in a path is redacted and the finding names the redacted path",
			change.Change{Files: []change.File{{Path: "ok.go"}, {Path: "secrets/" + ghToken + ".txt"}}},
			[]string{"ok.go", "secrets/[REDACTED].txt"}, nil,
			[]string{"GitHub token (in the path)|secrets/[REDACTED].txt"}},
		{"a password in a URL keeps the rest of the URL",
			change.Change{Dependencies: []string{urlCred}}, nil,
			[]string{"https://deploy:[REDACTED]@example.com/repo.git"},
			[]string{"credential in URL in the dependency https://deploy:[REDACTED]@example.com/repo.git|"}},
		{"an AWS key id anywhere in a path is redacted whole",
			change.Change{Files: []change.File{{Path: "keys/" + awsKeyID + "/" + awsKeyID}}},
			[]string{"keys/[REDACTED]/[REDACTED]"}, nil,
			[]string{"AWS access key id (in the path)|keys/[REDACTED]/[REDACTED]"}},
		{"clean names are left alone",
			change.Change{Files: []change.File{{Path: "web/app.go"}}, Dependencies: []string{"github.com/labstack/echo/v4"}},
			[]string{"web/app.go"}, []string{"github.com/labstack/echo/v4"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := strings.Join(c.in.Dependencies, ",")
			var beforePaths []string
			for _, f := range c.in.Files {
				beforePaths = append(beforePaths, f.Path)
			}
			got, found := set.ScanNames(c.in)
			var paths []string
			for _, f := range got.Files {
				paths = append(paths, f.Path)
			}
			if !reflect.DeepEqual(paths, c.wantPaths) || !reflect.DeepEqual(got.Dependencies, c.wantDeps) {
				t.Fatalf("paths %q, dependencies %q; want %q, %q", paths, got.Dependencies, c.wantPaths, c.wantDeps)
			}
			var where []string
			for _, f := range found {
				where = append(where, f.Match+"|"+f.File)
				if strings.Contains(f.Match, ghToken) || strings.Contains(f.Match, urlPass) || strings.Contains(f.File, awsKeyID) {
					t.Errorf("finding %+v holds the secret", f)
				}
			}
			if !reflect.DeepEqual(where, c.want) {
				t.Errorf("findings %q, want %q", where, c.want)
			}
			var afterPaths []string
			for _, f := range c.in.Files {
				afterPaths = append(afterPaths, f.Path)
			}
			if strings.Join(c.in.Dependencies, ",") != before || !reflect.DeepEqual(afterPaths, beforePaths) {
				t.Errorf("ScanNames changed the change it was given")
			}
		})
	}
}
