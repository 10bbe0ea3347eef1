package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/web/httpx"
)

// handleTokenList serves GET /api/v1/tokens (a person): the caller's own
// personal tokens, or everyone's for an admin, never a secret.
func handleTokenList(a *auth.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		tokens, err := a.ListTokens(c.Request().Context(), httpx.Actor(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"tokens": tokens})
	}
}

// handleTokenRevoke serves DELETE /api/v1/tokens/:id (a person; an admin
// for anyone's): the token is refused from the next request on; the
// answer is the token, revoked.
func handleTokenRevoke(a *auth.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The wrong caller hears 403 whatever the path says.
		if err := httpx.Actor(c).RequirePerson("revoke a personal token"); err != nil {
			return err
		}
		id, err := httpx.PathID(c, "token_not_found", "There is no personal token %q.")
		if err != nil {
			return err
		}
		t, err := a.RevokeToken(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, t)
	}
}

// handleKeyList serves GET /api/v1/keys (admin): every agent key, never a
// secret.
func handleKeyList(a *auth.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("list the agent keys"); err != nil {
			return err
		}
		keys, err := a.ListKeys(c.Request().Context(), httpx.Actor(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"keys": keys})
	}
}

// handleKeyRevoke serves DELETE /api/v1/keys/:id (admin): the key is
// refused from the next request on; the answer is the key, revoked.
func handleKeyRevoke(a *auth.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("revoke an agent key"); err != nil {
			return err
		}
		id, err := httpx.PathID(c, "key_not_found", "There is no agent key %q.")
		if err != nil {
			return err
		}
		k, err := a.RevokeKey(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, k)
	}
}
