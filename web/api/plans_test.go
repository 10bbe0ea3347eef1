package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// TestAPlanIsAnsweredInTheShapeItIsProposedIn: the steps and stopping
// points an agent sends sit at the top of the plan it gets back, from the
// proposal and from the session, never under a "body".
func TestAPlanIsAnsweredInTheShapeItIsProposedIn(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(true)
	// The step's own false lowers nothing: the registry says read_file reads.
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/fs/read_file", a.AdminTok, map[string]any{"side_effecting": false})
	proposed := map[string]any{
		"summary":       "Read, then ask before writing",
		"initial_steps": []any{map[string]any{"id": "read", "server": "fs", "tool": "read_file", "side_effecting": false}},
		"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Write it?",
			"options": map[string]any{"1": map[string]any{"label": "Yes", "steps": []any{
				map[string]any{"id": "write", "server": "fs", "tool": "write_file", "side_effecting": true}}}}}},
	}
	// webtest checks both answers against the OpenAPI document too.
	answer := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/plan", a.AgentKey, proposed)
	// Every reply to an agent names the next action beside its own fields.
	if answer["next_action"] != "BLOCKED" || answer["reason"] == "" {
		t.Errorf("the proposal's answer says next_action %v, reason %v; want BLOCKED (the plan waits for a lead) and why",
			answer["next_action"], answer["reason"])
	}
	delete(answer, "next_action")
	delete(answer, "reason")
	plan, _ := a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions/"+id, a.LeadTok, nil)["plan"].(map[string]any)

	for name, got := range map[string]map[string]any{"the proposal's answer": answer, "the session's plan": plan} {
		t.Run(name+" has the proposal's fields at its top", func(t *testing.T) {
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := []string{"id", "initial_steps", "proposed_at", "status", "stopping_points", "summary"}
			if !slices.Equal(keys, want) {
				t.Fatalf("the plan's fields are %v, want %v", keys, want)
			}
			if got["summary"] != proposed["summary"] || got["status"] != "proposed" {
				t.Errorf("summary %v, status %v", got["summary"], got["status"])
			}
			for _, field := range []string{"initial_steps", "stopping_points"} {
				if sent, back := canonical(t, proposed[field]), canonical(t, got[field]); sent != back {
					t.Errorf("%s came back as %s, sent %s", field, back, sent)
				}
			}
		})
	}
	t.Run("a plan sent back as it was answered, body and all, is refused", func(t *testing.T) {
		r := a.Do(http.MethodPost, "/api/v1/sessions/"+id+"/plan", a.AgentKey,
			map[string]any{"summary": "S", "body": map[string]any{"initial_steps": []any{}}})
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "unknown_field")
	})
}

// canonical is v as JSON with every object's keys in order, so that what
// was sent and what came back compare equal when they say the same.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var round any
	if err := json.Unmarshal(b, &round); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(round)
	return string(b)
}
