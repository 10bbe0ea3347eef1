package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openAPIParserVersion is the release of @readme/openapi-parser the strict
// check is written against (.ci/run installs it; docs/testing.md says how
// to install it locally).
const openAPIParserVersion = "9.0.0"

// openAPIParser finds the strict validator: MADEBOOK_OPENAPI_PARSER, the
// npm prefix @readme/openapi-parser is installed under, run by the node
// on PATH. Without it the test is skipped, or fails when
// MADEBOOK_REQUIRE_OPENAPI_PARSER=1.
func openAPIParser(t *testing.T) (node, prefix string) {
	t.Helper()
	prefix, missing := os.Getenv("MADEBOOK_OPENAPI_PARSER"), ""
	node, err := exec.LookPath("node")
	switch {
	case prefix == "":
		missing = "the strict OpenAPI validator is not installed: npm install --prefix /tmp/oas @readme/openapi-parser@" +
			openAPIParserVersion + ", then MADEBOOK_OPENAPI_PARSER=/tmp/oas"
	case err != nil:
		missing = "node is not on PATH"
	default:
		if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@readme", "openapi-parser", "package.json")); err != nil {
			missing = fmt.Sprintf("MADEBOOK_OPENAPI_PARSER=%s holds no @readme/openapi-parser: %v", prefix, err)
		}
	}
	if missing != "" {
		if os.Getenv("MADEBOOK_REQUIRE_OPENAPI_PARSER") == "1" {
			t.Fatalf("MADEBOOK_REQUIRE_OPENAPI_PARSER=1, but %s", missing)
		}
		t.Skip(missing)
	}
	return node, prefix
}

// strictReport is what testdata/openapi-validate.mjs prints.
type strictReport struct {
	Version  string   `json:"version"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

// validateStrictly runs @readme/openapi-parser's validate over doc.
func validateStrictly(t *testing.T, node, prefix string, doc []byte) strictReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "openapi-validate.mjs"), prefix)
	cmd.Stdin = bytes.NewReader(doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the validator: %v\n%s", err, stderr.String())
	}
	var r strictReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("the validator printed %q: %v", out, err)
	}
	if r.Version != openAPIParserVersion {
		t.Logf("@readme/openapi-parser is %s; this test is written against %s", r.Version, openAPIParserVersion)
	}
	return r
}

// TestOpenAPIStrict validates the document Madebook serves with
// @readme/openapi-parser, which holds OpenAPI 3.1 to the letter where
// libopenapi is lenient (a media type with both example and examples):
// no error and no warning. A document with that very fault is refused,
// so the check is known to bite.
func TestOpenAPIStrict(t *testing.T) {
	node, prefix := openAPIParser(t)
	t.Parallel()
	t.Run("the served document passes, with no warning", func(t *testing.T) {
		t.Parallel()
		r := validateStrictly(t, node, prefix, OpenAPI)
		if !r.Valid || len(r.Errors) > 0 || len(r.Warnings) > 0 {
			t.Fatalf("web/api/openapi.json is not strict OpenAPI 3.1:\nerrors:\n%s\nwarnings:\n%s",
				strings.Join(r.Errors, "\n"), strings.Join(r.Warnings, "\n"))
		}
	})
	t.Run("a body with both example and examples fails", func(t *testing.T) {
		t.Parallel()
		bad := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/x":{"post":{"requestBody":{"content":` +
			`{"application/json":{"schema":{"type":"object"},"example":{},"examples":{"a":{"value":{}}}}}},` +
			`"responses":{"200":{"description":"ok"}}}}}}`
		if r := validateStrictly(t, node, prefix, []byte(bad)); r.Valid || len(r.Errors) == 0 {
			t.Fatalf("the validator took a media type with both example and examples: %+v", r)
		}
	})
}
