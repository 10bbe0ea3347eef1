package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleBrief serves POST /brief: the agent's next action, handing over
// what is due (once per delivery lease until acknowledged with ack).
func handleBrief(briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.BriefRequest](c)
		if err != nil {
			return err
		}
		body, err := briefs.BriefJSON(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return httpx.JSONBytes(c, http.StatusOK, body...)
	}
}
