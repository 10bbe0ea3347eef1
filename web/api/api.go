// Package api is Madebook's JSON API: the calls agents make with their
// key (the brief, sessions, gates, plans, changes, runs, asks, tool
// calls, evidence) and the calls leads and operators make with a personal
// token (missions, resolutions, approvals, the brake, remediations,
// policies, the audit reports). Handlers are thin: parse, call one
// service, answer JSON. Errors go up to the server's error handler, which
// answers them as {"error":{"code","message"}}.
package api

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/httpx"
)

// Deps are the services the API's handlers call.
type Deps struct {
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	Audit  *audit.Service
}

// requireBearer authenticates `Authorization: Bearer <secret>` (an agent
// key or a personal token) and puts the actor on the context.
func requireBearer(a *auth.Service) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, secret, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
				return errs.E(errs.Unauthorized, "unauthorized", "Send an agent key or personal token as `Authorization: Bearer …`.")
			}
			actor, err := a.Authenticate(c.Request().Context(), strings.TrimSpace(secret))
			if err != nil {
				return err
			}
			httpx.SetActor(c, actor)
			return next(c)
		}
	}
}

// invalid is a 422 for content the handler itself checks.
func invalid(code, message string) error {
	return errs.E(errs.Invalid, code, "%s", message)
}
