package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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

// pageSize is how many lines of the queue a page shows.
const pageSize = 50

// maxLines is the most lines one refresh of the queue brings back (a
// person who loaded page after page keeps them across a refresh).
const maxLines = 1000

// filterOf reads the queue's filters from the query string.
func filterOf(c echo.Context) governance.AttentionFilter {
	return governance.AttentionFilter{Kind: c.QueryParam("kind"), Mission: c.QueryParam("mission"),
		Agent: c.QueryParam("agent"), Session: c.QueryParam("session"), State: c.QueryParam("state"),
		Claimed: c.QueryParam("claimed"), Snoozed: c.QueryParam("snoozed"), Viewer: httpx.Actor(c)}
}

// intParam reads a whole-number query parameter between lo and hi, or def
// when it is absent. Errors: invalid_number.
func intParam(c echo.Context, name string, def, lo, hi int) (int, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errs.E(errs.Invalid, "invalid_number", "%s must be a whole number from %d to %d, not %q.", name, lo, hi, v).In(name)
	}
	return n, nil
}

// inbox builds a page of the queue for the signed-in person: limit lines
// from the from-th on, under the request's filters.
func (k *console) inbox(c echo.Context, from, limit int) (views.Inbox, error) {
	ctx := c.Request().Context()
	f := filterOf(c)
	p, err := k.gov.Attention.Page(ctx, f, from, limit)
	if err != nil {
		return views.Inbox{}, err
	}
	missions, err := k.gov.Missions.List(ctx)
	if err != nil {
		return views.Inbox{}, err
	}
	ws, _ := webSession(c)
	return views.Inbox{Page: p, Filter: f, Missions: missions, Limit: pageSize, Now: k.gov.Now(),
		CanLead: httpx.Actor(c).CanLead(), CSRF: ws.CSRF}, nil
}

// handleAttention serves GET /: the Attention view, a page of the queue
// (?from= for a later page) under the filters in the query string.
func (k *console) handleAttention() echo.HandlerFunc {
	return func(c echo.Context) error {
		from, err := intParam(c, "from", 0, 0, 1<<30)
		if err != nil {
			return err
		}
		in, err := k.inbox(c, from, pageSize)
		if err != nil {
			return err
		}
		p, err := k.page(c, "Attention", "attention")
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.AttentionPage(p, in))
	}
}

// handleQueue serves GET /attention/queue: the queue alone, with the count
// for the title and the navigation, for a refresh (?limit= lines, as many
// as the page shows); or, with ?from=, the next page of lines alone.
func (k *console) handleQueue() echo.HandlerFunc {
	return func(c echo.Context) error {
		from, err := intParam(c, "from", 0, 0, 1<<30)
		if err != nil {
			return err
		}
		limit, err := intParam(c, "limit", pageSize, 1, maxLines)
		if err != nil {
			return err
		}
		if from > 0 {
			limit = pageSize
		}
		in, err := k.inbox(c, from, limit)
		if err != nil {
			return err
		}
		if from > 0 {
			return render(c, http.StatusOK, views.Lines(in))
		}
		n, err := k.gov.Attention.Count(c.Request().Context())
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templ.Join(views.QueueView(in), views.CountUpdate(pageTitle(c), n)))
	}
}

