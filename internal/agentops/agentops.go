// Package agentops is the table of agent operations: every call an AI
// coding agent makes with its agent key, once, with its REST method and
// path, its input type, the service call, its MCP tool and its `madebook
// agent` sub-command. The REST routes (web/api), the MCP tools (web/mcp)
// and the agent CLI (internal/agentcli) are built from it, and the
// OpenAPI test checks it against web/api/openapi.json. Adding an agent
// operation is one row in Ops, its service method, and its openapi.json
// entry.
//
// An input type is the request body as the contract has it: its json tags
// name the fields (omitzero marks one optional), its jsonschema tags
// describe them for the MCP tools' input schemas.
package agentops

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/ledger"
)

// Services are what the operations call.
type Services struct {
	Gov    *governance.Services
	Ledger *ledger.Service
}

// Answer is what an operation answers.
type Answer struct {
	// Status is the REST status: 200, or 201 for what the call created.
	Status int
	// Body is the answer. Session or Run names whose next action and
	// reason go beside its fields: the session's, or the run's session's.
	Body         any
	Session, Run string
	// JSON, when set instead of Body, is the answer already encoded in
	// pieces (the brief's, the executor check's): it carries its own
	// next_action and reason.
	JSON [][]byte
}

// Op is one agent operation: one row of the table.
type Op struct {
	// Name is the operation's OpenAPI operationId.
	Name string
	// Method and Path are the REST route, the path in OpenAPI's form
	// ("/api/v1/sessions/{id}/decisions").
	Method, Path string
	// ID is what the path's {id} names, "session" or "run" ("" for a path
	// without one): the MCP tool takes it as that argument, described by
	// IDText.
	ID, IDText string
	// Tool is the MCP tool's name, and Description what the tool says of
	// itself ("" for an operation with no tool).
	Tool, Description string
	// CLI is the `madebook agent` sub-command ("" for none), and Summary
	// the line `madebook agent --help` lists it with.
	CLI, Summary string
	// Input is the request body's type; Optional, that an empty body
	// reads as {}.
	Input    reflect.Type
	Optional bool

	call func(ctx context.Context, s Services, a auth.Actor, id string, in any) (Answer, error)
}

// New returns a pointer to a fresh input, for a body to be decoded into.
func (o Op) New() any { return reflect.New(o.Input).Interface() }

// Call runs the operation as a: id is the path's {id} ("" for none) and
// in the pointer New returned, decoded.
func (o Op) Call(ctx context.Context, s Services, a auth.Actor, id string, in any) (Answer, error) {
	return o.call(ctx, s, a, id, in)
}

// Route is Path in the router's form: /api/v1/sessions/:id/decisions.
func (o Op) Route() string {
	return strings.ReplaceAll(o.Path, "{id}", ":id")
}

// URL is Path with id in place of {id}, escaped.
func (o Op) URL(id string) string {
	return strings.ReplaceAll(o.Path, "{id}", url.PathEscape(id))
}

// row makes a row whose call takes its input as In, the body's type.
func row[In any](o Op, call func(ctx context.Context, s Services, a auth.Actor, id string, in In) (Answer, error)) Op {
	o.Input = reflect.TypeFor[In]()
	o.call = func(ctx context.Context, s Services, a auth.Actor, id string, in any) (Answer, error) {
		return call(ctx, s, a, id, *in.(*In))
	}
	return o
}

// ByName returns the operation whose Name is name.
func ByName(name string) (Op, bool) {
	for _, o := range Ops {
		if o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}

// Next is the next action and reason that go beside an answer's fields:
// of the run's session when the answer names a run, of its session
// otherwise. It delivers nothing (only the brief does).
func (s Services) Next(ctx context.Context, a auth.Actor, ans Answer) (governance.Next, error) {
	if ans.Run != "" {
		return s.Gov.Briefs.NextOfRun(ctx, a, ans.Run)
	}
	return s.Gov.Briefs.Next(ctx, a, ans.Session)
}

// schemaTypes are the schemas of the input types jsonschema.For cannot
// infer: a payload (json.RawMessage) and a call's input (input.Object)
// are objects.
var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Type: "object"},
	reflect.TypeFor[input.Object]():    {Type: "object"},
}

// BodySchema is the JSON schema of the operation's body, from Input: a
// field is required unless its json tag says omitempty or omitzero, and
// its jsonschema tag is its description.
func (o Op) BodySchema() (*jsonschema.Schema, error) {
	return jsonschema.ForType(o.Input, &jsonschema.ForOptions{TypeSchemas: schemaTypes})
}

// ToolSchema is the MCP tool's input schema: the body's, with the path's
// {id} as the argument ID, required and first.
func (o Op) ToolSchema() (*jsonschema.Schema, error) {
	s, err := o.BodySchema()
	if err != nil || o.ID == "" {
		return s, err
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties[o.ID] = &jsonschema.Schema{Type: "string", Description: o.IDText}
	s.PropertyOrder = append([]string{o.ID}, s.PropertyOrder...)
	s.Required = append([]string{o.ID}, s.Required...)
	return s, nil
}
