package governance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/rules"
	"github.com/madebook/madebook/internal/testkit"
)

// newest returns the newest admin activity entry, as an admin reads it.
func newest(t *testing.T, w *world) activity.Entry {
	t.Helper()
	page, err := w.Gov.Activity.List(context.Background(), w.admin, activity.Page{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("the newest entry: %+v %v", page, err)
	}
	return page.Items[0]
}

// state decodes a recorded state; nil for JSON null.
func state(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return m
}

// TestEveryAdminActionIsRecordedWithWhoWhenWhatBeforeAndAfter does each
// admin action of the services (the console, the API and the command line
// all call them) and reads the entry it recorded.
func TestEveryAdminActionIsRecordedWithWhoWhenWhatBeforeAndAfter(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cli := auth.CommandLine("ann")
	var policyID int64
	var webhookID int64
	var keyID int64
	var tokenID int64
	var userID int64
	cases := []struct {
		name          string
		do            func() error
		actor, action string
		target        string
		before, after map[string]any
	}{
		{name: "an admin adds a user", actor: w.admin.Email, action: "user.add", target: "user new@example.com",
			do: func() error {
				u, err := w.Auth.AddUser(ctx, w.admin, "new@example.com", "a-long-password", auth.Viewer)
				userID = u.ID
				return err
			},
			after: map[string]any{"email": "new@example.com", "role": "viewer", "disabled": false}},
		{name: "the command line adds a user", actor: "cli:ann", action: "user.add", target: "user cli@example.com",
			do: func() error {
				_, err := w.Auth.AddUser(ctx, cli, "cli@example.com", "a-long-password", auth.Admin)
				return err
			},
			after: map[string]any{"email": "cli@example.com", "role": "admin", "disabled": false}},
		{name: "an admin changes a role", actor: w.admin.Email, action: "user.role", target: "user new@example.com",
			do:     func() error { _, err := w.Auth.SetRole(ctx, w.admin, userID, auth.Lead); return err },
			before: map[string]any{"email": "new@example.com", "role": "viewer", "disabled": false},
			after:  map[string]any{"email": "new@example.com", "role": "lead", "disabled": false}},
		{name: "an admin disables a user", actor: w.admin.Email, action: "user.disable", target: "user new@example.com",
			do:     func() error { _, err := w.Auth.SetDisabled(ctx, w.admin, userID, true); return err },
			before: map[string]any{"email": "new@example.com", "role": "lead", "disabled": false},
			after:  map[string]any{"email": "new@example.com", "role": "lead", "disabled": true}},
		{name: "an admin enables a user", actor: w.admin.Email, action: "user.enable", target: "user new@example.com",
			do:     func() error { _, err := w.Auth.SetDisabled(ctx, w.admin, userID, false); return err },
			before: map[string]any{"email": "new@example.com", "role": "lead", "disabled": true},
			after:  map[string]any{"email": "new@example.com", "role": "lead", "disabled": false}},
		{name: "an admin creates an agent key", actor: w.admin.Email, action: "key.create", target: "key * (builder-x)",
			do: func() error {
				secret, err := w.Auth.CreateKey(ctx, w.admin, "builder-x")
				if err == nil {
					a, _ := w.Auth.Authenticate(ctx, secret)
					keyID = a.KeyID
				}
				return err
			},
			after: map[string]any{"name": "builder-x", "prefix": "*", "expires_at": nil, "revoked": false}},
		{name: "the command line creates an agent key that expires", actor: "cli:ann", action: "key.create", target: "key * (cli-agent)",
			do: func() error {
				_, err := w.Auth.IssueKey(ctx, cli, auth.KeyRequest{Name: "cli-agent", Lifetime: 90 * 24 * time.Hour})
				return err
			},
			after: map[string]any{"name": "cli-agent", "prefix": "*", "expires_at": "2027-*", "revoked": false}},
		{name: "an admin revokes an agent key", actor: w.admin.Email, action: "key.revoke", target: "key * (builder-x)",
			do:     func() error { _, err := w.Auth.RevokeKey(ctx, w.admin, keyID); return err },
			before: map[string]any{"name": "builder-x", "prefix": "*", "expires_at": nil, "revoked": false},
			after:  map[string]any{"name": "builder-x", "prefix": "*", "expires_at": nil, "revoked": true}},
		{name: "the command line creates a personal token", actor: "cli:ann", action: "token.create", target: "user cli@example.com",
			do: func() error {
				t, err := w.Auth.IssueToken(ctx, cli, auth.TokenRequest{Email: "cli@example.com", Name: "laptop", Lifetime: time.Hour})
				tokenID = t.ID
				return err
			},
			after: map[string]any{"token_id": "*", "name": "laptop", "prefix": "*", "expires_at": "2026-*", "revoked": false, "role": "admin"}},
		{name: "a person revokes their personal token", actor: "cli@example.com", action: "token.revoke", target: "user cli@example.com",
			do: func() error {
				owner, err := w.Auth.CheckPassword(ctx, "cli@example.com", "a-long-password")
				if err == nil {
					_, err = w.Auth.RevokeToken(ctx, auth.Actor{UserID: owner.ID, Email: owner.Email, Role: owner.Role}, tokenID)
				}
				return err
			},
			before: map[string]any{"token_id": "*", "name": "laptop", "prefix": "*", "expires_at": "2026-*", "revoked": false},
			after:  map[string]any{"token_id": "*", "name": "laptop", "prefix": "*", "expires_at": "2026-*", "revoked": true}},
		{name: "an admin defines a policy", actor: w.admin.Email, action: "policy.create", target: "policy * (No console.log)",
			do: func() error {
				p, err := w.Gov.Policies.Create(ctx, w.admin, governance.PolicyInput{Name: "No console.log", Severity: "high",
					Kind: "content_regex", Pattern: `console\.log\(`, Action: "violation"})
				policyID = p.ID
				return err
			},
			after: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": true}},
		{name: "an admin disables a policy", actor: w.admin.Email, action: "policy.disable", target: "policy * (No console.log)",
			do: func() error { _, err := w.Gov.Policies.SetEnabled(ctx, w.admin, policyID, false); return err },
			before: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": true},
			after: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": false}},
		{name: "an admin enables a policy", actor: w.admin.Email, action: "policy.enable", target: "policy * (No console.log)",
			do: func() error { _, err := w.Gov.Policies.SetEnabled(ctx, w.admin, policyID, true); return err },
			before: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": false},
			after: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": true}},
		{name: "an admin deletes a policy", actor: w.admin.Email, action: "policy.delete", target: "policy * (No console.log)",
			do: func() error { _, err := w.Gov.Policies.Delete(ctx, w.admin, policyID); return err },
			before: map[string]any{"name": "No console.log", "severity": "high", "kind": "content_regex", "pattern": `console\.log\(`,
				"action": "violation", "builtin": false, "enabled": true}},
		{name: "an admin defines a rule", actor: w.admin.Email, action: "rule.create", target: "rule * (server state)",
			do: func() error {
				_, err := w.Gov.Policies.CreateRule(ctx, w.admin, governance.RuleInput{Concern: "server state", Chosen: "React Query",
					Departures: []string{"redux-toolkit"}, Support: 31, Total: 34, Enforced: true})
				return err
			},
			after: map[string]any{"concern": "server state", "chosen": "React Query", "departures": []any{"redux-toolkit"},
				"support": float64(31), "total": float64(34), "enforced": true}},
		{name: "the command line imports rules", actor: "cli:ann", action: "rules.import", target: "1 rules",
			do: func() error {
				_, err := w.Gov.Policies.ImportRules(ctx, cli, []rules.Rule{{Concern: "logging", Chosen: "slog", Departures: []string{"logrus"},
					Support: 5, Total: 6}})
				return err
			},
			after: map[string]any{"rules": []any{map[string]any{"id": "*", "concern": "logging", "chosen": "slog",
				"departures": []any{"logrus"}, "support": float64(5), "total": float64(6), "enforced": false}}}},
		{name: "an admin sets the risk gates", actor: w.admin.Email, action: "risk_gates.set", target: "risk gates",
			do: func() error {
				_, err := w.Gov.Policies.SetRiskGates(ctx, w.admin, governance.RiskGates{"high": "two reviews"})
				return err
			},
			before: map[string]any{"low": "*", "medium": "*", "high": "*", "critical": "*"},
			after:  map[string]any{"low": "*", "medium": "*", "high": "two reviews", "critical": "*"}},
		{name: "an admin classifies a new tool", actor: w.admin.Email, action: "tool.set", target: "tool github.create_issue",
			do: func() error {
				_, err := w.Ledger.SetTool(ctx, w.admin, "github", "create_issue", ledger.ToolInput{SideEffecting: true})
				return err
			},
			after: map[string]any{"side_effecting": true}},
		{name: "an admin reclassifies a tool", actor: w.admin.Email, action: "tool.set", target: "tool github.create_issue",
			do: func() error {
				_, err := w.Ledger.SetTool(ctx, w.admin, "github", "create_issue", ledger.ToolInput{SideEffecting: false})
				return err
			},
			before: map[string]any{"side_effecting": true}, after: map[string]any{"side_effecting": false}},
		{name: "an admin removes a tool", actor: w.admin.Email, action: "tool.delete", target: "tool github.create_issue",
			do:     func() error { return w.Ledger.DeleteTool(ctx, w.admin, "github", "create_issue") },
			before: map[string]any{"side_effecting": false}},
		{name: "an admin adds a webhook endpoint, its secrets redacted", actor: w.admin.Email, action: "webhook.create",
			target: "webhook * (https://••••@hooks.example.com/services/T0/B0/••••1a2b)",
			do: func() error {
				h, err := w.Gov.Webhooks.Create(ctx, w.admin, governance.WebhookInput{URL: "https://bob:pw@hooks.example.com/services/T0/B0/abcdefgh1a2b",
					Secret: "webhook-signing-secret-1234", Events: []string{"hard_stop"}})
				webhookID = h.ID
				return err
			},
			after: map[string]any{"url": "https://••••@hooks.example.com/services/T0/B0/••••1a2b", "events": []any{"hard_stop"}, "secret": "(set)"}},
		{name: "an admin removes a webhook endpoint", actor: w.admin.Email, action: "webhook.delete",
			target: "webhook * (https://••••@hooks.example.com/services/T0/B0/••••1a2b)",
			do:     func() error { _, err := w.Gov.Webhooks.Remove(ctx, w.admin, webhookID); return err },
			before: map[string]any{"url": "https://••••@hooks.example.com/services/T0/B0/••••1a2b", "events": []any{"hard_stop"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w.Clock.Advance(time.Minute)
			if err := c.do(); err != nil {
				t.Fatal(err)
			}
			e := newest(t, w)
			if e.Actor != c.actor || e.Action != c.action || !matches(c.target, e.Target) || !e.At.Equal(w.Clock.Now()) {
				t.Errorf("entry %s %q %s %q at %s, want %s %q %s %q at %s", e.Actor, e.Action, e.Target, e.Target, e.At,
					c.actor, c.action, c.target, c.target, w.Clock.Now())
			}
			wantState(t, "before", state(t, e.Before), c.before)
			wantState(t, "after", state(t, e.After), c.after)
		})
	}
}

// matches compares a string with a pattern in which * stands for any run
// of characters (an id, a default the test need not spell out).
func matches(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1:] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return parts[len(parts)-1] == "" || s == ""
}

// wantState compares a recorded state with what a case wants; a want of
// "*" accepts any value, and a string with a * any string it matches.
func wantState(t *testing.T, which string, got, want map[string]any) {
	t.Helper()
	if (got == nil) != (want == nil) || len(got) != len(want) {
		t.Errorf("%s = %v, want %v", which, got, want)
		return
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok || !sameValue(g, v) {
			t.Errorf("%s.%s = %#v, want %#v", which, k, g, v)
		}
	}
}

func sameValue(got, want any) bool {
	switch want := want.(type) {
	case string:
		if want == "*" {
			return true
		}
		if strings.Contains(want, "*") {
			g, ok := got.(string)
			return ok && matches(want, g)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(want) {
			return false
		}
		for i := range want {
			if !sameValue(g[i], want[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(want) {
			return false
		}
		for k := range want {
			if !sameValue(g[k], want[k]) {
				return false
			}
		}
		return true
	}
	b1, _ := json.Marshal(got)
	b2, _ := json.Marshal(want)
	return string(b1) == string(b2)
}

// TestARefusedAdminActionRecordsNothing: a caller who may not, or bad
// input, leaves every table as it was, the admin activity included; and
// an action that changes nothing records nothing.
func TestARefusedAdminActionRecordsNothing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p, err := w.Gov.Policies.Create(ctx, w.admin, governance.PolicyInput{Name: "p", Severity: "low", Kind: "path_glob", Pattern: "x/**"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		kind errs.Kind
		code string
		call func() error
	}{
		{"a lead defines a policy", errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Policies.Create(ctx, w.lead, governance.PolicyInput{Name: "p", Severity: "low", Kind: "path_glob", Pattern: "x"})
			return err
		}},
		{"an admin defines a policy that does not compile", errs.Invalid, "invalid_policy", func() error {
			_, err := w.Gov.Policies.Create(ctx, w.admin, governance.PolicyInput{Name: "p", Severity: "low", Kind: "content_regex", Pattern: "a("})
			return err
		}},
		{"a lead disables a policy", errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Policies.SetEnabled(ctx, w.lead, p.ID, false)
			return err
		}},
		{"an admin disables a policy that is not there", errs.NotFound, "policy_not_found", func() error {
			_, err := w.Gov.Policies.SetEnabled(ctx, w.admin, 9999, false)
			return err
		}},
		{"a viewer adds a user", errs.Forbidden, "forbidden", func() error {
			_, err := w.Auth.AddUser(ctx, w.viewer, "x@example.com", "a-long-password", auth.Admin)
			return err
		}},
		{"an agent creates a key", errs.Forbidden, "forbidden", func() error {
			_, err := w.Auth.CreateKey(ctx, w.agent, "mine")
			return err
		}},
		{"a lead creates a token", errs.Forbidden, "forbidden", func() error {
			_, err := w.Auth.CreateToken(ctx, w.lead, w.lead.Email)
			return err
		}},
		{"an admin sets an unknown risk band", errs.Invalid, "invalid_band", func() error {
			_, err := w.Gov.Policies.SetRiskGates(ctx, w.admin, governance.RiskGates{"huge": "x"})
			return err
		}},
		{"a lead imports rules", errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Policies.ImportRules(ctx, w.lead, []rules.Rule{{Concern: "c", Chosen: "a", Departures: []string{"b"}, Support: 1, Total: 2}})
			return err
		}},
		{"an admin adds a webhook with a short secret", errs.Invalid, "secret_too_short", func() error {
			_, err := w.Gov.Webhooks.Create(ctx, w.admin, governance.WebhookInput{URL: "https://h.example.com", Secret: "short", Events: []string{"hard_stop"}})
			return err
		}},
		{"an admin removes a tool that is not there", errs.NotFound, "tool_not_found", func() error {
			return w.Ledger.DeleteTool(ctx, w.admin, "nope", "nope")
		}},
		{"an admin revokes a key that is not there", errs.NotFound, "key_not_found", func() error {
			_, err := w.Auth.RevokeKey(ctx, w.admin, 9999)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { refused(t, w.Kit, c.kind, c.code, c.call) })
	}
	t.Run("setting what is already set records nothing", func(t *testing.T) {
		before := w.Rows(`SELECT * FROM admin_activity`)
		if _, err := w.Auth.SetRole(ctx, w.admin, w.lead.UserID, auth.Lead); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Gov.Policies.SetEnabled(ctx, w.admin, p.ID, true); err != nil {
			t.Fatal(err)
		}
		gates, err := w.Gov.Policies.RiskGates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Gov.Policies.SetRiskGates(ctx, w.admin, governance.RiskGates{"high": gates["high"]}); err != nil {
			t.Fatal(err)
		}
		if after := w.Rows(`SELECT * FROM admin_activity`); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("no-op actions recorded:\n%s", strings.Join(after[len(before):], "\n"))
		}
	})
}

// TestTheAdminActivitySurvivesARestart reopens the database file and reads
// the same entries, and a webhook secret, key or token is in no entry.
func TestTheAdminActivitySurvivesARestart(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const hookSecret = "the-webhook-signing-secret"
	if _, err := w.Gov.Webhooks.Create(ctx, w.admin, governance.WebhookInput{URL: "https://hooks.example.com/r", Secret: hookSecret,
		Events: []string{"hard_stop"}}); err != nil {
		t.Fatal(err)
	}
	key, err := w.Auth.CreateKey(ctx, w.admin, "restart-agent")
	if err != nil {
		t.Fatal(err)
	}
	token, err := w.Auth.CreateToken(ctx, testkit.Operator, w.lead.Email)
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.Gov.Activity.List(ctx, w.admin, activity.Page{})
	if err != nil || len(first.Items) < 3 {
		t.Fatalf("before the restart: %+v %v", first, err)
	}
	// Every column but the chain's own hashes (prev_hash, hash).
	for _, row := range w.Rows(`SELECT id, at, actor, action, target, before_json, after_json FROM admin_activity`) {
		for what, secret := range map[string]string{"the webhook secret": hookSecret, "the agent key": key, "the token": token,
			"the key's random part": key[4:], "the token's random part": token[4:]} {
			if strings.Contains(row, secret) {
				t.Errorf("an activity row holds %s: %s", what, row)
			}
		}
		if strings.Contains(row, "$2a$") || strings.Contains(row, "hash") {
			t.Errorf("an activity row holds a hash: %s", row)
		}
	}
	if err := w.Store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := db.Open(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	again, err := governance.New(store, w.Clock.Now, governance.Options{}).Activity.List(ctx, w.admin, activity.Page{})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(first)
	b2, _ := json.Marshal(again)
	if string(b1) != string(b2) {
		t.Fatalf("after the restart:\n%s\nbefore:\n%s", b2, b1)
	}
}

// TestTheAdminActivityPages: newest first, a page at a time through the
// cursor, filtered by an action prefix, a person and a time, for every
// person and no agent.
func TestTheAdminActivityPages(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, tool := range []string{"a", "b", "c", "d", "e"} {
		if _, err := w.Ledger.SetTool(ctx, w.admin, "srv", tool, ledger.ToolInput{SideEffecting: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Gov.Policies.SetRiskGates(ctx, w.admin, governance.RiskGates{"low": "a glance"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	p := activity.Page{Limit: 2, Action: "tool."}
	for pages := 0; ; pages++ {
		page, err := w.Gov.Activity.List(ctx, w.admin, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Items {
			got = append(got, e.Target)
		}
		if page.NextBefore == nil {
			if pages != 2 {
				t.Errorf("%d pages, want 3", pages+1)
			}
			break
		}
		p.Before = *page.NextBefore
	}
	if want := "tool srv.e,tool srv.d,tool srv.c,tool srv.b,tool srv.a"; strings.Join(got, ",") != want {
		t.Errorf("pages hold %s, want %s", strings.Join(got, ","), want)
	}
	all, err := w.Gov.Activity.List(ctx, w.admin, activity.Page{})
	if err != nil || all.Items[0].Action != "risk_gates.set" || all.NextBefore != nil {
		t.Errorf("unfiltered: %+v %v", all, err)
	}
	w.Clock.Advance(time.Hour)
	later := w.Clock.Now()
	if _, err := w.Gov.Sessions.Pause(ctx, w.lead, w.session, "Looking at it."); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		page activity.Page
		want string
	}{
		{"one person's, of a kind", activity.Page{Actor: w.lead.Email, Action: "session"}, "session.paused session " + w.session},
		{"another person's, of that kind", activity.Page{Actor: w.admin.Email, Action: "session"}, ""},
		{"since a time", activity.Page{Since: later}, "session.paused session " + w.session},
		{"an admin's, of a kind", activity.Page{Actor: w.admin.Email, Action: "risk_gates"}, "risk_gates.set risk gates"},
	} {
		page, err := w.Gov.Activity.List(ctx, w.viewer, c.page)
		var lines []string
		for _, e := range page.Items {
			lines = append(lines, e.Action+" "+e.Target)
		}
		if err != nil || strings.Join(lines, "\n") != c.want {
			t.Errorf("%s, as a viewer: %q %v, want %q", c.name, lines, err, c.want)
		}
	}
	for _, c := range []struct {
		name  string
		actor auth.Actor
		page  activity.Page
		code  string
	}{
		{"an agent", w.agent, activity.Page{}, "forbidden"},
		{"a limit over 500", w.admin, activity.Page{Limit: 501}, "invalid_limit"},
		{"a negative cursor", w.admin, activity.Page{Before: -1}, "invalid_before"},
		{"a control character in the filter", w.admin, activity.Page{Action: "tool\x1b"}, "invalid_characters"},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			_, err := w.Gov.Activity.List(ctx, c.actor, c.page)
			if errs.CodeOf(err) != c.code {
				t.Errorf("error %v, want %s", err, c.code)
			}
		})
	}
}
