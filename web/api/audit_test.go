package api_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/webtest"
)

// auditRows sets up one row for premature-side-effects (memory_store ran,
// then the run asked whether to save) and one for stale-gates (a gate open
// for 30 hours), and returns the session.
func auditRows(a *webtest.API) string {
	a.T.Helper()
	ctx := context.Background()
	id := a.Session(false)
	if _, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}); err != nil {
		a.T.Fatal(err)
	}
	a.Kit.Clock.Advance(30 * time.Hour)
	r, err := a.Kit.Ledger.StartRun(ctx, a.Agent, id, "graph-ask-demo", "")
	if err != nil {
		a.T.Fatal(err)
	}
	if _, err := a.Kit.Ledger.RecordToolCall(ctx, a.Agent, r.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"}); err != nil {
		a.T.Fatal(err)
	}
	if _, err := a.Kit.Ledger.RecordAsk(ctx, a.Agent, r.ID, ledger.AskInput{Prompt: "save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}}); err != nil {
		a.T.Fatal(err)
	}
	return id
}

type auditBody struct {
	Report string           `json:"report"`
	Rows   []map[string]any `json:"rows"`
}

func audit(a *webtest.API, path, token string) auditBody {
	a.T.Helper()
	r := a.Do(http.MethodGet, path, token, nil)
	if r.Status != http.StatusOK {
		a.T.Fatalf("GET %s: %d %s", path, r.Status, webtest.Short(r.Body))
	}
	webtest.CheckJSONContentType(a.T, r)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &env); err != nil || len(env) != 2 || env["report"] == nil || env["rows"] == nil {
		a.T.Fatalf("GET %s: body must be {\"report\",\"rows\"}: %s", path, r.Body)
	}
	var b auditBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		a.T.Fatal(err)
	}
	if b.Rows == nil {
		a.T.Fatalf("GET %s: rows is null: %s", path, r.Body)
	}
	return b
}

var rfc3339UTC = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)

func TestAuditAPI(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)

	t.Run("every report passes on a fresh workspace", func(t *testing.T) {
		a.T = t
		for _, name := range []string{"unanswerable-asks", "premature-side-effects", "undelivered-resolutions", "stale-gates"} {
			b := audit(a, "/api/v1/audit/"+name, a.ViewerTok)
			if b.Report != name || len(b.Rows) != 0 {
				t.Errorf("%s: %+v, want no rows", name, b)
			}
		}
	})

	session := auditRows(a)

	t.Run("a premature side effect is a row with snake_case keys and RFC 3339 UTC times", func(t *testing.T) {
		a.T = t
		for _, tok := range []string{a.ViewerTok, a.LeadTok, a.AdminTok} {
			b := audit(a, "/api/v1/audit/premature-side-effects", tok)
			if len(b.Rows) != 1 {
				t.Fatalf("rows %v, want 1", b.Rows)
			}
			row := b.Rows[0]
			for _, k := range []string{"run_id", "session_id", "tool_call_id", "server", "tool", "started_at", "ask_id", "answered_at"} {
				if _, ok := row[k]; !ok {
					t.Errorf("row lacks %s: %v", k, row)
				}
			}
			for k := range row {
				if !webtest.SnakeCase.MatchString(k) {
					t.Errorf("key %q is not snake_case", k)
				}
			}
			if row["session_id"] != session || row["tool"] != "memory_store" || row["answered_at"] != nil {
				t.Errorf("row %v", row)
			}
			if s, _ := row["started_at"].(string); !rfc3339UTC.MatchString(s) {
				t.Errorf("started_at %q is not RFC 3339 UTC", s)
			}
		}
	})

	t.Run("stale-gates takes ?older_than", func(t *testing.T) {
		a.T = t
		b := audit(a, "/api/v1/audit/stale-gates", a.ViewerTok)
		if len(b.Rows) != 1 || b.Rows[0]["ref"] != "DEC-001" || b.Rows[0]["age"] != "30h" || b.Rows[0]["age_seconds"] != float64(30*3600) {
			t.Errorf("default 24h: %v", b.Rows)
		}
		if s, _ := b.Rows[0]["opened_at"].(string); !rfc3339UTC.MatchString(s) {
			t.Errorf("opened_at %q is not RFC 3339 UTC", s)
		}
		if b := audit(a, "/api/v1/audit/stale-gates?older_than=36h", a.ViewerTok); len(b.Rows) != 0 {
			t.Errorf("older than 36h: %v", b.Rows)
		}
		if b := audit(a, "/api/v1/audit/stale-gates?older_than=1d", a.ViewerTok); len(b.Rows) != 1 {
			t.Errorf("older than 1d: %v", b.Rows)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		a.T = t
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/audit/everything", a.ViewerTok, nil), http.StatusNotFound, "unknown_report")
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/audit/everything?older_than=soon", a.ViewerTok, nil), http.StatusNotFound, "unknown_report")
		for _, bad := range []string{"soon", "-1h", "0", "36"} {
			webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/audit/stale-gates?older_than="+bad, a.ViewerTok, nil),
				http.StatusUnprocessableEntity, "invalid_older_than")
		}
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/audit/stale-gates", a.AgentKey, nil), http.StatusForbidden, "forbidden")
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/audit/stale-gates", "", nil), http.StatusUnauthorized, "")
	})
	a.T = t
}

