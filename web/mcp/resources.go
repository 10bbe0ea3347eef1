package mcp

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// The resources' addresses.
const (
	ProtocolURI   = "madebook://protocol"
	BriefTemplate = "madebook://sessions/{id}/brief"
)

// addResources registers the protocol text and the brief preview.
func addResources(s *sdk.Server, d Deps) {
	s.AddResource(&sdk.Resource{URI: ProtocolURI, Name: "protocol", Title: "The Madebook execution protocol",
		Description: "The six states of next_action, what each asks of you, and how to work.", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: ProtocolURI, MIMEType: "text/plain",
				Text: protocol.Text}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: BriefTemplate, Name: "brief-preview",
		Title: "A session's brief, previewed", MIMEType: "application/json",
		Description: "The brief the session's agent would get next, delivering nothing: take the brief tool to " +
			"receive what it delivers. Only your own sessions."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			uri := req.Params.URI
			id, ok := strings.CutPrefix(uri, "madebook://sessions/")
			if id, ok = strings.CutSuffix(id, "/brief"); !ok || id == "" || strings.Contains(id, "/") {
				return nil, sdk.ResourceNotFoundError(uri)
			}
			text, err := previewOf(ctx, d, req, id)
			if err != nil {
				body := d.errorBody(ctx, "resource "+uri, err)
				code := int64(jsonrpc.CodeInvalidParams)
				if errs.KindOf(err) == errs.Internal {
					code = jsonrpc.CodeInternalError
				}
				data, jerr := jsonText(body)
				if jerr != nil {
					return nil, jerr
				}
				return nil, &jsonrpc.Error{Code: code, Message: errs.Body(err)["message"].(string), Data: []byte(data)}
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json",
				Text: text}}}, nil
		})
}

// previewOf is the session's brief preview, as GET /api/v1/sessions/{id}
// shows it: nothing delivered, nothing stamped. Errors: session_not_found,
// forbidden.
func previewOf(ctx context.Context, d Deps, req *sdk.ReadResourceRequest, id string) (string, error) {
	a, err := actorOf(req.Extra)
	if err != nil {
		return "", err
	}
	detail, err := d.Gov.Sessions.Get(ctx, a, id)
	if err != nil {
		return "", err
	}
	b, err := detail.Brief.MarshalJSON()
	return string(b), err
}
