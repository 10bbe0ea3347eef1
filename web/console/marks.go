package console

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// keyOf is the item a mark's route names.
func keyOf(c echo.Context) governance.ItemKey {
	return governance.ItemKey{Kind: c.Param("kind"), Session: c.Param("session"), Ref: c.Param("ref")}
}

// handleClaim serves POST /attention/items/:kind/:session/:ref/claim
// (lead): "I'm on it", shown to everyone; take_over takes it from the
// lead who had it. The item's form comes back with the mark.
func (k *console) handleClaim() echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := k.gov.Attention.Claim(c.Request().Context(), httpx.Actor(c), keyOf(c), c.FormValue("take_over") != "")
		return k.marked(c, it, err, "You are on it: everyone sees your name on it until it is answered or you unclaim it.")
	}
}

// handleUnclaim serves POST /attention/items/:kind/:session/:ref/unclaim.
func (k *console) handleUnclaim() echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := k.gov.Attention.Unclaim(c.Request().Context(), httpx.Actor(c), keyOf(c))
		return k.marked(c, it, err, "Unclaimed: no one is on it now.")
	}
}

// handleSnooze serves POST /attention/items/:kind/:session/:ref/snooze
// (for=30m…7d): the item leaves this person's queue until then, and
// keeps blocking its agent.
func (k *console) handleSnooze() echo.HandlerFunc {
	return func(c echo.Context) error {
		key := keyOf(c)
		d, err := governance.ParseSnooze(c.FormValue("for"))
		var it governance.AttentionItem
		if err == nil {
			it, err = k.gov.Attention.Snooze(c.Request().Context(), httpx.Actor(c), key, d)
		}
		if err != nil {
			return k.marked(c, it, err, "")
		}
		msg := fmt.Sprintf("Snoozed for %s: it is hidden from your queue until %s and still blocks the agent; others see it snoozed.",
			protocol.FormatDuration(d), views.Stamp(k.gov.Now().Add(d)))
		if !httpx.IsHTMX(c) {
			k.setFlash(c, msg)
			return c.Redirect(http.StatusSeeOther, "/")
		}
		if onItemPage(c) {
			return k.marked(c, it, nil, msg)
		}
		return k.lineGone(c, action{kind: key.Kind, session: key.Session, ref: key.Ref}, msg)
	}
}

// handleUnsnooze serves POST /attention/items/:kind/:session/:ref/unsnooze.
func (k *console) handleUnsnooze() echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := k.gov.Attention.Unsnooze(c.Request().Context(), httpx.Actor(c), keyOf(c))
		return k.marked(c, it, err, "Back in your queue.")
	}
}

// handleAcknowledge serves POST /sessions/:id/tasks/:task/acknowledge
// (lead): a blocked task seen, recorded; it stays until the task moves.
func (k *console) handleAcknowledge() echo.HandlerFunc {
	return func(c echo.Context) error {
		it, err := k.gov.Attention.Acknowledge(c.Request().Context(), httpx.Actor(c), c.Param("id"), c.Param("task"))
		return k.marked(c, it, err, "Acknowledged: the task stays listed, marked seen by you, until its agent moves it.")
	}
}

// handleTaskRemediation serves POST /sessions/:id/tasks/:task/remediation
// (lead): a blocked task answered with a required remediation, the
// instruction delivered on the agent's next brief.
func (k *console) handleTaskRemediation() echo.HandlerFunc {
	return func(c echo.Context) error {
		_, err := k.gov.Remediations.ForTask(c.Request().Context(), httpx.Actor(c), c.Param("id"), c.Param("task"), c.FormValue("instruction"))
		var it governance.AttentionItem
		if err == nil {
			it, err = k.gov.Attention.Get(c.Request().Context(), governance.ItemTask, c.Param("id"), c.Param("task"))
		}
		return k.marked(c, it, err, "Remediation required: the agent gets your instruction on its next brief. The task stays listed until it moves.")
	}
}

// marked answers a mark on an item (claim, snooze, acknowledge): the
// item's form again, with the mark, and the words in the live region;
// a refusal says why over the form (or, once the item is gone, what
// became of it). Without htmx, back to the page the form was on.
func (k *console) marked(c echo.Context, it governance.AttentionItem, err error, msg string) error {
	key := keyOf(c)
	if key.Kind == "" {
		key = governance.ItemKey{Kind: governance.ItemTask, Session: c.Param("id"), Ref: c.Param("task")}
	}
	a := action{kind: key.Kind, session: key.Session, ref: key.Ref}
	if e, ok := errs.As(err); ok && e.Code == "already_claimed" {
		// The API's words name a JSON field; the form has a button.
		err = errs.E(errs.Conflict, e.Code, "%v is on it already: ask them, or take it over.", e.Details["claimed_by"])
	}
	if err != nil {
		return k.itemDone(c, a, err, "instruction")
	}
	if !httpx.IsHTMX(c) {
		k.setFlash(c, msg)
		return c.Redirect(http.StatusSeeOther, backTo(c))
	}
	return k.itemStays(c, it, msg)
}
