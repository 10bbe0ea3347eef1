package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/madebook/madebook/internal/testkit"
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
	// What a probe tried: every internal address, in every spelling.
	for _, host := range []string{"169.254.169.254", "[::1]", "10.0.0.1", "0.0.0.0", "2130706433", "0x7f.1", "localhost",
		"metadata.google.internal", "[::ffff:127.0.0.1]", "100.64.0.1", "0177.0.0.1"} {
		refusals = append(refusals, struct {
			name string
			body string
			code string
			says string
		}{"the internal host " + host, `{"url":"http://` + host + `/x","secret":"` + secret + `","events":["hard_stop"]}`,
			"url_not_allowed", "serve --webhook-allow"})
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
		"url": "https://bob:pw@hooks.slack.com/services/T0/B0/slackSECRETtoken1a2b", "secret": secret, "events": []string{"hard_stop", "attention.created"}})
	if _, shown := created["secret"]; shown {
		t.Errorf("the answer shows the secret: %v", created)
	}
	const shown = "https://••••@hooks.slack.com/services/T0/B0/••••1a2b"
	if created["url"] != shown {
		t.Errorf("the answer shows the url %v, want %s", created["url"], shown)
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
		strings.Contains(string(r.Body), "slackSECRET") || strings.Contains(string(r.Body), "pw@") ||
		len(list.Webhooks) != 1 || list.Webhooks[0].ID != id || list.Webhooks[0].URL != shown ||
		fmt.Sprint(list.Webhooks[0].Events) != "[attention.created hard_stop]" {
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

// POST /api/v1/webhooks/{id}/test sends one signed test notification now
// and answers what the endpoint answered: its status and a fixed phrase,
// never its body. Admins only; a removed endpoint is 404.
func TestAWebhookTestOverTheAPI(t *testing.T) {
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // the endpoint is on 127.0.0.1
	const secret = "api-test-signing-secret"
	var (
		mu     sync.Mutex
		status = http.StatusOK
		got    []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("X-Madebook-Timestamp") + "." + string(body)))
		if r.Header.Get("X-Madebook-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(body))
		if status != http.StatusOK {
			http.Error(w, "db password is hunter2", status)
		}
	}))
	t.Cleanup(srv.Close)
	h := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", a.AdminTok, map[string]any{
		"url": srv.URL + "/in", "secret": secret, "events": []string{"hard_stop"}})
	path := fmt.Sprintf("/api/v1/webhooks/%d/test", int64(h["id"].(float64)))

	a.Must(http.StatusForbidden, http.MethodPost, path, a.LeadTok, nil)
	a.Must(http.StatusUnauthorized, http.MethodPost, path, "", nil)
	r := a.Must(http.StatusOK, http.MethodPost, path, a.AdminTok, nil)
	if r["delivered"] != true || r["status"] != float64(200) || r["result"] != "delivered" || !strings.HasPrefix(r["delivery"].(string), "test_") {
		t.Errorf("a test the endpoint took: %v", r)
	}
	mu.Lock()
	if len(got) != 1 || !strings.Contains(got[0], `"event":"webhook.test"`) {
		t.Errorf("the endpoint got %q", got)
	}
	status = http.StatusInternalServerError
	mu.Unlock()
	res := a.Do(http.MethodPost, path, a.AdminTok, map[string]any{})
	if res.Status != http.StatusOK || strings.Contains(string(res.Body), "hunter2") ||
		!strings.Contains(string(res.Body), `"result":"HTTP 500 from the endpoint"`) || !strings.Contains(string(res.Body), `"delivered":false`) {
		t.Errorf("a test the endpoint refused: %d %s", res.Status, res.Body)
	}
	activity := a.Must(http.StatusOK, http.MethodGet, "/api/v1/admin/activity?action=webhook.test", a.AdminTok, nil)
	if items, _ := activity["items"].([]any); len(items) != 2 {
		t.Errorf("the activity holds %v", activity)
	}
	a.Must(http.StatusUnprocessableEntity, http.MethodPost, path, a.AdminTok, map[string]any{"to": "elsewhere"})
	a.Must(http.StatusOK, http.MethodDelete, strings.TrimSuffix(path, "/test"), a.AdminTok, nil)
	a.Must(http.StatusNotFound, http.MethodPost, path, a.AdminTok, nil)
	a.Must(http.StatusNotFound, http.MethodPost, "/api/v1/webhooks/x/test", a.AdminTok, nil)
}
