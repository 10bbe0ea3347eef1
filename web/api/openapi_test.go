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
	"github.com/pb33f/libopenapi/orderedmap"

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
		if agentOnly(o.op) && o.op.RequestBody != nil && len(examples(t, o)) == 0 {
			t.Errorf("%s is an agent call whose request body has no example", o)
		}
		for _, where := range exampleAndExamples(o) {
			t.Errorf("%s has both example and examples: OpenAPI 3.1 takes one or the other", where)
		}
	}
}

// TestOpenAPIExamplesValidate sends every request body example (example
// and each of examples), as a request to its operation, through the
// validator.
func TestOpenAPIExamplesValidate(t *testing.T) {
	c := apicheck.New(t, OpenAPI)
	n := 0
	for _, o := range operations(model(t)) {
		for _, ex := range examples(t, o) {
			n++
			t.Run(o.op.OperationId+"/"+ex.name, func(t *testing.T) {
				r := httptest.NewRequest(strings.ToUpper(o.method), samplePath(o), bytes.NewReader(ex.body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer mbk_example")
				c.Request(t, r, ex.body)
			})
		}
	}
	if n == 0 {
		t.Error("the document has no request body examples")
	}
}

// examples are the operation's JSON request body examples, by name: the
// media type's example ("example") or each of its examples, in order.
func examples(t *testing.T, o operation) []namedExample {
	t.Helper()
	if o.op.RequestBody == nil {
		return nil
	}
	media, ok := o.op.RequestBody.Content.Get("application/json")
	if !ok {
		return nil
	}
	encode := func(name string, node interface{ Decode(any) error }) namedExample {
		var v any
		if err := node.Decode(&v); err != nil {
			t.Fatalf("%s: the example %s does not decode: %v", o, name, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: the example %s does not encode as JSON: %v", o, name, err)
		}
		return namedExample{name, b}
	}
	var out []namedExample
	if media.Example != nil {
		out = append(out, encode("example", media.Example))
	}
	for name, ex := range media.Examples.FromOldest() {
		if ex.Value == nil {
			t.Fatalf("%s: the example %s has no value", o, name)
		}
		out = append(out, encode(name, ex.Value))
	}
	return out
}

// namedExample is one request body example, as JSON.
type namedExample struct {
	name string
	body []byte
}

// exampleAndExamples names every media type and parameter of the
// operation that has both example and examples, which OpenAPI 3.1 forbids
// (they are mutually exclusive) and libopenapi lets through.
func exampleAndExamples(o operation) []string {
	var out []string
	media := func(where string, content *orderedmap.Map[string, *v3.MediaType]) {
		for ct, m := range content.FromOldest() {
			if m.Example != nil && orderedmap.Len(m.Examples) > 0 {
				out = append(out, fmt.Sprintf("%s %s (%s)", o, where, ct))
			}
		}
	}
	if o.op.RequestBody != nil {
		media("request body", o.op.RequestBody.Content)
	}
	if o.op.Responses != nil {
		for code, r := range o.op.Responses.Codes.FromOldest() {
			media("response "+code, r.Content)
		}
	}
	for _, p := range o.op.Parameters {
		if p.Example != nil && orderedmap.Len(p.Examples) > 0 {
			out = append(out, fmt.Sprintf("%s parameter %s", o, p.Name))
		}
	}
	return out
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
