package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A row Madebook never wrote (edited by hand, damaged) makes the page that
// reads it the error page, saying "Internal error." and nothing of the
// row, and the console goes on serving the next page.
func TestACorruptRowIsTheErrorPage(t *testing.T) {
	tests := []struct {
		name string
		// corrupt corrupts a row the page reads and returns the page.
		corrupt func(t *testing.T, a *webtest.API, session string) string
	}{
		{"a session created yesterday: its page", func(t *testing.T, a *webtest.API, s string) string {
			a.Kit.Corrupt(`UPDATE sessions SET created_at = 'yesterday' WHERE id = ?`, s)
			return "/sessions/" + s
		}},
		{"a gate opened yesterday: the Attention queue", func(t *testing.T, a *webtest.API, s string) string {
			d, err := a.Kit.Gov.Decisions.Open(t.Context(), a.Agent, s, governance.DecisionInput{Title: "Legacy table",
				Question: "Drop it?"})
			if err != nil {
				t.Fatal(err)
			}
			a.Kit.Corrupt(`UPDATE decisions SET opened_at = 'yesterday' WHERE ref = ?`, d.Ref)
			return "/"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := webtest.NewAPI(t)
			b := webtest.SignInWith(t, a.Srv.URL, a.Lead.Email, "password-123")
			corrupt, healthy := a.Session(false), a.Session(false)
			path := tt.corrupt(t, a, corrupt)

			p := b.Open(path)
			if p.Status != http.StatusInternalServerError || !strings.Contains(p.Body, `data-testid="error-page"`) ||
				!strings.Contains(p.Body, "Internal error.") {
				t.Fatalf("GET %s: status %d, want the error page: %s", path, p.Status, webtest.Short([]byte(p.Body)))
			}
			if strings.Contains(p.Body, "yesterday") {
				t.Fatalf("the error page shows the stored value: %s", webtest.Short([]byte(p.Body)))
			}
			if next := b.Open("/sessions/" + healthy); next.Status != http.StatusOK {
				t.Fatalf("the next page: status %d", next.Status)
			}
		})
	}
}
