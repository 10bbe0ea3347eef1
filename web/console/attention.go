package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// queue builds the Attention queue for the signed-in person.
func (k *console) queue(c echo.Context) (views.Queue, error) {
	items, err := k.gov.Attention.List(c.Request().Context())
	if err != nil {
		return views.Queue{}, err
	}
	ws, _ := webSession(c)
	return views.Queue{Items: items, Now: k.gov.Now(), CanLead: httpx.Actor(c).CanLead(), CSRF: ws.CSRF}, nil
}

// handleAttention serves GET /: the Attention view.
func (k *console) handleAttention() echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := k.queue(c)
		if err != nil {
			return err
		}
		p, err := k.page(c, "Attention", "attention")
		if err != nil {
			return err
		}
		p.Count = len(q.Items) // the same snapshot as the list
		return render(c, http.StatusOK, views.AttentionPage(p, q))
	}
}

// handleQueue serves GET /attention/queue: the queue alone, for the poll,
// with the count for the title and the navigation.
func (k *console) handleQueue() echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := k.queue(c)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templ.Join(views.QueueView(q), views.CountUpdate(pageTitle(c), len(q.Items))))
	}
}

// handleCount serves GET /attention/count: the count, for every page's poll.
func (k *console) handleCount() echo.HandlerFunc {
	return func(c echo.Context) error {
		n, err := k.gov.Attention.Count(c.Request().Context())
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.CountUpdate(pageTitle(c), n))
	}
}

// pageTitle is the title of the page a poll came from, which the layout
// sends as ?page= (the count goes in front of it).
func pageTitle(c echo.Context) string {
	t := strings.TrimSpace(c.QueryParam("page"))
	if t == "" || utf8.RuneCountInString(t) > 80 {
		return "Attention"
	}
	return t
}

// handleResolve serves POST /decisions/:ref/resolve (lead): the gate
// leaves the queue, or its form comes back with what is missing.
func (k *console) handleResolve() echo.HandlerFunc {
	return func(c echo.Context) error {
		ref := c.Param("ref")
		_, err := k.gov.Decisions.Resolve(c.Request().Context(), httpx.Actor(c), ref, c.FormValue("resolution"), c.FormValue("instruction"))
		return k.itemDone(c, governance.ItemDecision, ref, err, "resolution", "instruction")
	}
}

// handleResolveBulk serves POST /decisions/resolve (lead): the selected
// gates, one resolution and one instruction, all or none.
func (k *console) handleResolveBulk() echo.HandlerFunc {
	return func(c echo.Context) error {
		form, err := c.FormParams()
		if err != nil {
			return errs.E(errs.Malformed, "malformed_form", "The form could not be read.")
		}
		res, instr := form.Get("resolution"), form.Get("instruction")
		_, err = k.gov.Decisions.ResolveMany(c.Request().Context(), httpx.Actor(c), form["refs"], res, instr)
		if err != nil {
			f, ok := formErrors(err, map[string]string{"resolution": res, "instruction": instr}, "resolution", "instruction")
			if !ok {
				return err
			}
			if !httpx.IsHTMX(c) {
				return err
			}
			q, qerr := k.queue(c)
			if qerr != nil {
				return qerr
			}
			q.Bulk = f
			return render(c, http.StatusUnprocessableEntity, views.QueueView(q))
		}
		if !httpx.IsHTMX(c) {
			return c.Redirect(http.StatusSeeOther, "/")
		}
		q, err := k.queue(c)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templ.Join(views.QueueView(q), views.CountUpdate("Attention", len(q.Items))))
	}
}

// handlePlanDecide serves POST /sessions/:id/plan/approve, …/modify and
// …/reject (lead). The form has one field, note, which a request for
// changes sends as its instruction.
func (k *console) handlePlanDecide(decide func(context.Context, auth.Actor, string, string) (governance.Plan, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		_, err := decide(c.Request().Context(), httpx.Actor(c), id, c.FormValue("note"))
		if e, ok := errs.As(err); ok && e.Field == "instruction" {
			err = e.In("note")
		}
		return k.itemDone(c, governance.ItemPlan, id, err, "note")
	}
}

// handleResume serves POST /sessions/:id/resume (lead).
func (k *console) handleResume() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		_, err := k.gov.Sessions.Resume(c.Request().Context(), httpx.Actor(c), id)
		return k.itemDone(c, governance.ItemPaused, id, err)
	}
}

