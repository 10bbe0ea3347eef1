package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// handlePlanApprove serves POST /api/v1/sessions/:id/plan/approve (lead).
func handlePlanApprove(plans *governance.PlanService) echo.HandlerFunc {
	return handlePlanDecide(plans.Approve)
}

// handlePlanReject serves POST /api/v1/sessions/:id/plan/reject (lead).
func handlePlanReject(plans *governance.PlanService) echo.HandlerFunc {
	return handlePlanDecide(plans.Reject)
}

func handlePlanDecide(decide func(context.Context, auth.Actor, string, string) (governance.Plan, error)) echo.HandlerFunc {
	type request struct {
		Note string `json:"note"`
	}
	return func(c echo.Context) error {
		in, err := httpx.BindOptional[request](c)
		if err != nil {
			return err
		}
		p, err := decide(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Note)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, p)
	}
}

// handlePlanModify serves POST /api/v1/sessions/:id/plan/modify (lead): a
// request for changes, with the instruction the agent gets.
func handlePlanModify(plans *governance.PlanService) echo.HandlerFunc {
	type request struct {
		Instruction string `json:"instruction"`
	}
	return func(c echo.Context) error {
		in, err := httpx.Bind[request](c)
		if err != nil {
			return err
		}
		p, err := plans.Modify(c.Request().Context(), httpx.Actor(c), c.Param("id"), in.Instruction)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, p)
	}
}
