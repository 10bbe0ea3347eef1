package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleAttentionList serves GET /api/v1/attention (anyone signed in with a
// personal token): everything a person must act on, most severe first.
func handleAttentionList(attention *governance.AttentionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequirePerson("read the Attention queue"); err != nil {
			return err
		}
		items, err := attention.List(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"items": items})
	}
}
