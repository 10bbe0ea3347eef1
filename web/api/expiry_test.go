package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/web/webtest"
)

// Over HTTP: a mission takes gate_ttl as a duration and shows it back; a
// bad one is 422 invalid_gate_ttl and writes nothing; a gate past it is
// decision_expired in the brief, first and marked in the Attention list,
// and still resolvable.
func TestGatesExpireOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)

	m := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/missions", a.LeadTok,
		map[string]any{"slug": "billing", "title": "Billing", "gate_ttl": "90m"})
	if m["gate_ttl"] != "1h30m" {
		t.Fatalf("created mission %v, want gate_ttl 1h30m", m)
	}
	plain := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/missions", a.LeadTok,
		map[string]any{"slug": "plain", "title": "Plain"})
	if plain["gate_ttl"] != "" {
		t.Fatalf("a mission without gate_ttl shows %v, want \"\"", plain["gate_ttl"])
	}
	id := a.Kit.Session(a.Agent, "billing")
	for _, bad := range []any{"30s", "31d", "forever", "-1h", "721h", 3600, true} {
		code := "invalid_gate_ttl"
		if _, isString := bad.(string); !isString {
			code = "invalid_field" // not a string at all: the body's shape is wrong
		}
		a.Refused(id, http.StatusUnprocessableEntity, code, http.MethodPost, "/api/v1/missions", a.LeadTok,
			map[string]any{"slug": "bad", "title": "Bad", "gate_ttl": bad})
		a.Refused(id, http.StatusUnprocessableEntity, code, http.MethodPatch, "/api/v1/missions/billing", a.LeadTok,
			map[string]any{"gate_ttl": bad})
	}
	if got := a.Must(http.StatusOK, http.MethodGet, "/api/v1/missions/billing", a.AgentKey, nil); got["gate_ttl"] != "1h30m" {
		t.Fatalf("refused patches changed the mission: %v", got)
	}
	// Raising it lowers a protection: an admin's.
	p := a.Must(http.StatusOK, http.MethodPatch, "/api/v1/missions/billing", a.AdminTok, map[string]any{"gate_ttl": "2h"})
	if p["gate_ttl"] != "2h" {
		t.Fatalf("patched mission %v, want gate_ttl 2h", p)
	}

	d := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
		map[string]any{"title": "Schema", "question": "Drop the legacy billing table?", "blocked_scope": []string{"db/"}})
	ref := d["ref"].(string)
	if d["expired"] != false {
		t.Fatalf("a new gate %v: want expired false", d)
	}
	a.Kit.Clock.Advance(2 * time.Hour)

	b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	reasons := b["reasons"].([]any)
	r0 := reasons[0].(map[string]any)
	if b["next_action"] != "DECISION_REQUIRED" || r0["code"] != "decision_expired" ||
		!strings.HasPrefix(b["reason"].(string), ref+" expired unanswered after 2h: ") {
		t.Fatalf("brief %v / %v, want DECISION_REQUIRED decision_expired", b["next_action"], r0)
	}
	gate := b["decisions"].([]any)[0].(map[string]any)
	if gate["expired"] != true || gate["expired_at"] == nil || gate["status"] != "open" {
		t.Fatalf("the brief's gate %v, want open and expired", gate)
	}

	q := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)
	first := q["items"].([]any)[0].(map[string]any)
	if first["ref"] != ref || first["expired"] != true || first["expired_at"] == nil {
		t.Fatalf("first item %v, want %s expired", first, ref)
	}

	a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok,
		map[string]any{"resolution": "Keep it", "instruction": "Archive instead."})
	b = a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	res := b["resolutions"].([]any)
	if b["next_action"] != "CONTINUE" || len(res) != 1 || res[0].(map[string]any)["ref"] != ref {
		t.Fatalf("after resolving: %v with %v, want CONTINUE delivering %s", b["next_action"], res, ref)
	}
}
