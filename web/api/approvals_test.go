package api_test

import (
	"net/http"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// Over HTTP: a two-person mission takes two different leads to resolve a
// gate; the first shows as 1 of 2; the same lead twice is 409
// same_approver and writes nothing; the key's creator is 403 key_creator.
func TestTwoPeopleOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	m := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/missions", a.LeadTok,
		map[string]any{"slug": "billing", "title": "Billing", "two_person": true})
	if m["two_person"] != true {
		t.Fatalf("mission = %v", m)
	}
	_, key := a.Kit.AgentBy(a.Admin)
	s := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", key, map[string]any{"mission": "billing", "title": "work"})
	id := s["id"].(string)
	d := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", key,
		map[string]any{"title": "Schema", "question": "Drop it?"})
	ref := d["ref"].(string)
	body := map[string]any{"resolution": "Keep it", "instruction": "Archive instead."}

	first := a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok, body)
	approvals, _ := first["approvals"].([]any)
	if first["status"] != "open" || len(approvals) != 1 || approvals[0].(map[string]any)["by"] != a.Lead.Email {
		t.Fatalf("after the first lead: %v", first)
	}
	a.Refused(id, http.StatusConflict, "same_approver", http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok, body)
	a.Refused(id, http.StatusForbidden, "key_creator", http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.AdminTok, body)
	if items := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)["items"].([]any); len(items[0].(map[string]any)["approvals"].([]any)) != 1 {
		t.Fatalf("attention = %v", items)
	}

	_, secondTok := a.Kit.Lead()
	done := a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", secondTok, body)
	if done["status"] != "resolved" || done["approvals"] != nil {
		t.Fatalf("after the second lead: %v", done)
	}
	b := a.Must(http.StatusOK, http.MethodPost, "/brief", key, map[string]any{"session": id})
	if len(b["resolutions"].([]any)) != 1 {
		t.Fatalf("brief = %v", b)
	}
}

// Over HTTP: a session at the open-gate cap gets 409 too_many_open_gates
// for one more, and nothing is written.
func TestTheOpenGateCapOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t, func(o *governance.Options) { o.MaxOpenGates = 2 })
	id := a.Session(false)
	for range 2 {
		a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
			map[string]any{"title": "Schema", "question": "Drop it?"})
	}
	a.Refused(id, http.StatusConflict, "too_many_open_gates", http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
		map[string]any{"title": "Schema", "question": "Drop it?"})
}
