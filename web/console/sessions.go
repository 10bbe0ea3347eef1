package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleSessions serves GET /sessions: the sessions with their next
// action, most severe first, a page at a time (?next=), under the filters
// in the query string (state, mission, agent, q: words of the title).
func (k *console) handleSessions() echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		f := governance.SessionFilter{State: c.QueryParam("state"), Mission: c.QueryParam("mission"),
			Agent: strings.TrimSpace(c.QueryParam("agent")), Q: strings.TrimSpace(c.QueryParam("q")), Next: c.QueryParam("next")}
		list, err := k.gov.Sessions.Page(ctx, httpx.Actor(c), f)
		if err != nil {
			return err
		}
		missions, err := k.gov.Missions.List(ctx)
		if err != nil {
			return err
		}
		p, err := k.page(c, "Sessions", "sessions")
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.SessionsPage(p, views.SessionsList{Page: list, Filter: f, Missions: missions, Now: k.gov.Now()}))
	}
}

// handleSession serves GET /sessions/:id: the session's page.
func (k *console) handleSession() echo.HandlerFunc {
	return func(c echo.Context) error {
		return k.sessionPage(c, c.Param("id"), http.StatusOK, views.ItemForm{})
	}
}

// sessionPage renders session id's page, with f's values and errors in
// its forms (a failed submit comes back as status 422).
func (k *console) sessionPage(c echo.Context, id string, status int, f views.ItemForm) error {
	d, err := k.gov.Sessions.Get(c.Request().Context(), httpx.Actor(c), id)
	if err != nil {
		return err
	}
	p, err := k.page(c, orID(d.Title, d.ID), "sessions")
	if err != nil {
		return err
	}
	if n := remediationNotices[c.QueryParam("done")]; n != "" {
		p.Notice = n
	}
	diagram, err := lifecycleDiagram(d)
	if err != nil {
		return err
	}
	runs, err := k.ledger.History(c.Request().Context(), httpx.Actor(c), d.ID)
	if err != nil {
		return err
	}
	var pl *plan.Plan
	if d.Plan != nil {
		pl = &d.Plan.Plan
	}
	tools, err := k.planTools(c.Request().Context(), pl)
	if err != nil {
		return err
	}
	return render(c, status, views.SessionPage(p, views.SessionView{D: d, Now: k.gov.Now(), CanLead: httpx.Actor(c).CanLead(), Form: f,
		Lifecycle: diagram, Runs: runs, Tools: tools}))
}

// planTools is how the console classifies a plan's steps to draw them:
// as the plan check does (PlanService.Classifier, the tool registry as it
// is now), read only when there is a plan p to draw; nil otherwise.
func (k *console) planTools(ctx context.Context, p *plan.Plan) (plan.Classifier, error) {
	if p == nil {
		return nil, nil
	}
	return k.gov.Plans.Classifier(ctx)
}

// remediationNotices are what the session page says after a remediation
// request (?done=…): fixed sentences, so a link cannot put words there.
var remediationNotices = map[string]string{
	"remediation": "Remediation requested — it reaches the agent on its next brief.",
}

// handleRemediationRequest serves POST /sessions/:id/remediations (lead).
func (k *console) handleRemediationRequest() echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		in := governance.RemediationInput{Severity: c.FormValue("severity"), Instruction: c.FormValue("instruction"),
			Files: lines(c.FormValue("files"))}
		_, err := k.gov.Remediations.Request(c.Request().Context(), httpx.Actor(c), id, in)
		if e, ok := errs.As(err); ok && e.Code == "invalid_severity" && in.Severity == "" {
			// The console pre-selects no severity: a lead chooses.
			err = errs.E(errs.Invalid, e.Code, "Choose a severity: required (the agent must fix it) or advisory (a warning).").In("severity")
		}
		if err != nil {
			f, ok := formErrors(err, map[string]string{"severity": in.Severity, "instruction": in.Instruction,
				"files": c.FormValue("files")}, "severity", "instruction", "files")
			if !ok {
				return err
			}
			return k.sessionPage(c, id, http.StatusUnprocessableEntity, f)
		}
		return c.Redirect(http.StatusSeeOther, "/sessions/"+id+"?done=remediation")
	}
}

// lines splits a textarea into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func orID(title, id string) string {
	if title != "" {
		return title
	}
	return id
}
