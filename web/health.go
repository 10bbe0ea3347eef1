package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleHealth serves GET /healthz: 200 when the database answers.
func handleHealth(check func(context.Context) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := check(c.Request().Context()); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]any{"error": map[string]string{
				"code": "unavailable", "message": "The database does not answer."}})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
}
