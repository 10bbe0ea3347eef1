// Package web is Madebook's HTTP server: it puts together the JSON API
// (package api), the lead console (package console), the health check and
// the static assets, with the middleware every request passes (request
// log, panic recovery, the 1 MiB body limit) and the one error handler
// that answers every failure in the contract's shape.
package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web/console"
	"github.com/madebook/madebook/web/metrics"
)

// MaxBody is the largest request body accepted: 1 MiB.
const MaxBody = 1 << 20

// Deps are what the server needs.
type Deps struct {
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	// Audit runs the audit reports.
	Audit  *audit.Service
	Health func(context.Context) error
	Logger *slog.Logger
	// SecureCookies marks the console's cookies Secure, with the __Host-
	// prefix: set it when Madebook is served over TLS.
	SecureCookies bool
	// Stopping is closed when the server begins to shut down, so that the
	// console's push streams end and a graceful shutdown does not wait on
	// them (nil: never).
	Stopping <-chan struct{}
	// Metrics are served at /metrics to an admin token (nil: the server
	// makes its own).
	Metrics *metrics.Metrics
	// TrustedProxies are the proxies whose X-Forwarded-For (or X-Real-IP)
	// names the client; with none, the client is the TCP peer.
	TrustedProxies []*net.IPNet
	// Limits are how fast each credential may call the API, /brief, the
	// hook and MCP (nil: ratelimit.Defaults; ratelimit.New(ratelimit.Config{})
	// limits nothing).
	Limits *ratelimit.Limits
	// PublicURL is the server's address as people reach it: the MCP
	// server takes it as its own origin and, on a loopback listener, its
	// host as its own name ("": only the request's own origin and the
	// loopback names).
	PublicURL string
	// ConsoleStreams bound the console's push streams (zero:
	// console.DefaultStreamsPerUser per person, console.DefaultStreams in
	// all).
	ConsoleStreams console.StreamLimits
	// MCPOrigins are the other origins (scheme://host[:port], checked with
	// mcp.ParseOrigin) whose pages may call the MCP server.
	MCPOrigins []string
}

// NewServer returns the HTTP handler with every route and middleware.
func NewServer(d Deps) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = clientIP(d.TrustedProxies)
	if d.Limits == nil {
		d.Limits = ratelimit.New(ratelimit.Defaults)
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics(d.Gov)
	}
	// The metrics go outside the request log, which answers a failed
	// request (HandleError): they read the status that was sent.
	e.Use(d.Metrics.Middleware())
	e.Use(requestLog(d.Logger))
	e.Use(middleware.Recover())
	e.Use(securityHeaders())
	e.Use(limitBody(MaxBody))
	e.HTTPErrorHandler = errorHandler(d.Logger, routes(e, d))
	return e
}

// NewMetrics returns the metrics of a server over gov: the Attention view
// counted at each scrape, and what briefs hand over counted as their
// writes commit.
func NewMetrics(gov *governance.Services) *metrics.Metrics {
	m := metrics.New(func(ctx context.Context) (map[string]int, error) {
		c, err := gov.Attention.Counts(ctx, governance.AttentionFilter{})
		return c.ByKind, err
	})
	gov.OnCommit(func(c governance.Commit) {
		if len(c.Kinds) > 0 {
			m.Events(c.Kinds)
		}
	})
	return m
}

// requestLog logs one line per request: method, path, status, latency and
// the client's address (c.RealIP(), the same the sign-in limits use).
// Server faults are errors with their cause; a request whose client hung
// up is "client gone", status 499, at info (with what stopped it).
func requestLog(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, LogError: true, LogRemoteIP: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level, msg := slog.LevelInfo, "request"
			switch {
			case v.Status == StatusClientGone:
				msg = "client gone"
			case v.Status >= http.StatusInternalServerError:
				level = slog.LevelError
			}
			attrs := []slog.Attr{slog.String("method", v.Method), slog.String("path", v.URIPath),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency), slog.String("remote", v.RemoteIP)}
			if v.Error != nil && (v.Status >= http.StatusInternalServerError || v.Status == StatusClientGone) {
				attrs = append(attrs, slog.String("error", v.Error.Error()))
			}
			logger.LogAttrs(c.Request().Context(), level, msg, attrs...)
			return nil
		},
	})
}
