package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/httpx"
)

// handleRunStart serves POST /api/v1/sessions/:id/runs (the session's
// agent): 201 and the new run, or 200 and the run the external id names;
// "plan": true starts a run that executes the session's approved plan.
func handleRunStart(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[ledger.RunInput](c)
		if err != nil {
			return err
		}
		r, created, err := l.Start(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return reply(c, briefs, createdOr(created), r.Session, r)
	}
}

// handleRunFinish serves PATCH /api/v1/runs/:id (the run's agent).
func handleRunFinish(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	type request struct {
		Status string `json:"status"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		r, err := l.FinishRun(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Status)
		if err != nil {
			return err
		}
		return reply(c, briefs, http.StatusOK, r.Session, r)
	}
}

// handleAskRecord serves POST /api/v1/runs/:id/asks (the run's agent).
func handleAskRecord(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[ledger.AskInput](c)
		if err != nil {
			return err
		}
		a, err := l.RecordAsk(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return replyOfRun(c, briefs, http.StatusCreated, a.Run, a)
	}
}

// handleAskAnswer serves POST /api/v1/asks/:id/answer (lead).
func handleAskAnswer(l *ledger.Service) echo.HandlerFunc {
	type request struct {
		Option string `json:"option"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		a, err := l.AnswerAsk(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Option)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, a)
	}
}

// handleToolCallRecord serves POST /api/v1/runs/:id/tool-calls (the run's agent).
func handleToolCallRecord(l *ledger.Service, briefs *governance.BriefService) echo.HandlerFunc {
	// started_at is read as text and parsed here: decoded straight into a
	// time.Time, a string that is not a time fails as if the body were not
	// JSON (a 400), when it is valid JSON with invalid content (a 422).
	type request struct {
		Server        string  `json:"server"`
		Tool          string  `json:"tool"`
		SideEffecting *bool   `json:"side_effecting"`
		StartedAt     *string `json:"started_at"`
		Step          string  `json:"step"`
		ledger.Site
		ledger.Caller
		Error string `json:"error"`
	}
	return func(c echo.Context) error {
		body, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		in := ledger.ToolCallInput{Server: body.Server, Tool: body.Tool, SideEffecting: body.SideEffecting, Step: body.Step,
			Site: body.Site, Caller: body.Caller, Error: body.Error}
		if body.StartedAt != nil {
			at, err := ledger.ParseStartedAt(*body.StartedAt)
			if err != nil {
				return err
			}
			in.StartedAt = &at
		}
		t, err := l.RecordToolCall(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return replyOfRun(c, briefs, http.StatusCreated, t.Run, t)
	}
}

// handleToolCheck serves POST /api/v1/sessions/:id/tool-calls/check (the
// session's agent): may this call run now? It writes nothing but, when
// the call names its tool_use_id, that it was checked.
func handleToolCheck(l *ledger.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[ledger.CheckInput](c)
		if err != nil {
			return err
		}
		v, err := l.Check(c.Request().Context(), httpx.Actor(c), c.Param("id"), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// handleToolList serves GET /api/v1/tools (anyone signed in): the registry.
func handleToolList(l *ledger.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ts, err := l.ListTools(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"tools": ts})
	}
}

// handleToolSet serves PUT /api/v1/tools (admin): classify a tool named
// in the body.
func handleToolSet(l *ledger.Service) echo.HandlerFunc {
	type request struct {
		Server        string   `json:"server"`
		Tool          string   `json:"tool"`
		SideEffecting *bool    `json:"side_effecting"`
		PathFields    []string `json:"path_fields"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		return setTool(c, l, in.Server, in.Tool, in.SideEffecting, in.PathFields)
	}
}

// handleToolPut serves PUT /api/v1/tools/:server/:tool (admin): classify
// the tool the path names.
func handleToolPut(l *ledger.Service) echo.HandlerFunc {
	type request struct {
		SideEffecting *bool    `json:"side_effecting"`
		PathFields    []string `json:"path_fields"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		server, err := url.PathUnescape(c.Param("server"))
		if err != nil {
			return invalid("invalid_server", "The server in the path is not valid percent-encoding.")
		}
		tool, err := url.PathUnescape(c.Param("tool"))
		if err != nil {
			return invalid("invalid_tool", "The tool in the path is not valid percent-encoding.")
		}
		return setTool(c, l, server, tool, in.SideEffecting, in.PathFields)
	}
}

// setTool classifies a tool and answers it.
func setTool(c echo.Context, l *ledger.Service, server, tool string, sideEffecting *bool, pathFields []string) error {
	// The wrong caller hears 403 whatever the body says.
	if err := httpx.Actor(c).RequireAdmin("classify a tool"); err != nil {
		return err
	}
	if sideEffecting == nil {
		return invalid("side_effecting_required", "Say whether the tool writes: \"side_effecting\": true or false.")
	}
	t, err := l.SetTool(c.Request().Context(), httpx.Actor(c), server, tool, ledger.ToolInput{SideEffecting: *sideEffecting, PathFields: pathFields})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}
