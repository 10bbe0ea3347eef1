package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// routes registers every route Madebook serves, in one list.
func routes(e *echo.Echo, d Deps) {
	e.GET("/healthz", handleHealth(d.Health))
	e.GET("/static/*", handleStatic())

	// The agent and lead JSON API, with bearer credentials.
	bearer := requireBearer(d.Auth)
	e.POST("/brief", handleBrief(d.Gov), bearer)

	api := e.Group("/api/v1", bearer)
	api.GET("/attention", handleAttentionList(d.Gov))
	api.GET("/missions", handleMissionList(d.Gov))
	api.POST("/missions", handleMissionCreate(d.Gov))
	api.GET("/missions/:slug", handleMissionGet(d.Gov))
	api.PATCH("/missions/:slug", handleMissionUpdate(d.Gov))
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
	api.POST("/sessions/:id/changes", handleChangeReport(d.Gov))
	api.POST("/sessions/:id/evidence", handleEvidenceReport(d.Gov))
	api.POST("/sessions/:id/complete", handleComplete(d.Gov))
	api.GET("/policies", handlePolicyList(d.Gov))
	api.POST("/policies", handlePolicyCreate(d.Gov))
	api.GET("/rules", handleRuleList(d.Gov))
	api.POST("/rules", handleRuleCreate(d.Gov))
	api.POST("/violations/:id/clear", handleViolationClear(d.Gov))
	api.GET("/risk-gates", handleRiskGates(d.Gov))
	api.PUT("/risk-gates", handleRiskGatesSet(d.Gov))
	api.POST("/sessions/:id/runs", handleRunStart(d.Ledger))
	api.PATCH("/runs/:id", handleRunFinish(d.Ledger))
	api.POST("/runs/:id/asks", handleAskRecord(d.Ledger))
	api.POST("/runs/:id/tool-calls", handleToolCallRecord(d.Ledger))
	api.POST("/asks/:id/answer", handleAskAnswer(d.Ledger))
	api.GET("/tools", handleToolList(d.Ledger))
	api.PUT("/tools", handleToolSet(d.Ledger))
	api.GET("/audit/:report", handleAuditReport(d.Audit))

	// The console, with a signed-in browser session.
	k := &console{auth: d.Auth, gov: d.Gov, ledger: d.Ledger, audit: d.Audit, store: newSessionStore(d.Auth, d.SecureCookies), cop: http.NewCrossOriginProtection()}
	// Middleware goes on each route, not on a group: a group would answer
	// every unknown path under it too.
	web := []echo.MiddlewareFunc{k.loadSession, k.crossOrigin}
	in := append(web[:len(web):len(web)], k.signedIn)
	e.GET("/login", k.handleLoginForm(), web...)
	e.POST("/login", k.handleLogin(), web...)
	e.POST("/logout", k.handleLogout(), in...)
	e.POST("/logout/everywhere", k.handleLogoutEverywhere(), in...)
	e.GET("/", k.handleAttention(), in...)
	e.GET("/attention/queue", k.handleQueue(), in...)
	e.GET("/attention/count", k.handleCount(), in...)
	e.POST("/decisions/resolve", k.handleResolveBulk(), in...)
	e.POST("/decisions/:ref/resolve", k.handleResolve(), in...)
	e.POST("/sessions/:id/plan/approve", k.handlePlanDecide(d.Gov.ApprovePlan), in...)
	e.POST("/sessions/:id/plan/reject", k.handlePlanDecide(d.Gov.RejectPlan), in...)
	e.POST("/sessions/:id/pause", k.handlePause(), in...)
	e.POST("/sessions/:id/resume", k.handleResume(), in...)
	e.POST("/asks/:id/answer", k.handleAnswer(), in...)
	e.GET("/sessions", k.handleSessions(), in...)
	e.GET("/sessions/:id", k.handleSession(), in...)
	e.POST("/sessions/:id/remediations", k.handleRemediationForm(), in...)
	e.POST("/remediations/:id/close", k.handleRemediationClose(), in...)
	e.POST("/violations/:id/clear", k.handleViolationClearForm(), in...)
	e.GET("/missions", k.handleMissions(), in...)
	e.GET("/missions/new", k.handleNewMission(), in...)
	e.POST("/missions", k.handleCreateMission(), in...)
	e.GET("/missions/:slug/edit", k.handleEditMission(), in...)
	e.POST("/missions/:slug", k.handleUpdateMission(), in...)
	e.GET("/audit", k.handleAudit(), in...)
	e.GET("/audit/:report", k.handleAuditReport(), in...)
	// Admin pages: users and agent keys (admins only; every action logged).
	admin := append(in[:len(in):len(in)], k.requireAdmin)
	e.GET("/admin/users", k.handleUsers(), admin...)
	e.POST("/admin/users", k.handleUserAdd(d.Logger), admin...)
	e.POST("/admin/users/:id/role", k.handleUserRole(d.Logger), admin...)
	e.POST("/admin/users/:id/disable", k.handleUserDisabled(d.Logger, true), admin...)
	e.POST("/admin/users/:id/enable", k.handleUserDisabled(d.Logger, false), admin...)
	e.GET("/admin/keys", k.handleKeys(), admin...)
	e.POST("/admin/keys", k.handleKeyCreate(d.Logger), admin...)
	e.POST("/admin/keys/:id/revoke", k.handleKeyRevoke(d.Logger), admin...)
	e.GET("/admin/policies", k.handlePolicies(), admin...)
	e.POST("/admin/policies", k.handlePolicyCreateForm(), admin...)
	e.GET("/admin/rules", k.handleRules(), admin...)
	e.POST("/admin/rules", k.handleRuleCreateForm(), admin...)
	e.GET("/admin/tools", k.handleTools(), admin...)
	e.POST("/admin/tools", k.handleToolSave(), admin...)
	e.POST("/admin/tools/delete", k.handleToolDelete(), admin...)
}
