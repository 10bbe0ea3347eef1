package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handleBreachReport serves POST /api/v1/runs/:id/breaches (the run's
// agent): the hook saw an allowed call change files inside a blocked
// scope. 201 and the breach, whatever the session's state; it makes the
// session HARD_STOP until a person clears its violation.
func handleBreachReport(s *governance.ScopeBreachService, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.ScopeBreachInput](c)
		if err != nil {
			return err
		}
		b, err := s.Report(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusCreated, b.Session, b)
	}
}

// handleTranscriptReport serves POST /api/v1/runs/:id/transcript (the
// run's agent): the tool calls the executor's transcript holds, which
// Madebook compares with its checks. 200 with how many it read and the
// calls it found ungoverned now; each of those makes the session
// HARD_STOP until a person clears its violation.
func handleTranscriptReport(s *governance.ScopeBreachService, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.TranscriptInput](c)
		if err != nil {
			return err
		}
		r, err := s.ReportTranscript(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return replyOfRun(c, briefs, http.StatusOK, c.Param("id"), r)
	}
}
