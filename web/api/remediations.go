package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleRemediationRequest serves POST /api/v1/sessions/:id/remediations (lead).
func handleRemediationRequest(remediations *governance.RemediationService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.RemediationInput](c)
		if err != nil {
			return err
		}
		r, err := remediations.Request(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, r)
	}
}

// handleRemediationClose serves POST /api/v1/remediations/:id/close (lead).
func handleRemediationClose(remediations *governance.RemediationService) echo.HandlerFunc {
	type request struct {
		Note string `json:"note"`
	}
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "remediation_not_found", "No remediation has the id %q.")
		if err != nil {
			return err
		}
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		r, err := remediations.Close(c.Request().Context(), httpx.Actor(c), id, in.Note)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, r)
	}
}
