package api

import (
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/httpx"
)

// Routes registers every route of the JSON API, in one list. Every route
// but the document that describes them takes a bearer credential: an
// agent key or a personal token. A body sent to /brief or /api/v1 must be
// JSON (415 otherwise); the Claude Code hook checks its own body, which
// Claude Code sends. Each credential's calls count against its rate
// limits (429 over them).
func Routes(e *echo.Echo, d Deps) {
	e.GET("/api/v1/openapi.json", handleOpenAPI())
	bearer, limit := httpx.RequireBearer(d.Auth), httpx.RateLimit(d.Limits)
	e.POST("/hooks/:executor", httpx.Chain(handleHook(d), bearer, limit))

	v1 := httpx.NewGroup(e, "/api/v1", bearer, limit, httpx.RequireJSON)
	// The agent operations, from their table (agentops.Ops).
	agentRoutes(e, v1, d, bearer, limit, httpx.RequireJSON)
	v1.GET("/attention", handleAttentionList(d.Gov.Attention))
	v1.POST("/attention/:kind/:session/:ref/claim", handleAttentionClaim(d.Gov.Attention))
	v1.DELETE("/attention/:kind/:session/:ref/claim", handleAttentionUnclaim(d.Gov.Attention))
	v1.POST("/attention/:kind/:session/:ref/snooze", handleAttentionSnooze(d.Gov.Attention))
	v1.DELETE("/attention/:kind/:session/:ref/snooze", handleAttentionUnsnooze(d.Gov.Attention))
	v1.GET("/sessions", handleSessionList(d.Gov.Sessions))
	v1.POST("/sessions/:id/tasks/:task/acknowledge", handleTaskAcknowledge(d.Gov.Attention))
	v1.POST("/sessions/:id/tasks/:task/remediation", handleTaskRemediation(d.Gov.Remediations))
	v1.GET("/missions", handleMissionList(d.Gov.Missions))
	v1.POST("/missions", handleMissionCreate(d.Gov.Missions))
	v1.GET("/missions/:slug", handleMissionGet(d.Gov.Missions))
	v1.PATCH("/missions/:slug", handleMissionUpdate(d.Gov.Missions))
	v1.GET("/missions/:slug/changes", handleMissionChanges(d.Gov.Missions))
	v1.POST("/mission-changes/:id/approve", handleMissionChangeSettle(d.Gov.Missions, true))
	v1.POST("/mission-changes/:id/reject", handleMissionChangeSettle(d.Gov.Missions, false))
	v1.GET("/sessions/:id", handleSessionGet(d.Gov.Sessions))
	v1.POST("/sessions/:id/plan/approve", handlePlanApprove(d.Gov.Plans))
	v1.POST("/sessions/:id/plan/reject", handlePlanReject(d.Gov.Plans))
	v1.POST("/sessions/:id/plan/modify", handlePlanModify(d.Gov.Plans))
	v1.POST("/sessions/:id/pause", handleSessionPause(d.Gov.Sessions))
	v1.POST("/sessions/:id/resume", handleSessionResume(d.Gov.Sessions))
	v1.POST("/sessions/:id/remediations", handleRemediationRequest(d.Gov.Remediations))
	v1.POST("/remediations/:id/close", handleRemediationClose(d.Gov.Remediations))
	v1.POST("/decisions/:ref/resolve", handleDecisionResolve(d.Gov.Decisions))
	v1.POST("/permissions/:id/answer", handlePermissionAnswer(d.Gov.Permissions))
	v1.GET("/policies", handlePolicyList(d.Gov.Policies))
	v1.POST("/policies", handlePolicyCreate(d.Gov.Policies))
	v1.POST("/policies/:id/disable", handlePolicyEnabled(d.Gov.Policies, false))
	v1.POST("/policies/:id/enable", handlePolicyEnabled(d.Gov.Policies, true))
	v1.DELETE("/policies/:id", handlePolicyDelete(d.Gov.Policies))
	v1.GET("/rules", handleRuleList(d.Gov.Policies))
	v1.POST("/rules", handleRuleCreate(d.Gov.Policies))
	v1.POST("/violations/:id/clear", handleViolationClear(d.Gov.Changes))
	v1.GET("/risk-gates", handleRiskGates(d.Gov.Policies))
	v1.PUT("/risk-gates", handleRiskGatesSet(d.Gov.Policies))
	v1.GET("/sessions/:id/runs", handleRunList(d.Ledger, d.Gov.Briefs))
	v1.GET("/runs/:id", handleRunGet(d.Ledger, d.Gov.Briefs))
	v1.POST("/asks/:id/answer", handleAskAnswer(d.Ledger))
	v1.GET("/tools", handleToolList(d.Ledger))
	v1.PUT("/tools", handleToolSet(d.Ledger))
	v1.PUT("/tools/:server/:tool", handleToolPut(d.Ledger))
	v1.GET("/audit/:report", handleAuditReport(d.Audit))
	v1.GET("/webhooks", handleWebhookList(d.Gov.Webhooks))
	v1.POST("/webhooks", handleWebhookCreate(d.Gov.Webhooks))
	v1.DELETE("/webhooks/:id", handleWebhookDelete(d.Gov.Webhooks))
	v1.GET("/activity", handleActivity(d.Gov.Activity))
	v1.POST("/webhooks/:id/test", handleWebhookTest(d.Gov.Webhooks))
	v1.GET("/admin/activity", handleActivityList(d.Gov.Activity))
	v1.GET("/tokens", handleTokenList(d.Auth))
	v1.DELETE("/tokens/:id", handleTokenRevoke(d.Auth))
	v1.GET("/keys", handleKeyList(d.Auth))
	v1.DELETE("/keys/:id", handleKeyRevoke(d.Auth))
}
