// Package mcp is Madebook's MCP server, at /mcp: the agent calls of the
// JSON API as MCP tools (open_session, brief, open_decision, …), the
// protocol text and a session's brief preview as resources, over the
// official Go SDK's streamable HTTP transport.
//
// Every tool calls the same service method as its REST handler, so no
// rule has a second copy here; a tool answers with the REST answer
// (next_action and reason included) as structured content, and an error
// as a tool error carrying the REST error's code and message. The agent
// key is the bearer credential, checked before the SDK sees the request.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web/httpx"
)

// Path is where the MCP server is served.
const Path = "/mcp"

// Deps are the services the tools call.
type Deps struct {
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	// Logger logs server faults (a tool's internal error); callers only
	// hear "Internal error.".
	Logger *slog.Logger
	// Limits are each key's rate limits (nil: none): the request counts
	// as a read, each tool call as its REST route does (httpx.ClassOf).
	Limits *ratelimit.Limits
	// PublicURL is the server's address as people reach it (serve
	// --public-url): its origin may call the server, and its host is
	// answered on a loopback listener. "" adds nothing to the request's
	// own origin and the loopback names.
	PublicURL string
	// Origins are the other origins (scheme://host[:port]) whose pages
	// may call the server (serve --mcp-origin).
	Origins []string
}

// Routes registers POST /mcp. In the API's error shape, and before the
// SDK reads it, it refuses (403) a request whose Origin is present and
// neither the request's own, the public URL's nor one of d.Origins, and
// one that reached a loopback listener under a Host that is not a
// loopback name or the public URL's host (DNS rebinding); then a request
// without a valid agent key (401) or with a personal token (403); then a
// JSON-RPC batch (400 batch_not_supported, whatever its protocol
// version). GET and DELETE (a standalone event stream, the end of a
// session) are not served: the server is stateless, each POST a whole
// exchange, so any number of Madebook processes can answer. It panics
// when d.PublicURL or one of d.Origins is not an origin (serve checks
// them first).
func Routes(e *echo.Echo, d Deps) {
	g, err := newGuard(d.PublicURL, d.Origins)
	if err != nil {
		panic("mcp: " + err.Error())
	}
	e.POST(Path, serve(Handler(d)), g.check, httpx.RequireBearer(d.Auth), requireAgent, httpx.RateLimit(d.Limits), refuseBatch)
}

// serve runs the SDK's handler, answering its own HTTP refusals, which
// it writes as plain text (an Accept without both application/json and
// text/event-stream, a Content-Type other than JSON, a body that is not
// JSON-RPC), in the API's error shape with the SDK's status and words.
// JSON-RPC errors (JSON already) pass as they are: MCP clients read them.
func serve(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := &plainErrors{ResponseWriter: c.Response()}
		h.ServeHTTP(w, c.Request())
		if w.status == 0 {
			return nil
		}
		code, ok := refusalCodes[w.status]
		if !ok {
			code = "invalid_mcp_request"
		}
		msg := strings.TrimSpace(w.text.String())
		if msg == "" {
			msg = http.StatusText(w.status)
		}
		c.Response().Header().Del(echo.HeaderContentType) // http.Error's text/plain
		return c.JSON(w.status, map[string]any{"error": map[string]any{"code": code,
			"message": strings.TrimSuffix(msg, ".") + "."}})
	}
}

// refusalCodes are the error codes of the statuses the SDK refuses with.
var refusalCodes = map[int]string{
	http.StatusBadRequest:            "invalid_mcp_request",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusRequestEntityTooLarge: "body_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
}

// plainErrors holds back an error the SDK writes as plain text, for serve
// to answer as JSON; everything else goes through.
type plainErrors struct {
	http.ResponseWriter
	status int
	text   strings.Builder
}

// WriteHeader holds back a plain-text error status.
func (w *plainErrors) WriteHeader(status int) {
	if status >= http.StatusBadRequest && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write keeps a held-back error's text.
func (w *plainErrors) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.text.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes what goes through.
func (w *plainErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// Unwrap is the writer underneath, for http.ResponseController.
func (w *plainErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Handler is the MCP server over HTTP. It expects the actor on the
// request's context (requireAgent puts it there).
func Handler(d Deps) http.Handler {
	s := NewServer(d)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK's own guard refuses a loopback request whose Host is not
		// loopback, and would refuse Madebook behind a reverse proxy on
		// the same machine that passes its public host on: Routes' guard
		// does the same check allowing the public URL's host, in the API's
		// error shape, and checks Origin too.
		DisableLocalhostProtection: true,
		Logger:                     d.Logger,
	})
	// The SDK hands the tools the bearer's TokenInfo: carry the actor in it.
	return sdkauth.RequireBearerToken(tokenInfo, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// NewServer returns the MCP server with every tool and resource.
func NewServer(d Deps) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "madebook", Title: "Madebook", Version: "1"}, &sdk.ServerOptions{
		Instructions: "Madebook governs this coding session. Open a session (open_session), then take a brief " +
			"(brief) before you start and whenever a reply's next_action is not CONTINUE: the brief delivers " +
			"people's answers, once. Every tool's reply carries next_action and reason; obey them. The protocol " +
			"is the resource madebook://protocol.",
		Logger: d.Logger,
	})
	s.AddReceivingMiddleware(checkLogLevel)
	t := tools{d}
	t.register(s)
	addResources(s, d)
	return s
}

type actorKey struct{}

// requireAgent refuses every caller but an agent key (403) and puts the
// actor on the request's context, for tokenInfo.
func requireAgent(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		actor := httpx.Actor(c)
		if err := actor.RequireAgent("use the MCP server (a person uses the console or the API)"); err != nil {
			return err
		}
		r := c.Request()
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), actorKey{}, actor)))
		return next(c)
	}
}

// tokenInfo is the SDK's bearer verifier: the key was checked already
// (requireAgent), so it only carries the actor into the TokenInfo the SDK
// hands every request. The user id binds a session to one key.
func tokenInfo(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
	actor, ok := ctx.Value(actorKey{}).(auth.Actor)
	if !ok || !actor.IsAgent() {
		return nil, sdkauth.ErrInvalidToken
	}
	return &sdkauth.TokenInfo{UserID: fmt.Sprintf("agent-key-%d", actor.KeyID), Extra: map[string]any{"actor": actor}}, nil
}

// actorOf returns the agent a request came from. Errors: unauthorized
// (a request that did not pass requireAgent: not served by Routes).
func actorOf(extra *sdk.RequestExtra) (auth.Actor, error) {
	if extra != nil && extra.TokenInfo != nil {
		if a, ok := extra.TokenInfo.Extra["actor"].(auth.Actor); ok && a.IsAgent() {
			return a, nil
		}
	}
	return auth.Actor{}, errs.E(errs.Unauthorized, "unauthorized", "Send an agent key as `Authorization: Bearer …`.")
}

// errorBody is err in the API's shape, {"error":{"code","message",…}},
// logging it when it is a server fault.
func (d Deps) errorBody(ctx context.Context, what string, err error) map[string]any {
	if errs.KindOf(err) == errs.Internal {
		d.Logger.ErrorContext(ctx, "internal error", "mcp", what, "error", err)
	}
	return map[string]any{"error": errs.Body(err)}
}

// jsonText encodes v for a text content block.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
