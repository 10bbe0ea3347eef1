package httpx

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/ratelimit"
)

// RateLimit counts every request against its credential's limits, after
// RequireBearer: a request over a limit is refused with 429
// rate_limited, `Retry-After` in seconds and retry_after in the body,
// before anything runs. A request that changes something is a write, one
// that opens a session also a session; briefs, executor checks and the
// Claude Code hook are reads (the hook's own calls are counted one by
// one). The MCP server's tools count their own class (MCPClass).
func RateLimit(l *ratelimit.Limits) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if l == nil {
			return next
		}
		return func(c echo.Context) error {
			if err := Limit(c, l, ClassOf(c.Request().Method, c.Path())); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// Limit takes a call of class cl from the limits of the request's actor,
// setting Retry-After when it refuses.
func Limit(c echo.Context, l *ratelimit.Limits, cl ratelimit.Class) error {
	err := l.Allow(Credential(Actor(c)), cl, time.Now())
	if s := ratelimit.RetryAfter(err); s > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(s))
	}
	return err
}

// Credential names the credential an actor called with, for its limits:
// its agent key, or its person's token.
func Credential(a auth.Actor) string {
	if a.IsAgent() {
		return "key:" + strconv.FormatInt(a.KeyID, 10)
	}
	return "user:" + strconv.FormatInt(a.UserID, 10)
}

// reads are the routes that change nothing a limit on writes protects,
// though they are POSTs: the brief (its deliveries are the point of
// asking), the executor's check, the hook and the MCP endpoint (whose
// tools count themselves).
var reads = map[string]bool{
	"/brief":                                true,
	"/hooks/:executor":                      true,
	"/api/v1/sessions/:id/tool-calls/check": true,
	"/mcp":                                  true,
}

// ClassOf is what a request to route (as registered) costs.
func ClassOf(method, route string) ratelimit.Class {
	switch {
	case method == http.MethodGet || method == http.MethodHead || reads[route]:
		return ratelimit.Read
	case method == http.MethodPost && route == "/api/v1/sessions":
		return ratelimit.Session
	default:
		return ratelimit.Write
	}
}
