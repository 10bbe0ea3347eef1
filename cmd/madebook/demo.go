package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/madebook/madebook/internal/auth"
)

// The demo's people.
const (
	demoEmail = "demo@example.com"
	demoAgent = "demo-agent"
)

// demoPace is how busy the simulated agent is.
type demoPace struct {
	// briefEvery is how often it briefs each session.
	briefEvery time.Duration
	// gateEvery is how often it opens a new gate.
	gateEvery time.Duration
	// maxGates caps the gates it opens, so that an unattended demo does
	// not grow without bound.
	maxGates int
}

// defaultDemoPace is `serve --demo`'s pace.
var defaultDemoPace = demoPace{briefEvery: 5 * time.Second, gateEvery: 20 * time.Second, maxGates: 30}

// runDemo fills the throwaway database through the server's own public
// API at base (http://ADDR), as a lead and an agent would, prints how to
// sign in, then plays a simulated agent until ctx is done. It returns an
// error only if the setup fails.
func runDemo(ctx context.Context, a *app, base string, pace demoPace, stdout io.Writer, logger *slog.Logger) error {
	password := rand.Text()
	if _, err := a.auth.AddUser(ctx, auth.CommandLine("demo"), demoEmail, password, auth.Admin); err != nil {
		return fmt.Errorf("demo user: %w", err)
	}
	// Under a maximum age (MADEBOOK_TOKEN_MAX_AGE) the demo's credentials
	// live that long; otherwise until the demo ends.
	life := a.auth.MaxAge()
	issued, err := a.auth.IssueToken(ctx, auth.CommandLine("demo"), auth.TokenRequest{Email: demoEmail, Name: "demo", Lifetime: life})
	if err != nil {
		return fmt.Errorf("demo token: %w", err)
	}
	token := issued.Secret
	if issued, err = a.auth.IssueKey(ctx, auth.CommandLine("demo"), auth.KeyRequest{Name: demoAgent, Lifetime: life}); err != nil {
		return fmt.Errorf("demo agent key: %w", err)
	}
	key := issued.Secret
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	api := &demoAPI{base: base, lead: token, agent: key, client: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		gateAgo: func(ctx context.Context, session string, g gateTopic, age time.Duration) error {
			return a.openGateAgo(ctx, key, session, g, age)
		}}
	sessions, err := api.seed(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("demo: %w", err)
	}
	banner := fmt.Sprintf(`
  Madebook demo
  -------------
  Console    %s  (sign in below)
  Email      %s
  Password   %s
  API token  %s
  Agent key  %s
  Try        curl -H 'Authorization: Bearer %s' %s/api/v1/attention

  A simulated agent (%s) briefs every %s and opens a gate every %s, %d at most.
  The database is thrown away at exit (Ctrl-C): %s

`, base, demoEmail, password, token, key, token, base, demoAgent, pace.briefEvery, pace.gateEvery, pace.maxGates, a.path)
	if _, err := io.WriteString(stdout, banner); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	(&simulatedAgent{api: api, pace: pace, sessions: sessions, logger: logger, last: map[string]string{},
		acks: map[string]string{}}).run(ctx)
	return nil
}

// demoAPI calls the public HTTP API as the demo lead or the demo agent.
type demoAPI struct {
	base, lead, agent string
	client            *http.Client
	// gateAgo opens a gate as the demo agent as if age ago: the API opens
	// gates now, and the demo shows one nobody answered in time.
	gateAgo func(ctx context.Context, session string, g gateTopic, age time.Duration) error
}

