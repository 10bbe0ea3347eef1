package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleSessionGet serves GET /api/v1/sessions/:id (its agent, or any
// person), with the preview's next action and reason beside the session's
// fields, as every reply to an agent carries them.
func handleSessionGet(sessions *governance.SessionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		d, err := sessions.Get(c.Request().Context(), httpx.Actor(c), c.Param("id"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, governance.Reply{Answer: d,
			Next: governance.Next{NextAction: d.Brief.NextAction, Reason: d.Brief.Reason}})
	}
}

// handleSessionPause serves POST /api/v1/sessions/:id/pause (lead).
func handleSessionPause(sessions *governance.SessionService) echo.HandlerFunc {
	type request struct {
		Reason string `json:"reason"`
	}
	return func(c echo.Context) error {
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		s, err := sessions.Pause(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Reason)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}

// handleSessionResume serves POST /api/v1/sessions/:id/resume (lead).
func handleSessionResume(sessions *governance.SessionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := httpx.BindOptional[struct{}](c); err != nil {
			return err
		}
		s, err := sessions.Resume(c.Request().Context(), httpx.Actor(c), c.Param("id"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}

// handleSessionList serves GET /api/v1/sessions (any person: every
// session; an agent key: its own): most severe next action first, then
// oldest, under ?mission=, ?state=, ?agent=, ?executor=, ?external_id=
// and ?q= (a part of the title, ignoring case), ?limit= and ?next=.
// Other parameters are 422 unknown_parameter.
func handleSessionList(sessions *governance.SessionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := httpx.Query(c, "mission", "state", "agent", "executor", "external_id", "q", "limit", "next")
		if err != nil {
			return err
		}
		limit, err := governance.ParseLimit(q.Get("limit"))
		if err != nil {
			return err
		}
		page, err := sessions.Page(c.Request().Context(), httpx.Actor(c), governance.SessionFilter{Mission: q.Get("mission"),
			State: q.Get("state"), Agent: q.Get("agent"), Executor: q.Get("executor"), ExternalID: q.Get("external_id"),
			Q: q.Get("q"), Limit: limit, Next: q.Get("next")})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, page)
	}
}
