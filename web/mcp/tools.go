package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/madebook/madebook/internal/agentops"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/httpx"
)

// tools are the MCP tools: one for each row of the table of agent
// operations (agentops.Ops) that names a tool, calling the row's service
// call, as its REST route does.
type tools struct{ Deps }

// reply is what a tool answers: the structured content (the REST answer
// with next_action and reason) and the next action for the text.
type reply struct {
	body any
	next governance.Next
}

func (t tools) register(s *sdk.Server) {
	for _, op := range agentops.Ops {
		if op.Tool != "" {
			t.add(s, op)
		}
	}
}

// add registers op's tool: its input schema is the row's input type's,
// with the path's id as an argument (agentops.Op.ToolSchema). The SDK
// validates nothing: the arguments are decoded as REST decodes a body
// (httpx.DecodeBody: an unknown field, a value of the wrong type) and
// the service checks them (a field missing), so a tool refuses what REST
// refuses with the same code and message. A call counts against its
// key's rate limits as its REST route does. It answers the reply as
// structured content and as two text blocks, "NEXT_ACTION: reason" first
// and the reply's JSON (for clients that show the model only text); an
// error as a tool error whose text and structured content are the REST
// error body.
func (t tools) add(s *sdk.Server, op agentops.Op) {
	schema, err := op.ToolSchema()
	if err != nil {
		panic(fmt.Sprintf("mcp: the input schema of %s: %v", op.Tool, err))
	}
	svc := agentops.Services{Gov: t.Gov, Ledger: t.Ledger}
	class := httpx.ClassOf(op.Method, op.Route())
	id := idArgument(op.ID)
	s.AddTool(&sdk.Tool{Name: op.Tool, Description: op.Description, InputSchema: schema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := actorOf(req.Extra)
			if err == nil {
				err = t.Limits.Allow(httpx.Credential(a), class, time.Now())
			}
			var r reply
			if err == nil {
				r, err = call(ctx, svc, a, op, id, arguments(req))
			}
			if err != nil {
				body := t.errorBody(ctx, op.Tool, err)
				text, jerr := jsonText(body)
				if jerr != nil {
					return nil, jerr
				}
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}},
					StructuredContent: body}, nil
			}
			answer, err := jsonText(r.body)
			if err != nil {
				return nil, fmt.Errorf("encode the answer of %s: %w", op.Tool, err)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: fmt.Sprintf("%s: %s", r.next.NextAction, r.next.Reason)},
				&sdk.TextContent{Text: answer}}, StructuredContent: json.RawMessage(answer)}, nil
		})
}

// call runs op with a tool's arguments: the path's id taken out of them,
// the rest decoded as the REST body, and the answer with its session's
// next action beside its fields, as REST answers it.
func call(ctx context.Context, svc agentops.Services, a auth.Actor, op agentops.Op, id reflect.Type, args []byte) (reply, error) {
	var ref string
	if id != nil {
		var err error
		if args, ref, err = takeID(args, op.ID, id); err != nil {
			return reply{}, err
		}
	}
	in := op.New()
	if err := httpx.DecodeBody(args, in); err != nil {
		return reply{}, err
	}
	ans, err := op.Call(ctx, svc, a, ref, in)
	if err != nil {
		return reply{}, err
	}
	if ans.JSON != nil {
		raw := json.RawMessage(bytes.Join(ans.JSON, nil))
		var next governance.Next
		if err := json.Unmarshal(raw, &next); err != nil {
			return reply{}, fmt.Errorf("read the next action of %s: %w", op.Tool, err)
		}
		return reply{body: raw, next: next}, nil
	}
	next, err := svc.Next(ctx, a, ans)
	if err != nil {
		return reply{}, err
	}
	return reply{body: governance.Reply{Answer: ans.Body, Next: next}, next: next}, nil
}

// idArgument is the type of the one-field object {"<name>": "…"} the
// path's id is decoded from, as a body field is (nil for no id).
func idArgument(name string) reflect.Type {
	if name == "" {
		return nil
	}
	return reflect.StructOf([]reflect.StructField{{Name: "ID", Type: reflect.TypeFor[string](),
		Tag: reflect.StructTag(`json:"` + name + `"`)}})
}

// takeID takes the member name out of the arguments object, keeping the
// others in their order: the rest is the REST body, the member's value
// the path's id, decoded as a field of type id is. Arguments that are not
// an object come back as they are, for the body's decoding to refuse.
func takeID(args []byte, name string, id reflect.Type) (rest []byte, value string, err error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return args, "", nil
	}
	out := []byte{'{'}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		var v json.RawMessage
		if err == nil && isKey {
			err = dec.Decode(&v)
		}
		if err != nil || !isKey {
			return args, "", nil
		}
		if key == name {
			member, err := json.Marshal(map[string]json.RawMessage{name: v})
			if err != nil {
				return nil, "", err
			}
			ptr := reflect.New(id)
			if err := httpx.DecodeBody(member, ptr.Interface()); err != nil {
				return nil, "", err
			}
			value = ptr.Elem().Field(0).String()
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, err := json.Marshal(key)
		if err != nil {
			return nil, "", err
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}'), value, nil
}

// arguments are a call's arguments as JSON: none at all read as {} (a
// tool whose fields are all optional may be called without any).
func arguments(req *sdk.CallToolRequest) []byte {
	if req.Params == nil {
		return []byte("{}")
	}
	raw := bytes.TrimSpace(req.Params.Arguments)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []byte("{}")
	}
	return raw
}