// handleItem serves GET /attention/items/:kind/:session/:ref: one item,
// opened — its form alone for htmx (it opens in its line), a page of its
// own otherwise.
func (k *console) handleItem() echo.HandlerFunc {
	return func(c echo.Context) error {
		kind, session, ref := c.Param("kind"), c.Param("session"), c.Param("ref")
		it, err := k.gov.Attention.Get(c.Request().Context(), kind, session, ref)
		if errs.KindOf(err) == errs.NotFound {
			// Acted on already: what became of it, rather than a 404.
			o, oerr := k.gov.Attention.Outcome(c.Request().Context(), kind, session, ref)
			if oerr != nil {
				return err
			}
			if httpx.IsHTMX(c) {
				return render(c, http.StatusOK, views.ItemGone(o, k.gov.Now(), httpx.Actor(c).Email, false))
			}
			p, perr := k.page(c, o.Label+" no longer waits", "attention")
			if perr != nil {
				return perr
			}
			return render(c, http.StatusOK, views.ItemGonePage(p, o, k.gov.Now()))
		}
		if err != nil {
			return err
		}
		tools, err := k.planTools(c.Request().Context(), it.Plan)
		if err != nil {
			return err
		}
		ws, _ := webSession(c)
		canLead := httpx.Actor(c).CanLead()
		if httpx.IsHTMX(c) {
			return render(c, http.StatusOK, views.ItemBody(it, canLead, ws.CSRF, views.ItemForm{}, httpx.Actor(c).Email, tools))
		}
		p, err := k.page(c, it.Title, "attention")
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.ItemPage(p, it, k.gov.Now(), canLead, ws.CSRF, tools))
	}
}

// handleOutcome serves GET /attention/items/:kind/:session/:ref/outcome:
// what became of an item that left the queue, as a note for its line or
// its page; 204 (nothing to show) while it still waits.
func (k *console) handleOutcome() echo.HandlerFunc {
	return func(c echo.Context) error {
		o, err := k.gov.Attention.Outcome(c.Request().Context(), c.Param("kind"), c.Param("session"), c.Param("ref"))
		if errs.CodeOf(err) == "attention_item_waiting" {
			return c.NoContent(http.StatusNoContent)
		}
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.ItemGone(o, k.gov.Now(), httpx.Actor(c).Email, onItemPage(c)))
	}
}

// onItemPage reports whether an htmx request came from an item's own page
// (not from its line in the queue), as its HX-Current-URL says.
func onItemPage(c echo.Context) bool {
	u, err := url.Parse(c.Request().Header.Get("HX-Current-URL"))
	return err == nil && strings.HasPrefix(u.Path, "/attention/items/")
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
// leaves the queue, or its form comes back with what is missing. With
// accepted set (the Accept proposal form), the agent's proposal is the
// resolution.
func (k *console) handleResolve() echo.HandlerFunc {
	return func(c echo.Context) error {
		ref := c.Param("ref")
		var d governance.Decision
		var err error
		if c.FormValue("accepted") != "" {
			d, err = k.gov.Decisions.Accept(c.Request().Context(), httpx.Actor(c), ref, c.FormValue("instruction"))
		} else {
			d, err = k.gov.Decisions.Resolve(c.Request().Context(), httpx.Actor(c), ref, c.FormValue("resolution"), c.FormValue("instruction"))
		}
		done := fmt.Sprintf("%s resolved — the agent gets the resolution and instruction on its next brief.", d.Ref)
		return k.itemDone(c, action{kind: governance.ItemDecision, ref: ref, done: done, waiting: len(d.Approvals) > 0}, err,
			"resolution", "instruction", "accepted")
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
		refs, res, instr := form["refs"], form.Get("resolution"), form.Get("instruction")
		ws, _ := webSession(c)
		_, err = k.gov.Decisions.ResolveMany(c.Request().Context(), httpx.Actor(c), refs, res, instr)
		if err != nil {
			f, ok := formErrors(err, map[string]string{"resolution": res, "instruction": instr}, "resolution", "instruction")
			if !ok || !httpx.IsHTMX(c) {
				return err
			}
			return render(c, http.StatusUnprocessableEntity, views.BulkBar(ws.CSRF, f))
		}
		if !httpx.IsHTMX(c) {
			return c.Redirect(http.StatusSeeOther, "/")
		}
		msg := fmt.Sprintf("%s resolved — each agent gets the resolution and instruction on its next brief.", strings.Join(refs, ", "))
		a, err := k.announce(c, msg)
		if err != nil {
			return err
		}
		c.Response().Header().Set("HX-Trigger", "queue-changed")
		return render(c, http.StatusOK, templ.Join(views.BulkBar(ws.CSRF, views.ItemForm{}), views.AnnounceUpdate(a)))
	}
}

// planVerdicts say what happens after each answer to a plan, for the
// session named.
var planVerdicts = map[string]string{
	"approve": "Plan of %s approved — the agent may proceed; it is told on its next brief.",
	"modify":  "Changes asked of %s — the agent revises its plan with your instruction, given on its next brief.",
	"reject":  "Plan of %s rejected — the agent is told on its next brief and goes back to idle.",
}

// handlePlanDecide serves POST /sessions/:id/plan/approve, …/modify and
// …/reject (lead). The form has one field, note, which a request for
// changes sends as its instruction.
func (k *console) handlePlanDecide(verb string, decide func(context.Context, auth.Actor, string, string) (governance.Plan, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		name := k.sessionName(c, governance.ItemPlan, id)
		p, err := decide(c.Request().Context(), httpx.Actor(c), id, c.FormValue("note"))
		if e, ok := errs.As(err); ok && e.Field == "instruction" {
			err = e.In("note")
		}
		return k.itemDone(c, action{kind: governance.ItemPlan, session: id, ref: id, done: fmt.Sprintf(planVerdicts[verb], name),
			waiting: len(p.Approvals) > 0}, err, "note")
	}
}

// sessionName is the title of the session an item waits on, for the
// words after an action (its id when it has no title or is not found).
func (k *console) sessionName(c echo.Context, kind, id string) string {
	it, err := k.gov.Attention.Get(c.Request().Context(), kind, id, id)
	if err != nil || it.SessionTitle == "" {
		return id
	}
	return it.SessionTitle
}

// handleResume serves POST /sessions/:id/resume (lead).
func (k *console) handleResume() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		s, err := k.gov.Sessions.Resume(c.Request().Context(), httpx.Actor(c), id)
		done := fmt.Sprintf("Brake released on %s — the agent may continue on its next brief.", orID(s.Title, id))
		return k.itemDone(c, action{kind: governance.ItemPaused, session: id, ref: id, done: done}, err)
	}
}

