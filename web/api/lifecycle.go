package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleLifecycleEvent serves POST /api/v1/sessions/:id/events (the
// session's agent): the state after the event and every transition taken.
func handleLifecycleEvent(lc *governance.LifecycleService, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.EventInput](c)
		if err != nil {
			return err
		}
		r, err := lc.Report(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusOK, c.Param("id"), r)
	}
}
