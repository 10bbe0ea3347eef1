package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleMissions serves GET /missions: every mission, with links to create
// and edit them for leads. After a create or an edit, ?created= or
// ?updated= names the mission for the notice.
func (k *console) handleMissions() echo.HandlerFunc {
	return func(c echo.Context) error {
		ms, err := k.gov.Missions.ListSummaries(c.Request().Context())
		if err != nil {
			return err
		}
		p, err := k.page(c, "Missions", "missions")
		if err != nil {
			return err
		}
		for _, m := range ms {
			switch m.Slug {
			case c.QueryParam("created"):
				p.Notice = "Mission " + m.Slug + " created."
			case c.QueryParam("updated"):
				p.Notice = "Mission " + m.Slug + " saved."
			}
		}
		changes, err := k.gov.Missions.PendingChanges(c.Request().Context())
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.MissionsPage(p, views.MissionList{Missions: ms, CanLead: httpx.Actor(c).CanLead(),
			Changes: changes, Me: httpx.Actor(c).Email, CSRF: p.CSRF}))
	}
}

// handleNewMission serves GET /missions/new (lead): the empty form.
func (k *console) handleNewMission() echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireLead("create a mission"); err != nil {
			return err
		}
		return k.missionForm(c, http.StatusOK, views.MissionForm{})
	}
}

// handleCreateMission serves POST /missions (lead): the new mission, then
// back to the list; or the form again, as typed, with what is wrong (422).
func (k *console) handleCreateMission() echo.HandlerFunc {
	return func(c echo.Context) error {
		f := missionFormOf(c, false)
		in := missionInputOf(f)
		if _, err := k.gov.Missions.Create(c.Request().Context(), httpx.Actor(c), in); err != nil {
			return k.missionFormError(c, f, err)
		}
		return c.Redirect(http.StatusSeeOther, "/missions?created="+url.QueryEscape(in.Slug))
	}
}

// handleEditMission serves GET /missions/:slug/edit (lead): the form,
// filled in with the mission as it is.
func (k *console) handleEditMission() echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireLead("edit a mission"); err != nil {
			return err
		}
		m, err := k.gov.Missions.Get(c.Request().Context(), c.Param("slug"))
		if err != nil {
			return err
		}
		return k.missionForm(c, http.StatusOK, views.MissionForm{Editing: true, Slug: m.Slug, Title: m.Title, Text: m.Text,
			HighRisk: m.HighRisk, TwoPerson: m.TwoPerson, Evidence: views.EvidenceText(m.Evidence), Contract: views.ContractText(m.Contract),
			GateTTL: m.GateTTL.String()})
	}
}

// handleUpdateMission serves POST /missions/:slug (lead): the edit, then
// back to the list; or the form again, as typed, with what is wrong (422).
func (k *console) handleUpdateMission() echo.HandlerFunc {
	return func(c echo.Context) error {
		f := missionFormOf(c, true)
		edit, err := k.gov.Missions.Update(c.Request().Context(), httpx.Actor(c), f.Slug, missionInputOf(f))
		if err != nil {
			return k.missionFormError(c, f, err)
		}
		if ch := edit.Pending; ch != nil {
			k.setFlash(c, fmt.Sprintf("Your change to %s lowers a protection (%s): it waits for a second lead's approval, below. Nothing changed yet.",
				ch.Mission, strings.Join(ch.Lowers, "; ")))
			return c.Redirect(http.StatusSeeOther, "/missions")
		}
		return c.Redirect(http.StatusSeeOther, "/missions?updated="+url.QueryEscape(f.Slug))
	}
}

