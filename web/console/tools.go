package console

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

// handleTools serves GET /admin/tools (admin): the tool registry.
func (k *console) handleTools() echo.HandlerFunc {
	return func(c echo.Context) error {
		notice := map[string]string{"saved": "Saved the tool's classification.",
			"removed": "Removed the tool: its calls count as side-effecting again."}[c.QueryParam("done")]
		return k.toolsPage(c, http.StatusOK, views.ItemForm{}, notice)
	}
}

func (k *console) toolsPage(c echo.Context, status int, f views.ItemForm, notice string) error {
	tools, err := k.ledger.ListTools(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := k.page(c, "Tools", "tools")
	if err != nil {
		return err
	}
	p.Notice = notice
	return render(c, status, views.ToolsPage(p, views.ToolsView{Tools: tools, Form: f}))
}

// handleToolSave serves POST /admin/tools (admin): classify a tool.
func (k *console) handleToolSave() echo.HandlerFunc {
	return func(c echo.Context) error {
		server, tool, writes, fields := c.FormValue("server"), c.FormValue("tool"), c.FormValue("side_effecting"), c.FormValue("path_fields")
		var kept []string // "": none named; "-": names no paths
		if f := strings.TrimSpace(fields); f == "-" {
			kept = []string{}
		} else if f != "" {
			for _, name := range strings.Split(f, ",") {
				kept = append(kept, strings.TrimSpace(name))
			}
		}
		_, err := k.ledger.SetTool(c.Request().Context(), httpx.Actor(c), server, tool, ledger.ToolInput{SideEffecting: writes != "false", PathFields: kept})
		if err != nil {
			f, ok := formErrors(err, map[string]string{"server": server, "tool": tool, "side_effecting": writes, "path_fields": fields},
				"server", "tool", "path_fields")
			if !ok {
				return err
			}
			return k.toolsPage(c, http.StatusUnprocessableEntity, f, "")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/tools?done=saved")
	}
}

// handleToolDelete serves POST /admin/tools/delete (admin): remove a tool
// from the registry.
func (k *console) handleToolDelete() echo.HandlerFunc {
	return func(c echo.Context) error {
		server, tool := c.FormValue("server"), c.FormValue("tool")
		if err := k.ledger.DeleteTool(c.Request().Context(), httpx.Actor(c), server, tool); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/admin/tools?done=removed")
	}
}
