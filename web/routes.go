package web

import (
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/api"
	"github.com/madebook/madebook/web/console"
	"github.com/madebook/madebook/web/httpx"
	"github.com/madebook/madebook/web/mcp"
)

// routes registers every route Madebook serves: the server's own, then the
// JSON API's, the MCP server's and the console's, each from its own route
// table. It returns how pages answer errors.
func routes(e *echo.Echo, d Deps) console.ErrorRenderer {
	e.GET("/healthz", handleHealth(d.Health))
	e.GET("/metrics", handleMetrics(d.Metrics), httpx.RequireBearer(d.Auth))
	e.GET("/static/*", handleStatic())
	e.GET("/favicon.ico", handleFavicon())
	api.Routes(e, api.Deps{Auth: d.Auth, Gov: d.Gov, Ledger: d.Ledger, Audit: d.Audit, Limits: d.Limits})
	mcp.Routes(e, mcp.Deps{Auth: d.Auth, Gov: d.Gov, Ledger: d.Ledger, Logger: d.Logger, Limits: d.Limits,
		PublicURL: d.PublicURL, Origins: d.MCPOrigins})
	return console.Routes(e, console.Deps{Auth: d.Auth, Gov: d.Gov, Ledger: d.Ledger, Audit: d.Audit, Logger: d.Logger,
		SecureCookies: d.SecureCookies, Stopping: d.Stopping, Streams: d.ConsoleStreams})
}
