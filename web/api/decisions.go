package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleDecisionOpen serves POST /api/v1/sessions/:id/decisions (the
// session's agent).
func handleDecisionOpen(decisions *governance.DecisionService, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.DecisionInput](c)
		if err != nil {
			return err
		}
		d, err := decisions.Open(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusCreated, c.Param("id"), d)
	}
}

// handleDecisionResolve serves POST /api/v1/decisions/:ref/resolve (lead).
func handleDecisionResolve(decisions *governance.DecisionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.ResolutionInput](c)
		if err != nil {
			return err
		}
		d, err := decisions.Resolve(c.Request().Context(), httpx.Actor(c), c.Param("ref"), in.Resolution, in.Instruction)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, d)
	}
}
