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

// handleActivity serves GET /api/v1/activity (any person): what every
// person did, newest first, a page at a time: ?actor= (an email, or cli),
// ?kind= (an action or its prefix), ?since= (an RFC 3339 time), ?limit=
// and ?next= (a page's next). Other parameters are 422 unknown_parameter.
func handleActivity(acts *governance.ActivityService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequirePerson("read the activity record"); err != nil {
			return err
		}
		q, err := httpx.Query(c, "actor", "kind", "since", "limit", "next")
		if err != nil {
			return err
		}
		p, err := activity.ParseQuery(q.Get("actor"), q.Get("kind"), q.Get("since"), q.Get("limit"), q.Get("next"))
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
