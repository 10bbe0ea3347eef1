package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// An admin adds an endpoint in the console, sees a refused form's
// messages beside their fields, sees each delivery and why it failed (its
// status, never what the endpoint said), sends a test, and removes the
// endpoint; the secret is never shown.
func TestConsoleWebhooks(t *testing.T) {
	kit, base := consoleServer(t, false, testkit.WithLoopbackWebhooks) // the endpoint is on 127.0.0.1
	admin, _ := kit.Person(auth.Admin)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance: db password is hunter2", http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)
	const secret = "console-test-signing-secret"

	b := webtest.ConsoleAs(t, base, admin.Email)
	if res, body := b.Get("/admin/webhooks"); res.StatusCode != http.StatusOK || !strings.Contains(body, "No endpoint yet") {
		t.Fatalf("notifications page: %d", res.StatusCode)
	}
	res, body := b.PostForm("/admin/webhooks", url.Values{"url": {refusing.URL}, "secret": {"short"}, "events": {"hard_stop"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="error-secret"`) ||
		!strings.Contains(body, `value="`+refusing.URL+`"`) || !strings.Contains(body, `value="hard_stop" checked`) {
		t.Fatalf("a short secret: %d, not said beside the secret with the form kept", res.StatusCode)
	}
	if res, body := b.PostForm("/admin/webhooks", url.Values{"url": {refusing.URL}, "secret": {secret}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `data-testid="error-events"`) {
		t.Fatalf("no events: %d, not said beside the events", res.StatusCode)
	}
	if res, body := b.PostForm("/admin/webhooks", url.Values{"url": {"hooks.example.com"}, "secret": {secret}, "events": {"hard_stop"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `data-testid="error-url"`) {
		t.Fatalf("a relative url: %d, not said beside the url", res.StatusCode)
	}
	if res, body := b.PostForm("/admin/webhooks", url.Values{"url": {"http://169.254.169.254/latest/meta-data/"}, "secret": {secret}, "events": {"hard_stop"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `data-testid="error-url"`) || !strings.Contains(body, "169.254.169.254 is link-local") {
		t.Fatalf("the metadata address: %d, not refused beside the url", res.StatusCode)
	}
	res, _ = b.PostForm("/admin/webhooks", url.Values{"url": {refusing.URL}, "secret": {secret}, "events": {"attention.created", "hard_stop"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/webhooks?done=added" {
		t.Fatalf("add: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// A gate, and one refused attempt to tell the endpoint of it.
	s := kit.Session(agent, kit.Mission(lead, false))
	if _, err := kit.Gov.Decisions.Open(context.Background(), agent, s, governance.DecisionInput{Title: "Schema", Question: "Drop it?"}); err != nil {
		t.Fatal(err)
	}
	sender := notify.NewSender(kit.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), testkit.LoopbackWebhooks)
	sender.Now = kit.Clock.Now
	if n, err := sender.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("send: %d, %v", n, err)
	}
	_, body = b.Get("/admin/webhooks?done=added")
	for _, want := range []string{`data-testid="webhook"`, refusing.URL, `<span class="chip">attention.created</span>`, admin.Email,
		`data-testid="delivery"`, "pending", `data-testid="delivery-answer">HTTP 503 from the endpoint<`, "<td>1</td>", `data-testid="webhook-test"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, never := range []string{secret, "hunter2", "maintenance"} {
		if strings.Contains(body, never) {
			t.Errorf("the page shows %q", never)
		}
	}

	if res, _ := webtest.ConsoleAs(t, base, lead.Email).Get("/admin/webhooks"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a lead GET /admin/webhooks: %d", res.StatusCode)
	}
	ws, err := kit.Gov.Webhooks.List(context.Background(), admin)
	if err != nil || len(ws) != 1 {
		t.Fatalf("list: %v %v", ws, err)
	}
	// Send a test: the page it goes back to says what the endpoint
	// answered, once.
	res, _ = b.PostForm(fmt.Sprintf("/admin/webhooks/%d/test", ws[0].ID), nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/webhooks" {
		t.Fatalf("test: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	want := "Sent a test notification to " + refusing.URL + ": it failed, HTTP 503 from the endpoint."
	if _, body := b.Get("/admin/webhooks"); !strings.Contains(body, want) || strings.Contains(body, "hunter2") {
		t.Errorf("after the test the page does not say %q", want)
	}
	if _, body := b.Get("/admin/webhooks"); strings.Contains(body, want) {
		t.Error("the test's result is said again on the next visit")
	}
	if res, _ := webtest.ConsoleAs(t, base, lead.Email).PostForm(fmt.Sprintf("/admin/webhooks/%d/test", ws[0].ID), nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a lead's test: %d", res.StatusCode)
	}

	res, _ = b.PostForm(fmt.Sprintf("/admin/webhooks/%d/remove", ws[0].ID), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", res.StatusCode)
	}
	if _, body := b.Get("/admin/webhooks?done=removed"); !strings.Contains(body, "No endpoint yet") || !strings.Contains(body, "Removed the endpoint") {
		t.Error("the removed endpoint is still listed")
	}
	if res, _ := b.PostForm(fmt.Sprintf("/admin/webhooks/%d/remove", ws[0].ID), nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("removing it again: %d", res.StatusCode)
	}
}
