package governance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/testkit"
)

// outboxRow is one notification as the outbox holds it.
type outboxRow struct {
	webhook int64
	event   string
	payload notify.Payload
}

// outbox reads every notification written, oldest first.
func outbox(t *testing.T, k *testkit.Kit) []outboxRow {
	t.Helper()
	rows, err := k.SQL().QueryContext(t.Context(), `SELECT webhook_id, event, payload FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var body string
		if err := rows.Scan(&r.webhook, &r.event, &body); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(body), &r.payload); err != nil {
			t.Fatalf("payload %q: %v", body, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// hook adds an endpoint subscribed to events and returns its id.
func hook(t *testing.T, w *world, events ...string) int64 {
	t.Helper()
	h := must(w.Gov.Webhooks.Create(t.Context(), w.admin, governance.WebhookInput{URL: "https://hooks.example.com/" + strings.Join(events, "+"),
		Secret: "a-signing-secret-of-length", Events: events}))(t)
	return h.ID
}

// secretChange trips the critical "Secrets in source" policies: two
// matches in one file.
var secretChange = change.Change{Files: []change.File{{Path: "deploy.sh",
	Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n-----BEGIN RSA PRIVATE KEY-----\n"}}}

// Every kind of new Attention item writes one attention.created
// notification whose link opens that very item, and what is no Attention
// item (an advisory remediation, a low violation, a resolution) writes
// none.
func TestEveryNewAttentionItemIsNotifiedWithALinkToIt(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.Configure(func(o *governance.Options) { o.PublicURL = "https://madebook.example.com/" })
	hook(t, w, notify.AttentionCreated)
	cases := []struct {
		name, kind string
		cause      func(t *testing.T) (session string)
	}{
		{"a gate opened", governance.ItemDecision, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			must(w.Gov.Decisions.Open(ctx, w.agent, s, governance.DecisionInput{Title: "Schema", Question: "Drop the table?"}))(t)
			return s
		}},
		{"a plan waiting on a high-risk mission", governance.ItemPlan, func(t *testing.T) string {
			s := w.Session(w.agent, w.risky)
			must(w.Gov.Plans.Propose(ctx, w.agent, s, proposal("Migrate in two steps.")))(t)
			return s
		}},
		{"a session paused", governance.ItemPaused, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			must(w.Gov.Sessions.Pause(ctx, w.lead, s, "wait for the release"))(t)
			return s
		}},
		{"a run's question", governance.ItemAsk, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			r := must(w.Ledger.StartRun(ctx, w.agent, s, "ask", ""))(t)
			must(w.Ledger.RecordAsk(ctx, w.agent, r.ID, ledger.AskInput{Prompt: "Save it?", Options: map[string]string{"1": "Yes", "2": "No"}}))(t)
			return s
		}},
		{"a permission prompt", governance.ItemPermission, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			report(t, w, w.agent, s, ev("permission.prompt.requested", promptPayload))
			return s
		}},
		{"a required remediation", governance.ItemRemediation, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			must(w.Gov.Remediations.Request(ctx, w.lead, s, governance.RemediationInput{Severity: governance.SeverityRequired,
				Instruction: "Rotate the key."}))(t)
			return s
		}},
		{"a blocked task", governance.ItemTask, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			report(t, w, w.agent, s, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
				ev("task.created", `{"task":"t1"}`), ev("task.blocked", `{"task":"t1"}`))...)
			return s
		}},
		{"a critical violation", governance.ItemViolation, func(t *testing.T) string {
			s := w.Session(w.agent, w.mission)
			must(w.Gov.Changes.Report(ctx, w.agent, s, secretChange))(t)
			return s
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(outbox(t, w.Kit))
			s := c.cause(t)
			rows := outbox(t, w.Kit)[before:]
			if len(rows) != 1 {
				t.Fatalf("%d notifications, want 1: %+v", len(rows), rows)
			}
			m := rows[0].payload.Madebook
			if rows[0].event != notify.AttentionCreated || m.Event != notify.AttentionCreated || m.Kind != c.kind || m.Session != s {
				t.Fatalf("notification %s %+v, want attention.created of a %s on %s", rows[0].event, m, c.kind, s)
			}
			it, err := w.Gov.Attention.Get(ctx, m.Kind, m.Session, m.Ref)
			if err != nil {
				t.Fatalf("the link's item %s/%s/%s: %v", m.Kind, m.Session, m.Ref, err)
			}
			want := "https://madebook.example.com/attention/items/" + it.Kind + "/" + it.Session + "/" + it.Ref
			if m.Link != want {
				t.Errorf("link %q, want %q", m.Link, want)
			}
			p := rows[0].payload
			if len(p.Blocks) != 1 || p.Blocks[0].Type != "section" || p.Blocks[0].Text.Type != "mrkdwn" ||
				!strings.Contains(p.Blocks[0].Text.Text, "<"+want+"|Open in Madebook>") || p.Text == "" {
				t.Errorf("payload is not Slack-shaped with the link: %+v", p)
			}
		})
	}

	t.Run("what is no new Attention item", func(t *testing.T) {
		before := len(outbox(t, w.Kit))
		s := w.Session(w.agent, w.mission)
		must(w.Gov.Remediations.Request(ctx, w.lead, s, governance.RemediationInput{Severity: governance.SeverityAdvisory,
			Instruction: "Consider a smaller function."}))(t)
		must(w.Gov.Policies.Create(ctx, w.admin, governance.PolicyInput{Name: "No TODO", Severity: "low", Kind: "content_regex", Pattern: "TODO"}))(t)
		must(w.Gov.Changes.Report(ctx, w.agent, s, change.Change{Files: []change.File{{Path: "a.go", Content: "// TODO later\n"}}}))(t)
		d := must(w.Gov.Decisions.Open(ctx, w.agent, s, governance.DecisionInput{Title: "T", Question: "Q?"}))(t)
		must(w.Gov.Decisions.Resolve(ctx, w.lead, d.Ref, "Yes.", "Go."))(t)
		must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: s}))(t)
		rows := outbox(t, w.Kit)[before:]
		if len(rows) != 1 || rows[0].payload.Madebook.Ref != d.Ref {
			t.Fatalf("notifications %+v, want only the gate's", rows)
		}
	})
}

// A critical violation is a HARD_STOP to the endpoints that subscribe to
// it, an Attention item to those that subscribe only to that, nothing to
// the others, and one notification per endpoint however many events it
// subscribes to and however many secrets one change holds.
func TestACriticalViolationIsOneHardStopPerSubscribedEndpoint(t *testing.T) {
	w := newWorld(t)
	stops := hook(t, w, notify.HardStop)
	items := hook(t, w, notify.AttentionCreated)
	expiries := hook(t, w, notify.DecisionExpired)
	both := hook(t, w, notify.AttentionCreated, notify.HardStop)
	res := must(w.Gov.Changes.Report(t.Context(), w.agent, w.session, secretChange))(t)
	if len(res.Violations) < 2 {
		t.Fatalf("the change opened %d violations, want at least 2", len(res.Violations))
	}
	got := map[int64][]string{}
	for _, r := range outbox(t, w.Kit) {
		got[r.webhook] = append(got[r.webhook], r.event)
		if r.payload.Madebook.Kind != governance.ItemViolation || !strings.Contains(r.payload.Text, "HARD_STOP") {
			t.Errorf("notification %+v", r.payload)
		}
		for _, v := range res.Violations {
			if !strings.Contains(r.payload.Text, v.Policy) {
				t.Errorf("the notification does not name %q: %s", v.Policy, r.payload.Text)
			}
		}
		if strings.Contains(r.payload.Text, "wJalrXUtnFEMI") {
			t.Errorf("the notification holds the secret: %s", r.payload.Text)
		}
	}
	want := map[int64][]string{stops: {notify.HardStop}, items: {notify.AttentionCreated}, both: {notify.HardStop}}
	if len(got) != len(want) || got[expiries] != nil {
		t.Fatalf("notifications by endpoint %v, want %v", got, want)
	}
	for id, evs := range want {
		if !slices.Equal(got[id], evs) {
			t.Errorf("endpoint %d got %v, want %v", id, got[id], evs)
		}
	}
	// Each violation is on the timeline, its match redacted.
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
	n := 0
	for _, e := range d.Timeline {
		if e.Kind == notify.KindViolationDetected {
			n++
			if strings.Contains(e.Detail, "wJalrXUtnFEMI") || !strings.HasPrefix(e.Detail, "critical ") {
				t.Errorf("timeline detail %q", e.Detail)
			}
		}
	}
	if n != len(res.Violations) {
		t.Errorf("%d violation.detected events, want %d", n, len(res.Violations))
	}
}

// A required remediation requested in the same write as the critical
// violation that caused it is part of its HARD_STOP: one notification per
// endpoint, naming both. One requested on its own is its own.
func TestARemediationOfAViolationIsPartOfItsHardStop(t *testing.T) {
	w := newWorld(t)
	both := hook(t, w, notify.AttentionCreated, notify.HardStop)
	res := must(w.Gov.Changes.Report(t.Context(), w.agent, w.session, secretChange))(t)
	r := must(w.Gov.Remediations.Request(t.Context(), w.lead, w.session, governance.RemediationInput{Severity: governance.SeverityRequired,
		Instruction: "Rotate the key and remove it from deploy.sh."}))(t)
	before := len(outbox(t, w.Kit))
	// As a change report that opens a violation and requests its
	// remediation records them: in one write.
	if err := w.Gov.RecordEvents(t.Context(), auth.Actor{}, w.session,
		governance.TimelineEvent{Kind: "remediation.requested", Ref: fmt.Sprint(r.ID), Detail: r.Instruction},
		governance.TimelineEvent{Kind: notify.KindViolationDetected, Ref: fmt.Sprint(res.Violations[0].ID)}); err != nil {
		t.Fatal(err)
	}
	rows := outbox(t, w.Kit)[before:]
	if len(rows) != 1 || rows[0].webhook != both || rows[0].event != notify.HardStop ||
		!strings.Contains(rows[0].payload.Text, "Required remediation: Rotate the key") {
		t.Fatalf("notifications %+v, want one HARD_STOP naming the remediation", rows)
	}
}

// An expired gate (the event gate expiry records) is a decision.expired
// notification, to its subscribers only, linking to the gate.
func TestAnExpiredGateIsNotified(t *testing.T) {
	w := newWorld(t)
	expiries := hook(t, w, notify.DecisionExpired)
	hook(t, w, notify.HardStop)
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, governance.DecisionInput{Title: "Schema", Question: "Drop the table?"}))(t)
	if err := w.Gov.RecordEvents(t.Context(), auth.Actor{}, w.session, governance.TimelineEvent{Kind: notify.KindDecisionExpired,
		Ref: d.Ref, Detail: d.Question}); err != nil {
		t.Fatal(err)
	}
	rows := outbox(t, w.Kit)
	if len(rows) != 1 || rows[0].webhook != expiries || rows[0].event != notify.DecisionExpired {
		t.Fatalf("notifications %+v, want one decision.expired to endpoint %d", rows, expiries)
	}
	m := rows[0].payload.Madebook
	if _, err := w.Gov.Attention.Get(t.Context(), m.Kind, m.Session, m.Ref); err != nil || m.Ref != d.Ref {
		t.Errorf("the link %+v does not open gate %s: %v", m, d.Ref, err)
	}
	if !strings.Contains(rows[0].payload.Text, "expired") || !strings.Contains(rows[0].payload.Text, "Drop the table?") {
		t.Errorf("text %q", rows[0].payload.Text)
	}
}

// A notification is written in its cause's transaction: a cause that
// does not commit leaves no notification, whether governance or the
// ledger records it.
func TestANotificationCommitsWithItsCauseOrNotAtAll(t *testing.T) {
	w := newWorld(t)
	hook(t, w, notify.AttentionCreated, notify.HardStop)
	boom := errors.New("the disk is full")
	failing := governance.New(governance.Failing{Transactor: w.Store, Err: boom}, w.Clock.Now, governance.Options{})
	failedLedger := ledger.NewService(failing.Transactor(), w.Clock.Now, failing.Briefs)
	run := must(w.Ledger.StartRun(t.Context(), w.agent, w.session, "ask", ""))(t)
	causes := map[string]func(g *governance.Services, l *ledger.Service) error{
		"a gate": func(g *governance.Services, _ *ledger.Service) error {
			_, err := g.Decisions.Open(t.Context(), w.agent, w.session, governance.DecisionInput{Title: "T", Question: "Q?"})
			return err
		},
		"a critical violation": func(g *governance.Services, _ *ledger.Service) error {
			_, err := g.Changes.Report(t.Context(), w.agent, w.session, secretChange)
			return err
		},
		"a run's question": func(_ *governance.Services, l *ledger.Service) error {
			_, err := l.RecordAsk(t.Context(), w.agent, run.ID, ledger.AskInput{Prompt: "Save?", Options: map[string]string{"1": "Yes"}})
			return err
		},
	}
	for name, cause := range causes {
		t.Run(name, func(t *testing.T) {
			before := len(outbox(t, w.Kit))
			if err := cause(failing, failedLedger); !errors.Is(err, boom) {
				t.Fatalf("the failing cause: %v", err)
			}
			if n := len(outbox(t, w.Kit)); n != before {
				t.Fatalf("a cause that rolled back left %d notifications", n-before)
			}
			if err := cause(w.Gov, w.Ledger); err != nil {
				t.Fatal(err)
			}
			if n := len(outbox(t, w.Kit)); n <= before {
				t.Fatalf("the committed cause left no notification")
			}
		})
	}
}

// Only admins manage endpoints; what they add is checked field by field
// and never shows its secret again.
func TestWebhookEndpoints(t *testing.T) {
	w := newWorld(t)
	ok := governance.WebhookInput{URL: "https://hooks.example.com/x", Secret: "sixteen-chars-ok", Events: []string{"hard_stop", "hard_stop"}}
	for _, actor := range []auth.Actor{w.lead, w.viewer, w.agent} {
		refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Webhooks.Create(t.Context(), actor, ok)
			return err
		})
	}
	bad := []struct {
		name, code string
		in         governance.WebhookInput
	}{
		{"no url", "url_required", governance.WebhookInput{Secret: ok.Secret, Events: ok.Events}},
		{"a relative url", "invalid_url", governance.WebhookInput{URL: "/hooks", Secret: ok.Secret, Events: ok.Events}},
		{"another scheme", "invalid_url", governance.WebhookInput{URL: "ftp://example.com/x", Secret: ok.Secret, Events: ok.Events}},
		{"a long url", "url_too_long", governance.WebhookInput{URL: "https://example.com/" + strings.Repeat("x", 2000), Secret: ok.Secret, Events: ok.Events}},
		{"no secret", "secret_required", governance.WebhookInput{URL: ok.URL, Events: ok.Events}},
		{"a short secret", "secret_too_short", governance.WebhookInput{URL: ok.URL, Secret: "short", Events: ok.Events}},
		{"a long secret", "secret_too_long", governance.WebhookInput{URL: ok.URL, Secret: strings.Repeat("s", 201), Events: ok.Events}},
		{"no events", "events_required", governance.WebhookInput{URL: ok.URL, Secret: ok.Secret}},
		{"a number that is no address", "invalid_url", governance.WebhookInput{URL: "http://999.1.1.1/x", Secret: ok.Secret, Events: ok.Events}},
		{"the metadata address", "url_not_allowed", governance.WebhookInput{URL: "http://169.254.169.254/latest", Secret: ok.Secret, Events: ok.Events}},
		{"IPv6 loopback", "url_not_allowed", governance.WebhookInput{URL: "http://[::1]:8080/x", Secret: ok.Secret, Events: ok.Events}},
		{"a private address", "url_not_allowed", governance.WebhookInput{URL: "https://10.0.0.1/x", Secret: ok.Secret, Events: ok.Events}},
		{"the unspecified address", "url_not_allowed", governance.WebhookInput{URL: "http://0.0.0.0/x", Secret: ok.Secret, Events: ok.Events}},
		{"loopback in decimal", "url_not_allowed", governance.WebhookInput{URL: "http://2130706433/x", Secret: ok.Secret, Events: ok.Events}},
		{"loopback in short hex", "url_not_allowed", governance.WebhookInput{URL: "http://0x7f.1/x", Secret: ok.Secret, Events: ok.Events}},
		{"localhost", "url_not_allowed", governance.WebhookInput{URL: "http://localhost:9000/x", Secret: ok.Secret, Events: ok.Events}},
		{"the metadata name", "url_not_allowed", governance.WebhookInput{URL: "http://metadata.google.internal/computeMetadata/v1/", Secret: ok.Secret, Events: ok.Events}},
		{"an unknown event", "unknown_event", governance.WebhookInput{URL: ok.URL, Secret: ok.Secret, Events: []string{"hard_stop", "session.created"}}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			refused(t, w.Kit, errs.Invalid, c.code, func() error {
				_, err := w.Gov.Webhooks.Create(t.Context(), w.admin, c.in)
				return err
			})
		})
	}
	_, err := w.Gov.Webhooks.Create(t.Context(), w.admin, bad[len(bad)-1].in)
	if !strings.Contains(err.Error(), `"session.created"`) {
		t.Errorf("the unknown event is not named: %v", err)
	}
	h := must(w.Gov.Webhooks.Create(t.Context(), w.admin, ok))(t)
	if !slices.Equal(h.Events, []string{"hard_stop"}) || h.CreatedBy != w.admin.Email {
		t.Errorf("created %+v", h)
	}
	b, _ := json.Marshal(must(w.Gov.Webhooks.List(t.Context(), w.admin))(t))
	if strings.Contains(string(b), ok.Secret) || !strings.Contains(string(b), ok.URL) {
		t.Errorf("the list %s", b)
	}
	must(w.Gov.Changes.Report(t.Context(), w.agent, w.session, secretChange))(t)
	gone := must(w.Gov.Webhooks.Remove(t.Context(), w.admin, h.ID))(t)
	if gone.RemovedAt == nil {
		t.Errorf("removed %+v", gone)
	}
	if l := must(w.Gov.Webhooks.List(t.Context(), w.admin))(t); len(l) != 0 {
		t.Errorf("after removal the list is %+v", l)
	}
	var pending int
	if err := w.SQL().QueryRow(`SELECT COUNT(*) FROM outbox WHERE webhook_id = ? AND gave_up_at IS NULL`, h.ID).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("a removed endpoint still owed %d notifications (%v)", pending, err)
	}
	refused(t, w.Kit, errs.NotFound, "webhook_not_found", func() error {
		_, err := w.Gov.Webhooks.Remove(t.Context(), w.admin, h.ID)
		return err
	})
}
