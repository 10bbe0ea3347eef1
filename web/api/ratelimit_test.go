package api_test

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// A key over a limit is refused with 429 rate_limited and Retry-After,
// before anything runs: nothing is written, other keys are not slowed,
// and its reads go on while its writes wait.
func TestAKeyOverItsLimitIsToldToWait(t *testing.T) {
	a := webtest.NewAPIWith(t, func(d *web.Deps) {
		d.Limits = ratelimit.New(ratelimit.Config{Requests: ratelimit.Limit{N: 1000, Per: time.Second},
			Writes: ratelimit.Limit{N: 1000, Per: time.Second}, Sessions: ratelimit.Limit{N: 2, Per: time.Hour}})
	})
	mission := a.Kit.Mission(a.Lead, false)
	open := map[string]any{"mission": mission, "agent": "claude-code"}
	var first string
	for i := 0; i < 2; i++ {
		s := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.AgentKey, open)
		first, _ = s["id"].(string)
	}
	before := a.Kit.Dump()
	r := a.Do(http.MethodPost, "/api/v1/sessions", a.AgentKey, open)
	webtest.CheckError(t, r, http.StatusTooManyRequests, "rate_limited")
	body := r.Object(t)["error"].(map[string]any)
	wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || wait < 1799 || wait > 1800 || body["retry_after"] != float64(wait) {
		t.Errorf("Retry-After %q, retry_after %v: want the half hour until a session's token refills, in both", r.Header.Get("Retry-After"), body["retry_after"])
	}
	if msg, _ := body["message"].(string); !strings.Contains(msg, "2/h sessions") {
		t.Errorf("the message does not name the limit: %q", msg)
	}
	if after := a.Kit.Dump(); !reflect.DeepEqual(before, after) {
		t.Error("a refused session opening changed the database")
	}
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.OtherKey, open)
	a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": first})
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+first+"/decisions",
		a.AgentKey, map[string]any{"title": "Schema", "question": "Drop the legacy table?"})

	metrics := string(a.Do(http.MethodGet, "/metrics", a.AdminTok, nil).Body)
	if !strings.Contains(metrics, `madebook_rate_limited_total{route="/api/v1/sessions"} 1`) {
		t.Error("/metrics does not count the refusal by its route")
	}
}

// A person's token is limited as a key is, by itself.
func TestATokenIsLimitedOnItsOwn(t *testing.T) {
	a := webtest.NewAPIWith(t, func(d *web.Deps) {
		d.Limits = ratelimit.New(ratelimit.Config{Requests: ratelimit.Limit{N: 3, Per: time.Minute}})
	})
	for i := 0; i < 3; i++ {
		a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.LeadTok, nil)
	}
	r := a.Do(http.MethodGet, "/api/v1/attention", a.LeadTok, nil)
	webtest.CheckError(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.Header.Get("Retry-After") != "20" {
		t.Errorf("Retry-After %q, want 20", r.Header.Get("Retry-After"))
	}
	a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.AdminTok, nil)
}
