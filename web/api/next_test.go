package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/web/webtest"
)

// nextOf fails unless the answer names a next action, one of the six
// states, and a reason, and returns the action.
func nextOf(t *testing.T, what string, answer map[string]any) string {
	t.Helper()
	action, _ := answer["next_action"].(string)
	if _, ok := protocol.ParseState(action); !ok {
		t.Errorf("%s answers next_action %v, want one of the six states: %v", what, answer["next_action"], keysOf(answer))
	}
	if reason, _ := answer["reason"].(string); reason == "" {
		t.Errorf("%s answers no reason: %v", what, keysOf(answer))
	}
	return action
}

// TestEveryAgentReplyNamesTheNextAction drives every call an agent makes
// with its key and checks that each answer carries next_action and reason
// beside its own fields (webtest checks each answer against the OpenAPI
// document too, which requires both).
func TestEveryAgentReplyNamesTheNextAction(t *testing.T) {
	a := webtest.NewAPI(t)
	slug := a.Kit.Mission(a.Lead, false)
	s := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": slug, "title": "work"})
	nextOf(t, "POST /api/v1/sessions", s)
	id, _ := s["id"].(string)
	base := "/api/v1/sessions/" + id
	run := a.Must(http.StatusCreated, http.MethodPost, base+"/runs", a.AgentKey, map[string]any{"name": "graph"})
	runID, _ := run["id"].(string)
	calls := []struct {
		name, method, path string
		status             int
		body               any
	}{
		{"GET the session", http.MethodGet, base, http.StatusOK, nil},
		{"a plan", http.MethodPost, base + "/plan", http.StatusCreated, map[string]any{"summary": "read, then change"}},
		{"a change", http.MethodPost, base + "/changes", http.StatusOK, map[string]any{"files": []map[string]string{
			{"path": "web/app.go", "content": "package web\n"}}}},
		{"evidence", http.MethodPost, base + "/evidence", http.StatusCreated, map[string]any{"kind": "tests", "passed": true}},
		{"complete", http.MethodPost, base + "/complete", http.StatusOK, map[string]any{}},
		{"a tool call", http.MethodPost, "/api/v1/runs/" + runID + "/tool-calls", http.StatusCreated,
			map[string]any{"server": "fs", "tool": "read_file", "side_effecting": false}},
		{"an ask", http.MethodPost, "/api/v1/runs/" + runID + "/asks", http.StatusCreated,
			map[string]any{"prompt": "Write it?", "options": map[string]string{"1": "Yes", "2": "No"}}},
		{"a lifecycle event", http.MethodPost, base + "/events", http.StatusOK, map[string]any{"name": "user.message.created"}},
		{"a decision", http.MethodPost, base + "/decisions", http.StatusCreated, map[string]any{"title": "Schema",
			"question": "Drop the legacy table?", "blocked_scope": []string{"db/"}}},
	}
	nextOf(t, "POST …/runs", run)
	for _, c := range calls {
		t.Run(c.name+" answers next_action and reason", func(t *testing.T) {
			nextOf(t, c.name, a.Must(c.status, c.method, c.path, a.AgentKey, c.body))
		})
	}
	t.Run("finishing a run answers next_action and reason", func(t *testing.T) {
		r := a.Must(http.StatusCreated, http.MethodPost, base+"/runs", a.AgentKey, map[string]any{"name": "second"})
		nextOf(t, "PATCH /api/v1/runs/{id}", a.Must(http.StatusOK, http.MethodPatch, "/api/v1/runs/"+r["id"].(string),
			a.AgentKey, map[string]any{"status": "complete"}))
	})
	t.Run("a lead's GET of the session carries the preview's next action too", func(t *testing.T) {
		d := a.Must(http.StatusOK, http.MethodGet, base, a.LeadTok, nil)
		brief, _ := d["brief"].(map[string]any)
		if got := nextOf(t, "GET the session", d); got != brief["next_action"] || d["reason"] != brief["reason"] {
			t.Errorf("next_action %v (%v), the preview says %v (%v)", got, d["reason"], brief["next_action"], brief["reason"])
		}
	})
}

