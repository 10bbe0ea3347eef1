package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleActivity serves GET /activity (every person) and GET
// /admin/activity (admin, its older address): what people did, newest
// first, a page at a time (?before= from the Older link), filtered by
// ?kind= (an action's prefix; ?action= on the older address), ?actor= (an
// email) and ?since= (a day, 2026-12-01, or an RFC 3339 time). A query
// that makes no sense shows the page again, 422, saying why.
func (k *console) handleActivity() echo.HandlerFunc {
	return func(c echo.Context) error {
		kind := c.QueryParam("kind")
		if kind == "" {
			kind = c.QueryParam("action")
		}
		v := views.ActivityView{Action: kind, Actor: strings.TrimSpace(c.QueryParam("actor")), Since: strings.TrimSpace(c.QueryParam("since"))}
		status := http.StatusOK
		p, err := activity.ParsePage(c.QueryParam("limit"), c.QueryParam("before"), v.Action)
		if err == nil {
			p.Actor = v.Actor
			p.Since, err = sinceOf(v.Since)
		}
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

// sinceOf reads the Activity page's since: a day (its start, UTC) or an
// RFC 3339 time; "" for ever. Errors: invalid_since.
func sinceOf(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, errs.E(errs.Invalid, "invalid_since", "Since must be a day, e.g. 2026-12-01, or an RFC 3339 time.").In("since")
}
