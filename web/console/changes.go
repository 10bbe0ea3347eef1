package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleViolationClear serves POST /violations/:id/clear (lead): a
// person clears a violation as fixed or a false positive, with a note.
// From the Attention queue (htmx) the item leaves the queue, or comes back
// with the message; from a page, the console goes back to it.
func (k *console) handleViolationClear() echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "violation_not_found", "No violation has the id %q.")
		if err != nil {
			return err
		}
		as := c.FormValue("as")
		waiting := false
		if err = httpx.Actor(c).RequireLead("clear a violation"); err == nil && as == "" {
			// The API clears as fixed by default; a person must say which.
			err = errs.E(errs.Invalid, "clear_as_required", "Choose how the violation was cleared: fixed, or a false positive.").In("as")
		}
		if err == nil {
			var v governance.Violation
			v, err = k.gov.Changes.ClearViolation(c.Request().Context(), httpx.Actor(c), id, as, c.FormValue("note"))
			waiting = len(v.Approvals) > 0
			if e, ok := errs.As(err); ok && e.Code == "invalid_clear" {
				err = errs.E(errs.Invalid, e.Code, "Choose how the violation was cleared: fixed, or a false positive (not %q).", as).In("as")
			}
		}
		done := map[string]string{
			"fixed":          "Violation cleared as fixed — the HARD_STOP lifts on the agent's next brief.",
			"false_positive": "Violation cleared as a false positive — the HARD_STOP lifts on the agent's next brief.",
		}[as]
		return k.itemDone(c, action{kind: governance.ItemViolation, ref: c.Param("id"), done: done, waiting: waiting}, err, "as", "note")
	}
}

// handleRemediationClose serves POST /remediations/:id/close (lead). From
// the Attention queue (htmx) the item leaves the queue, or comes back with
// the message; from the session page's plain form, the page reloads.
func (k *console) handleRemediationClose() echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "remediation_not_found", "No remediation has the id %q.")
		if err != nil {
			return err
		}
		_, err = k.gov.Remediations.Close(c.Request().Context(), httpx.Actor(c), id, c.FormValue("note"))
		done := "Remediation closed — the agent is no longer asked to remediate from its next brief on."
		return k.itemDone(c, action{kind: governance.ItemRemediation, ref: c.Param("id"), done: done}, err, "note")
	}
}

// handlePolicies serves GET /admin/policies (admin): the policies and a
// form to define one.
func (k *console) handlePolicies() echo.HandlerFunc {
	return func(c echo.Context) error {
		notice := policyNotices[c.QueryParam("done")]
		return k.policiesPage(c, http.StatusOK, views.ItemForm{}, notice)
	}
}

func (k *console) policiesPage(c echo.Context, status int, f views.ItemForm, notice string) error {
	ps, err := k.gov.Policies.List(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := k.page(c, "Policies", "policies")
	if err != nil {
		return err
	}
	p.Notice = notice
	return render(c, status, views.PoliciesPage(p, views.PoliciesView{Policies: ps, Form: f}))
}

// handlePolicyCreate serves POST /admin/policies (admin). A mistake
// (a pattern that does not compile, say) shows the form again, 422, with
// the message under the field it is about.
func (k *console) handlePolicyCreate() echo.HandlerFunc {
	return func(c echo.Context) error {
		in := governance.PolicyInput{Name: c.FormValue("name"), Severity: c.FormValue("severity"), Kind: c.FormValue("kind"),
			Pattern: c.FormValue("pattern"), Action: c.FormValue("action")}
		_, err := k.gov.Policies.Create(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			values := map[string]string{"name": in.Name, "severity": in.Severity, "kind": in.Kind, "pattern": in.Pattern, "action": in.Action}
			f, ok := formErrors(err, values, "name", "severity", "kind", "pattern", "action")
			if !ok {
				return err
			}
			return k.policiesPage(c, http.StatusUnprocessableEntity, f, "")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/policies?done=created")
	}
}

// policyNotices are what the Policies page says after an action
// (?done=…). They are fixed sentences: a crafted link cannot put words on
// the page.
var policyNotices = map[string]string{
	"created":  "Policy defined: it applies to the next change report.",
	"disabled": "Policy disabled: it trips nothing from the next change report on. The violations it found stay.",
	"enabled":  "Policy enabled: it applies again from the next change report on.",
	"deleted":  "Policy deleted: it trips nothing and is listed no more. The violations it found stay readable.",
}

// handlePolicyControl serves POST /admin/policies/:id/disable, …/enable
// and …/delete (admin). A policy that is gone shows the page again, 404,
// saying so.
func (k *console) handlePolicyControl(what string) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "policy_not_found", "No policy has the id %q.")
		if err == nil {
			ctx, actor := c.Request().Context(), httpx.Actor(c)
			switch what {
			case "delete":
				_, err = k.gov.Policies.Delete(ctx, actor, id)
			default:
				_, err = k.gov.Policies.SetEnabled(ctx, actor, id, what == "enable")
			}
		}
		if err != nil {
			e, ok := errs.As(err)
			if !ok || e.Kind != errs.NotFound {
				return err
			}
			return k.policiesPage(c, http.StatusNotFound, views.ItemForm{Error: e.Message}, "")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/policies?done="+what+"d")
	}
}

// handleRules serves GET /admin/rules (admin): the architecture rules and
// a form to define one.
func (k *console) handleRules() echo.HandlerFunc {
	return func(c echo.Context) error {
		notice := map[string]string{"created": "Rule defined: it applies to the next change report."}[c.QueryParam("done")]
		return k.rulesPage(c, http.StatusOK, views.ItemForm{}, notice)
	}
}

func (k *console) rulesPage(c echo.Context, status int, f views.ItemForm, notice string) error {
	rs, err := k.gov.Policies.ListRules(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := k.page(c, "Architecture rules", "rules")
	if err != nil {
		return err
	}
	p.Notice = notice
	return render(c, status, views.RulesPage(p, views.RulesView{Rules: rs, Form: f}))
}

// handleRuleCreate serves POST /admin/rules (admin).
func (k *console) handleRuleCreate() echo.HandlerFunc {
	return func(c echo.Context) error {
		values := map[string]string{"concern": c.FormValue("concern"), "chosen": c.FormValue("chosen"),
			"departures": c.FormValue("departures"), "support": c.FormValue("support"), "total": c.FormValue("total"),
			"enforced": c.FormValue("enforced")}
		bad := func(field, msg string) error {
			return k.rulesPage(c, http.StatusUnprocessableEntity, views.ItemForm{Values: values, Errors: views.FieldErrors{field: msg}}, "")
		}
		support, err := strconv.Atoi(strings.TrimSpace(values["support"]))
		if err != nil {
			return bad("support", "Support must be a whole number: the components that use the chosen approach.")
		}
		total, err := strconv.Atoi(strings.TrimSpace(values["total"]))
		if err != nil {
			return bad("total", "Total must be a whole number: the components that address the concern.")
		}
		in := governance.RuleInput{Concern: values["concern"], Chosen: values["chosen"], Departures: lines(values["departures"]),
			Support: support, Total: total, Enforced: values["enforced"] == "true"}
		if _, err := k.gov.Policies.CreateRule(c.Request().Context(), httpx.Actor(c), in); err != nil {
			f, ok := formErrors(err, values, "concern", "chosen", "departures", "support", "total")
			if !ok {
				return err
			}
			return k.rulesPage(c, http.StatusUnprocessableEntity, f, "")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/rules?done=created")
	}
}
