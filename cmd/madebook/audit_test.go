package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

var auditFormats = []string{"table", "json", "csv"}

// auditJSON is what --format json prints.
type auditJSON struct {
	Reports []struct {
		Report string           `json:"report"`
		Rows   []map[string]any `json:"rows"`
	} `json:"reports"`
}

func TestAuditPassesOnACleanDatabase(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "", "migrate", "--db", path)
	for _, format := range auditFormats {
		t.Run("--format "+format+" exits 0", func(t *testing.T) {
			out, err := auditEvery(t, path, format, map[string]int{"unanswerable-asks": 0, "premature-side-effects": 0,
				"undelivered-resolutions": 0, "stale-gates": 0, "blocked-changes": 0, "unacknowledged-deliveries": 0, "ungoverned-tool-calls": 0})
			if err != nil {
				t.Fatalf("audit: %v\n%s", err, out)
			}
		})
	}
	t.Run("the table says every report passes", func(t *testing.T) {
		out := mustCLI(t, "", "audit", "--db", path)
		if strings.Count(out, "0 rows — passing") != 7 || !strings.HasSuffix(out, "7 of 7 reports pass.\n") {
			t.Errorf("table:\n%s", out)
		}
	})
}

func TestAuditExits1WhenAReportHasRows(t *testing.T) {
	t.Parallel()
	// The rows are made through the services, on the database file the
	// command then reads: memory_store ran before the run asked whether to
	// save, and a gate has waited two days. The command reads the real
	// clock, so the services run two days behind it.
	store, path := testkit.MustOpenDB(t)
	ctx := context.Background()
	w := newAuditWorld(t, store, func() time.Time { return time.Now().Add(-48 * time.Hour) })
	agent, session, led := w.agent, w.session, ledger.NewService(w.gov.Transactor(), w.now, w.gov.Briefs)
	if _, err := w.gov.Decisions.Open(ctx, agent, session, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}); err != nil {
		t.Fatal(err)
	}
	run, err := led.StartRun(ctx, agent, session, "graph-ask-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := led.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"}); err != nil {
		t.Fatal(err)
	}
	if _, err := led.RecordAsk(ctx, agent, run.ID, ledger.AskInput{Prompt: "save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"unanswerable-asks": 0, "premature-side-effects": 1, "undelivered-resolutions": 0, "stale-gates": 1, "blocked-changes": 0,
		"unacknowledged-deliveries": 0, "ungoverned-tool-calls": 0}

	for _, format := range auditFormats {
		t.Run("--format "+format+" exits 1", func(t *testing.T) {
			out, err := auditEvery(t, path, format, want)
			var failed auditFailed
			if !errors.As(err, &failed) {
				t.Fatalf("audit returned %v, want the exit-1 auditFailed\n%s", err, out)
			}
			if strings.Join(failed.reports, " ") != "premature-side-effects stale-gates" {
				t.Errorf("failing reports %v", failed.reports)
			}
			var u usageError
			if errors.As(err, &u) {
				t.Error("a failing audit is a usage error (exit 2)")
			}
			if !strings.Contains(out, "memory_store") || !strings.Contains(out, "DEC-001") {
				t.Errorf("the rows are not printed:\n%s", out)
			}
		})
	}

	t.Run("the table counts rows and sums up", func(t *testing.T) {
		out, _ := cli(t, noEnv, "", "audit", "--db", path)
		for _, s := range []string{"premature-side-effects — Premature side effects\nrun_id", "\n1 row\n",
			"unanswerable-asks — Unanswerable asks\n0 rows — passing\n", "2 of 7 reports found rows: premature-side-effects, stale-gates.\n"} {
			if !strings.Contains(out, s) {
				t.Errorf("table lacks %q:\n%s", s, out)
			}
		}
	})

	t.Run("named reports, before or after the flags, run alone", func(t *testing.T) {
		out, err := cli(t, noEnv, "", "audit", "unanswerable-asks", "--db", path, "--format", "json", "undelivered-resolutions")
		if err != nil {
			t.Fatalf("passing reports: %v\n%s", err, out)
		}
		checkAuditOutput(t, "json", out, map[string]int{"unanswerable-asks": 0, "undelivered-resolutions": 0})
		var got auditJSON
		_ = json.Unmarshal([]byte(out), &got)
		if len(got.Reports) != 2 || got.Reports[0].Report != "unanswerable-asks" || got.Reports[1].Report != "undelivered-resolutions" {
			t.Errorf("reports %+v, want the two named, in order", got.Reports)
		}
		if _, err := cli(t, noEnv, "", "audit", "--db", path, "premature-side-effects"); !errors.As(err, new(auditFailed)) {
			t.Errorf("premature-side-effects alone: %v, want auditFailed", err)
		}
	})

	t.Run("--format csv prints the one report --report picks, a valid CSV", func(t *testing.T) {
		for _, args := range [][]string{
			{"--report", "premature-side-effects"},
			{"premature-side-effects"}, // one report named is the same
		} {
			out, err := cli(t, noEnv, "", append([]string{"audit", "--db", path, "--format", "csv"}, args...)...)
			if !errors.As(err, new(auditFailed)) {
				t.Fatalf("%v: %v, want auditFailed (the report has a row)\n%s", args, err, out)
			}
			checkAuditOutput(t, "csv", out, map[string]int{"premature-side-effects": 1})
			if !strings.Contains(out, "memory_store") {
				t.Errorf("%v: the row is not in the CSV:\n%s", args, out)
			}
		}
		out, err := cli(t, noEnv, "", "audit", "--db", path, "--format", "csv", "--report", "unanswerable-asks")
		if err != nil {
			t.Fatalf("a passing report: %v", err)
		}
		checkAuditOutput(t, "csv", out, map[string]int{"unanswerable-asks": 0})
	})
	t.Run("--out DIR --report writes that report's file alone", func(t *testing.T) {
		dir := t.TempDir()
		r, err := auditStdio(t, "audit", "--db", path, "--format", "csv", "--out", dir, "--report", "stale-gates")
		if !errors.As(err, new(auditFailed)) {
			t.Fatalf("%v, want auditFailed", err)
		}
		if out := checkAuditDir(t, dir, r, map[string]int{"stale-gates": 1}); !strings.Contains(out, "DEC-001") {
			t.Errorf("the gate is not in the file:\n%s", out)
		}
	})
	t.Run("--report runs one report in the other formats too", func(t *testing.T) {
		out, err := cli(t, noEnv, "", "audit", "--db", path, "--format", "json", "--report", "stale-gates")
		if !errors.As(err, new(auditFailed)) {
			t.Fatalf("%v, want auditFailed", err)
		}
		checkAuditOutput(t, "json", out, map[string]int{"stale-gates": 1})
	})
	t.Run("an --out DIR that cannot be made is one line, exit 1", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := cli(t, noEnv, "", "audit", "--db", path, "--format", "csv", "--out", file)
		if code, msg := outcome(err); code != 1 || !strings.HasPrefix(msg, "madebook audit: --out: ") || strings.Contains(msg, "\n") {
			t.Errorf("exit %d: %q", code, msg)
		}
	})

	t.Run("--older-than moves the stale-gates line", func(t *testing.T) {
		if out, err := cli(t, noEnv, "", "audit", "stale-gates", "--db", path, "--older-than", "3d"); err != nil {
			t.Errorf("a two-day-old gate is stale at 3d: %v\n%s", err, out)
		}
		if _, err := cli(t, noEnv, "", "audit", "stale-gates", "--db", path, "--older-than", "36h"); !errors.As(err, new(auditFailed)) {
			t.Errorf("a two-day-old gate is not stale at 36h: %v", err)
		}
	})
}

