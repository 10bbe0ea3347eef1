package apicheck

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
)

// tiny is a document with one operation: POST /things/{id} takes
// {"name": string} and answers 201 {"id": integer, "name": string}, or 422
// with an error.
const tiny = `{
  "openapi": "3.1.0",
  "info": {"title": "tiny", "version": "1"},
  "components": {"securitySchemes": {"key": {"type": "http", "scheme": "bearer"}}},
  "security": [{"key": []}],
  "paths": {
    "/things/{id}": {
      "post": {
        "operationId": "makeThing",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "required": ["name"], "additionalProperties": false,
          "properties": {"name": {"type": "string", "minLength": 1}}}}}},
        "responses": {
          "201": {"description": "made", "content": {"application/json": {"schema": {
            "type": "object", "required": ["id", "name", "at"], "additionalProperties": false,
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                           "at": {"type": "string", "format": "date-time"}}}}}},
          "422": {"description": "invalid", "content": {"application/json": {"schema": {
            "type": "object", "required": ["error"]}}}}
        }
      }
    },
    "/things": {"get": {"operationId": "listThings", "responses": {"200": {"description": "all"}}}}
  }
}`

// recorder is a testing.TB that records what a check reports instead of
// failing the test that runs it.
type recorder struct {
	testing.TB // nil: any other method panics, which the test would see
	mu         sync.Mutex
	errs       []string
	fatal      bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
}

func (r *recorder) report() string { return strings.Join(r.errs, "\n") }

func request(method, path, body string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer secret")
	return r
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func TestConformingExchangePasses(t *testing.T) {
	c := New(t, []byte(tiny))
	rec := &recorder{}
	body := `{"name":"lamp"}`
	r := request(http.MethodPost, "/things/7", body)
	c.Request(rec, r, []byte(body))
	c.Response(rec, r, []byte(body), http.StatusCreated, jsonHeader, []byte(`{"id":7,"name":"lamp","at":"2026-11-29T12:00:00Z"}`))
	c.Response(rec, r, []byte(body), http.StatusUnprocessableEntity, jsonHeader, []byte(`{"error":{"code":"x","message":"y"}}`))
	c.Routes(rec, []Route{{"POST", "/things/:id"}, {"GET", "/things"}, {echo.RouteNotFound, "/things/*"}})
	if len(rec.errs) > 0 {
		t.Errorf("a conforming exchange was reported:\n%s", rec.report())
	}
}

func TestRequestThatBreaksTheDocumentFails(t *testing.T) {
	c := New(t, []byte(tiny))
	for _, tc := range []struct {
		name, method, path, body, want string
	}{
		{"unknown field", "POST", "/things/7", `{"name":"lamp","colour":"red"}`, "colour"},
		{"wrong type", "POST", "/things/7", `{"name":3}`, "$.name"},
		{"missing required field", "POST", "/things/7", `{}`, "name"},
		{"path parameter not an integer", "POST", "/things/seven", `{"name":"lamp"}`, "id"},
		{"undocumented path", "POST", "/nothing", `{"name":"lamp"}`, "/nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			c.Request(rec, request(tc.method, tc.path, tc.body), []byte(tc.body))
			if len(rec.errs) != 1 {
				t.Fatalf("got %d reports, want 1:\n%s", len(rec.errs), rec.report())
			}
			if !strings.Contains(rec.errs[0], tc.want) {
				t.Errorf("the report does not name %q:\n%s", tc.want, rec.report())
			}
		})
	}
	t.Run("no credential", func(t *testing.T) {
		rec := &recorder{}
		r := request("POST", "/things/7", `{"name":"lamp"}`)
		r.Header.Del("Authorization")
		c.Request(rec, r, []byte(`{"name":"lamp"}`))
		if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "Authorization") {
			t.Errorf("a request without its credential was not reported as such:\n%s", rec.report())
		}
	})
}

func TestResponseThatBreaksTheDocumentFails(t *testing.T) {
	c := New(t, []byte(tiny))
	// The request is itself invalid: only the response is checked.
	body := `{"name":""}`
	r := request(http.MethodPost, "/things/7", body)
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"undocumented field", 201, `{"id":7,"name":"lamp","at":"2026-11-29T12:00:00Z","extra":true}`, "extra"},
		{"missing field", 201, `{"id":7,"at":"2026-11-29T12:00:00Z"}`, "name"},
		{"wrong type", 201, `{"id":"7","name":"lamp","at":"2026-11-29T12:00:00Z"}`, "$.id"},
		{"not a date-time", 201, `{"id":7,"name":"lamp","at":"yesterday"}`, "date-time"},
		{"undocumented status", 409, `{"error":{"code":"x","message":"y"}}`, "409"},
		{"not JSON", 201, `{"id":`, "201"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			c.Response(rec, r, []byte(body), tc.status, jsonHeader, []byte(tc.body))
			if len(rec.errs) != 1 {
				t.Fatalf("got %d reports, want 1:\n%s", len(rec.errs), rec.report())
			}
			if !strings.Contains(rec.errs[0], tc.want) {
				t.Errorf("the report does not name %q:\n%s", tc.want, rec.report())
			}
		})
	}
}

func TestRoutesDisagreeingEitherWayFail(t *testing.T) {
	c := New(t, []byte(tiny))
	rec := &recorder{}
	c.Routes(rec, []Route{{"POST", "/things/:id"}, {"DELETE", "/things/:id"}})
	got := rec.report()
	if len(rec.errs) != 2 || !strings.Contains(got, "DELETE /things/{id}") || !strings.Contains(got, "GET /things") {
		t.Errorf("want one report naming the undocumented DELETE /things/{id} and one naming the unserved GET /things; got:\n%s", got)
	}
}

func TestNewRefusesABrokenDocument(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":       `{"openapi":`,
		"OpenAPI 3.0":    strings.Replace(tiny, `"3.1.0"`, `"3.0.3"`, 1),
		"no description": strings.Replace(tiny, `"description": "all"`, `"summary": "all"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			New(rec, []byte(doc))
			if !rec.fatal {
				t.Errorf("New accepted a broken document")
			}
		})
	}
}

func TestNewBuildsOncePerDocument(t *testing.T) {
	if New(t, []byte(tiny)) != New(t, []byte(tiny)) {
		t.Error("New built the same document twice")
	}
}

func TestOpenAPIPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/sessions/:id":           "/api/v1/sessions/{id}",
		"/api/v1/decisions/:ref/resolve": "/api/v1/decisions/{ref}/resolve",
		"/healthz":                       "/healthz",
	} {
		if got := openAPIPath(in); got != want {
			t.Errorf("openAPIPath(%q) = %q, want %q", in, got, want)
		}
	}
}