// handleMissionChange serves POST /missions/changes/:id (lead): do=approve
// applies a change another lead asked for, do=reject settles it without;
// back to the missions with what happened, or why not.
func (k *console) handleMissionChange() echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "mission_change_not_found", "No mission change has the id %q.")
		if err != nil {
			return err
		}
		settle, done := k.gov.Missions.RejectChange, "rejected: the mission keeps its protection"
		switch c.FormValue("do") {
		case "approve":
			settle, done = k.gov.Missions.ApproveChange, "approved and applied"
		case "reject":
		default:
			return errs.E(errs.Invalid, "invalid_action", "Approve or reject the change.")
		}
		ch, err := settle(c.Request().Context(), httpx.Actor(c), id, c.FormValue("note"))
		if e, ok := errs.As(err); ok && (e.Kind == errs.Conflict || e.Kind == errs.Invalid) {
			k.setFlash(c, e.Message)
			return c.Redirect(http.StatusSeeOther, "/missions")
		} else if err != nil {
			return err
		}
		k.setFlash(c, fmt.Sprintf("The change to %s (%s) was %s.", ch.Mission, ch.Summary, done))
		return c.Redirect(http.StatusSeeOther, "/missions")
	}
}

// missionForm renders the create or edit form.
func (k *console) missionForm(c echo.Context, status int, f views.MissionForm) error {
	title := "New mission"
	if f.Editing {
		title = "Edit " + f.Slug
	}
	p, err := k.page(c, title, "missions")
	if err != nil {
		return err
	}
	f.CSRF = p.CSRF
	return render(c, status, views.MissionFormPage(p, f))
}

// missionFormError shows the form again with a mistake a person can fix,
// under the field it is about or over the whole form; anything else
// (forbidden, not found, a fault) goes to the error handler.
func (k *console) missionFormError(c echo.Context, f views.MissionForm, err error) error {
	e, ok := errs.As(err)
	if !ok || (e.Kind != errs.Invalid && e.Kind != errs.Conflict && e.Code != "lowers_protection") {
		return err
	}
	field := errs.FieldOf(err)
	switch field {
	case "title", "text", "high_risk", "two_person", "evidence", "contract", "gate_ttl":
	case "slug":
		if f.Editing { // not a field of the edit form
			field = ""
		}
	default:
		field = ""
	}
	if field == "" {
		f.Error = e.Message
	} else {
		f.Errors = views.FieldErrors{field: e.Message}
	}
	return k.missionForm(c, http.StatusUnprocessableEntity, f)
}

// missionFormOf reads the submitted form as typed; for an edit the slug
// comes from the address, never the form.
func missionFormOf(c echo.Context, editing bool) views.MissionForm {
	f := views.MissionForm{Editing: editing, Slug: strings.TrimSpace(c.FormValue("slug")), Title: c.FormValue("title"),
		Text: c.FormValue("text"), HighRisk: c.FormValue("high_risk") != "", TwoPerson: c.FormValue("two_person") != "",
		Evidence: c.FormValue("evidence"),
		Contract: c.FormValue("contract"), GateTTL: c.FormValue("gate_ttl")}
	if editing {
		f.Slug = c.Param("slug")
	}
	return f
}

// missionInputOf parses the form's lists: evidence kinds separated by
// commas or lines, and contract clauses one "kind value" a line (blank
// lines skipped). The service checks what they say.
func missionInputOf(f views.MissionForm) governance.MissionInput {
	in := governance.MissionInput{Slug: f.Slug, Title: f.Title, Text: f.Text, HighRisk: f.HighRisk, TwoPerson: f.TwoPerson,
		Evidence: []string{}, Contract: []governance.Clause{}, GateTTL: f.GateTTL}
	for _, e := range strings.FieldsFunc(f.Evidence, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if e = strings.TrimSpace(e); e != "" {
			in.Evidence = append(in.Evidence, e)
		}
	}
	for line := range strings.Lines(f.Contract) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		kind, value := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			kind, value = line[:i], strings.TrimSpace(line[i:])
		}
		in.Contract = append(in.Contract, governance.Clause{Kind: protocol.ClauseKind(kind), Value: value})
	}
	return in
}
