package web

import "github.com/labstack/echo/v4"

// routes registers every route Madebook serves, in one list.
func routes(e *echo.Echo, d Deps) {
	e.GET("/healthz", handleHealth(d.Health))

	bearer := requireBearer(d.Auth)
	e.POST("/brief", handleBrief(d.Gov), bearer)

	api := e.Group("/api/v1", bearer)
	api.GET("/missions", handleMissionList(d.Gov))
	api.POST("/missions", handleMissionCreate(d.Gov))
	api.POST("/sessions", handleSessionCreate(d.Gov))
	api.GET("/sessions/:id", handleSessionGet(d.Gov))
	api.POST("/sessions/:id/decisions", handleDecisionOpen(d.Gov))
	api.POST("/sessions/:id/plan", handlePlanPropose(d.Gov))
	api.POST("/sessions/:id/plan/approve", handlePlanApprove(d.Gov))
	api.POST("/sessions/:id/plan/reject", handlePlanReject(d.Gov))
	api.POST("/sessions/:id/pause", handleSessionPause(d.Gov))
	api.POST("/sessions/:id/resume", handleSessionResume(d.Gov))
	api.POST("/sessions/:id/remediations", handleRemediationRequest(d.Gov))
	api.POST("/remediations/:id/close", handleRemediationClose(d.Gov))
	api.POST("/decisions/:ref/resolve", handleDecisionResolve(d.Gov))
}
