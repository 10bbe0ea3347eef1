package console

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
)

// Deps are what the console's handlers need.
type Deps struct {
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	Audit  *audit.Service
	Logger *slog.Logger
	// SecureCookies marks the console's cookies Secure, with the __Host-
	// prefix: set it when Madebook is served over TLS.
	SecureCookies bool
	// Stopping is closed when the server begins to shut down: the push
	// streams, which never end by themselves, end then (nil: never).
	Stopping <-chan struct{}
	// Streams bound the push streams (zero: DefaultStreamsPerUser and
	// DefaultStreams).
	Streams StreamLimits
}

// Routes registers every page and form of the console, in one list. Every
// route but the sign-in page needs a signed-in person; the admin pages
// need an admin. It returns how the console answers errors, for the
// server's error handler.
func Routes(e *echo.Echo, d Deps) ErrorRenderer {
	k := &console{auth: d.Auth, gov: d.Gov, ledger: d.Ledger, audit: d.Audit, store: newSessionStore(d.Auth, d.SecureCookies),
		cop: http.NewCrossOriginProtection(), stopping: d.Stopping, logger: d.Logger, ping: streamPing}
	k.streams = newStreamHub(d.Streams, func(ctx context.Context) (governance.AttentionCounts, error) {
		return d.Gov.Attention.Counts(ctx, governance.AttentionFilter{})
	}, d.Gov.Attention.Watch, streamSettle, d.Logger)
	// Middleware goes on each route, not on a group: a group would answer
	// every unknown path under it too.
	web := []echo.MiddlewareFunc{k.loadSession, k.crossOrigin}
	in := append(web[:len(web):len(web)], k.signedIn)
	e.GET("/login", k.handleLoginPage(), web...)
	e.POST("/login", k.handleLogin(), web...)
	e.POST("/logout", k.handleLogout(), in...)
	e.POST("/logout/everywhere", k.handleLogoutEverywhere(), in...)
	e.GET("/", k.handleAttention(), in...)
	e.GET("/attention/queue", k.handleQueue(), in...)
	e.GET("/attention/count", k.handleCount(), in...)
	e.GET("/attention/stream", k.handleStream(), in...)
	e.GET("/attention/items/:kind/:session/:ref", k.handleItem(), in...)
	e.GET("/attention/items/:kind/:session/:ref/outcome", k.handleOutcome(), in...)
	e.POST("/attention/items/:kind/:session/:ref/claim", k.handleClaim(), in...)
	e.POST("/attention/items/:kind/:session/:ref/unclaim", k.handleUnclaim(), in...)
	e.POST("/attention/items/:kind/:session/:ref/snooze", k.handleSnooze(), in...)
	e.POST("/attention/items/:kind/:session/:ref/unsnooze", k.handleUnsnooze(), in...)
	e.POST("/decisions/resolve", k.handleResolveBulk(), in...)
	e.POST("/decisions/:ref/resolve", k.handleResolve(), in...)
	e.POST("/sessions/:id/plan/approve", k.handlePlanDecide("approve", d.Gov.Plans.Approve), in...)
	e.POST("/sessions/:id/plan/reject", k.handlePlanDecide("reject", d.Gov.Plans.Reject), in...)
	e.POST("/sessions/:id/plan/modify", k.handlePlanDecide("modify", d.Gov.Plans.Modify), in...)
	e.POST("/sessions/:id/pause", k.handlePause(), in...)
	e.POST("/sessions/:id/resume", k.handleResume(), in...)
	e.POST("/asks/:id/answer", k.handleAnswer(), in...)
	e.POST("/permissions/:id/answer", k.handlePermissionAnswer(), in...)
	e.GET("/sessions", k.handleSessions(), in...)
	e.GET("/sessions/:id", k.handleSession(), in...)
	e.POST("/sessions/:id/remediations", k.handleRemediationRequest(), in...)
	e.POST("/sessions/:id/tasks/:task/acknowledge", k.handleAcknowledge(), in...)
	e.POST("/sessions/:id/tasks/:task/remediation", k.handleTaskRemediation(), in...)
	e.POST("/remediations/:id/close", k.handleRemediationClose(), in...)
	e.POST("/violations/:id/clear", k.handleViolationClear(), in...)
	e.GET("/missions", k.handleMissions(), in...)
	e.GET("/missions/new", k.handleNewMission(), in...)
	e.POST("/missions", k.handleCreateMission(), in...)
	e.GET("/missions/:slug/edit", k.handleEditMission(), in...)
	e.POST("/missions/:slug", k.handleUpdateMission(), in...)
	e.POST("/missions/changes/:id", k.handleMissionChange(), in...)
	e.GET("/activity", k.handleActivity(), in...)
	e.GET("/audit", k.handleAudit(), in...)
	e.GET("/audit/:report", k.handleAuditReport(), in...)
	// Admin pages: users, agent keys, personal tokens, policies, rules,
	// tools, webhook endpoints (admins only; every action recorded, in the
	// admin activity, and logged), and the Activity page that lists them.
	admin := append(in[:len(in):len(in)], k.requireAdmin)
	e.GET("/admin/users", k.handleUsers(), admin...)
	e.POST("/admin/users", k.handleUserAdd(d.Logger), admin...)
	e.POST("/admin/users/:id/role", k.handleUserRole(d.Logger), admin...)
	e.POST("/admin/users/:id/disable", k.handleUserDisabled(d.Logger, true), admin...)
	e.POST("/admin/users/:id/enable", k.handleUserDisabled(d.Logger, false), admin...)
	e.GET("/admin/keys", k.handleKeys(), admin...)
	e.POST("/admin/keys", k.handleKeyCreate(d.Logger), admin...)
	e.POST("/admin/keys/:id/revoke", k.handleKeyRevoke(d.Logger), admin...)
	e.GET("/admin/tokens", k.handleTokens(), admin...)
	e.POST("/admin/tokens/:id/revoke", k.handleTokenRevoke(d.Logger), admin...)
	e.GET("/admin/policies", k.handlePolicies(), admin...)
	e.POST("/admin/policies", k.handlePolicyCreate(), admin...)
	e.POST("/admin/policies/:id/disable", k.handlePolicyControl("disable"), admin...)
	e.POST("/admin/policies/:id/enable", k.handlePolicyControl("enable"), admin...)
	e.POST("/admin/policies/:id/delete", k.handlePolicyControl("delete"), admin...)
	e.GET("/admin/rules", k.handleRules(), admin...)
	e.POST("/admin/rules", k.handleRuleCreate(), admin...)
	e.GET("/admin/tools", k.handleTools(), admin...)
	e.POST("/admin/tools", k.handleToolSave(), admin...)
	e.POST("/admin/tools/delete", k.handleToolDelete(), admin...)
	e.GET("/admin/webhooks", k.handleWebhooks(), admin...)
	e.POST("/admin/webhooks", k.handleWebhookAdd(d.Logger), admin...)
	e.POST("/admin/webhooks/:id/remove", k.handleWebhookRemove(d.Logger), admin...)
	e.POST("/admin/webhooks/:id/test", k.handleWebhookTest(d.Logger), admin...)
	e.GET("/admin/activity", k.handleActivity(), admin...)
	return k.renderError
}
