package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleActivityList serves GET /api/v1/admin/activity (admin): what
// admins did, newest first, a page at a time (?limit=, ?before=, and
// ?action= to keep the actions that start with it).
func handleActivityList(acts *governance.ActivityService) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The wrong caller hears 403 whatever the query says.
		if err := httpx.Actor(c).RequireAdmin("read the admin activity"); err != nil {
			return err
		}
		p, err := activity.ParsePage(c.QueryParam("limit"), c.QueryParam("before"), c.QueryParam("action"))
		if err != nil {
			return err
		}
		page, err := acts.List(c.Request().Context(), httpx.Actor(c), p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, page)
	}
}
