package demo_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/demo"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// gateAgo opens gates through a second set of services whose clock is
// set back, as serve's does.
func gateAgo(k *testkit.Kit) func(ctx context.Context, key, session string, g demo.Gate, age time.Duration) error {
	return func(ctx context.Context, key, session string, g demo.Gate, age time.Duration) error {
		agent, err := k.Auth.Authenticate(ctx, key)
		if err != nil {
			return err
		}
		then := k.Clock.Now().Add(-age)
		_, err = governance.New(k.Store, func() time.Time { return then }, governance.Options{}).Decisions.Open(ctx, agent, session,
			governance.DecisionInput{Title: g.Title, Question: g.Question, Proposal: g.Proposal, BlockedScope: g.Blocked, AllowedScope: g.Allowed})
		return err
	}
}

// The demo seeds, prints its banner, then plays the agent at a fast
// pace: it opens gates until its cap, then stops, and returns when its
// context ends.
func TestTheSimulatedAgentOpensGatesUpToItsCap(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	srv := httptest.NewServer(web.NewServer(webtest.Deps(k)))
	defer srv.Close()
	var logs, banner webtest.Log
	pace := demo.Pace{BriefEvery: 5 * time.Millisecond, GateEvery: 10 * time.Millisecond, MaxGates: 3}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- demo.Run(ctx, demo.Config{Auth: k.Auth, URL: srv.URL, DB: k.Path, Pace: pace, Out: &banner,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil)), GateAgo: gateAgo(k)})
	}()

	openGates := func() int {
		var n int
		if err := k.Store.Writer().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM decisions WHERE resolved_at IS NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const seeded = 3 // two open gates and one expired
	for deadline := time.Now().Add(10 * time.Second); openGates() < seeded+pace.MaxGates && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(10 * pace.GateEvery)
	if n := openGates(); n != seeded+pace.MaxGates {
		t.Errorf("%d open gates, want the seeding's %d and the agent's %d", n, seeded, pace.MaxGates)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the simulated agent did not stop with its context")
	}
	for _, want := range []string{"Console    " + srv.URL, "Email      " + demo.Email, "Agent key  mbk_", "thrown away at exit (Ctrl-C): " + k.Path} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner.String())
		}
	}
	if got := strings.Count(logs.String(), `"msg":"demo agent opened a gate"`); got != pace.MaxGates {
		t.Errorf("%d \"opened a gate\" lines, want %d:\n%s", got, pace.MaxGates, logs.String())
	}
	if strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("the agent logged a failure:\n%s", logs.String())
	}
}

// A failure to set up is the demo's error; a demo stopped while it sets
// up is none.
func TestRunFailsOnlyWhileItSetsUp(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	srv := httptest.NewServer(web.NewServer(webtest.Deps(k)))
	srv.Close() // nothing answers
	cfg := demo.Config{Auth: k.Auth, URL: srv.URL, DB: k.Path, Pace: demo.DefaultPace, Out: &webtest.Log{},
		Logger: slog.New(slog.DiscardHandler), GateAgo: gateAgo(k)}
	if err := demo.Run(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "seed: ") || !strings.Contains(err.Error(), "/api/v1/missions") {
		t.Errorf("Run against a closed server: %v, want the seeding's failure", err)
	}
	// The demo user exists now: a second demo cannot set up.
	if err := demo.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "add the demo user") {
		t.Errorf("Run again: %v, want the demo user's failure", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Auth = testkit.New(t).Auth
	if err := demo.Run(ctx, cfg); err != nil {
		t.Errorf("Run with its context done: %v, want nil", err)
	}
}

// The demo's log drops the request lines below warning, and keeps
// everything else.
func TestQuietRequests(t *testing.T) {
	t.Parallel()
	var b webtest.Log
	logger := slog.New(demo.QuietRequests(slog.NewJSONHandler(&b, nil))).With("app", "madebook").WithGroup("g")
	logger.Info("request", "status", 200)
	logger.Warn("request", "status", 500)
	logger.Info("demo agent opened a gate")
	out := b.String()
	if strings.Contains(out, `"status":200`) || !strings.Contains(out, `"status":500`) || !strings.Contains(out, "opened a gate") ||
		strings.Count(out, `"app":"madebook"`) != 2 {
		t.Errorf("logged:\n%s", out)
	}
}