// handleAnswer serves POST /asks/:id/answer (lead): a parked run's question
// answered with one of its options; the run resumes from where it parked.
func (k *console) handleAnswer() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		a, err := k.ledger.AnswerAsk(c.Request().Context(), httpx.Actor(c), id, c.FormValue("option"))
		done := fmt.Sprintf("Answered %q — the run resumes from where it parked (now %s).", a.Options[a.Answer], a.RunStatus)
		return k.itemDone(c, action{kind: governance.ItemAsk, ref: id, done: done}, err)
	}
}

// handlePermissionAnswer serves POST /permissions/:id/answer (lead): a
// permission prompt answered with one of its options, delivered to the
// agent on its next brief.
func (k *console) handlePermissionAnswer() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		p, err := k.gov.Permissions.Answer(c.Request().Context(), httpx.Actor(c), id, c.FormValue("option"))
		label := p.Answer
		for _, o := range p.Options {
			if o.Key == p.Answer {
				label = o.Label
			}
		}
		done := fmt.Sprintf("PRM-%d answered %s — delivered on the agent's next brief.", p.ID, label)
		return k.itemDone(c, action{kind: governance.ItemPermission, ref: id, done: done}, err)
	}
}

// handlePause serves POST /sessions/:id/pause (lead): the brake, with a
// reason. From the queue the live region says what happens next and the
// queue refreshes (the paused session joins it); a refused pause answers
// the brake form again with the message.
func (k *console) handlePause() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		reason := c.FormValue("reason")
		s, err := k.gov.Sessions.Pause(c.Request().Context(), httpx.Actor(c), id, reason)
		done := fmt.Sprintf("Session %s paused — the agent is told to stop on its next brief.", orID(s.Title, id))
		if err != nil {
			f, ok := formErrors(err, map[string]string{"reason": reason}, "reason")
			if !ok || !httpx.IsHTMX(c) {
				return err
			}
			return render(c, http.StatusUnprocessableEntity, views.BrakeForm(id, csrfOf(c), f))
		}
		if !httpx.IsHTMX(c) {
			k.setFlash(c, done)
			return c.Redirect(http.StatusSeeOther, backTo(c))
		}
		a, err := k.announce(c, done)
		if err != nil {
			return err
		}
		c.Response().Header().Set("HX-Trigger", "queue-changed")
		return render(c, http.StatusOK, views.AnnounceUpdate(a))
	}
}

