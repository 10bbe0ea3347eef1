package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
)

// handleMissionCreate serves POST /api/v1/missions (lead).
func handleMissionCreate(gov *governance.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := bind[governance.MissionInput](c)
		if err != nil {
			return err
		}
		m, err := gov.CreateMission(c.Request().Context(), actorOf(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, m)
	}
}

// handleMissionList serves GET /api/v1/missions (anyone signed in).
func handleMissionList(gov *governance.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ms, err := gov.ListMissions(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"missions": ms})
	}
}
