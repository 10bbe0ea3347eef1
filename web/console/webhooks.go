package console

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleWebhooks serves GET /admin/webhooks (admin): the endpoints
// notifications go to, with their recent deliveries.
func (k *console) handleWebhooks() echo.HandlerFunc {
	return func(c echo.Context) error {
		notice := map[string]string{"added": "Added the endpoint. Its secret is not shown again.",
			"removed": "Removed the endpoint: nothing more is sent to it."}[c.QueryParam("done")]
		return k.webhooksPage(c, http.StatusOK, views.ItemForm{}, notify.Events, notice)
	}
}

func (k *console) webhooksPage(c echo.Context, status int, f views.ItemForm, checked []string, notice string) error {
	ws, err := k.gov.Webhooks.List(c.Request().Context(), httpx.Actor(c))
	if err != nil {
		return err
	}
	p, err := k.page(c, "Notifications", "webhooks")
	if err != nil {
		return err
	}
	if notice != "" {
		p.Notice = notice
	}
	return render(c, status, views.WebhooksPage(p, views.WebhooksView{Webhooks: ws, Events: notify.Events,
		PublicURL: k.gov.Notify.PublicURL(), Form: f, Checked: checked}))
}

// handleWebhookAdd serves POST /admin/webhooks (admin): add an endpoint.
// A refusal shows the form again with the message by its field (the
// secret is not sent back).
func (k *console) handleWebhookAdd(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		form, err := c.FormParams()
		if err != nil {
			return err
		}
		in := governance.WebhookInput{URL: form.Get("url"), Secret: form.Get("secret"), Events: form["events"]}
		w, err := k.gov.Webhooks.Create(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			f, ok := formErrors(err, map[string]string{"url": in.URL}, "url", "secret", "events")
			if !ok {
				return err
			}
			return k.webhooksPage(c, http.StatusUnprocessableEntity, f, in.Events, "")
		}
		adminDid(c, log, "webhook.created", w.URL, "events", w.Events)
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks?done=added")
	}
}

// handleWebhookRemove serves POST /admin/webhooks/:id/remove (admin).
func (k *console) handleWebhookRemove(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "webhook_not_found", "No webhook endpoint has the id %q.")
		if err != nil {
			return err
		}
		w, err := k.gov.Webhooks.Remove(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		adminDid(c, log, "webhook.removed", w.URL)
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks?done=removed")
	}
}

// handleWebhookTest serves POST /admin/webhooks/:id/test (admin): send
// the endpoint a test notification now; the page it goes back to says
// what the endpoint answered (its status and a fixed phrase, never its
// words).
func (k *console) handleWebhookTest(log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "webhook_not_found", "No webhook endpoint has the id %q.")
		if err != nil {
			return err
		}
		r, err := k.gov.Webhooks.Test(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		adminDid(c, log, "webhook.tested", r.URL, "delivered", r.Delivered, "status", r.Status, "result", r.Result)
		k.setFlash(c, testNotice(r))
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks")
	}
}

// testNotice is what the notifications page says of a test notification.
func testNotice(r governance.WebhookTest) string {
	if r.Delivered {
		return fmt.Sprintf("Sent a test notification to %s: the endpoint answered HTTP %d.", r.URL, r.Status)
	}
	return fmt.Sprintf("Sent a test notification to %s: it failed, %s.", r.URL, r.Result)
}
