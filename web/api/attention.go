package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleAttentionList serves GET /api/v1/attention (anyone signed in with a
// personal token): what people must act on, expired gates first, then
// most severe, then oldest, a page at a time, under ?kind=, ?state=,
// ?mission=, ?agent=, ?session=, ?claimed= (yes, no, me) and ?snoozed=
// (include, only; the reader's snoozed items are hidden without it),
// ?limit= and ?next= (a page's next). Other parameters are 422
// unknown_parameter.
func handleAttentionList(attention *governance.AttentionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequirePerson("read the Attention queue"); err != nil {
			return err
		}
		q, err := httpx.Query(c, "kind", "state", "mission", "agent", "session", "claimed", "snoozed", "limit", "next")
		if err != nil {
			return err
		}
		limit, err := governance.ParseLimit(q.Get("limit"))
		if err != nil {
			return err
		}
		f := governance.AttentionFilter{Kind: q.Get("kind"), State: q.Get("state"), Mission: q.Get("mission"), Agent: q.Get("agent"),
			Session: q.Get("session"), Claimed: q.Get("claimed"), Snoozed: q.Get("snoozed"), Viewer: httpx.Actor(c)}
		page, err := attention.Query(c.Request().Context(), f, limit, q.Get("next"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, page)
	}
}

// itemKey is the Attention item a route's path names.
func itemKey(c echo.Context) governance.ItemKey {
	return governance.ItemKey{Kind: c.Param("kind"), Session: c.Param("session"), Ref: c.Param("ref")}
}

// handleAttentionClaim serves POST /api/v1/attention/:kind/:session/:ref/claim
// (lead): "I'm on it"; {"take_over":true} takes over someone else's claim.
func handleAttentionClaim(attention *governance.AttentionService) echo.HandlerFunc {
	type request struct {
		TakeOver bool `json:"take_over"`
	}
	return func(c echo.Context) error {
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		it, err := attention.Claim(c.Request().Context(), httpx.Actor(c), itemKey(c), in.TakeOver)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, it)
	}
}

// handleAttentionUnclaim serves DELETE /api/v1/attention/:kind/:session/:ref/claim
// (the claimer, or an admin).
func handleAttentionUnclaim(attention *governance.AttentionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := attention.Unclaim(c.Request().Context(), httpx.Actor(c), itemKey(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, it)
	}
}

// handleAttentionSnooze serves POST /api/v1/attention/:kind/:session/:ref/snooze
// (any person): {"for":"30m"}, from 1 minute to 7 days.
func handleAttentionSnooze(attention *governance.AttentionService) echo.HandlerFunc {
	type request struct {
		For string `json:"for"`
	}
	return func(c echo.Context) error {
		// The wrong caller hears 403 whatever the body says.
		if err := httpx.Actor(c).RequirePerson("snooze an Attention item"); err != nil {
			return err
		}
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		d, err := governance.ParseSnooze(in.For)
		if err != nil {
			return err
		}
		it, err := attention.Snooze(c.Request().Context(), httpx.Actor(c), itemKey(c), d)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, it)
	}
}

// handleAttentionUnsnooze serves DELETE /api/v1/attention/:kind/:session/:ref/snooze
// (the person who snoozed it).
func handleAttentionUnsnooze(attention *governance.AttentionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := attention.Unsnooze(c.Request().Context(), httpx.Actor(c), itemKey(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, it)
	}
}

// handleTaskAcknowledge serves POST /api/v1/sessions/:id/tasks/:task/acknowledge
// (lead): a lead has seen the blocked task.
func handleTaskAcknowledge(attention *governance.AttentionService) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := httpx.BindOptional[struct{}](c); err != nil {
			return err
		}
		it, err := attention.Acknowledge(c.Request().Context(), httpx.Actor(c), c.Param("id"), c.Param("task"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, it)
	}
}

// handleTaskRemediation serves POST /api/v1/sessions/:id/tasks/:task/remediation
// (lead): a required remediation naming the blocked task.
func handleTaskRemediation(remediations *governance.RemediationService) echo.HandlerFunc {
	type request struct {
		Instruction string `json:"instruction"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		r, err := remediations.ForTask(c.Request().Context(), httpx.Actor(c), c.Param("id"), c.Param("task"), in.Instruction)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, r)
	}
}