// action is what a queue action acted on, and the words that say what
// happens next when it succeeds.
type action struct {
	kind, session, ref string
	done               string
	// waiting says the action was a first approval on a two-person
	// mission: the item stays, 1 of 2, until a second lead approves.
	waiting bool
}

// itemDone answers an action on a queue item. On success its line leaves
// the queue, the live region says what happens next, and the queue
// refreshes (without htmx, the page reloads); on a mistake the item's form
// comes back with it (422); when someone else acted on it first, its line
// leaves with those words instead.
func (k *console) itemDone(c echo.Context, a action, err error, fields ...string) error {
	if err == nil {
		if !httpx.IsHTMX(c) {
			// A plain form (the session page's): the page it goes back
			// to says what happened, once.
			if a.waiting {
				k.setFlash(c, waitingSecond)
			} else {
				k.setFlash(c, a.done)
			}
			return c.Redirect(http.StatusSeeOther, backTo(c))
		}
		if a.waiting {
			return k.itemWaits(c, a)
		}
		if onItemPage(c) {
			return k.itemDonePage(c, a)
		}
		return k.lineGone(c, a, a.done)
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
	it, gerr := k.gov.Attention.Get(c.Request().Context(), a.kind, a.session, a.ref)
	if e, ok := errs.As(gerr); ok && e.Kind == errs.NotFound {
		return k.alreadyGone(c, a, f.Error)
	} else if gerr != nil {
		return gerr
	}
	tools, terr := k.planTools(c.Request().Context(), it.Plan)
	if terr != nil {
		return terr
	}
	return render(c, http.StatusUnprocessableEntity, views.ItemBody(it, httpx.Actor(c).CanLead(), csrfOf(c), f, httpx.Actor(c).Email, tools))
}

// waitingSecond is what a first approval on a two-person mission says.
const waitingSecond = "Your approval is 1 of 2 — it takes effect when a second, different lead approves the same."

// itemWaits answers htmx after a first approval on a two-person mission:
// the item stays open, showing 1 of 2, and the live region says what
// happens next.
func (k *console) itemWaits(c echo.Context, a action) error {
	it, err := k.gov.Attention.Get(c.Request().Context(), a.kind, a.session, a.ref)
	if err != nil {
		return err
	}
	return k.itemStays(c, it, waitingSecond)
}

// itemStays answers htmx after an action that leaves the item waiting (a
// first approval, a claim, a snooze seen from its page): its form again,
// as it is now, msg in the live region, and the queue asked to refresh.
func (k *console) itemStays(c echo.Context, it governance.AttentionItem, msg string) error {
	tools, err := k.planTools(c.Request().Context(), it.Plan)
	if err != nil {
		return err
	}
	ann, err := k.announce(c, msg)
	if err != nil {
		return err
	}
	c.Response().Header().Set("HX-Trigger", "queue-changed")
	return render(c, http.StatusOK, templ.Join(views.ItemBody(it, httpx.Actor(c).CanLead(), csrfOf(c), views.ItemForm{}, httpx.Actor(c).Email, tools),
		views.AnnounceUpdate(ann)))
}

// lineGone answers htmx with the item's line removed (the answer replaces
// the line with nothing), the words in the live region and the new count,
// and asks the queue to refresh.
func (k *console) lineGone(c echo.Context, a action, msg string) error {
	ann, err := k.announce(c, msg)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("HX-Retarget", "#"+views.ItemElementID(a.kind, a.session, a.ref))
	h.Set("HX-Reswap", "outerHTML")
	h.Set("HX-Trigger", "queue-changed")
	return render(c, http.StatusOK, views.AnnounceUpdate(ann))
}

// alreadyGone answers a submit on an item someone else acted on first:
// the form stays as typed, and the note over it says who did what, when
// (msg, the refusal's words, when the outcome cannot be read).
func (k *console) alreadyGone(c echo.Context, a action, msg string) error {
	o, err := k.gov.Attention.Outcome(c.Request().Context(), a.kind, a.session, a.ref)
	if err != nil {
		return k.lineGone(c, a, msg+" It has left the queue.")
	}
	me := httpx.Actor(c).Email
	ann, err := k.announce(c, views.OutcomeSentence(o, k.gov.Now(), me))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("HX-Retarget", "#"+views.GoneID(a.kind, a.session, a.ref))
	h.Set("HX-Reswap", "innerHTML")
	h.Set("HX-Trigger", "queue-changed")
	return render(c, http.StatusOK, templ.Join(views.ItemGone(o, k.gov.Now(), me, onItemPage(c)), views.AnnounceUpdate(ann)))
}

// itemDonePage answers an action taken on an item's own page: the item
// gives way to what was done and a link to the next item waiting.
func (k *console) itemDonePage(c echo.Context, a action) error {
	ctx := c.Request().Context()
	o, err := k.gov.Attention.Outcome(ctx, a.kind, a.session, a.ref)
	if err != nil {
		return err
	}
	next, err := k.gov.Attention.Page(ctx, governance.AttentionFilter{Viewer: httpx.Actor(c)}, 0, 1)
	if err != nil {
		return err
	}
	var after *governance.AttentionItem
	if len(next.Items) > 0 {
		after = &next.Items[0]
	}
	ann, err := k.announce(c, a.done)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("HX-Retarget", "#"+views.ItemElementID(a.kind, a.session, a.ref))
	h.Set("HX-Reswap", "outerHTML")
	return render(c, http.StatusOK, templ.Join(views.ItemDone(o, k.gov.Now(), httpx.Actor(c).Email, a.done, after), views.AnnounceUpdate(ann)))
}

// announce is the live region's message with the current count.
func (k *console) announce(c echo.Context, msg string) (views.Announce, error) {
	n, err := k.gov.Attention.Count(c.Request().Context())
	if err != nil {
		return views.Announce{}, err
	}
	return views.Announce{Message: msg, Title: pageTitle(c), Count: n}, nil
}

// csrfOf is the signed-in person's CSRF token.
func csrfOf(c echo.Context) string {
	ws, _ := webSession(c)
	return ws.CSRF
}

// formErrors turns a domain error a person can fix into form state: the
// message under the field the error names (errs.FieldOf) when the form
// shows that field (one of fields), or else over the whole form.
//
// A lead refused as the creator of the session's agent key (key_creator)
// is told so on the form too: they may act, just not approve this.
func formErrors(err error, values map[string]string, fields ...string) (views.ItemForm, bool) {
	e, ok := errs.As(err)
	if !ok || (e.Kind != errs.Invalid && e.Kind != errs.Conflict && e.Kind != errs.NotFound && e.Code != "key_creator") {
		return views.ItemForm{}, false
	}
	f := views.ItemForm{Values: values, Errors: views.FieldErrors{}}
	for _, one := range append([]*errs.Error{e}, e.Also...) {
		if slices.Contains(fields, one.Field) {
			f.Errors[one.Field] = one.Message
		} else if f.Error == "" {
			f.Error = one.Message
		}
	}
	return f, true
}

// backTo is where a plain (non-htmx) form goes after acting: the page it
// came from, when that page is on this site.
func backTo(c echo.Context) string {
	return safeNext(c.FormValue("back"))
}