// handleAnswer serves POST /asks/:id/answer (lead): a parked run's question
// answered with one of its options; the run resumes from where it parked.
func (k *console) handleAnswer() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		_, err := k.ledger.AnswerAsk(c.Request().Context(), httpx.Actor(c), id, c.FormValue("option"))
		return k.itemDone(c, governance.ItemAsk, id, err)
	}
}

// handlePermissionAnswer serves POST /permissions/:id/answer (lead): a
// permission prompt answered with one of its options, delivered to the
// agent on its next brief.
func (k *console) handlePermissionAnswer() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		_, err := k.gov.Permissions.Answer(c.Request().Context(), httpx.Actor(c), id, c.FormValue("option"))
		return k.itemDone(c, governance.ItemPermission, id, err)
	}
}

// handlePause serves POST /sessions/:id/pause (lead): the brake, with a
// reason. From the queue, the queue comes back with the paused session in it.
func (k *console) handlePause() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		reason := c.FormValue("reason")
		_, err := k.gov.Sessions.Pause(c.Request().Context(), httpx.Actor(c), id, reason)
		if err != nil {
			if _, ok := formErrors(err, nil, "reason"); !ok || !httpx.IsHTMX(c) {
				return err
			}
		}
		if !httpx.IsHTMX(c) {
			return c.Redirect(http.StatusSeeOther, backTo(c))
		}
		// The brake form sits in an item, but the answer is the whole
		// queue: it replaces the queue, not the item.
		c.Response().Header().Set("HX-Retarget", "#queue")
		c.Response().Header().Set("HX-Reswap", "outerHTML")
		q, qerr := k.queue(c)
		if qerr != nil {
			return qerr
		}
		if e, ok := errs.As(err); ok {
			q.Bulk.Error = e.Message
			return render(c, http.StatusUnprocessableEntity, views.QueueView(q))
		}
		return render(c, http.StatusOK, templ.Join(views.QueueView(q), views.CountUpdate("Attention", len(q.Items))))
	}
}

// itemDone answers an action on a queue item: on success the item leaves
// the queue (or, without htmx, the page reloads); on a mistake the item
// comes back with it (422).
func (k *console) itemDone(c echo.Context, kind, ref string, err error, fields ...string) error {
	if err == nil {
		if !httpx.IsHTMX(c) {
			return c.Redirect(http.StatusSeeOther, backTo(c))
		}
		n, err := k.gov.Attention.Count(c.Request().Context())
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.CountUpdate(pageTitle(c), n))
	}
	values := map[string]string{}
	for _, f := range fields {
		values[f] = c.FormValue(f)
	}
	f, ok := formErrors(err, values, fields...)
	if !ok {
		return err
	}
	if !httpx.IsHTMX(c) {
		// A form on a session page: the page comes back with the message
		// over it (and the error's status), the session's forms as they are.
		if id, onSession := strings.CutPrefix(backTo(c), "/sessions/"); onSession && id != "" && !strings.Contains(id, "/") {
			e, _ := errs.As(err)
			return k.sessionPage(c, id, httpx.Status(e.Kind), views.ItemForm{Error: e.Message})
		}
		return err
	}
	q, qerr := k.queue(c)
	if qerr != nil {
		return qerr
	}
	for _, it := range q.Items {
		if it.Kind == kind && it.Ref == ref {
			return render(c, http.StatusUnprocessableEntity, views.Item(it, q.Now, q.CanLead, q.CSRF, f))
		}
	}
	// Someone else acted on it first: it has left the queue.
	return render(c, http.StatusOK, views.CountUpdate(pageTitle(c), len(q.Items)))
}

// formErrors turns a domain error a person can fix into form state: the
// message under the field the error names (errs.FieldOf) when the form
// shows that field (one of fields), or else over the whole form.
func formErrors(err error, values map[string]string, fields ...string) (views.ItemForm, bool) {
	e, ok := errs.As(err)
	if !ok || (e.Kind != errs.Invalid && e.Kind != errs.Conflict && e.Kind != errs.NotFound) {
		return views.ItemForm{}, false
	}
	f := views.ItemForm{Values: values, Errors: views.FieldErrors{}}
	if field := errs.FieldOf(err); field != "" && slices.Contains(fields, field) {
		f.Errors[field] = e.Message
	} else {
		f.Error = e.Message
	}
	return f, true
}

// backTo is where a plain (non-htmx) form goes after acting: the page it
// came from, when that page is on this site.
func backTo(c echo.Context) string {
	return safeNext(c.FormValue("back"))
}