func TestAuditCommandLineMistakesAreUsageErrors(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	mustCLI(t, "", "migrate", "--db", path)
	t.Run("csv on stdout without --report says both ways", func(t *testing.T) {
		for _, args := range [][]string{
			{"audit", "--db", path, "--format", "csv"},
			{"audit", "stale-gates", "blocked-changes", "--db", path, "--format", "csv"},
		} {
			out, err := cli(t, noEnv, "", args...)
			var u usageError
			if !errors.As(err, &u) || !strings.Contains(u.Msg, "--report NAME") || !strings.Contains(u.Msg, "--out DIR") ||
				!strings.Contains(u.Msg, "stale-gates") || out != "" {
				t.Errorf("%v: %v, stdout %q; want a usage error naming --report and --out", args, err, out)
			}
		}
	})
	for _, args := range [][]string{
		{"audit", "--db", path, "--report", "everything"},
		{"audit", "stale-gates", "--report", "blocked-changes", "--db", path},
		{"audit", "--db", path, "--out", t.TempDir()},
		{"audit", "--db", path, "--format", "json", "--out", t.TempDir()},
		{"audit", "everything", "--db", path},
		{"audit", "stale-gates", "nope", "--db", path},
		{"audit", "--db", path, "--format", "xml"},
		{"audit", "--db", path, "--older-than", "soon"},
		{"audit", "--db", path, "--older-than", "-1h"},
		{"audit", "--db", path, "--delivery-lease", "soon"},
		{"audit", "--db", path, "--delivery-lease", "0"},
		{"audit", "--db", path, "--nope"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := cli(t, noEnv, "", args...)
			var u usageError
			if !errors.As(err, &u) {
				t.Fatalf("error %v, want a usage error (exit 2)", err)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
}

// auditEvery runs every report on the database at path in the format,
// checks the output holds want's reports and rows (checkAuditOutput), and
// returns it and the command's error. For csv, which holds one report, it
// writes them with --out and returns their files' contents, one after
// another.
func auditEvery(t *testing.T, path, format string, want map[string]int) (string, error) {
	t.Helper()
	if format != "csv" {
		out, err := cli(t, noEnv, "", "audit", "--db", path, "--format", format)
		checkAuditOutput(t, format, out, want)
		return out, err
	}
	dir := filepath.Join(t.TempDir(), "reports")
	r, err := auditStdio(t, "audit", "--db", path, "--format", "csv", "--out", dir)
	return checkAuditDir(t, dir, r, want), err
}

// auditStdio runs one command in process with stderr kept.
func auditStdio(t *testing.T, args ...string) (exited, error) {
	t.Helper()
	var stdout, stderr strings.Builder
	err := runStdio(t.Context(), append([]string{"madebook"}, args...),
		stdio{getenv: noEnv, stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
	return exited{stdout: stdout.String(), stderr: stderr.String()}, err
}

// checkAuditDir checks that audit --out dir wrote exactly want's reports,
// one valid CSV file each (dir/NAME.csv) with want's row count, said so
// on stderr one line a file, and printed nothing on stdout. It returns
// the files' contents, one after another.
func checkAuditDir(t *testing.T, dir string, r exited, want map[string]int) string {
	t.Helper()
	if r.stdout != "" {
		t.Errorf("audit --out printed %q on stdout", r.stdout)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var all strings.Builder
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".csv")
		if !ok {
			t.Errorf("audit --out wrote %s, not a NAME.csv", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = csvRows(t, name, string(b))
		all.Write(b)
		line := fmt.Sprintf("madebook audit: wrote %s (%s)\n", filepath.Join(dir, e.Name()), rowCount(got[name]))
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr does not say %q:\n%s", line, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "\n"); n != len(entries) {
		t.Errorf("stderr has %d lines for %d files:\n%s", n, len(entries), r.stderr)
	}
	compareAudit(t, got, want, all.String())
	return all.String()
}

// csvRows parses out as one CSV (encoding/csv: every record as long as
// the header) and returns its rows, the header not counted.
func csvRows(t *testing.T, name, out string) int {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV of %s is not one valid CSV with a header: %v\n%s", name, err, out)
	}
	if strings.HasPrefix(recs[0][0], "#") {
		t.Errorf("CSV of %s starts with a comment line: %q", name, recs[0])
	}
	return len(recs) - 1
}

// compareAudit checks the reports found hold want's row counts, and no
// other report is there.
func compareAudit(t *testing.T, got, want map[string]int, out string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("reports %v, want %v\n%s", got, want, out)
	}
	for name, n := range want {
		if c, ok := got[name]; !ok || c != n {
			t.Errorf("%s: %d rows (listed: %t), want %d\n%s", name, c, ok, n, out)
		}
	}
}

// checkAuditOutput parses out in the format and checks it holds exactly
// the reports of want, in order, with want's row counts. A CSV holds one
// report, want's only one.
func checkAuditOutput(t *testing.T, format, out string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	var order []string
	switch format {
	case "json":
		var v auditJSON
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		for _, r := range v.Reports {
			if r.Rows == nil {
				t.Errorf("%s: rows is null, want a list", r.Report)
			}
			got[r.Report] = len(r.Rows)
			order = append(order, r.Report)
		}
	case "csv":
		if len(want) != 1 {
			t.Fatalf("a CSV on stdout holds one report, not the %d of %v", len(want), want)
		}
		for name := range want {
			got[name] = csvRows(t, name, out)
			order = append(order, name)
		}
	default:
		for _, block := range strings.Split(out, "\n\n") {
			lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
			name, _, ok := strings.Cut(lines[0], " — ")
			if !ok {
				continue // the summary line
			}
			last := lines[len(lines)-1]
			switch {
			case last == "0 rows — passing":
				got[name] = 0
			case last == "1 row":
				got[name] = 1
			default:
				var n int
				if _, err := fmt.Sscanf(last, "%d rows", &n); err != nil {
					t.Fatalf("report %s ends %q", name, last)
				}
				got[name] = n
			}
			if got[name] > 0 && len(lines) != got[name]+3 {
				t.Errorf("report %s: %d lines for %d rows:\n%s", name, len(lines), got[name], block)
			}
			order = append(order, name)
		}
	}
	compareAudit(t, got, want, out)
	if len(want) == 4 && strings.Join(order, " ") != "unanswerable-asks premature-side-effects undelivered-resolutions stale-gates" {
		t.Errorf("report order %v", order)
	}
}

// auditWorld is a database's services on a clock, with a lead (and the
// lead's token), an agent and a session of the agent on mission "m".
type auditWorld struct {
	now            func() time.Time
	gov            *governance.Services
	lead, agent    auth.Actor
	token, session string
}

func newAuditWorld(t *testing.T, store *db.Store, now func() time.Time) auditWorld {
	t.Helper()
	ctx := context.Background()
	w := auditWorld{now: now, gov: governance.New(store, now, governance.Options{})}
	authSvc := auth.NewService(store, now).WithPasswordCost(bcrypt.MinCost)
	u, err := authSvc.AddUser(ctx, testkit.Operator, "lead@example.com", "password-123", auth.Lead)
	if err != nil {
		t.Fatal(err)
	}
	w.lead = auth.Actor{UserID: u.ID, Email: u.Email, Role: u.Role}
	if w.token, err = authSvc.CreateToken(ctx, testkit.Operator, u.Email); err != nil {
		t.Fatal(err)
	}
	key, err := authSvc.CreateKey(ctx, testkit.Operator, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if w.agent, err = authSvc.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := w.gov.Missions.Create(ctx, w.lead, governance.MissionInput{Slug: "m", Title: "M", Text: "Do it."}); err != nil {
		t.Fatal(err)
	}
	s, err := w.gov.Sessions.Create(ctx, w.agent, governance.SessionInput{Mission: "m", Title: "work"})
	if err != nil {
		t.Fatal(err)
	}
	w.session = s.ID
	return w
}

// resolvedAgo makes a database whose one gate a lead resolved ago (by the
// real clock) and no brief has delivered, and returns its path and the
// lead's token.
func resolvedAgo(t *testing.T, ago time.Duration) (path, token string) {
	t.Helper()
	store, path := testkit.MustOpenDB(t)
	ctx := context.Background()
	w := newAuditWorld(t, store, func() time.Time { return time.Now().Add(-ago) })
	d, err := w.gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Schema", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.gov.Decisions.Resolve(ctx, w.lead, d.Ref, "Keep it.", "Archive instead."); err != nil {
		t.Fatal(err)
	}
	return path, w.token
}

func TestAuditMinAge(t *testing.T) {
	t.Parallel()
	path, token := resolvedAgo(t, 2*time.Minute)

	t.Run("a gate resolved two minutes ago is in flight: the audit passes", func(t *testing.T) {
		if out, err := cli(t, noEnv, "", "audit", "--db", path); err != nil {
			t.Fatalf("audit: %v\n%s", err, out)
		}
	})
	t.Run("--min-age 1m lists it", func(t *testing.T) {
		out, err := cli(t, noEnv, "", "audit", "undelivered-resolutions", "--min-age", "1m", "--db", path, "--format", "json")
		if !errors.As(err, new(auditFailed)) {
			t.Fatalf("audit --min-age 1m: %v, want auditFailed\n%s", err, out)
		}
		checkAuditOutput(t, "json", out, map[string]int{"undelivered-resolutions": 1})
	})
	t.Run("a mistaken --min-age is a usage error", func(t *testing.T) {
		for _, bad := range []string{"soon", "-1m", "0", "10"} {
			out, err := cli(t, noEnv, "", "audit", "--db", path, "--min-age", bad)
			var u usageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "--min-age") || out != "" {
				t.Errorf("--min-age %s: %v, stdout %q; want a usage error naming --min-age", bad, err, out)
			}
		}
	})
	t.Run("the API takes ?min_age", func(t *testing.T) {
		s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
		rows := func(query string) int {
			t.Helper()
			got, _ := s.req(http.StatusOK, http.MethodGet, "/api/v1/audit/undelivered-resolutions"+query, token, nil)["rows"].([]any)
			return len(got)
		}
		if n := rows(""); n != 0 {
			t.Errorf("default min age: %d rows, want 0", n)
		}
		if n := rows("?min_age=10m"); n != 0 {
			t.Errorf("min_age=10m: %d rows, want 0", n)
		}
		if n := rows("?min_age=1m"); n != 1 {
			t.Errorf("min_age=1m: %d rows, want 1", n)
		}
		for _, bad := range []string{"soon", "-1m", "0"} {
			e, _ := s.req(http.StatusUnprocessableEntity, http.MethodGet, "/api/v1/audit/undelivered-resolutions?min_age="+bad, token, nil)["error"].(map[string]any)
			if e["code"] != "invalid_min_age" {
				t.Errorf("min_age=%s: %v, want invalid_min_age", bad, e)
			}
		}
		httpClient.CloseIdleConnections()
	})
}

// deliveredAgo makes a database whose one gate a lead resolved and a
// brief delivered ago (by the real clock), never acknowledged, and returns
// its path and the lead's token.
func deliveredAgo(t *testing.T, ago time.Duration) (path, token string) {
	t.Helper()
	store, path := testkit.MustOpenDB(t)
	ctx := context.Background()
	w := newAuditWorld(t, store, func() time.Time { return time.Now().Add(-ago) })
	d, err := w.gov.Decisions.Open(ctx, w.agent, w.session, governance.DecisionInput{Title: "Schema", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.gov.Decisions.Resolve(ctx, w.lead, d.Ref, "Keep it.", "Archive instead."); err != nil {
		t.Fatal(err)
	}
	if _, err := w.gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session}); err != nil {
		t.Fatal(err)
	}
	return path, w.token
}

func TestAuditUnacknowledgedDeliveriesUseTheServersLease(t *testing.T) {
	t.Parallel()
	path, token := deliveredAgo(t, 5*time.Minute)
	passes := func(getenv func(string) string, args ...string) bool {
		t.Helper()
		out, err := cli(t, getenv, "", append([]string{"audit", "unacknowledged-deliveries", "--db", path, "--format", "json"}, args...)...)
		if err == nil {
			checkAuditOutput(t, "json", out, map[string]int{"unacknowledged-deliveries": 0})
			return true
		}
		if !errors.As(err, new(auditFailed)) {
			t.Fatalf("audit %v: %v\n%s", args, err, out)
		}
		checkAuditOutput(t, "json", out, map[string]int{"unacknowledged-deliveries": 1})
		return false
	}
	t.Run("a delivery five minutes unacknowledged is past the default 2m lease", func(t *testing.T) {
		if passes(noEnv) {
			t.Error("passes with the default lease")
		}
	})
	t.Run("--delivery-lease 10m and MADEBOOK_DELIVERY_LEASE=10m keep it in its lease", func(t *testing.T) {
		if !passes(noEnv, "--delivery-lease", "10m") {
			t.Error("listed with --delivery-lease 10m")
		}
		if !passes(envOf(map[string]string{"MADEBOOK_DELIVERY_LEASE": "10m"})) {
			t.Error("listed with MADEBOOK_DELIVERY_LEASE=10m")
		}
	})
	t.Run("the API applies serve's --delivery-lease", func(t *testing.T) {
		for _, tc := range []struct {
			lease string
			rows  int
		}{{"2m", 1}, {"10m", 0}} {
			s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--delivery-lease", tc.lease)
			got, _ := s.req(http.StatusOK, http.MethodGet, "/api/v1/audit/unacknowledged-deliveries", token, nil)["rows"].([]any)
			if len(got) != tc.rows {
				t.Errorf("serve --delivery-lease %s: %d rows, want %d", tc.lease, len(got), tc.rows)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
		}
		httpClient.CloseIdleConnections()
	})
}

func TestAuditReportsCorruptDataAndExits2(t *testing.T) {
	t.Parallel()
	path, _ := resolvedAgo(t, time.Hour)
	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Writer().Exec(`UPDATE decisions SET resolved_at = '2020-01-01 00:00:00' WHERE ref = 'DEC-001'`); err != nil {
		t.Fatal(err)
	}
	store.Close()

	out, err := cli(t, noEnv, "", "audit", "--db", path)
	var e exitError
	if !errors.As(err, &e) || e.code != 2 {
		t.Fatalf("audit on a corrupt row: %v (%T), want an exit-2 error", err, err)
	}
	for _, want := range []string{"undelivered-resolutions", "decisions", "DEC-001", "resolved_at", "2020-01-01 00:00:00"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if out != "" {
		t.Errorf("printed %q", out)
	}

	t.Run("the binary prints one line on stderr and exits 2", func(t *testing.T) {
		cmd := exec.Command(buildMadebook(t), "audit", "--db", path)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Fatalf("exit %v, want 2; stderr %q", err, stderr.String())
		}
		if lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); len(lines) != 1 ||
			!strings.HasPrefix(lines[0], "madebook audit: ") || !strings.Contains(lines[0], "DEC-001") {
			t.Errorf("stderr %q, want one line naming DEC-001", stderr.String())
		}
		if strings.Contains(stderr.String(), "goroutine") || stdout.Len() > 0 {
			t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	})
}
