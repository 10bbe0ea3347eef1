package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleWebhookCreate serves POST /api/v1/webhooks (admin): add an
// endpoint notifications are sent to.
func handleWebhookCreate(webhooks *governance.WebhookService) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The wrong caller hears 403 whatever the body says.
		if err := httpx.Actor(c).RequireAdmin("add a webhook endpoint"); err != nil {
			return err
		}
		in, err := httpx.Bind[governance.WebhookInput](c)
		if err != nil {
			return err
		}
		w, err := webhooks.Create(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, w)
	}
}

// handleWebhookList serves GET /api/v1/webhooks (admin): the endpoints,
// without their secrets, each with its recent deliveries.
func handleWebhookList(webhooks *governance.WebhookService) echo.HandlerFunc {
	return func(c echo.Context) error {
		ws, err := webhooks.List(c.Request().Context(), httpx.Actor(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"webhooks": ws})
	}
}

// handleWebhookDelete serves DELETE /api/v1/webhooks/:id (admin): remove
// an endpoint; the answer is the endpoint as it was, with removed_at.
func handleWebhookDelete(webhooks *governance.WebhookService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("remove a webhook endpoint"); err != nil {
			return err
		}
		id, err := httpx.PathID(c, "webhook_not_found", "No webhook endpoint has the id %q.")
		if err != nil {
			return err
		}
		w, err := webhooks.Remove(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, w)
	}
}

// handleWebhookTest serves POST /api/v1/webhooks/:id/test (admin): send
// the endpoint a test notification now and answer what it got (the HTTP
// status and a fixed phrase, never the endpoint's words).
func handleWebhookTest(webhooks *governance.WebhookService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("send a test notification"); err != nil {
			return err
		}
		id, err := httpx.PathID(c, "webhook_not_found", "No webhook endpoint has the id %q.")
		if err != nil {
			return err
		}
		if _, err := httpx.BindOptional[struct{}](c); err != nil {
			return err
		}
		r, err := webhooks.Test(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, r)
	}
}
