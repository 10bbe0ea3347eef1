package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/madebook/madebook/internal/testkit/apicheck"
)

// model builds the document's OpenAPI 3.1 model, failing on any error.
func model(t *testing.T) *v3.Document {
	t.Helper()
	doc, err := libopenapi.NewDocument(OpenAPI)
	if err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if f := doc.GetSpecInfo().SpecFormat; f != datamodel.OAS31 {
		t.Fatalf("openapi.json is %s, want %s", f, datamodel.OAS31)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("openapi.json does not build: %v", err)
	}
	return &m.Model
}

// operation is one method of one path in the document.
type operation struct {
	method, path string
	op           *v3.Operation
}

func (o operation) String() string { return strings.ToUpper(o.method) + " " + o.path }

func operations(m *v3.Document) []operation {
	var out []operation
	for path, item := range m.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			out = append(out, operation{method, path, op})
		}
	}
	return out
}

// agentOnly reports whether only an agent key may call the operation.
func agentOnly(op *v3.Operation) bool {
	var schemes []string
	for _, req := range op.Security {
		for name := range req.Requirements.KeysFromOldest() {
			schemes = append(schemes, name)
		}
	}
	return slices.Equal(schemes, []string{"agentKey"})
}

// TestOpenAPIDocument checks the document itself: it is valid OpenAPI 3.1,
// every schema compiles, and every operation is complete.
func TestOpenAPIDocument(t *testing.T) {
	apicheck.New(t, OpenAPI) // parses, builds, and validates against the OpenAPI 3.1 schema
	m := model(t)

	sv := schema_validation.NewSchemaValidator()
	for name, proxy := range m.Components.Schemas.FromOldest() {
		// A schema is compiled only when something is validated against
		// it: validate null, and keep only compilation failures.
		_, errs := sv.ValidateSchemaStringWithVersion(proxy.Schema(), "null", 3.1)
		for _, e := range errs {
			if e.Message == "schema compilation failed" {
				t.Errorf("schema %s does not compile: %s", name, e.Reason)
			}
		}
	}

	ops := operations(m)
	if len(ops) == 0 {
		t.Fatal("the document has no operations")
	}
	ids := map[string]string{}
	for _, o := range ops {
		if o.op.OperationId == "" {
			t.Errorf("%s has no operationId", o)
		} else if other, dup := ids[o.op.OperationId]; dup {
			t.Errorf("%s and %s share the operationId %q", o, other, o.op.OperationId)
		}
		ids[o.op.OperationId] = o.String()
		if o.op.Summary == "" {
			t.Errorf("%s has no summary", o)
		}
		if o.op.Security == nil {
			t.Errorf("%s does not say which credential it takes (security)", o)
		}
		ok := false
		if o.op.Responses != nil {
			for code := range o.op.Responses.Codes.KeysFromOldest() {
				ok = ok || strings.HasPrefix(code, "2")
			}
		}
		if !ok {
			t.Errorf("%s has no 2xx response", o)
		}
		if agentOnly(o.op) && o.op.RequestBody != nil && example(t, o) == nil {
			t.Errorf("%s is an agent call whose request body has no example", o)
		}
	}
}

// TestOpenAPIExamplesValidate sends every request body example, as a
// request to its operation, through the validator.
func TestOpenAPIExamplesValidate(t *testing.T) {
	c := apicheck.New(t, OpenAPI)
	n := 0
	for _, o := range operations(model(t)) {
		body := example(t, o)
		if body == nil {
			continue
		}
		n++
		t.Run(o.op.OperationId, func(t *testing.T) {
			r := httptest.NewRequest(strings.ToUpper(o.method), samplePath(o), bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer mbk_example")
			c.Request(t, r, body)
		})
	}
	if n == 0 {
		t.Error("the document has no request body examples")
	}
}

// example is the operation's JSON request body example, or nil.
func example(t *testing.T, o operation) []byte {
	t.Helper()
	if o.op.RequestBody == nil {
		return nil
	}
	media, ok := o.op.RequestBody.Content.Get("application/json")
	if !ok || media.Example == nil {
		return nil
	}
	var v any
	if err := media.Example.Decode(&v); err != nil {
		t.Fatalf("%s: the example does not decode: %v", o, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: the example does not encode as JSON: %v", o, err)
	}
	return b
}

// samplePath fills the operation's path parameters with values of their
// schema's type: the first of an enum, 1 for an integer, a word otherwise;
// a required query parameter gets a word too.
func samplePath(o operation) string {
	path := o.path
	query := url.Values{}
	for _, p := range o.op.Parameters {
		if p.In == "query" && p.Required != nil && *p.Required {
			query.Set(p.Name, "sample")
			continue
		}
		if p.In != "path" {
			continue
		}
		value := "sample"
		if s := p.Schema.Schema(); s != nil {
			switch {
			case len(s.Enum) > 0:
				value = s.Enum[0].Value
			case slices.Contains(s.Type, "integer"):
				value = "1"
			}
		}
		path = strings.ReplaceAll(path, fmt.Sprintf("{%s}", p.Name), value)
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return path
}
