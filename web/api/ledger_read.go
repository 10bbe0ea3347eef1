package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/httpx"
)

// handleRunList serves GET /api/v1/sessions/:id/runs (its agent, or any
// person): a page of the session's runs, oldest first, each with its
// counts (?limit=, ?after=).
func handleRunList(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := ledgerPage(c)
		if err != nil {
			return err
		}
		runs, err := l.ListRuns(c.Request().Context(), httpx.Actor(c), c.Param("id"), p)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusOK, c.Param("id"), runs)
	}
}

// handleRunGet serves GET /api/v1/runs/:id (its session's agent, or any
// person): the run, its asks and their answers, and a page of its tool
// calls in the order they were recorded (?limit=, ?after=).
func handleRunGet(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := ledgerPage(c)
		if err != nil {
			return err
		}
		r, err := l.ReadRun(c.Request().Context(), httpx.Actor(c), c.Param("id"), p)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusOK, r.Session, r)
	}
}

// ledgerPage reads a ledger page's query, ?limit= and ?after=, and refuses
// any other parameter (httpx.Query).
func ledgerPage(c echo.Context) (ledger.Page, error) {
	q, err := httpx.Query(c, "limit", "after")
	if err != nil {
		return ledger.Page{}, err
	}
	return ledger.Page{Limit: q.Get("limit"), After: q.Get("after")}, nil
}
