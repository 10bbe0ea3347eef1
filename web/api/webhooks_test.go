package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// An admin adds, lists and removes endpoints over the API; a refused body
// says which field and why, and the secret never comes back.
func TestWebhooksOverTheAPI(t *testing.T) {
	a := webtest.NewAPI(t)
	const secret = "api-test-signing-secret"
	refusals := []struct {
		name string
		body string
		code string
		says string
	}{
		{"an unknown event", `{"url":"https://hooks.example.com/x","secret":"` + secret + `","events":["hard_stop","everything"]}`, "unknown_event", `\"everything\"`},
		{"an unknown field", `{"url":"https://hooks.example.com/x","secret":"` + secret + `","events":["hard_stop"],"channel":"#ops"}`, "unknown_field", "channel"},
		{"a short secret", `{"url":"https://hooks.example.com/x","secret":"short","events":["hard_stop"]}`, "secret_too_short", "at least 16"},
		{"no events", `{"url":"https://hooks.example.com/x","secret":"` + secret + `","events":[]}`, "events_required", "hard_stop"},
		{"a url that is not http", `{"url":"javascript:alert(1)","secret":"` + secret + `","events":["hard_stop"]}`, "invalid_url", "http"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			a.T = t
			r := a.Do(http.MethodPost, "/api/v1/webhooks", a.AdminTok, webtest.RawBody(c.body))
			webtest.CheckErrorShape(t, r)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"code":"`+c.code+`"`) ||
				!strings.Contains(string(r.Body), c.says) {
				t.Errorf("status %d, body %s; want 422 %s saying %s", r.Status, r.Body, c.code, c.says)
			}
		})
	}
	a.T = t
	created := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", a.AdminTok, map[string]any{
		"url": "https://hooks.example.com/ops", "secret": secret, "events": []string{"hard_stop", "attention.created"}})
	if _, shown := created["secret"]; shown {
		t.Errorf("the answer shows the secret: %v", created)
	}
	id := int64(created["id"].(float64))
	r := a.Do(http.MethodGet, "/api/v1/webhooks", a.AdminTok, nil)
	var list struct {
		Webhooks []struct {
			ID     int64    `json:"id"`
			URL    string   `json:"url"`
			Events []string `json:"events"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || r.Status != http.StatusOK || strings.Contains(string(r.Body), secret) ||
		len(list.Webhooks) != 1 || list.Webhooks[0].ID != id || fmt.Sprint(list.Webhooks[0].Events) != "[attention.created hard_stop]" {
		t.Fatalf("list: %d %s (%v)", r.Status, r.Body, err)
	}
	a.Must(http.StatusForbidden, http.MethodDelete, fmt.Sprintf("/api/v1/webhooks/%d", id), a.LeadTok, nil)
	gone := a.Must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/webhooks/%d", id), a.AdminTok, nil)
	if gone["removed_at"] == nil {
		t.Errorf("removed: %v", gone)
	}
	a.Must(http.StatusNotFound, http.MethodDelete, fmt.Sprintf("/api/v1/webhooks/%d", id), a.AdminTok, nil)
	if l := a.Must(http.StatusOK, http.MethodGet, "/api/v1/webhooks", a.AdminTok, nil); len(l["webhooks"].([]any)) != 0 {
		t.Errorf("after removal: %v", l)
	}
}
