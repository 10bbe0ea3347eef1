package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPI is the OpenAPI 3.1 document (openapi.json) that describes every
// JSON route Madebook serves: each operation's credential, request body,
// answers and errors. It is written by hand, served at
// GET /api/v1/openapi.json, and tests hold the routes and their answers to
// it (internal/testkit/apicheck).
//
//go:embed openapi.json
var OpenAPI []byte

// handleOpenAPI serves GET /api/v1/openapi.json (no credential: the
// contract is public): the document, as it is embedded.
func handleOpenAPI() echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, "application/json", OpenAPI)
	}
}