// call sends body as JSON with the secret and decodes the answer into out
// (unless nil), failing on any status but want.
func (d *demoAPI) call(ctx context.Context, secret, method, path string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// demoSession is a session the demo made, and whether the simulated agent
// keeps working on it (and so opens gates on it now and then).
type demoSession struct {
	id, title string
	working   bool
}

// seed makes the demo's missions and sessions, one in each state a
// person acts on, and returns the sessions.
func (d *demoAPI) seed(ctx context.Context) ([]demoSession, error) {
	for _, m := range []map[string]any{
		{"slug": "billing-cleanup", "title": "Retire the legacy billing tables", "high_risk": true, "evidence": []string{"tests"},
			"text": "Move the last readers of billing_v1 to the ledger, then drop billing_v1 and billing_v1_items."},
		{"slug": "checkout-redesign", "title": "One-page checkout", "gate_ttl": "4h",
			"text": "Merge the three checkout steps into one page. The payment provider and its configuration stay as they are."},
		{"slug": "search-latency", "title": "Halve search latency",
			"text": "Bring the p95 of /search under 200 ms without changing its results."},
	} {
		if err := d.call(ctx, d.lead, http.MethodPost, "/api/v1/missions", m, http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	var out []demoSession
	open := func(mission, title string, working bool) (string, error) {
		var s struct {
			ID string `json:"id"`
		}
		err := d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions",
			map[string]string{"mission": mission, "agent": demoAgent, "title": title}, http.StatusCreated, &s)
		out = append(out, demoSession{id: s.ID, title: title, working: working})
		return s.ID, err
	}
	gated := func(mission, title string, g gateTopic) func() error {
		return func() error {
			id, err := open(mission, title, true)
			if err == nil {
				_, err = d.gate(ctx, id, g)
			}
			return err
		}
	}
	// Each step makes one session and puts it in its state; a step's
	// error stops the seeding.
	steps := []func() error{
		func() error { // HARD_STOP: a secret in the change
			id, err := open("checkout-redesign", "Wire the new payment form", false)
			if err != nil {
				return err
			}
			// Split so that this file does not hold what it reports.
			secret := "AWS_SECRET_ACCESS_KEY" + "=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
			return d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions/"+id+"/changes", map[string]any{
				"files": []map[string]string{
					{"path": "web/checkout/payment.go", "content": "package checkout\n\n// Pay charges the card on file.\nfunc Pay() error { return nil }\n"},
					{"path": "deploy/payments.env", "content": "PAYMENTS_REGION=eu-west-1\n" + secret + "\n"},
				},
				"dependencies": []string{}, "symbols_changed": []string{"checkout.Pay"}, "symbols_used": []string{},
			}, http.StatusOK, nil)
		},
		func() error { // BLOCKED: paused by a lead
			id, err := open("checkout-redesign", "Rewrite the order-confirmation email", false)
			if err != nil {
				return err
			}
			return d.call(ctx, d.lead, http.MethodPost, "/api/v1/sessions/"+id+"/pause",
				map[string]string{"reason": "Waiting on legal's review of the new email wording."}, http.StatusOK, nil)
		},
		func() error { // BLOCKED: a plan waiting for approval on the high-risk mission
			id, err := open("billing-cleanup", "Drop billing_v1 and billing_v1_items", false)
			if err != nil {
				return err
			}
			// Claude Code's Grep and Read only read (gate.Classify); a
			// step's own side_effecting false would lower nothing.
			return d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions/"+id+"/plan", map[string]any{
				"summary": "Find the last readers of billing_v1 and move them to the ledger, then ask before dropping anything.",
				"initial_steps": []map[string]any{
					{"id": "find-readers", "server": "claude-code", "tool": "Grep"},
					{"id": "read-schema", "server": "claude-code", "tool": "Read", "depends_on": []string{"find-readers"}},
				},
				"stopping_points": []map[string]any{{"id": 1, "type": "menu", "title": "Drop billing_v1 now?", "options": map[string]any{
					"1": map[string]any{"label": "Drop both tables", "steps": []map[string]any{{"id": "drop", "tool": "run_migration"}}},
					"2": map[string]any{"label": "Archive the rows first", "steps": []map[string]any{{"id": "archive", "tool": "run_migration"}}},
				}}},
			}, http.StatusCreated, nil)
		},
		gated("checkout-redesign", "Merge the cart and checkout pages", gateTopics[0]), // DECISION_REQUIRED
		gated("search-latency", "Add a full-text index", gateTopics[1]),                // DECISION_REQUIRED
		func() error { // DECISION_REQUIRED, expired: nobody answered it for five hours; the mission's gates expire after four
			id, err := open("checkout-redesign", "Retire the 2019 coupon codes", false)
			if err != nil {
				return err
			}
			return d.gateAgo(ctx, id, expiredTopic, 5*time.Hour)
		},
		func() error { // a run parked on a question
			id, err := open("search-latency", "Profile the search endpoint", true)
			if err != nil {
				return err
			}
			var run struct {
				ID string `json:"id"`
			}
			if err := d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions/"+id+"/runs",
				map[string]string{"name": "load-test"}, http.StatusCreated, &run); err != nil {
				return err
			}
			return d.call(ctx, d.agent, http.MethodPost, "/api/v1/runs/"+run.ID+"/asks", map[string]any{
				"prompt":  "Run a 10-minute load test against staging?",
				"options": map[string]string{"1": "Yes, run it now", "2": "No, replay last week's traces instead"},
			}, http.StatusCreated, nil)
		},
		func() error { // REMEDIATE: a lead asked for a fix
			id, err := open("checkout-redesign", "Split the address form", true)
			if err != nil {
				return err
			}
			return d.call(ctx, d.lead, http.MethodPost, "/api/v1/sessions/"+id+"/remediations", map[string]any{
				"severity":    "required",
				"instruction": "The postcode field lost its validation in the split; restore it and add a test.",
				"files":       []string{"web/checkout/address.go"},
			}, http.StatusCreated, nil)
		},
		func() error { // BLOCKED: a plan in CONFIRMING, walked there by the lifecycle's events
			id, err := open("billing-cleanup", "Move the invoice readers to the ledger", false)
			if err != nil {
				return err
			}
			return d.events(ctx, id,
				map[string]any{"name": "user.message.created"},
				map[string]any{"name": "IntentClassified", "payload": map[string]string{"intent": "task"}},
				map[string]any{"name": "architecture.impact.completed", "payload": map[string]string{"level": "architecture"}},
				map[string]any{"name": "architecture.plan.updated", "payload": map[string]any{
					"summary": "Point the three invoice readers at ledger views, one per pull request.",
					"initial_steps": []map[string]any{
						{"id": "list-readers", "server": "claude-code", "tool": "Grep"},
						{"id": "write-views", "tool": "edit_file", "depends_on": []string{"list-readers"}},
					},
					"stopping_points": []map[string]any{},
				}})
		},
		func() error { // DECISION_REQUIRED: a permission prompt, and a task reported blocked
			id, err := open("search-latency", "Rebuild the search index", true)
			if err != nil {
				return err
			}
			return d.events(ctx, id,
				map[string]any{"name": "user.message.created"},
				map[string]any{"name": "IntentClassified", "payload": map[string]string{"intent": "task"}},
				map[string]any{"name": "architecture.impact.completed", "payload": map[string]string{"level": "implementation"}},
				map[string]any{"name": "task.created", "payload": map[string]string{"task": "reindex"}},
				map[string]any{"name": "task.created", "payload": map[string]string{"task": "warm-cache"}},
				map[string]any{"name": "task.blocked", "payload": map[string]string{"task": "warm-cache"}},
				map[string]any{"name": "permission.prompt.requested", "payload": map[string]any{
					"prompt":  "Run `make reindex ENV=staging`? It takes the staging search offline for about 4 minutes.",
					"options": map[string]string{"1": "Allow once", "2": "Deny", "3": "Allow for this session"},
					"tool":    "Bash", "paths": []string{"Makefile"},
				}})
		},
		func() error { // CONTINUE
			_, err := open("search-latency", "Cache the facet counts", false)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// events reports lifecycle events on the session as its agent, in order.
func (d *demoAPI) events(ctx context.Context, session string, events ...map[string]any) error {
	for _, e := range events {
		if err := d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions/"+session+"/events", e, http.StatusOK, nil); err != nil {
			return err
		}
	}
	return nil
}

