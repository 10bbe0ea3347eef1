package api

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/agentops"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// agentRoutes registers a route for every agent operation of the table
// (agentops.Ops): under /api/v1 in v1, the others (/brief) behind the same
// middleware as v1's.
func agentRoutes(e *echo.Echo, v1 *httpx.Group, d Deps, mw ...echo.MiddlewareFunc) {
	for _, op := range agentops.Ops {
		h := handleAgentOp(op, agentops.Services{Gov: d.Gov, Ledger: d.Ledger})
		if rest, ok := strings.CutPrefix(op.Route(), "/api/v1"); ok {
			v1.Add(op.Method, rest, h)
		} else {
			e.Add(op.Method, op.Route(), httpx.Chain(h, mw...))
		}
	}
}

// handleAgentOp serves one agent operation: the body decoded into the
// row's input type, the row's service call, and its answer with the next
// action and reason of the session it is about beside its fields (the
// brief and the check, already encoded, carry their own).
func handleAgentOp(op agentops.Op, s agentops.Services) echo.HandlerFunc {
	return func(c echo.Context) error {
		in := op.New()
		if err := httpx.Decode(c, in, op.Optional); err != nil {
			return err
		}
		ctx, actor := c.Request().Context(), httpx.Actor(c)
		ans, err := op.Call(ctx, s, actor, c.Param("id"), in)
		if err != nil {
			return err
		}
		if ans.JSON != nil {
			return httpx.JSONBytes(c, ans.Status, ans.JSON...)
		}
		next, err := s.Next(ctx, actor, ans)
		if err != nil {
			return err
		}
		return c.JSON(ans.Status, governance.Reply{Answer: ans.Body, Next: next})
	}
}
