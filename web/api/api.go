// Package api is Madebook's JSON API: the calls agents make with their
// key (the brief, sessions, gates, plans, changes, runs, asks, tool
// calls, evidence) and the calls leads and operators make with a personal
// token (missions, resolutions, approvals, the brake, remediations,
// policies, the audit reports). Handlers are thin: parse, call one
// service, answer JSON. Errors go up to the server's error handler, which
// answers them as {"error":{"code","message"}}.
package api

import (
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web/httpx"
)

// Deps are the services the API's handlers call.
type Deps struct {
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	Audit  *audit.Service
	// Limits are each credential's rate limits (nil: none).
	Limits *ratelimit.Limits
}

// reply answers an agent's call: the answer v with status, and beside
// its own fields the next action and reason of the session the call was
// about, decided after the call and delivering nothing (only /brief
// delivers).
func reply(c echo.Context, briefs *governance.BriefService, status int, session string, v any) error {
	next, err := briefs.Next(c.Request().Context(), httpx.Actor(c), session)
	if err != nil {
		return err
	}
	return c.JSON(status, governance.Reply{Answer: v, Next: next})
}

// invalid is a 422 for content the handler itself checks.
func invalid(code, message string) error {
	return errs.E(errs.Invalid, code, "%s", message)
}