// TestAReplyShowsTheStateTheCallLeft: the next action is decided after
// the call, so a call that changes the state answers the new state.
func TestAReplyShowsTheStateTheCallLeft(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	base := "/api/v1/sessions/" + id
	before := a.Must(http.StatusCreated, http.MethodPost, base+"/evidence", a.AgentKey, map[string]any{"kind": "tests", "passed": true})
	if got := nextOf(t, "evidence", before); got != "CONTINUE" {
		t.Fatalf("a fresh session's reply says %s, want CONTINUE", got)
	}
	d := a.Must(http.StatusCreated, http.MethodPost, base+"/decisions", a.AgentKey, map[string]any{"title": "Schema",
		"question": "Drop the legacy table?", "blocked_scope": []string{"db/"}})
	if got := nextOf(t, "opening a decision", d); got != "DECISION_REQUIRED" {
		t.Errorf("opening a decision answers %s, want DECISION_REQUIRED", got)
	}
	if reason, _ := d["reason"].(string); d["ref"] == nil || !strings.Contains(reason, d["ref"].(string)) {
		t.Errorf("the reason %q does not name the gate %v", reason, d["ref"])
	}
	secret := "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
	ch := a.Must(http.StatusOK, http.MethodPost, base+"/changes", a.AgentKey, map[string]any{"files": []map[string]string{
		{"path": "config/deploy.sh", "content": secret}}})
	if got := nextOf(t, "a change with a secret", ch); got != "HARD_STOP" {
		t.Errorf("a change with a critical violation answers %s, want HARD_STOP", got)
	}
}

// TestOnlyTheBriefDeliversAResolution: a reply other than the brief names
// the next action but delivers nothing; the next brief delivers the
// resolution, once.
func TestOnlyTheBriefDeliversAResolution(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	base := "/api/v1/sessions/" + id
	d := a.Must(http.StatusCreated, http.MethodPost, base+"/decisions", a.AgentKey, map[string]any{"title": "Schema",
		"question": "Drop the legacy table?", "blocked_scope": []string{"db/"}})
	ref := d["ref"].(string)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok,
		map[string]any{"resolution": "Keep it.", "instruction": "Archive the rows instead."})

	for i := 0; i < 2; i++ {
		r := a.Must(http.StatusCreated, http.MethodPost, base+"/evidence", a.AgentKey, map[string]any{"kind": "tests", "passed": true})
		if got := nextOf(t, "evidence after the resolution", r); got != "CONTINUE" {
			t.Errorf("reply %d says %s, want CONTINUE (the gate is resolved)", i+1, got)
		}
		if _, ok := r["resolutions"]; ok {
			t.Errorf("a reply other than the brief carries resolutions: %v", keysOf(r))
		}
		nextOf(t, "GET the session", a.Must(http.StatusOK, http.MethodGet, base, a.AgentKey, nil))
	}
	for _, dec := range a.DetailOf(id).Decisions {
		if dec.Ref == ref && (dec.Status != "resolved" || dec.DeliveredAt != nil) {
			t.Fatalf("after replies that are not briefs, %s is %s (delivered %v), want resolved and undelivered", ref, dec.Status, dec.DeliveredAt)
		}
	}
	if a.DetailOf(id).LastBriefAt != nil {
		t.Error("a reply that is not a brief stamped last_brief_at")
	}
	first := brief(a, id)
	if got := len(objects(t, first, "resolutions")); got != 1 {
		t.Fatalf("the first brief delivers %d resolutions, want 1", got)
	}
	if got := len(objects(t, brief(a, id), "resolutions")); got != 0 {
		t.Errorf("the second brief delivers %d resolutions, want 0", got)
	}
}
