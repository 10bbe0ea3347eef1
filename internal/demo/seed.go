package demo

import (
	"context"
	"net/http"
	"time"
)

// session is a session the demo made, and whether the simulated agent
// keeps working on it (and so opens gates on it now and then).
type session struct {
	id, title string
	working   bool
}

// missions are the demo's missions, created by the lead.
var missions = []map[string]any{
	{"slug": "billing-cleanup", "title": "Retire the legacy billing tables", "high_risk": true, "evidence": []string{"tests"},
		"text": "Move the last readers of billing_v1 to the ledger, then drop billing_v1 and billing_v1_items."},
	{"slug": "checkout-redesign", "title": "One-page checkout", "gate_ttl": "4h",
		"text": "Merge the three checkout steps into one page. The payment provider and its configuration stay as they are."},
	{"slug": "search-latency", "title": "Halve search latency",
		"text": "Bring the p95 of /search under 200 ms without changing its results."},
}

// step is one seeded session: its mission and title, whether the
// simulated agent keeps working on it, and what puts it in its state
// (nil: nothing, it continues).
type step struct {
	mission, title string
	working        bool
	act            func(ctx context.Context, c *client, session string) error
}

// steps are the demo's sessions, one in each state a person acts on.
var steps = []step{
	{"checkout-redesign", "Wire the new payment form", false, reportSecret},                   // HARD_STOP
	{"checkout-redesign", "Rewrite the order-confirmation email", false, pauseForReview},      // BLOCKED: paused
	{"billing-cleanup", "Drop billing_v1 and billing_v1_items", false, submitPlan},            // BLOCKED: plan to approve
	{"checkout-redesign", "Merge the cart and checkout pages", true, openGate(gateTopics[0])}, // DECISION_REQUIRED
	{"search-latency", "Add a full-text index", true, openGate(gateTopics[1])},                // DECISION_REQUIRED
	{"checkout-redesign", "Retire the 2019 coupon codes", false, openExpiredGate},             // DECISION_REQUIRED, expired
	{"search-latency", "Profile the search endpoint", true, parkOnAsk},                        // a run parked on a question
	{"checkout-redesign", "Split the address form", true, askForFix},                          // REMEDIATE
	{"billing-cleanup", "Move the invoice readers to the ledger", false, walkToConfirming},    // BLOCKED: plan in CONFIRMING
	{"search-latency", "Rebuild the search index", true, promptForPermission},                 // DECISION_REQUIRED: a prompt
	{"search-latency", "Cache the facet counts", false, nil},                                  // CONTINUE
}

// seed makes the demo's missions and sessions, each put in its state, and
// returns the sessions. The first failure stops it.
func seed(ctx context.Context, c *client) ([]session, error) {
	for _, m := range missions {
		if err := c.call(ctx, c.lead, http.MethodPost, "/api/v1/missions", m, http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	var out []session
	for _, s := range steps {
		id, err := c.openSession(ctx, s.mission, s.title)
		if err != nil {
			return nil, err
		}
		if s.act != nil {
			if err := s.act(ctx, c, id); err != nil {
				return nil, err
			}
		}
		out = append(out, session{id: id, title: s.title, working: s.working})
	}
	return out, nil
}

// reportSecret reports a change that holds a secret: a hard stop.
func reportSecret(ctx context.Context, c *client, id string) error {
	// Split so that this file does not hold what it reports.
	secret := "AWS_SECRET_ACCESS_KEY" + "=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	return c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions/"+id+"/changes", map[string]any{
		"files": []map[string]string{
			{"path": "web/checkout/payment.go", "content": "package checkout\n\n// Pay charges the card on file.\nfunc Pay() error { return nil }\n"},
			{"path": "deploy/payments.env", "content": "PAYMENTS_REGION=eu-west-1\n" + secret + "\n"},
		},
		"dependencies": []string{}, "symbols_changed": []string{"checkout.Pay"}, "symbols_used": []string{},
	}, http.StatusOK, nil)
}

// pauseForReview has the lead pause the session.
func pauseForReview(ctx context.Context, c *client, id string) error {
	return c.call(ctx, c.lead, http.MethodPost, "/api/v1/sessions/"+id+"/pause",
		map[string]string{"reason": "Waiting on legal's review of the new email wording."}, http.StatusOK, nil)
}

// submitPlan submits a plan on the high-risk mission, which waits for a
// lead's approval.
func submitPlan(ctx context.Context, c *client, id string) error {
	// Claude Code's Grep and Read only read (gate.Classify); a step's own
	// side_effecting false would lower nothing.
	return c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions/"+id+"/plan", map[string]any{
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
}

// openGate opens a gate on g.
func openGate(g Gate) func(ctx context.Context, c *client, id string) error {
	return func(ctx context.Context, c *client, id string) error {
		_, err := c.gate(ctx, id, g)
		return err
	}
}

// openExpiredGate opens a gate nobody answered for five hours; the
// mission's gates expire after four.
func openExpiredGate(ctx context.Context, c *client, id string) error {
	return c.gateAgo(ctx, id, expiredTopic, 5*time.Hour)
}

// parkOnAsk starts a run and parks it on a question.
func parkOnAsk(ctx context.Context, c *client, id string) error {
	var run struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions/"+id+"/runs",
		map[string]string{"name": "load-test"}, http.StatusCreated, &run); err != nil {
		return err
	}
	return c.call(ctx, c.agent, http.MethodPost, "/api/v1/runs/"+run.ID+"/asks", map[string]any{
		"prompt":  "Run a 10-minute load test against staging?",
		"options": map[string]string{"1": "Yes, run it now", "2": "No, replay last week's traces instead"},
	}, http.StatusCreated, nil)
}

// askForFix has the lead ask for a fix.
func askForFix(ctx context.Context, c *client, id string) error {
	return c.call(ctx, c.lead, http.MethodPost, "/api/v1/sessions/"+id+"/remediations", map[string]any{
		"severity":    "required",
		"instruction": "The postcode field lost its validation in the split; restore it and add a test.",
		"files":       []string{"web/checkout/address.go"},
	}, http.StatusCreated, nil)
}

// walkToConfirming walks the lifecycle to a plan in CONFIRMING by its
// events.
func walkToConfirming(ctx context.Context, c *client, id string) error {
	return c.events(ctx, id,
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
}

// promptForPermission reports a task blocked and a permission prompt.
func promptForPermission(ctx context.Context, c *client, id string) error {
	return c.events(ctx, id,
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
}
