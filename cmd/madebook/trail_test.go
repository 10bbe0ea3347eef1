package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
)

// busyTrail makes a database whose timeline and activity record hold a
// working day's rows, through the services: gates opened and resolved, the
// brake pulled and released, lifecycle events, admin actions. It returns
// the database's path (or URL).
func busyTrail(t *testing.T) string {
	t.Helper()
	store, path := testkit.MustOpenDB(t)
	ctx := context.Background()
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clock := start
	w := newAuditWorld(t, store, func() time.Time { clock = clock.Add(time.Second); return clock })
	admin := auth.Actor{UserID: w.lead.UserID, Email: "admin@example.com", Role: auth.Admin}
	for i := range 20 {
		d, err := w.gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: fmt.Sprintf("Gate %d", i),
			Question: "Drop the legacy billing table? <b>\"yes\"</b> & no\n", BlockedScope: []string{"db/migrations"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.gov.Decisions.Resolve(ctx, w.lead, d.Ref, "Keep it.", "Leave db/ alone: é ✓"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.gov.Sessions.Pause(ctx, w.lead, w.session, "lunch"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.gov.Sessions.Resume(ctx, w.lead, w.session); err != nil {
			t.Fatal(err)
		}
		if _, err := w.gov.Policies.Create(ctx, admin, governance.PolicyInput{Name: fmt.Sprintf("No eval %d", i), Severity: "high",
			Kind: "content_regex", Pattern: `eval\(`}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []governance.EventInput{{Name: "user.message.created"}, {Name: "IntentClassified", Payload: []byte(`{"intent":"chat"}`)},
		{Name: "reply.sent"}} {
		if _, err := w.gov.Lifecycle.Report(ctx, w.agent, w.session, e); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// exportLines is `audit export` of the database at path, with args.
func exportLines(t *testing.T, path string, args ...string) []string {
	t.Helper()
	out := mustCLI(t, "", append([]string{"audit", "export", "--db", path}, args...)...)
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("the export does not end in a newline: %q", out)
	}
	return strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
}

// verifyOut is `audit verify -` of lines, its stdout and its error.
func verifyOut(t *testing.T, lines []string, args ...string) (string, error) {
	t.Helper()
	text := strings.Join(lines, "")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return cli(t, noEnv, text, append([]string{"audit", "verify", "-"}, args...)...)
}

var lastHash = regexp.MustCompile(`(?m)^  (events|admin_activity) +(\d+) rows?, ids (\d+) to (\d+), (.*); last hash ([0-9a-f]{64})$`)

func TestAuditExportThenVerify(t *testing.T) {
	t.Parallel()
	path := busyTrail(t)
	lines := exportLines(t, path)
	var events, activity int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"chain":"events","id":`):
			events++
		case strings.HasPrefix(l, `{"chain":"admin_activity","id":`):
			activity++
		default:
			t.Fatalf("a line is not a row: %s", l)
		}
	}
	if events < 80 || activity < 20 {
		t.Fatalf("%d events and %d activity entries: not a busy day", events, activity)
	}

	t.Run("the export verifies, from the genesis, and says how many rows", func(t *testing.T) {
		out, err := verifyOut(t, lines)
		if err != nil {
			t.Fatalf("verify: %v\n%s", err, out)
		}
		if !strings.HasPrefix(out, fmt.Sprintf("verified %d rows of stdin: every hash and every link holds.\n", len(lines))) {
			t.Errorf("stdout:\n%s", out)
		}
		m := lastHash.FindAllStringSubmatch(out, -1)
		if len(m) != 2 || m[0][2] != fmt.Sprint(events) || m[0][5] != "from the genesis" || m[1][2] != fmt.Sprint(activity) {
			t.Errorf("tallies %q in\n%s", m, out)
		}
	})

	// Every way of editing the file is caught at the row edited.
	idOf := func(line string) string {
		return regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(line)[1]
	}
	edits := []struct {
		name  string
		line  int
		edit  func(string) string
		wants []string
	}{
		{"one byte of a resolution", -1, func(l string) string { return strings.Replace(l, "Keep it.", "Keep it!", 1) },
			[]string{"its hash does not match its content"}},
		{"one byte of an actor", 10, func(l string) string { return strings.Replace(l, `"actor":"`, `"actor":"x`, 1) },
			[]string{"its hash does not match its content"}},
		{"one digit of a hash", 25, func(l string) string {
			i := strings.Index(l, `"hash":"`) + len(`"hash":"`) + 7
			return l[:i] + string("10"[boolIndex(l[i] == '1')]) + l[i+1:]
		}, []string{"its hash does not match its content"}},
		{"one digit of a link", 30, func(l string) string {
			i := strings.Index(l, `"prev_hash":"`) + len(`"prev_hash":"`) + 3
			return l[:i] + string("10"[boolIndex(l[i] == '1')]) + l[i+1:]
		}, []string{"its hash does not match its content", "its prev_hash is not the hash of"}},
	}
	// The resolution's edit goes on the first line that holds it.
	for i, l := range lines {
		if strings.Contains(l, "Keep it.") {
			edits[0].line = i
			break
		}
	}
	for _, e := range edits {
		t.Run("one changed byte, "+e.name+", fails naming the row", func(t *testing.T) {
			changed := append([]string{}, lines...)
			changed[e.line] = e.edit(lines[e.line])
			if changed[e.line] == lines[e.line] {
				t.Fatalf("the edit changed nothing on line %d: %s", e.line+1, lines[e.line])
			}
			chainName := regexp.MustCompile(`"chain":"(\w+)"`).FindStringSubmatch(lines[e.line])[1]
			out, err := verifyOut(t, changed)
			var x exitError
			if !errors.As(err, &x) || x.code != 1 {
				t.Fatalf("verify: %v (stdout %q), want exit 1", err, out)
			}
			code, msg := outcome(err)
			want := fmt.Sprintf("line %d: %s row %s does not verify", e.line+1, chainName, idOf(lines[e.line]))
			if code != 1 || !strings.Contains(msg, want) || !strings.Contains(msg, fmt.Sprintf("(%d rows before it verified)", e.line)) {
				t.Errorf("exit %d: %s\nwant it to say %q", code, msg, want)
			}
			for _, w := range e.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("%s\nwant it to say %q", msg, w)
				}
			}
			if out != "" {
				t.Errorf("a failed verify printed %q", out)
			}
		})
	}
	t.Run("a removed row fails naming the row after it", func(t *testing.T) {
		changed := append(append([]string{}, lines[:12]...), lines[13:]...)
		_, err := verifyOut(t, changed)
		_, msg := outcome(err)
		if !strings.Contains(msg, fmt.Sprintf("line 13: events row %s does not verify: its prev_hash is not the hash of events row %s", idOf(lines[13]), idOf(lines[11]))) {
			t.Errorf("%s", msg)
		}
	})

	t.Run("an export --since starts mid-chain and verifies, saying so", func(t *testing.T) {
		part := exportLines(t, path, "--since", "2026-11-29T09:00:30Z")
		if len(part) >= len(lines) || len(part) == 0 {
			t.Fatalf("%d lines since 09:00:30, of %d", len(part), len(lines))
		}
		out, err := verifyOut(t, part)
		if err != nil {
			t.Fatalf("verify: %v\n%s", err, out)
		}
		m := lastHash.FindAllStringSubmatch(out, -1)
		if len(m) == 0 || !strings.HasPrefix(m[0][5], "mid-chain: row "+m[0][3]+"'s prev_hash ") || !strings.HasSuffix(m[0][5], " taken as given") {
			t.Errorf("stdout:\n%s", out)
		}
		if !strings.Contains(part[0], `"at":"2026-11-29T09:00:3`) {
			t.Errorf("the first line is not the first row at or after 09:00:30: %s", part[0])
		}
	})

	t.Run("--out writes the file and a summary; the last hashes anchor a later verify", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "trail.jsonl")
		out := mustCLI(t, "", "audit", "export", "--db", path, "--out", file)
		b, err := os.ReadFile(file)
		if err != nil || string(b) != strings.Join(lines, "")+"\n" {
			t.Fatalf("the file differs from the export on stdout (%v)", err)
		}
		m := lastHash.FindAllStringSubmatch(out, -1)
		if !strings.HasPrefix(out, fmt.Sprintf("exported %d rows to %s", len(lines), file)) || len(m) != 2 {
			t.Fatalf("summary:\n%s", out)
		}
		verified := mustCLI(t, "", "audit", "verify", file, "--anchor", m[0][6], "--anchor", strings.ToUpper(m[1][6]))
		if !strings.Contains(verified, "and every anchor is a row's hash") {
			t.Errorf("verify with anchors:\n%s", verified)
		}
		// A whole chain rewritten holds together; the kept hash is gone.
		_, err = cli(t, noEnv, "", "audit", "verify", file, "--anchor", strings.Repeat("ab", 32))
		if _, msg := outcome(err); !strings.Contains(msg, "no row has the hash "+strings.Repeat("ab", 32)) {
			t.Errorf("an anchor no row has: %v", err)
		}
	})

	t.Run("the audit reports still run beside export and verify", func(t *testing.T) {
		if out, err := cli(t, noEnv, "", "audit", "unanswerable-asks", "--db", path); err != nil {
			t.Errorf("audit unanswerable-asks: %v\n%s", err, out)
		}
	})
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAuditExportAndVerifyRefuseMistakes(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "", "migrate", "--db", path)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "export", "--db", path, "--since", "yesterday"}, `--since "yesterday" is not a time`},
		{[]string{"audit", "export", "--db", path, "extra"}, `unexpected argument "extra"`},
		{[]string{"audit", "verify"}, "audit verify needs one FILE"},
		{[]string{"audit", "verify", "a", "b"}, "audit verify needs one FILE"},
		{[]string{"audit", "verify", "-", "--anchor", "abc"}, "an anchor is a row's hash: 64 hex digits"},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			_, err := cli(t, noEnv, "", c.args...)
			var u usageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want a usage error saying %q", err, c.want)
			}
		})
	}
	t.Run("a file that is not an export fails naming its line", func(t *testing.T) {
		_, err := cli(t, noEnv, "\n{\"chain\":\"events\"}\n", "audit", "verify", "-")
		if code, msg := outcome(err); code != 1 || !strings.Contains(msg, "stdin: line 2 is not a row of the audit chain") {
			t.Errorf("exit %d: %s", code, msg)
		}
	})
	t.Run("a database that does not exist is an error, not a usage mistake", func(t *testing.T) {
		none := filepath.Join(t.TempDir(), "none.db")
		_, err := cli(t, noEnv, "", "audit", "export", "--db", none)
		if code, msg := outcome(err); code != 1 || msg != "madebook audit export: no database at "+none+
			": give its path with --db (or MADEBOOK_DB); `madebook migrate --db PATH` creates one" {
			t.Errorf("exit %d: %q", code, msg)
		}
		if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("export created the database (%v)", err)
		}
	})
	t.Run("a file that does not exist is an error", func(t *testing.T) {
		_, err := cli(t, noEnv, "", "audit", "verify", filepath.Join(t.TempDir(), "none.jsonl"))
		if code, _ := outcome(err); code != 1 {
			t.Errorf("exit %d (%v)", code, err)
		}
	})
	t.Run("an empty database exports nothing, which verifies", func(t *testing.T) {
		if out := mustCLI(t, "", "audit", "export", "--db", path); out != "" {
			t.Errorf("export of an empty record: %q", out)
		}
		if out := mustCLI(t, "", "audit", "verify", "-"); !strings.HasPrefix(out, "verified 0 rows of stdin") {
			t.Errorf("verify of nothing: %q", out)
		}
	})
}
