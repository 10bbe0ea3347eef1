package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
)

// handleAuditReport serves GET /api/v1/audit/:report (anyone signed in
// with a personal token; agents are refused): one built-in report as
// {"report","rows":[…]}, where passing is zero rows. stale-gates takes
// ?older_than=36h (default 24h), undelivered-resolutions ?min_age=10m
// (default 5m: a younger resolution is in flight).
func handleAuditReport(a *audit.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := actorOf(c).RequirePerson("read the audit reports"); err != nil {
			return err
		}
		if _, err := audit.Lookup(c.Param("report")); err != nil {
			return err
		}
		opts, err := auditOptions(c)
		if err != nil {
			return err
		}
		if opts.MinAge, err = audit.ParseMinAge(c.QueryParam("min_age")); err != nil {
			return err
		}
		res, err := a.Run(c.Request().Context(), c.Param("report"), opts)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, res)
	}
}

// auditOptions reads ?older_than= (a duration such as 36h or 7d).
// Errors: invalid_older_than.
func auditOptions(c echo.Context) (audit.Options, error) {
	d, err := audit.ParseOlderThan(c.QueryParam("older_than"))
	if err != nil {
		return audit.Options{}, err
	}
	return audit.Options{OlderThan: d}, nil
}
