package policy_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/glob"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// The secret-shaped fixtures are put together at run time, so that this
// file's own source does not hold a secret the policies would find (see
// TestThePackagesOwnSourceHoldsNoSecret).
var (
	awsKeyID     = "AKIA" + "IOSFODNN7" + "EXAMPLE"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	pemHeader    = "-----BEGIN " + "RSA PRIVATE KEY" + "-----"
	pemBody      = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB"
	ghToken      = "gh" + "p_" + strings.Repeat("aB3d", 9)
	ghFineToken  = "github" + "_pat_" + strings.Repeat("11AbCdEfGh", 4)
	slackToken   = "xo" + "xb-" + "1234567890-" + "0987654321-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	pw           = "pass" + "word"
	pwValue      = "hunter2-s3cret"
	awsSecretKey = "AWS_SECRET_" + "ACCESS_KEY"
	urlPass      = "s3cret-" + "Value9"
	urlCred      = "https://" + "deploy:" + urlPass + "@example.com/repo.git"
)

func mustCompile(t testing.TB, ps []policy.Policy) *policy.Set {
	t.Helper()
	s, err := policy.Compile(ps)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func content(path string, lines ...string) change.File {
	return change.File{Path: path, Content: strings.Join(lines, "\n") + "\n"}
}

// secretKind is one kind of secret the default set must find: a line that
// holds it, the label its finding must carry, and the secret value that the
// label must not reveal.
type secretKind struct {
	what   string
	line   string
	label  string
	secret string
}

func secretKinds() []secretKind {
	return []secretKind{
		{"an AWS access key id", "export AWS_ACCESS_KEY_ID=" + awsKeyID, "AWS access key id", awsKeyID},
		{"a temporary AWS access key id", `key_id: "ASIA` + awsKeyID[4:] + `"`, "AWS access key id", awsKeyID[4:]},
		{"an AWS secret access key", "export " + awsSecretKey + "=" + awsSecret, "AWS_SECRET_ACCESS_KEY", awsSecret},
		{"an AWS secret access key in credentials-file form", strings.ToLower(awsSecretKey) + " = " + awsSecret, "AWS_SECRET_ACCESS_KEY", awsSecret},
		{"an AWS secret access key as a quoted JSON value", `"` + awsSecretKey + `": "` + awsSecret + `",`, "AWS_SECRET_ACCESS_KEY", awsSecret},
		{"a private key block", pemHeader, "PRIVATE KEY block", pemHeader},
		{"an OpenSSH private key block in a JSON string", `"key": "-----BEGIN ` + `OPENSSH PRIVATE KEY-----\n` + pemBody + `"`, "PRIVATE KEY block", pemBody},
		{"a PGP private key block", "-----BEGIN " + "PGP PRIVATE KEY BLOCK-----", "PRIVATE KEY block", "PGP PRIVATE KEY BLOCK"},
		{"a GitHub personal access token", `token := "` + ghToken + `"`, "GitHub token", ghToken},
		{"a GitHub fine-grained token", "GITHUB_TOKEN=" + ghFineToken, "GitHub token", ghFineToken},
		{"a Slack token", "SLACK_TOKEN=" + slackToken, "Slack token", slackToken},
		{"a quoted password assignment", pw + ` = "` + pwValue + `"`, "password assignment", pwValue},
		{"a Go password declaration", "\t" + pw + ` := "` + pwValue + `"`, "password assignment", pwValue},
		{"a JSON password key", `  "` + pw + `": "` + pwValue + `",`, "password assignment", pwValue},
		{"a YAML password with a bare value", "  " + pw + ": " + pwValue, "password assignment", pwValue},
		{"an env-file password with a bare value", "DB_" + strings.ToUpper(pw) + "=" + pwValue + "  # staging", "password assignment", pwValue},
		{"a credential in a URL", `remote = "` + urlCred + `"`, "credential in URL", urlPass},
	}
}

func TestTheDefaultSecretsPoliciesFindEachKindOfSecret(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	type row struct {
		name     string
		file     change.File
		wantLine int // 0: no finding
	}
	var rows []row
	for _, k := range secretKinds() {
		rows = append(rows,
			row{k.what + " in a file's content is found on its line", content("config/deploy.sh",
				"#!/bin/sh", "set -eu", k.line, "echo done"), 3},
			row{k.what + " that a diff adds is found on its line in the new file", change.File{Path: "config/deploy.sh", Diff: strings.Join([]string{
				"--- a/config/deploy.sh", "+++ b/config/deploy.sh", "@@ -10,3 +10,4 @@", " set -eu", "-echo old", "+" + k.line, "+echo done", " exit 0"}, "\n")}, 11},
			row{k.what + " that a diff removes is not found", change.File{Path: "config/deploy.sh", Diff: strings.Join([]string{
				"--- a/config/deploy.sh", "+++ b/config/deploy.sh", "@@ -10,3 +10,2 @@", " set -eu", "-" + k.line, "+echo safe", " exit 0"}, "\n")}, 0},
		)
	}
	kinds := secretKinds()
	for i, r := range rows {
		k := kinds[i/3]
		t.Run(r.name, func(t *testing.T) {
			got := set.Evaluate(change.Change{Files: []change.File{r.file}})
			if r.wantLine == 0 {
				if len(got) != 0 {
					t.Fatalf("findings = %+v, want none", got)
				}
				return
			}
			want := []policy.Finding{{Policy: "Secrets in source", Severity: protocol.SeverityCritical,
				Action: policy.ActionViolation, Match: k.label, File: "config/deploy.sh", Line: r.wantLine}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("findings = %+v\nwant       %+v", got, want)
			}
			if strings.Contains(got[0].Match, k.secret) {
				t.Errorf("Match %q holds the secret %q", got[0].Match, k.secret)
			}
		})
	}
}

func TestTheDefaultSecretsPoliciesLeaveReferencesAndPlaceholdersAlone(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	for _, line := range []string{
		pw + ` = ""`,
		pw + `: ""`,
		pw + ": ${DB_" + strings.ToUpper(pw) + "}",
		pw + `: "${DB_PASSWORD}"`,
		pw + `: "{{ .Values.db.pass }}"`,
		pw + `: "<your-db-pass>"`,
		pw + "=os.Getenv(\"DB_PASSWORD\")",
		pw + " = os.environ[\"DB_PASSWORD\"]",
		pw + " = getenv(\"DB_PASSWORD\")",
		"\t" + strings.Title(pw) + ": cfg." + strings.Title(pw) + ",",
		"  " + pw + ": process.env.DB_PASSWORD,",
		"  " + pw + ": process.env.DB_PASSWORD",
		"  " + pw + ": str",
		"  " + pw + ": string;",
		pw + " = None",
		pw + ": null",
		"if " + pw + ` == "" {`,
		"if " + pw + ` != "x" {`,
		pw + ":",
		"# Set the " + pw + ": see the runbook.",
		"self." + pw + " = " + pw,
		pw + " = self._" + pw,
		"export " + awsSecretKey + "=${" + awsSecretKey + "}",
		"export " + awsSecretKey + "=$" + awsSecretKey,
		awsSecretKey + "=" + awsSecret + "EXTRA", // not a 40-character value
		"-----BEGIN " + "CERTIFICATE-----",
		"-----BEGIN " + "PUBLIC KEY-----",
		"SLACK_TOKEN=" + "xo" + "xb-your-token-here",
		"ghp_short",
		"AKIA" + "SHORT",
		"url = https://" + "deploy:${TOKEN}@example.com/x",
		"url = https://" + "deploy:<token>@example.com/x",
		"url = https://" + "deploy:%s@example.com/x",
		"url = https://" + "deploy:[REDACTED]@example.com/x",
		"url = http://localhost:8080/x?to=a@b.c",
		"git@github.com:org/repo.git",
	} {
		t.Run(fmt.Sprintf("the line %q is not a secret", line), func(t *testing.T) {
			if got := set.Evaluate(change.Change{Files: []change.File{content("x.txt", line)}}); len(got) != 0 {
				t.Errorf("findings = %+v, want none", got)
			}
		})
	}
}

func TestTheSeedsSentenceComesOutOfAFinding(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	c := change.Change{Files: []change.File{
		content("README.md", "# Deploy", "Run config/deploy.sh."),
		content("config/deploy.sh", "#!/bin/sh", "export "+awsSecretKey+"="+awsSecret, "aws s3 sync dist s3://bucket"),
	}}
	fs := set.Evaluate(c)
	if len(fs) != 1 {
		t.Fatalf("findings = %+v, want one", fs)
	}
	f := fs[0]
	if f.Policy != "Secrets in source" || f.Match != "AWS_SECRET_ACCESS_KEY" || f.File != "config/deploy.sh" || f.Line != 2 {
		t.Fatalf("finding = %+v", f)
	}
	v := protocol.Violation{ID: "VIO-001", Policy: f.Policy, Severity: f.Severity,
		BlockMerge: f.Action == policy.ActionBlockMerge, Match: f.Match, File: f.File}
	b := protocol.Decide(protocol.Facts{Violations: []protocol.Violation{v}}, time.Unix(0, 0))
	want := "Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh. This is a critical control: stop, and do not work around it."
	if b.NextAction != protocol.HardStop || b.Reason.String() != want {
		t.Errorf("brief = %v %q\nwant      HARD_STOP %q", b.NextAction, b.Reason.String(), want)
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"an AWS key id keeps its first four characters and its length", awsKeyID, "AKIA… (20 chars)"},
		{"a long secret keeps no more than four characters", awsSecret, "wJal… (40 chars)"},
		{"a short secret keeps at most a quarter of itself", "hunter22", "hu… (8 chars)"},
		{"a secret of three characters keeps none", "abc", "… (3 chars)"},
		{"a single character is counted in the singular", "x", "… (1 char)"},
		{"empty text is counted as none", "", "… (0 chars)"},
		{"characters are runes, not bytes", "пароль-12345", "пар… (12 chars)"},
		{"a non-printable character ends the kept prefix", "ab\ncdefghijklmnop", "ab… (17 chars)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := policy.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMatchNamesWhatMatchedAndNeverHoldsTheSecret(t *testing.T) {
	rx := func(id int64, pattern string) policy.Policy {
		return policy.Policy{ID: id, Name: "P", Severity: protocol.SeverityHigh, Kind: policy.KindContentRegex, Pattern: pattern, Action: policy.ActionViolation}
	}
	for _, tc := range []struct {
		name, pattern, text, want, secret string
	}{
		{"a regex without a named group gives the redacted match", `AKIA[0-9A-Z]{16}`, "id=" + awsKeyID, "AKIA… (20 chars)", awsKeyID},
		{"a named group that matched gives its name, as written when it has no lower case", `(?P<API_KEY>sk_live_[0-9a-z]{24})`,
			"k = sk_live_" + strings.Repeat("a1", 12), "API_KEY", strings.Repeat("a1", 12)},
		{"a lower-case group name reads with spaces for underscores", `(?P<stripe_live_key>sk_live_[0-9a-z]{24})`,
			"k = sk_live_" + strings.Repeat("a1", 12), "stripe live key", strings.Repeat("a1", 12)},
		{"a named group that took no part in the match gives the redacted match", `(?P<api_key>KEY-[0-9]{8})|TOKEN-[0-9]{8}`,
			"TOKEN-12345678", "TOK… (14 chars)", "12345678"},
		{"the first named group that took part names the match", `(?P<outer>x(?P<inner>[0-9]{6}))`, "x123456", "outer", "123456"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := mustCompile(t, []policy.Policy{rx(1, tc.pattern)})
			fs := set.Evaluate(change.Change{Files: []change.File{content("a.env", tc.text)}})
			if len(fs) != 1 || fs[0].Match != tc.want {
				t.Fatalf("findings = %+v, want one with Match %q", fs, tc.want)
			}
			if strings.Contains(fs[0].Match, tc.secret) {
				t.Errorf("Match %q holds the secret %q", fs[0].Match, tc.secret)
			}
		})
	}
}

func TestNoFindingOfTheDefaultSetHoldsASecret(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	var files []change.File
	for i, k := range secretKinds() {
		files = append(files, content(fmt.Sprintf("f%02d.txt", i), k.line))
	}
	fs := set.Evaluate(change.Change{Files: files})
	if len(fs) != len(files) {
		t.Fatalf("%d findings for %d secrets: %+v", len(fs), len(files), fs)
	}
	for i, f := range fs {
		k := secretKinds()[i]
		s := k.secret
		if strings.HasPrefix(k.label, "PRIVATE KEY") {
			s = pemBody // a key's header is no secret, and its label names it
			if !strings.Contains(k.line, pemBody) {
				continue
			}
		}
		// No run of 5 characters of the secret may appear in the label.
		for j := 0; j+5 <= len(s); j++ {
			if strings.Contains(f.Match, s[j:j+5]) {
				t.Errorf("finding %d: Match %q holds %q of the secret", i, f.Match, s[j:j+5])
			}
		}
	}
}

func TestBinaryContentIsSkippedNotMatched(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	bin := change.File{Path: "assets/logo.png", Content: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n" + awsKeyID + "\n\x00\xff\xfe"}
	text := content("config/app.env", "ID="+awsKeyID)
	fs := set.Evaluate(change.Change{Files: []change.File{bin, text}})
	if len(fs) != 1 || fs[0].File != "config/app.env" {
		t.Errorf("findings = %+v, want only config/app.env's (the binary file skipped)", fs)
	}
}

func TestEachPolicyGivesOneFindingPerFileAtItsFirstMatch(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	f := content("k.txt", "a", "b", "ID="+awsKeyID, "c", "ID2="+awsKeyID)
	fs := set.Evaluate(change.Change{Files: []change.File{f, f}}) // the same path twice
	if len(fs) != 1 || fs[0].Line != 3 {
		t.Errorf("findings = %+v, want one, on line 3", fs)
	}
}

func TestPathGlobPolicies(t *testing.T) {
	g := func(id int64, pattern string) policy.Policy {
		return policy.Policy{ID: id, Name: "Paths", Severity: protocol.SeverityHigh, Kind: policy.KindPathGlob, Pattern: pattern, Action: policy.ActionBlockMerge}
	}
	for _, tc := range []struct {
		name    string
		pattern string
		paths   []string
		want    []string
	}{
		{"vendor/** matches files at any depth under vendor", "vendor/**",
			[]string{"vendor/lib/x.go", "vendor/x.go", "src/vendor/x.go", "main.go"}, []string{"vendor/lib/x.go", "vendor/x.go"}},
		{"**/*.pem matches a pem file in any directory, the root included", "**/*.pem",
			[]string{"certs/prod/server.pem", "server.pem", "server.pem.txt"}, []string{"certs/prod/server.pem", "server.pem"}},
		{"a single * stays inside one path segment", "config/*.sh",
			[]string{"config/deploy.sh", "config/prod/deploy.sh"}, []string{"config/deploy.sh"}},
		{"** in the middle spans zero or more segments", "db/**/migrations/*.sql",
			[]string{"db/migrations/1.sql", "db/a/b/migrations/2.sql", "db/migrations/x/3.sql"}, []string{"db/a/b/migrations/2.sql", "db/migrations/1.sql"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := mustCompile(t, []policy.Policy{g(7, tc.pattern)})
			var files []change.File
			for _, p := range tc.paths {
				files = append(files, content(p, "x"))
			}
			fs := set.Evaluate(change.Change{Files: files})
			var got []string
			for _, f := range fs {
				if f.Match != tc.pattern || f.Line != 0 || f.Action != policy.ActionBlockMerge || f.PolicyID != 7 {
					t.Errorf("finding = %+v, want Match %q, no line, block_merge, policy 7", f, tc.pattern)
				}
				got = append(got, f.File)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("files = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDependencyPolicies(t *testing.T) {
	d := func(id int64, pattern string) policy.Policy {
		return policy.Policy{ID: id, Name: "Deps", Severity: protocol.SeverityMedium, Kind: policy.KindDependency, Pattern: pattern, Action: policy.ActionViolation}
	}
	deps := []string{"left-pad", "left-pad-2", "@types/node", "@types/react", "@typescript/lib", " lodash "}
	for _, tc := range []struct {
		name    string
		pattern string
		want    []string
	}{
		{"a name matches that dependency exactly", "left-pad", []string{"left-pad"}},
		{"a name does not match a longer name it starts", "left", nil},
		{"a trailing * matches every dependency with that prefix", "@types/*", []string{"@types/node", "@types/react"}},
		{"a prefix ending in * matches the name itself and longer ones, as a glob's * does", "left-pad*", []string{"left-pad", "left-pad-2"}},
		{"a reported dependency is trimmed of spaces", "lodash", []string{"lodash"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := mustCompile(t, []policy.Policy{d(4, tc.pattern)})
			fs := set.Evaluate(change.Change{Dependencies: deps})
			var got []string
			for _, f := range fs {
				if f.File != "" || f.Line != 0 || f.PolicyID != 4 {
					t.Errorf("finding = %+v, want no file or line", f)
				}
				got = append(got, f.Match)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("matched %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := policy.Policy{Name: "No TODO", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex, Pattern: `TODO`, Action: policy.ActionViolation}
	with := func(f func(*policy.Policy)) policy.Policy { p := ok; f(&p); return p }
	for _, tc := range []struct {
		name  string
		p     policy.Policy
		field string // "": valid
		want  string // in the message
	}{
		{"a well-formed policy is valid", ok, "", ""},
		{"an empty name is refused", with(func(p *policy.Policy) { p.Name = "  " }), "name", "A policy needs a name."},
		{"an unknown severity is refused", with(func(p *policy.Policy) { p.Severity = "urgent" }), "severity", `Policy severity "urgent" is not one of critical, high, medium or low.`},
		{"a missing severity is refused", with(func(p *policy.Policy) { p.Severity = "" }), "severity", "A policy needs a severity: critical, high, medium or low."},
		{"an unknown kind is refused", with(func(p *policy.Policy) { p.Kind = "ast_query" }), "kind", `Policy kind "ast_query" is not one of content_regex, path_glob or dependency.`},
		{"an unknown action is refused", with(func(p *policy.Policy) { p.Action = "warn" }), "action", `Policy action "warn" is not one of violation or block_merge.`},
		{"an invalid regex is refused with its compile error", with(func(p *policy.Policy) { p.Pattern = "a(b" }), "pattern", "missing closing )"},
		{"a Perl-only construct is refused as RE2 refuses it", with(func(p *policy.Policy) { p.Pattern = `secret(?!_test)` }), "pattern", "invalid or unsupported Perl syntax"},
		{"an empty regex is refused", with(func(p *policy.Policy) { p.Pattern = "" }), "pattern", "needs a pattern"},
		{"a regex that matches empty text is refused", with(func(p *policy.Policy) { p.Pattern = "x*" }), "pattern", "would fire on every file"},
		{"an invalid glob is refused with glob's reason", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindPathGlob, "a/**b" }), "pattern", "** must be a whole path segment"},
		{"an empty glob is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindPathGlob, "" }), "pattern", "the pattern is empty"},
		{"a glob with a bad class is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindPathGlob, "a/[" }), "pattern", "syntax error in pattern"},
		{"a valid glob is valid", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindPathGlob, "vendor/**" }), "", ""},
		{"an empty dependency is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, " " }), "pattern", "needs a pattern"},
		{"a lone * dependency is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, "*" }), "pattern", "names no dependency"},
		{"a * before the end of a dependency is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, "@types/*/x" }), "pattern", "only a trailing * is supported"},
		{"a dependency with a space is refused", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, "left pad" }), "pattern", "contains a space"},
		{"an exact dependency is valid", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, "left-pad" }), "", ""},
		{"a prefix dependency is valid", with(func(p *policy.Policy) { p.Kind, p.Pattern = policy.KindDependency, "@types/*" }), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := policy.Validate(tc.p)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error about %s", tc.field)
			}
			e, ok := errs.As(err)
			if !ok || e.Kind != errs.Invalid || e.Field != tc.field {
				t.Errorf("error %#v: want errs.Invalid on field %q", err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not contain %q", err, tc.want)
			}
			if m := err.Error(); !strings.HasSuffix(m, ".") || strings.ToUpper(m[:1]) != m[:1] {
				t.Errorf("message %q is not a sentence", m)
			}
		})
	}
}

func TestTheDefaultSetValidates(t *testing.T) {
	ps := policy.SecretsInSource()
	if len(ps) != 7 {
		t.Errorf("%d policies, want 7", len(ps))
	}
	for i, p := range ps {
		if err := policy.Validate(p); err != nil {
			t.Errorf("policy %d: %v", i, err)
		}
		if p.Name != "Secrets in source" || p.Severity != protocol.SeverityCritical || p.Kind != policy.KindContentRegex || p.Action != policy.ActionViolation {
			t.Errorf("policy %d = %+v", i, p)
		}
	}
}

func TestCompileNamesThePolicyThatDoesNotValidate(t *testing.T) {
	ps := append(policy.SecretsInSource(), policy.Policy{ID: 42, Name: "Broken", Severity: protocol.SeverityLow,
		Kind: policy.KindContentRegex, Pattern: "a(b", Action: policy.ActionViolation})
	_, err := policy.Compile(ps)
	if err == nil || !strings.Contains(err.Error(), `policy 42 ("Broken")`) || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("Compile error = %v", err)
	}
	if _, ok := errs.As(err); !ok {
		t.Errorf("Compile error %v does not wrap the errs.Error", err)
	}
}

func TestFindingsAreOrderedByPolicyIDThenFileThenLine(t *testing.T) {
	ps := []policy.Policy{
		{ID: 3, Name: "Go files", Severity: protocol.SeverityLow, Kind: policy.KindPathGlob, Pattern: "**/*.go", Action: policy.ActionViolation},
		{ID: 1, Name: "TODO", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex, Pattern: `TODO|FIXME`, Action: policy.ActionViolation},
		{ID: 2, Name: "Deps", Severity: protocol.SeverityLow, Kind: policy.KindDependency, Pattern: "left-*", Action: policy.ActionViolation},
		{ID: 1, Name: "TODO again", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex, Pattern: `TODO`, Action: policy.ActionViolation},
	}
	files := []change.File{
		content("b.go", "package b", "// FIXME", "// TODO"),
		content("a.go", "// TODO"),
		content("c.txt", "none"),
	}
	deps := []string{"left-right", "left-pad"}
	want := []string{
		"1 TODO a.go:1", "1 TODO b.go:2", "1 TODO again a.go:1", "1 TODO again b.go:3",
		"2 Deps :0 left-pad", "2 Deps :0 left-right",
		"3 Go files a.go:0", "3 Go files b.go:0",
	}
	set := mustCompile(t, ps)
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		var fs []change.File
		for _, i := range order {
			fs = append(fs, files[i])
		}
		var got []string
		for _, f := range set.Evaluate(change.Change{Files: fs, Dependencies: deps}) {
			s := fmt.Sprintf("%d %s %s:%d", f.PolicyID, f.Policy, f.File, f.Line)
			if f.File == "" {
				s += " " + f.Match
			}
			got = append(got, s)
		}
		if !slices.Equal(got, want) {
			t.Errorf("files in order %v: findings\n%q\nwant\n%q", order, got, want)
		}
	}
}

func TestADiffsLineIsItsLineInTheNewFile(t *testing.T) {
	rx := []policy.Policy{{ID: 1, Name: "TODO", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex, Pattern: `TODO`, Action: policy.ActionViolation}}
	set := mustCompile(t, rx)
	for _, tc := range []struct {
		name string
		diff string
		want int
	}{
		{"an added line after context and removals counts context, not removals",
			"--- a/x.go\n+++ b/x.go\n@@ -1,4 +1,4 @@\n package x\n-// old\n-// old\n+// new\n+// TODO\n func f() {}\n", 3},
		{"the second hunk starts from its own header",
			"@@ -1,2 +1,2 @@\n a\n-b\n+c\n@@ -40,2 +41,3 @@\n x\n+y\n+// TODO\n z\n", 43},
		{"an added line that Text skips still takes a line in the new file",
			"@@ -5,1 +5,3 @@\n+++counter\n+// TODO\n ctx\n", 6},
		{"a diff without a hunk header gives the position among the added lines",
			"+one\n-gone\n+// TODO\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := set.Evaluate(change.Change{Files: []change.File{{Path: "x.go", Diff: tc.diff}}})
			if len(fs) != 1 || fs[0].Line != tc.want {
				t.Errorf("findings = %+v, want one on line %d", fs, tc.want)
			}
		})
	}
}

func TestASetIsSafeForConcurrentUse(t *testing.T) {
	set := mustCompile(t, policy.SecretsInSource())
	var files []change.File
	for i, k := range secretKinds() {
		files = append(files, content(fmt.Sprintf("f%02d.txt", i), "x", k.line))
	}
	c := change.Change{Files: files}
	want := set.Evaluate(c)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := set.Evaluate(c); !reflect.DeepEqual(got, want) {
					t.Error("a concurrent Evaluate differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestANilOrEmptySetFindsNothing(t *testing.T) {
	c := change.Change{Files: []change.File{content("a", "ID="+awsKeyID)}, Dependencies: []string{"left-pad"}}
	var nilSet *policy.Set
	if fs := nilSet.Evaluate(c); fs != nil {
		t.Errorf("nil set: %+v", fs)
	}
	if fs := mustCompile(t, nil).Evaluate(c); fs != nil {
		t.Errorf("empty set: %+v", fs)
	}
}

// TestThePackagesOwnSourceHoldsNoSecret runs the default set over this
// package's files: the policies, their documentation and these tests must
// not trip them, or a session that changes this package would be stopped.
func TestThePackagesOwnSourceHoldsNoSecret(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil || len(paths) < 4 {
		t.Fatalf("glob: %v %v", paths, err)
	}
	var files []change.File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, change.File{Path: p, Content: string(b)})
	}
	if fs := mustCompile(t, policy.SecretsInSource()).Evaluate(change.Change{Files: files}); len(fs) != 0 {
		t.Errorf("findings in the package's own source: %+v", fs)
	}
}

// TestThePrefilterNeverChangesWhatARegexFinds runs patterns of each search
// the prefilter picks (whole text, line by line, windows around a literal)
// over many generated texts of short lines, and compares the first match
// with regexp's over the whole text.
func TestThePrefilterNeverChangesWhatARegexFinds(t *testing.T) {
	patterns := []string{
		`\bTODO\b[^(]`, `(?:ab|c)[^q]{0,5}zz`, `x\s?y`, `a[^b]{0,3}a`, `\d{3}-\d{2}`, `(?m)^\d+-`,
		`TODO\b.x`, `(?i)ss[a-z]?k`, `(?i)asia`, `(?s)ab.*zz`, `(?m)^zz`, `^zz`, `zz$`, `(?m)zz$`, `\Bab`,
		`(?:TODO|FIXME)\(`, `y\n+x`, `[^a]zz`, `(?i)\bK\b`, `-1\b`,
		// Windows where the first match found is not the whole story: an
		// earlier or a preferred match runs on to a later literal.
		`(?:ab|c)[a-p\n]{0,5}zz`, `(?P<LONG>c[a-z\n ]{3,6}zz)|(?P<SHORT>[a-z]zz)`, `(?P<FIRST>b[ab\n]{0,4}x)|(?P<SECOND>[ab]x)`,
	}
	tokens := []string{"a", "b", "ab", "TODO", "(", "-", "1", "23", "\n", "\n", " ", "zz", "x", "y", "ſ", "\u212a", "ss", "ASIA", "K", "FIXME", "c"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, pattern := range patterns {
		set := mustCompile(t, []policy.Policy{{ID: 1, Name: "P", Severity: protocol.SeverityLow,
			Kind: policy.KindContentRegex, Pattern: pattern, Action: policy.ActionViolation}})
		re := regexp.MustCompile(pattern)
		found := 0
		for range 400 {
			var b strings.Builder
			for range r.IntN(120) {
				b.WriteString(tokens[r.IntN(len(tokens))])
			}
			text := b.String()
			// The line of the first match, and what names it: the first
			// named group that took part (the names are written as labels
			// read), or the redacted match.
			want := ""
			if loc := re.FindStringSubmatchIndex(text); loc != nil {
				name := policy.Redact(text[loc[0]:loc[1]])
				for g, n := range re.SubexpNames() {
					if n != "" && loc[2*g] >= 0 {
						name = n
						break
					}
				}
				want = fmt.Sprintf("line %d: %s", strings.Count(text[:loc[0]], "\n")+1, name)
				found++
			}
			got := ""
			if fs := set.Evaluate(change.Change{Files: []change.File{{Path: "f", Content: text}}}); len(fs) == 1 {
				got = fmt.Sprintf("line %d: %s", fs[0].Line, fs[0].Match)
			}
			if got != want {
				t.Fatalf("%q in %q: Evaluate says %q, regexp says %q", pattern, text, got, want)
			}
		}
		if found == 0 {
			t.Errorf("%q matched none of the texts: the comparison proves nothing", pattern)
		}
	}
}

// FuzzEvaluateAgreesWithRegexp checks the prefilter: a content_regex
// policy finds exactly what regexp finds on the file's text, at the same
// line, whatever literals the prefilter picked.
func FuzzEvaluateAgreesWithRegexp(f *testing.F) {
	for _, s := range [][2]string{
		{`(?i)password`, "x\nPAſſWORD = 1"},
		{`(?i)password`, "x\npassword"},
		{`(?i)key`, "\u212Aey"},
		{`(?i)Kelvin`, "\u212Aelvin"},
		{`(?i)é`, "É"},
		{`(?i)ǅx`, "ǆx"},
		{`^secret`, "x\nsecret"},
		{`(?m)^secret`, "x\nsecret"},
		{`\Asecret`, "x\nsecret"},
		{`(?s)BEGIN.*END`, "BEGIN\nx\nEND"},
		{`BEGIN[^!]*END`, "BEGIN\nx\nEND"},
		{`BEGIN\s*END`, "a\nBEGIN\n\nEND"},
		{`foo\nbar`, "foo\nbar"},
		{`ab+c`, "xabbbc"},
		{`a[bc]d|efg`, "..efg\nacd"},
		{`x{2,}y`, "xy\nxxxy"},
		{`\bAKIA[0-9A-Z]{16}\b`, "a\nAKIAABCDEFGHIJKLMNOP"},
		{`\Bbc`, "abc\nbc"},
		{`(foo|bar)?baz`, "qux\nbaz"},
		{`(?:ab|cd)(?:ef|gh)(?:ij|kl)(?:mn|op)(?:qr|st)(?:uv|wx)(?:yz|01)`, "x\ncdghklopstwx01"},
		{`(?i)aws_secret_access_key`, "a\nAWS_SECRET_ACCESS_KEY"},
		{`[a-z]+@[a-z]+\.com`, "mail me\nat ana@example.com"},
		{`\d{3}-\d{2}-\d{4}`, "ssn\n123-45-6789"},
		{`q$`, "q\nq"},
		{`(?m)q$`, "a\nq\nq"},
		{`\bTODO\b[^(]`, "TODO(x)\nx TODO\nTODO(y)"},
		{`(?:ab|c)[^q]{0,5}zz`, "zz\nab\n\nxzz c zz"},
		{`x\s?y`, "x\ny\nxy"},
		{`a[^b]{0,3}a`, "a\n\n\n\na\na"},
		{`\d{3}-\d{2}-\d{4}`, "tel 12-34\n1-\n123-45-6789"},
		{`(?m)^\d{2}-\d$`, "12-3x\n45-6"},
		{`foo\b.bar`, "foo\nbar foox.bar foo.bar"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		p := policy.Policy{ID: 1, Name: "P", Severity: protocol.SeverityLow, Kind: policy.KindContentRegex, Pattern: pattern, Action: policy.ActionViolation}
		if policy.Validate(p) != nil {
			return
		}
		set := mustCompile(t, []policy.Policy{p})
		fs := set.Evaluate(change.Change{Files: []change.File{{Path: "f", Content: text}}})
		loc := regexp.MustCompile(pattern).FindStringIndex(text)
		if loc == nil || text == "" || change.Binary(text) {
			if len(fs) != 0 {
				t.Fatalf("Evaluate found %+v; regexp finds nothing", fs)
			}
			return
		}
		line := strings.Count(text[:loc[0]], "\n") + 1
		if len(fs) != 1 || fs[0].Line != line {
			t.Fatalf("Evaluate found %+v; regexp finds a match on line %d", fs, line)
		}
	})
}

// FuzzPathGlobAgreesWithGlob checks the quick test Evaluate makes before
// glob.Match: a path_glob policy finds a path exactly when glob.Match does.
func FuzzPathGlobAgreesWithGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"vendor/**", "vendor"}, {"vendor/**", "vendor/x.go"}, {"vendor/**", "vendorx/y"}, {"vendor/**", "./vendor/x"},
		{"**/*.pem", "a/b.pem"}, {"**/*.pem", "b.pem"}, {"**/*.pem", "b.pem/x"}, {"a/", "a/"}, {"a/**/", "a/b/"},
		{"x/[]]y", "x/]y"}, {"x/[a]]", "x/a]"}, {`x/\*.go`, "x/*.go"}, {"*/c", "ab/c"}, {"**", ""}, {"a/?", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		p := policy.Policy{ID: 1, Name: "P", Severity: protocol.SeverityLow, Kind: policy.KindPathGlob, Pattern: pattern, Action: policy.ActionViolation}
		if policy.Validate(p) != nil {
			return
		}
		fs := mustCompile(t, []policy.Policy{p}).Evaluate(change.Change{Files: []change.File{{Path: path, Content: "x"}}})
		if want := glob.Match(pattern, path); (len(fs) == 1) != want {
			t.Fatalf("Evaluate found %+v; glob.Match(%q, %q) = %v", fs, pattern, path, want)
		}
	})
}
