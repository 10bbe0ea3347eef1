package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleBrief serves POST /brief: the agent's next action, delivering any
// resolution or remediation it has not seen, exactly once.
func handleBrief(briefs *governance.BriefService) echo.HandlerFunc {
	type request struct {
		Session string `json:"session"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		b, err := briefs.Brief(c.Request().Context(), httpx.Actor(c), in.Session)
		if err != nil {
			return err
		}
		body, err := b.MarshalJSON()
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, body)
	}
}
