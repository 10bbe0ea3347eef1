package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleMissionCreate serves POST /api/v1/missions (lead).
func handleMissionCreate(missions *governance.MissionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.MissionInput](c)
		if err != nil {
			return err
		}
		m, err := missions.Create(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, m)
	}
}

// handleMissionList serves GET /api/v1/missions (anyone signed in).
func handleMissionList(missions *governance.MissionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		ms, err := missions.List(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"missions": ms})
	}
}

// handleMissionGet serves GET /api/v1/missions/:slug (anyone signed in).
func handleMissionGet(missions *governance.MissionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		m, err := missions.Get(c.Request().Context(), c.Param("slug"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, m)
	}
}

// missionPatch is the body of PATCH /api/v1/missions/:slug: the fields of
// a mission but the slug, each optional; a field left out keeps its value.
type missionPatch struct {
	Slug *string `json:"slug"`
	governance.MissionPatch
}

// handleMissionUpdate serves PATCH /api/v1/missions/:slug (lead): changes
// the fields the body names. The slug cannot change: a body naming another
// one is a 422.
func handleMissionUpdate(missions *governance.MissionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		slug := c.Param("slug")
		if err := httpx.Actor(c).RequireLead("edit a mission"); err != nil {
			return err
		}
		p, err := httpx.Bind[missionPatch](c)
		if err != nil {
			return err
		}
		if p.Slug != nil && *p.Slug != slug {
			return invalid("slug_immutable", "A mission's slug cannot change; create a new mission instead.")
		}
		edit, err := missions.Patch(c.Request().Context(), httpx.Actor(c), slug, p.MissionPatch)
		if err != nil {
			return err
		}
		if edit.Pending != nil {
			return c.JSON(http.StatusAccepted, edit.Pending)
		}
		return c.JSON(http.StatusOK, edit.Mission)
	}
}

// handleMissionChanges serves GET /api/v1/missions/:slug/changes: the
// mission's changes that lower a protection and wait for (or were settled
// by) a second lead, newest first.
func handleMissionChanges(missions *governance.MissionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		changes, err := missions.Changes(c.Request().Context(), c.Param("slug"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"items": changes})
	}
}

// handleMissionChangeSettle serves POST /api/v1/mission-changes/:id/approve
// and …/reject (lead), with an optional {"note"}: a second lead applies a
// pending change, or any lead rejects it.
func handleMissionChangeSettle(missions *governance.MissionService, approve bool) echo.HandlerFunc {
	type request struct {
		Note string `json:"note"`
	}
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireLead("settle a mission change"); err != nil {
			return err
		}
		id, err := httpx.PathID(c, "mission_change_not_found", "No mission change has the id %q.")
		if err != nil {
			return err
		}
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		settle := missions.RejectChange
		if approve {
			settle = missions.ApproveChange
		}
		ch, err := settle(c.Request().Context(), httpx.Actor(c), id, in.Note)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, ch)
	}
}
