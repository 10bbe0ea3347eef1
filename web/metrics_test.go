package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// /metrics, read with an admin's token, counts what happened: the brief's
// latency by route, the Attention view by kind, what briefs handed over
// and handed over again, and the refusals of a rate limit.
func TestMetricsCountWhatHappened(t *testing.T) {
	a := webtest.NewAPI(t)
	ctx := context.Background()
	id := a.Session(false)
	d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "Schema", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	scrape := func() string {
		t.Helper()
		r := a.Do(http.MethodGet, "/metrics", a.AdminTok, nil)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("GET /metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		return string(r.Body)
	}
	has := func(body string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(body, l) {
				t.Errorf("the metrics lack %q", l)
			}
		}
	}
	has(scrape(), `madebook_attention_items{kind="decision"} 1`,
		`madebook_request_duration_seconds_count{method="POST",route="/brief"} 1`,
		`madebook_webhook_deliveries_total{outcome="delivered"} 0`)

	// Resolved and briefed: delivered once; past the lease, again.
	if _, err := a.Kit.Gov.Decisions.Resolve(ctx, a.Lead, d.Ref, "Keep it", "Archive instead."); err != nil {
		t.Fatal(err)
	}
	a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	a.Kit.Clock.Advance(a.Kit.Gov.Options().DeliveryLease + 1)
	a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]any{"session": id})
	has(scrape(), `madebook_attention_items{kind="decision"} 0`,
		`madebook_deliveries_total{kind="resolution",redelivered="false"} 1`,
		`madebook_deliveries_total{kind="resolution",redelivered="true"} 1`,
		`madebook_request_duration_seconds_count{method="POST",route="/brief"} 3`)
}

// A request a rate limit refuses (429) is counted by its route.
func TestMetricsCountRateLimitRefusals(t *testing.T) {
	a := webtest.NewAPI(t)
	for range 30 {
		r := a.Do(http.MethodPost, "/login", "", url.Values{"email": {a.Lead.Email}, "password": {"wrong-password"}})
		if r.Status == http.StatusTooManyRequests {
			body := string(a.Do(http.MethodGet, "/metrics", a.AdminTok, nil).Body)
			if !strings.Contains(body, `madebook_rate_limited_total{route="/login"} 1`) {
				t.Fatalf("the first 429 is not counted:\n%s", body)
			}
			return
		}
	}
	t.Fatal("thirty failed sign-ins were never refused with 429")
}
