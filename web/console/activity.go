package console

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleActivity serves GET /admin/activity (admin): what admins did,
// newest first, a page at a time (?before= from the Older link, ?action=
// to keep one kind). A query that makes no sense shows the page again,
// 422, saying why.
func (k *console) handleActivity() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := views.ActivityView{Action: c.QueryParam("action")}
		status := http.StatusOK
		p, err := activity.ParsePage(c.QueryParam("limit"), c.QueryParam("before"), v.Action)
		if err == nil {
			var page governance.ActivityPage
			page, err = k.gov.Activity.List(c.Request().Context(), httpx.Actor(c), p)
			v.Entries, v.Paged = page.Items, p.Before != 0
			if page.NextBefore != nil {
				v.Older = *page.NextBefore
			}
		}
		if err != nil {
			msg, ok := fixable(err)
			if !ok {
				return err
			}
			v.Error, status = msg, http.StatusUnprocessableEntity
		}
		pg, err := k.page(c, "Activity", "activity")
		if err != nil {
			return err
		}
		return render(c, status, views.ActivityPage(pg, v))
	}
}
