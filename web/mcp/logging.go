package mcp

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// LogLevels are the levels a client may set with logging/setLevel, least
// severe first (RFC 5424's, as MCP names them).
var LogLevels = []sdk.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkLogLevel refuses logging/setLevel with a level MCP does not name
// (-32602 invalid params, naming the levels), as the logging utility
// says a server should; the SDK answers a known one ({}), and declares
// the logging capability. The server is stateless and answers each POST
// with one JSON response, so no log notification ever reaches a client:
// the level only bounds what a request's own session would send.
func checkLogLevel(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "logging/setLevel" {
			if p, ok := req.GetParams().(*sdk.SetLoggingLevelParams); ok && !slices.Contains(LogLevels, p.Level) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("The log level %q is not one of MCP's: debug, info, notice, warning, error, critical, alert, emergency.", p.Level)}
			}
		}
		return next(ctx, method, req)
	}
}
