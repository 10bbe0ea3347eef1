package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handlePolicyCreate serves POST /api/v1/policies (admin).
func handlePolicyCreate(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.PolicyInput](c)
		if err != nil {
			return err
		}
		p, err := policies.Create(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, p)
	}
}

// handlePolicyList serves GET /api/v1/policies (anyone signed in).
func handlePolicyList(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		ps, err := policies.List(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"policies": ps})
	}
}

// handlePolicyEnabled serves POST /api/v1/policies/:id/disable and
// …/enable (admin): a disabled policy trips nothing until enabled again.
func handlePolicyEnabled(policies *governance.PolicyService, enabled bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "policy_not_found", "No policy has the id %q.")
		if err != nil {
			return err
		}
		if _, err := httpx.BindOptional[struct{}](c); err != nil {
			return err
		}
		p, err := policies.SetEnabled(c.Request().Context(), httpx.Actor(c), id, enabled)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, p)
	}
}

// handlePolicyDelete serves DELETE /api/v1/policies/:id (admin): the
// policy trips nothing and is listed no more; the violations it found
// stay. The answer is the policy as it was.
func handlePolicyDelete(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "policy_not_found", "No policy has the id %q.")
		if err != nil {
			return err
		}
		p, err := policies.Delete(c.Request().Context(), httpx.Actor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, p)
	}
}

// handleRuleCreate serves POST /api/v1/rules (admin).
func handleRuleCreate(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[governance.RuleInput](c)
		if err != nil {
			return err
		}
		r, err := policies.CreateRule(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, r)
	}
}

// handleRuleList serves GET /api/v1/rules (anyone signed in).
func handleRuleList(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		rs, err := policies.ListRules(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"rules": rs})
	}
}

// handleViolationClear serves POST /api/v1/violations/:id/clear (lead).
func handleViolationClear(changes *governance.ChangeService) echo.HandlerFunc {
	type request struct {
		As   string `json:"as"`
		Note string `json:"note"`
	}
	return func(c echo.Context) error {
		id, err := httpx.PathID(c, "violation_not_found", "No violation has the id %q.")
		if err != nil {
			return err
		}
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		v, err := changes.ClearViolation(c.Request().Context(), httpx.Actor(c), id, in.As, in.Note)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// handleRiskGates serves GET /api/v1/risk-gates (anyone signed in): what a
// change needs before merge at each risk band.
func handleRiskGates(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		g, err := policies.RiskGates(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, g)
	}
}

// handleRiskGatesSet serves PUT /api/v1/risk-gates (admin):
// {"high":"…","critical":"…"} sets the bands named.
func handleRiskGatesSet(policies *governance.PolicyService) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := httpx.Bind[map[string]string](c)
		if err != nil {
			return err
		}
		g, err := policies.SetRiskGates(c.Request().Context(), httpx.Actor(c), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, g)
	}
}
