package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
)

// TestServeSweepsExpiredGatesAtStart opens a gate five hours ago on a
// mission whose gates expire after four, then starts serve: its first
// sweep records the gate expired once, the brief says so, and the gate
// leads the Attention queue.
func TestServeSweepsExpiredGatesAtStart(t *testing.T) {
	t.Parallel()
	path := tempDB(t)
	leadToken, agentKey := setupPeople(t, path)

	ctx := context.Background()
	var ref, session string
	func() {
		store, err := db.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		a := auth.NewService(store, time.Now)
		lead, err := a.Authenticate(ctx, leadToken)
		if err != nil {
			t.Fatal(err)
		}
		agent, err := a.Authenticate(ctx, agentKey)
		if err != nil {
			t.Fatal(err)
		}
		past := governance.New(store, func() time.Time { return time.Now().Add(-5 * time.Hour) }, governance.Options{})
		if _, err := past.Missions.Create(ctx, lead, governance.MissionInput{Slug: "billing", Title: "Billing", GateTTL: "4h"}); err != nil {
			t.Fatal(err)
		}
		s, err := past.Sessions.Create(ctx, agent, governance.SessionInput{Mission: "billing", Title: "Drop the legacy table"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := past.Decisions.Open(ctx, agent, s.ID, governance.DecisionInput{Title: "Legacy billing",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
		if err != nil {
			t.Fatal(err)
		}
		ref, session = d.Ref, s.ID
	}()

	s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--expiry-sweep", "1h")
	lines := waitForLog(t, s, func(msg string) bool { return msg == "gates expired" })
	found := false
	for _, l := range lines {
		if l["msg"] == "gates expired" && l["count"] == float64(1) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no \"gates expired\" line with count 1 at start: %v", msgs(lines))
	}

	b := s.brief(agentKey, session)
	if b.NextAction != "DECISION_REQUIRED" || len(b.Reasons) != 1 || b.Reasons[0].Code != "decision_expired" ||
		!strings.HasPrefix(b.Reason, ref+" expired unanswered after 4h: ") {
		t.Fatalf("brief %+v: want DECISION_REQUIRED, decision_expired", b)
	}
	q := s.req(http.StatusOK, http.MethodGet, "/api/v1/attention", leadToken, nil)
	items, _ := q["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("attention %v: want the expired gate", q)
	}
	first, _ := items[0].(map[string]any)
	if first["ref"] != ref || first["expired"] != true || first["expired_at"] == nil {
		t.Fatalf("first item %v: want %s, expired, with expired_at", first, ref)
	}
	m := s.req(http.StatusOK, http.MethodGet, "/api/v1/missions/billing", leadToken, nil)
	if m["gate_ttl"] != "4h" {
		t.Fatalf("mission %v: want gate_ttl 4h", m)
	}
	httpClient.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}

	// A second start (a restart, or another replica) records nothing again.
	s2 := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--expiry-sweep", "1h")
	s2.brief(agentKey, session)
	httpClient.CloseIdleConnections()
	if err := s2.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, l := range s2.logLines() {
		if l["msg"] == "gates expired" {
			t.Fatalf("the restart recorded gates expired again: %v", l)
		}
	}
	store, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var n int
	if err := store.Writer().QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE kind = 'decision.expired' AND ref = ? AND actor = 'system:gate-expiry'", ref).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d decision.expired events for %s, want 1", n, ref)
	}
}