// gateTopic is a question the simulated agent asks a person.
type gateTopic struct {
	title, question, proposal string
	blocked, allowed          []string
}

// gateTopics are the simulated agent's questions, asked in turn.
var gateTopics = []gateTopic{
	{"Cart state", "Keep the cart in the session cookie, or move it to the database?",
		"Move it to the database: the cookie is at its 4 KB limit.", []string{"internal/cart/", "db/migrations"}, []string{"web/checkout/", "views/"}},
	{"New dependency", "May I add bleve, a pure-Go full-text index, as a dependency?",
		"Add bleve v2 behind an interface so it can be swapped out.", []string{"go.mod", "internal/search/"}, []string{"internal/search/bench/", "docs/"}},
	{"Public API change", "The /search response gains a `took_ms` field. Is a new field a breaking change for our clients?",
		"Add it; clients ignore unknown fields.", []string{"api/openapi.yaml"}, []string{"internal/search/"}},
	{"Flaky test", "TestCheckoutTotals fails one run in twenty on CI. Skip it for now, or fix it first?",
		"Fix it first: the rounding is wrong, not the test.", []string{".github/workflows/"}, []string{"web/checkout/"}},
	{"Migration", "Add an index on orders(created_at)? It locks the table for about 40 s in production.",
		"Create it concurrently in the next maintenance window.", []string{"db/migrations"}, []string{"internal/orders/"}},
	{"Feature flag", "Ship the one-page checkout behind a flag, or replace the old flow at once?",
		"Behind a flag, 10% of traffic first.", []string{"web/checkout/legacy/"}, []string{"web/checkout/", "internal/flags/"}},
	{"Logging", "The payment handler logs the full request. Drop the body from the logs?",
		"Log the order id and the status only.", []string{"internal/payments/"}, []string{"web/checkout/"}},
	{"Timeout", "Raise the search backend's timeout from 2 s to 5 s while the index warms up?",
		"Keep 2 s and serve stale results on timeout.", []string{"deploy/"}, []string{"internal/search/"}},
	{"Vendored code", "The address autocomplete is vendored and has a bug. Patch the vendored copy, or upgrade it?",
		"Upgrade to the release that fixes it.", []string{"vendor/"}, []string{"web/checkout/address.go"}},
	{"Data backfill", "Backfill 1.2 M rows of search_clicks now, or let them fill in over a week?",
		"Let them fill in; the backfill doubles the database load for an hour.", []string{"db/migrations", "scripts/backfill/"}, []string{"internal/search/"}},
}

