package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// walk reports events on the session as its agent, each answered 200.
func walk(a *webtest.API, id string, events ...map[string]any) map[string]any {
	var last map[string]any
	for _, e := range events {
		last = a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, e)
	}
	return last
}

// confirming walks a fresh session on a high-risk mission to CONFIRMING.
func confirming(a *webtest.API) (session string, plan float64) {
	id := a.Session(true)
	r := walk(a, id,
		map[string]any{"name": "user.message.created"},
		map[string]any{"name": "IntentClassified", "payload": map[string]any{"intent": "task"}},
		map[string]any{"name": "architecture.impact.completed", "payload": map[string]any{"level": "architecture"}},
		map[string]any{"name": "architecture.plan.updated", "payload": map[string]any{"summary": "Split billing",
			"initial_steps": []any{}, "stopping_points": []any{}}})
	if r["lifecycle"] != "CONFIRMING" {
		a.T.Fatalf("walked to %v", r["lifecycle"])
	}
	return id, r["plan"].(map[string]any)["id"].(float64)
}

func TestALeadAsksForChangesOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	id, plan := confirming(a)
	path := "/api/v1/sessions/" + id + "/plan/modify"

	a.Refused(id, http.StatusUnprocessableEntity, "instruction_required", http.MethodPost, path, a.LeadTok,
		map[string]any{"instruction": " "})
	a.Refused(id, http.StatusBadRequest, "malformed_json", http.MethodPost, path, a.LeadTok, nil)
	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, path, a.AgentKey, map[string]any{"instruction": "x"})
	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, path, a.ViewerTok, map[string]any{"instruction": "x"})

	got := a.Must(http.StatusOK, http.MethodPost, path, a.LeadTok, map[string]any{"instruction": "Gate the migration."})
	if got["status"] != "changes_requested" || got["note"] != "Gate the migration." {
		t.Fatalf("answer %v", got)
	}
	if d := a.Detail(id); d["lifecycle"] != "ARCHITECTURE_REVISING" {
		t.Fatalf("session is %v", d["lifecycle"])
	}
	a.Refused(id, http.StatusConflict, "no_plan_proposed", http.MethodPost, path, a.LeadTok, map[string]any{"instruction": "again"})

	b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	res := b["resolutions"].([]any)
	want := fmt.Sprintf("PLAN-%d", int64(plan))
	if b["next_action"] != "BLOCKED" || len(res) != 1 || res[0].(map[string]any)["ref"] != want ||
		res[0].(map[string]any)["resolution"] != "changes_requested" || res[0].(map[string]any)["instruction"] != "Gate the migration." {
		t.Fatalf("brief %v delivers %v", b["next_action"], res)
	}
	b = a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	if len(b["resolutions"].([]any)) != 0 {
		t.Fatalf("delivered again: %v", b["resolutions"])
	}
}

func TestPermissionPromptsOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	r := walk(a, id, map[string]any{"name": "permission.prompt.requested", "payload": map[string]any{
		"prompt": "Edit .env?", "options": map[string]any{"1": "Allow", "2": "Deny"}, "tool": "Edit", "paths": []any{".env"}}})
	prompt := r["permission"].(map[string]any)
	pid := fmt.Sprint(int64(prompt["id"].(float64)))
	path := "/api/v1/permissions/" + pid + "/answer"

	b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	if b["next_action"] != "DECISION_REQUIRED" || fmt.Sprint(b["blocked_scope"]) != "[tool:Edit .env]" {
		t.Fatalf("brief while the prompt waits: %v %v", b["next_action"], b["blocked_scope"])
	}
	items := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)["items"].([]any)
	found := false
	for _, it := range items {
		m := it.(map[string]any)
		found = found || (m["kind"] == "permission" && m["ref"] == pid && len(m["options"].([]any)) == 2)
	}
	if !found {
		t.Fatalf("the prompt is not in the Attention list: %v", items)
	}

	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, path, a.AgentKey, map[string]any{"option": "1"})
	a.Refused(id, http.StatusUnprocessableEntity, "unknown_option", http.MethodPost, path, a.LeadTok, map[string]any{"option": "9"})
	a.Refused(id, http.StatusUnprocessableEntity, "option_required", http.MethodPost, path, a.LeadTok, map[string]any{"option": ""})
	a.Refused(id, http.StatusNotFound, "permission_not_found", http.MethodPost, "/api/v1/permissions/PRM-0/answer", a.LeadTok,
		map[string]any{"option": "1"})

	got := a.Must(http.StatusOK, http.MethodPost, "/api/v1/permissions/PRM-"+pid+"/answer", a.LeadTok, map[string]any{"option": "2"})
	if got["answer"] != "2" || got["answered_by"] == "" {
		t.Fatalf("answer %v", got)
	}
	a.Refused(id, http.StatusConflict, "already_answered", http.MethodPost, path, a.AdminTok, map[string]any{"option": "1"})

	b = a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	perms := b["permissions"].([]any)
	if b["next_action"] != "CONTINUE" || len(perms) != 1 || perms[0].(map[string]any)["label"] != "Deny" ||
		perms[0].(map[string]any)["option"] != "2" {
		t.Fatalf("brief %v delivers %v", b["next_action"], perms)
	}
	b = a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	if len(b["permissions"].([]any)) != 0 {
		t.Fatalf("delivered again: %v", b["permissions"])
	}
	d := a.Detail(id)
	ps := d["permissions"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["delivered_at"] == nil || !strings.Contains(fmt.Sprint(d["timeline"]), "permission.prompt.resolved") {
		t.Fatalf("session shows %v", ps)
	}
}
