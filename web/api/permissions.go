package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handlePermissionAnswer serves POST /api/v1/permissions/:id/answer (lead):
// one of a permission prompt's options, delivered to the agent once.
func handlePermissionAnswer(permissions *governance.PermissionService) echo.HandlerFunc {
	type request struct {
		Option string `json:"option"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		p, err := permissions.Answer(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Option)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, p)
	}
}