// expiredTopic is the demo's gate that nobody answered in time.
var expiredTopic = gateTopic{"Coupon codes", "Delete the 2019 coupon codes, or keep them for the accounting export?",
	"Keep them, marked inactive.", []string{"db/migrations", "internal/coupons/"}, []string{"web/checkout/"}}

// gate opens a gate on the session, as its agent, and returns its
// reference.
func (d *demoAPI) gate(ctx context.Context, session string, g gateTopic) (string, error) {
	var dec struct {
		Ref string `json:"ref"`
	}
	err := d.call(ctx, d.agent, http.MethodPost, "/api/v1/sessions/"+session+"/decisions", map[string]any{
		"title": g.title, "question": g.question, "proposal": g.proposal, "blocked_scope": g.blocked, "allowed_scope": g.allowed,
	}, http.StatusCreated, &dec)
	return dec.Ref, err
}

// simulatedAgent briefs every session and now and then opens a gate on
// one of its working sessions, at its pace.
type simulatedAgent struct {
	api      *demoAPI
	pace     demoPace
	sessions []demoSession
	logger   *slog.Logger
	last     map[string]string // session → its last next_action
	acks     map[string]string // session → its last brief's id, acknowledged on the next
	opened   int
}

func (s *simulatedAgent) run(ctx context.Context) {
	briefs, gates := time.NewTicker(s.pace.briefEvery), time.NewTicker(s.pace.gateEvery)
	defer briefs.Stop()
	defer gates.Stop()
	s.briefAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-briefs.C:
			s.briefAll(ctx)
		case <-gates.C:
			s.openGate(ctx)
		}
	}
}

// briefAll briefs each session and logs what changed: a new next action,
// and every resolution or remediation a brief delivers.
func (s *simulatedAgent) briefAll(ctx context.Context) {
	for _, ses := range s.sessions {
		var b struct {
			BriefID     string `json:"brief_id"`
			NextAction  string `json:"next_action"`
			Reason      string `json:"reason"`
			Resolutions []struct {
				Ref         string `json:"ref"`
				Resolution  string `json:"resolution"`
				Instruction string `json:"instruction"`
			} `json:"resolutions"`
		}
		req := map[string]string{"session": ses.id}
		if ack := s.acks[ses.id]; ack != "" {
			req["ack"] = ack
		}
		err := s.api.call(ctx, s.api.agent, http.MethodPost, "/brief", req, http.StatusOK, &b)
		if err != nil {
			s.failed(ctx, err)
			return
		}
		s.acks[ses.id] = b.BriefID
		for _, r := range b.Resolutions {
			s.logger.Info("demo agent received a resolution", "session", ses.title, "ref", r.Ref,
				"resolution", r.Resolution, "instruction", r.Instruction)
		}
		if prev, ok := s.last[ses.id]; ok && prev != b.NextAction {
			s.logger.Info("demo agent's next action changed", "session", ses.title, "from", prev, "to", b.NextAction, "reason", b.Reason)
		}
		s.last[ses.id] = b.NextAction
	}
}

// openGate opens the next gate topic on the next working session that is
// not stopped or blocked.
func (s *simulatedAgent) openGate(ctx context.Context) {
	if s.opened >= s.pace.maxGates {
		return
	}
	for i := range s.sessions {
		ses := s.sessions[(s.opened+i)%len(s.sessions)]
		if next := s.last[ses.id]; !ses.working || next == "HARD_STOP" || next == "BLOCKED" {
			continue
		}
		g := gateTopics[(s.opened+2)%len(gateTopics)] // the seeding asked the first two
		ref, err := s.api.gate(ctx, ses.id, g)
		if err != nil {
			s.failed(ctx, err)
			return
		}
		s.opened++
		s.logger.Info("demo agent opened a gate", "ref", ref, "session", ses.title, "title", g.title,
			"opened", s.opened, "max", s.pace.maxGates)
		return
	}
}

// failed logs a failed call, unless the demo is stopping.
func (s *simulatedAgent) failed(ctx context.Context, err error) {
	if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		s.logger.Warn("demo agent", "error", err)
	}
}

// quietRequests is a log handler that drops the per-request lines below
// warning: in the demo the simulated agent's requests would bury
// everything else.
type quietRequests struct{ slog.Handler }

func (q quietRequests) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "request" && r.Level < slog.LevelWarn {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietRequests) WithAttrs(as []slog.Attr) slog.Handler {
	return quietRequests{q.Handler.WithAttrs(as)}
}

func (q quietRequests) WithGroup(name string) slog.Handler {
	return quietRequests{q.Handler.WithGroup(name)}
}