func TestAuditConsole(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	session := auditRows(a)
	b := webtest.ConsoleAs(t, a.Srv.URL, a.Viewer.Email)

	t.Run("the audit page lists the four reports with their counts", func(t *testing.T) {
		res, body := b.Get("/audit")
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /audit: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		for name, count := range map[string]string{"unanswerable-asks": "0", "premature-side-effects": "1",
			"undelivered-resolutions": "0", "stale-gates": "1"} {
			if !strings.Contains(body, `data-report="`+name+`" data-count="`+count+`"`) {
				t.Errorf("%s: no row counting %s", name, count)
			}
			if !strings.Contains(body, `href="/audit/`+name+`"`) {
				t.Errorf("%s: no link", name)
			}
		}
		if !strings.Contains(body, `href="/audit" aria-current="page"`) {
			t.Error("the Audit link in the navigation is not the current page")
		}
	})

	t.Run("a report page shows its rows, links their sessions and offers the CSV", func(t *testing.T) {
		res, body := b.Get("/audit/premature-side-effects")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		if strings.Count(body, `data-testid="audit-row"`) != 1 || !strings.Contains(body, "memory_store") || !strings.Contains(body, "1 row") {
			t.Errorf("rows missing:\n%s", body)
		}
		if !strings.Contains(body, `href="/sessions/`+session+`"`) {
			t.Error("no link to the session")
		}
		if !strings.Contains(body, `href="/audit/premature-side-effects.csv"`) || !strings.Contains(body, "Download CSV") {
			t.Error("no CSV download link")
		}
		_, body = b.Get("/audit/unanswerable-asks")
		if !strings.Contains(body, `data-testid="audit-passing"`) || !strings.Contains(body, "0 rows — passing") {
			t.Error("a passing report does not say so")
		}
		_, body = b.Get("/audit/stale-gates?older_than=36h")
		if !strings.Contains(body, "0 rows — passing") || !strings.Contains(body, `href="/audit/stale-gates.csv?older_than=36h"`) {
			t.Error("stale-gates does not take ?older_than, or its CSV link drops it")
		}
	})

	t.Run("the CSV download is an attachment with a header and the rows", func(t *testing.T) {
		for _, path := range []string{"/audit/premature-side-effects.csv", "/audit/premature-side-effects?format=csv"} {
			res, body := b.Get(path)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", path, res.StatusCode)
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="madebook-premature-side-effects.csv"` {
				t.Errorf("Content-Disposition %q", cd)
			}
			recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if err != nil || len(recs) != 2 {
				t.Fatalf("CSV %v: %q", err, body)
			}
			if strings.Join(recs[0], ",") != "run_id,session_id,tool_call_id,server,tool,started_at,ask_id,answered_at,kind,breach_id,files,scope,decisions,detected_at" ||
				recs[1][1] != session || recs[1][4] != "memory_store" || recs[1][7] != "" {
				t.Errorf("CSV %q", recs)
			}
		}
	})

	t.Run("an unknown report is a 404 page, a bad age a 422 page", func(t *testing.T) {
		for path, want := range map[string]int{"/audit/everything": http.StatusNotFound, "/audit/everything.csv": http.StatusNotFound,
			"/audit/stale-gates?older_than=soon": http.StatusUnprocessableEntity} {
			res, _ := b.Get(path)
			if res.StatusCode != want || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				t.Errorf("GET %s: %d %s, want %d HTML", path, res.StatusCode, res.Header.Get("Content-Type"), want)
			}
		}
	})

	t.Run("nobody signed in is sent to sign in, CSV included", func(t *testing.T) {
		anon := webtest.NewClient(t, a.Srv.URL)
		res, _ := anon.Get("/audit/premature-side-effects.csv")
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
			t.Errorf("%d %s", res.StatusCode, res.Header.Get("Location"))
		}
	})
}

func TestUnacknowledgedDeliveriesAPIAndConsole(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	ctx := context.Background()
	id := a.Session(false)
	d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "Schema", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Kit.Gov.Decisions.Resolve(ctx, a.Lead, d.Ref, "Keep it.", "Archive instead."); err != nil {
		t.Fatal(err)
	}
	b, err := a.Kit.Gov.Briefs.Brief(ctx, a.Agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if rows := audit(a, "/api/v1/audit/unacknowledged-deliveries", a.ViewerTok).Rows; len(rows) != 0 {
		t.Errorf("listed within its lease: %v", rows)
	}
	a.Kit.Clock.Advance(3 * time.Minute)
	rows := audit(a, "/api/v1/audit/unacknowledged-deliveries", a.ViewerTok).Rows
	if len(rows) != 1 {
		t.Fatalf("rows %v, want one", rows)
	}
	row := rows[0]
	if row["kind"] != "resolution" || row["ref"] != d.Ref || row["session_id"] != id || row["brief_id"] != b.BriefID ||
		row["unacknowledged_for"] != "3m" || row["unacknowledged_seconds"] != float64(180) || row["delivered_at"] != row["last_delivered_at"] {
		t.Errorf("row %v", row)
	}
	for _, k := range []string{"delivered_at", "last_delivered_at"} {
		if s, _ := row[k].(string); !rfc3339UTC.MatchString(s) {
			t.Errorf("%s %q is not RFC 3339 UTC", k, s)
		}
	}

	c := webtest.ConsoleAs(t, a.Srv.URL, a.Viewer.Email)
	_, body := c.Get("/audit/unacknowledged-deliveries")
	if strings.Count(body, `data-testid="audit-row"`) != 1 || !strings.Contains(body, d.Ref) || !strings.Contains(body, b.BriefID) {
		t.Errorf("the console's report lacks the row:\n%s", body)
	}
	if !strings.Contains(body, `data-testid="delivery-lease"`) || !strings.Contains(body, "Delivery lease: 2m") {
		t.Error("the console's report does not say which lease it applied")
	}

	if _, err := a.Kit.Gov.Briefs.Brief(ctx, a.Agent, governance.BriefRequest{Session: id, Ack: b.BriefID}); err != nil {
		t.Fatal(err)
	}
	if rows := audit(a, "/api/v1/audit/unacknowledged-deliveries", a.ViewerTok).Rows; len(rows) != 0 {
		t.Errorf("listed after its ack: %v", rows)
	}
}
