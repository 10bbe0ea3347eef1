package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// TestABreachOverHTTP reports a breach of a blocked scope as the hook
// does: 201 and the breach, the session HARD_STOP whatever it was, a row
// of the premature-side-effects audit, and a lead's clear that puts the
// brief back where it was.
func TestABreachOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	gate := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/decisions", a.AgentKey, map[string]any{
		"title": "Legacy billing", "question": "Drop the legacy billing table?", "blocked_scope": []string{"db/migrations"}})
	run := openRun(a, sess, "hook")
	path := "/api/v1/runs/" + run + "/breaches"
	body := map[string]any{"tool": "Bash", "tool_use_id": "toolu_01", "files": []string{"db/migrations/x.sql"}, "command": "make migrate"}

	t.Run("refusals write nothing", func(t *testing.T) {
		a.T = t
		a.Refused(sess, http.StatusUnauthorized, "unauthorized", http.MethodPost, path, "", body)
		a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, path, a.OtherKey, body)
		a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, path, a.LeadTok, body)
		a.Refused(sess, http.StatusNotFound, "run_not_found", http.MethodPost, "/api/v1/runs/run_nope/breaches", a.AgentKey, body)
		r := a.Do(http.MethodPost, path, a.AgentKey, map[string]any{"tool": "Bash", "files": []string{"db/migrations/x.sql"}, "bogus": 1})
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "unknown_field")
		if errorField(t, r, "field") != "bogus" {
			t.Errorf("unknown_field names %v, want bogus", errorField(t, r, "field"))
		}
		for _, c := range []struct {
			code string
			body any
		}{
			{"files_required", map[string]any{"tool": "Bash"}},
			{"tool_required", map[string]any{"files": []string{"db/migrations/x.sql"}}},
			{"invalid_files", map[string]any{"tool": "Bash", "files": []string{"/etc/passwd"}}},
			{"invalid_field", map[string]any{"tool": "Bash", "files": "db/migrations/x.sql"}},
			{"invalid_body", []string{"Bash"}},
		} {
			a.Refused(sess, http.StatusUnprocessableEntity, c.code, http.MethodPost, path, a.AgentKey, c.body)
		}
		a.Refused(sess, http.StatusBadRequest, "malformed_json", http.MethodPost, path, a.AgentKey, webtest.RawBody(`{"tool":`))
	})

	t.Run("a lead pauses the session; the breach is recorded all the same, and the session is HARD_STOP", func(t *testing.T) {
		a.T = t
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+sess+"/pause", a.LeadTok, map[string]any{"reason": "Hold"})
		got := a.Must(http.StatusCreated, http.MethodPost, path, a.AgentKey, body)
		if got["run"] != run || got["session"] != sess || got["tool"] != "Bash" || got["server"] != "claude-code" ||
			got["tool_use_id"] != "toolu_01" || got["command"] != "make migrate" || got["next_action"] != "HARD_STOP" ||
			fmt.Sprint(got["files"]) != "[db/migrations/x.sql]" || fmt.Sprint(got["scope"]) != "[db/migrations]" ||
			fmt.Sprint(got["decisions"]) != fmt.Sprintf("[%s]", gate["ref"]) {
			t.Fatalf("answer %v", got)
		}
		want := "Bash (make migrate) wrote into the blocked scope db/migrations before its decision was made: db/migrations/x.sql. " +
			"This is a critical control: stop, and do not work around it."
		if got["reason"] != want {
			t.Errorf("reason %q, want %q", got["reason"], want)
		}
		brief := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": sess})
		if brief["next_action"] != "HARD_STOP" || brief["reason"] != want {
			t.Errorf("brief %v %q", brief["next_action"], brief["reason"])
		}
		kinds := a.Timeline(sess)
		if webtest.CountOf(kinds, "scope.breached") != 1 || webtest.CountOf(kinds, "violation.detected") != 1 {
			t.Errorf("timeline %v", kinds)
		}

		rows, _ := a.Must(http.StatusOK, http.MethodGet, "/api/v1/audit/premature-side-effects", a.ViewerTok, nil)["rows"].([]any)
		if len(rows) != 1 {
			t.Fatalf("audit rows %v, want the breach", rows)
		}
		row, _ := rows[0].(map[string]any)
		if row["kind"] != "breach" || row["run_id"] != run || row["session_id"] != sess || row["tool"] != "Bash" ||
			fmt.Sprint(row["files"]) != "[db/migrations/x.sql]" || fmt.Sprint(row["scope"]) != "[db/migrations]" ||
			row["detected_at"] == nil || row["breach_id"] != got["id"] {
			t.Errorf("audit row %v", row)
		}

		items, _ := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)["items"].([]any)
		var violations []map[string]any
		for _, it := range items {
			if m, _ := it.(map[string]any); m["kind"] == "violation" {
				violations = append(violations, m)
			}
		}
		if len(violations) != 1 || violations[0]["ref"] != fmt.Sprint(got["violation"]) || violations[0]["state"] != "HARD_STOP" ||
			!strings.HasPrefix(fmt.Sprint(violations[0]["title"]), "Bash (make migrate) wrote into the blocked scope db/migrations") {
			t.Errorf("attention %v, want the breach's violation", items)
		}

		t.Log("the lead clears the violation: the brake is what holds the session again")
		a.Must(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/violations/%v/clear", got["violation"]), a.LeadTok,
			map[string]any{"as": "fixed", "note": "Reverted the migration."})
		brief = a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": sess})
		reasons, _ := brief["reasons"].([]any)
		var codes []string
		for _, r := range reasons {
			m, _ := r.(map[string]any)
			codes = append(codes, fmt.Sprint(m["code"]))
		}
		if brief["next_action"] != "BLOCKED" || !slices.Equal(codes, []string{"paused"}) {
			t.Errorf("after the clear: %v %v, want BLOCKED (paused)", brief["next_action"], codes)
		}
	})
}
