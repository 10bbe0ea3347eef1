package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/madebook/madebook/internal/agentops"
)

// TestTheAgentOperationsAreTheDocuments checks the table of agent
// operations against openapi.json: every row's method and path is an
// operation of the document, with the row's name as its operationId, an
// agent key as its credential, and a request body whose properties, and
// which of them are required, are the row's input type's; and every
// operation only an agent key may call is a row, but the executors' hooks
// (/hooks/…), which take the executor's own JSON.
func TestTheAgentOperationsAreTheDocuments(t *testing.T) {
	ops := map[string]operation{}
	for _, o := range operations(model(t)) {
		ops[o.String()] = o
	}
	rows := map[string]bool{}
	for _, row := range agentops.Ops {
		key := row.Method + " " + row.Path
		t.Run(row.Name, func(t *testing.T) {
			if rows[key] {
				t.Fatalf("%s is two rows", key)
			}
			rows[key] = true
			o, ok := ops[key]
			if !ok {
				t.Fatalf("%s is not in openapi.json", key)
			}
			if o.op.OperationId != row.Name {
				t.Errorf("%s is %q in openapi.json, %q in the table", key, o.op.OperationId, row.Name)
			}
			if !agentOnly(o.op) {
				t.Errorf("%s does not take only an agent key in openapi.json", key)
			}
			if (row.ID != "") != strings.Contains(row.Path, "{id}") {
				t.Errorf("the row's ID %q does not go with its path %s", row.ID, row.Path)
			}
			if (row.Tool == "") != (row.Description == "") || (row.CLI == "") != (row.Summary == "") {
				t.Errorf("a tool or a sub-command without its text: %+v", row)
			}
			want, err := row.BodySchema()
			if err != nil {
				t.Fatalf("the input type %v has no schema: %v", row.Input, err)
			}
			if o.op.RequestBody == nil {
				t.Fatalf("%s has no request body in openapi.json", key)
			}
			media, ok := o.op.RequestBody.Content.Get("application/json")
			if !ok || media.Schema == nil {
				t.Fatalf("%s has no JSON request body schema in openapi.json", key)
			}
			props, required := bodyFields(media.Schema.Schema())
			wantProps := slices.Sorted(func(yield func(string) bool) {
				for name := range want.Properties {
					if !yield(name) {
						return
					}
				}
			})
			if !slices.Equal(props, wantProps) {
				t.Errorf("%s: openapi.json's body has %v, the input type %v has %v", key, props, row.Input, wantProps)
			}
			if wantRequired := slices.Sorted(slices.Values(want.Required)); !slices.Equal(required, wantRequired) {
				t.Errorf("%s: openapi.json requires %v, the input type %v %v", key, required, row.Input, wantRequired)
			}
		})
	}
	for key, o := range ops {
		if agentOnly(o.op) && !strings.HasPrefix(o.path, "/hooks/") && !rows[key] {
			t.Errorf("%s (%s) takes only an agent key in openapi.json, but is no row of agentops.Ops", key, o.op.OperationId)
		}
	}
}

// bodyFields are a body schema's property names and its required ones,
// each sorted, through allOf.
func bodyFields(s *base.Schema) (props, required []string) {
	if s == nil {
		return nil, nil
	}
	for name := range s.Properties.KeysFromOldest() {
		props = append(props, name)
	}
	required = append(required, s.Required...)
	for _, p := range s.AllOf {
		more, req := bodyFields(p.Schema())
		props, required = append(props, more...), append(required, req...)
	}
	slices.Sort(props)
	slices.Sort(required)
	return slices.Compact(props), slices.Compact(required)
}
