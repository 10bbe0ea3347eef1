package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/webtest"
)

// TestATooLongFieldIsNamed: a field over its limit answers 422
// <field>_too_long with the field in the error object, and writes nothing.
func TestATooLongFieldIsNamed(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	run := openRun(a, id, "probes")
	d := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
		map[string]any{"title": "Schema", "question": "Rename it?"})
	over := func(n int) string { return strings.Repeat("é", n+1) }
	cases := []struct {
		name, method, path, token string
		body                      map[string]any
		field                     string
	}{
		{"a gate's title", http.MethodPost, "/api/v1/sessions/" + id + "/decisions", a.AgentKey,
			map[string]any{"title": over(governance.MaxDecisionTitle), "question": "q"}, "title"},
		{"a resolution's instruction", http.MethodPost, "/api/v1/decisions/" + d["ref"].(string) + "/resolve", a.LeadTok,
			map[string]any{"resolution": "Yes", "instruction": over(governance.MaxInstruction)}, "instruction"},
		{"a run's name", http.MethodPost, "/api/v1/sessions/" + id + "/runs", a.AgentKey,
			map[string]any{"name": over(ledger.MaxRunName)}, "name"},
		{"an ask's prompt", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey,
			map[string]any{"prompt": over(ledger.MaxPrompt), "options": map[string]string{"1": "Yes"}}, "prompt"},
		{"a tool call's server", http.MethodPost, "/api/v1/runs/" + run + "/tool-calls", a.AgentKey,
			map[string]any{"server": over(ledger.MaxServer), "tool": "read_file"}, "server"},
	}
	for _, c := range cases {
		t.Run(c.name+" over its limit is "+c.field+"_too_long, naming the field", func(t *testing.T) {
			before := a.Snapshot(id)
			r := a.Do(c.method, c.path, c.token, c.body)
			webtest.CheckError(t, r, http.StatusUnprocessableEntity, c.field+"_too_long")
			if got := errorField(t, r, "field"); got != c.field {
				t.Errorf("the error's field is %v, want %q", got, c.field)
			}
			if after := a.Snapshot(id); after != before {
				t.Errorf("a refused call changed state:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
