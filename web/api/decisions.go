package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

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
