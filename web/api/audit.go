package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/web/httpx"
)

// handleAuditReport serves GET /api/v1/audit/:report (anyone signed in
// with a personal token; agents are refused): one built-in report as
// {"report","rows":[…]}, where passing is zero rows. stale-gates takes
// ?older_than=36h (default 24h), undelivered-resolutions ?min_age=10m
// (default 5m: a younger resolution is in flight); unacknowledged-deliveries
// applies the server's delivery lease (the service's).
func handleAuditReport(a *audit.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequirePerson("read the audit reports"); err != nil {
			return err
		}
		if _, err := audit.Lookup(c.Param("report")); err != nil {
			return err
		}
		opts, err := audit.ParseOptions(c.QueryParam("older_than"), c.QueryParam("min_age"))
		if err != nil {
			return err
		}
		res, err := a.Run(c.Request().Context(), c.Param("report"), opts)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, res)
	}
}
