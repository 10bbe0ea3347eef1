package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// Over HTTP: every brief has an id; ack acknowledges what it delivered; a
// bad ack is 422 invalid_ack and writes nothing.
func TestBriefsAreAcknowledgedOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	d := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
		map[string]any{"title": "Schema", "question": "Drop it?"})
	ref := d["ref"].(string)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok,
		map[string]any{"resolution": "Keep it", "instruction": "Archive instead."})

	b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	brief, _ := b["brief_id"].(string)
	if !strings.HasPrefix(brief, "brf_") || len(b["resolutions"].([]any)) != 1 {
		t.Fatalf("brief %v delivers %v", b["brief_id"], b["resolutions"])
	}
	a.Refused(id, http.StatusUnprocessableEntity, "invalid_ack", http.MethodPost, "/brief", a.AgentKey,
		map[string]any{"session": id, "ack": "yes"})
	next := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id, "ack": brief})
	if next["brief_id"] == brief || len(next["resolutions"].([]any)) != 0 {
		t.Fatalf("the acknowledging brief: %v %v", next["brief_id"], next["resolutions"])
	}
	dec := a.DetailOf(id).Decisions[0]
	if dec.AckedAt == nil || dec.DeliveredAt == nil {
		t.Fatalf("the gate is %+v, want delivered and acknowledged", dec)
	}
}
