package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/httpx"
)

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
