package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A row Madebook never wrote (edited by hand, damaged) is a server fault:
// the call reading it answers 500 in the contract's shape, saying no more
// than "Internal error.", the log names the table and the row, and the
// server goes on answering.
func TestACorruptRowIsA500NamingTheRowInTheLog(t *testing.T) {
	tests := []struct {
		name string
		// corrupt corrupts a row of the session and returns what the log
		// must say of it.
		corrupt func(a *webtest.API, session string) string
		method  string
		path    func(session string) string
		secret  func(a *webtest.API) string
	}{
		{"a session created yesterday: GET /api/v1/sessions/{id}", func(a *webtest.API, s string) string {
			a.Kit.Corrupt(`UPDATE sessions SET created_at = 'yesterday' WHERE id = ?`, s)
			return "sessions row " + s + `, column created_at: stored time \"yesterday\"`
		}, http.MethodGet, func(s string) string { return "/api/v1/sessions/" + s }, func(a *webtest.API) string { return a.AdminTok }},
		{"a gate whose blocked scope is not JSON: POST /brief", func(a *webtest.API, s string) string {
			d, err := a.Kit.Gov.Decisions.Open(a.T.Context(), a.Agent, s, governance.DecisionInput{Title: "Legacy table",
				Question: "Drop it?", BlockedScope: []string{"db/"}})
			if err != nil {
				a.T.Fatal(err)
			}
			a.Kit.Corrupt(`UPDATE decisions SET blocked_scope = 'x' WHERE ref = ?`, d.Ref)
			return "decisions row " + d.Ref + ", column blocked_scope: not a JSON list: invalid character 'x'"
		}, http.MethodPost, func(string) string { return "/brief" }, func(a *webtest.API) string { return a.AgentKey }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := webtest.NewAPI(t)
			corrupt, healthy := a.Session(false), a.Session(false)
			want := tt.corrupt(a, corrupt)
			var body any
			if tt.method == http.MethodPost {
				body = map[string]string{"session": corrupt}
			}
			r := a.Do(tt.method, tt.path(corrupt), tt.secret(a), body)
			webtest.CheckError(t, r, http.StatusInternalServerError, "internal")
			if got := strings.TrimSpace(string(r.Body)); got != `{"error":{"code":"internal","message":"Internal error."}}` {
				t.Errorf("body %s, want only the internal error", got)
			}
			if logged := a.Log.String(); !strings.Contains(logged, want) {
				t.Errorf("the log does not name the row (%s):\n%s", want, logged)
			}

			if d := a.Detail(healthy); d["id"] != healthy {
				t.Fatalf("the next request read %v", d)
			}
			a.Must(http.StatusOK, http.MethodGet, "/healthz", "", nil)
		})
	}
}
