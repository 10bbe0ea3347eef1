package web_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/internal/testkit/apicheck"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/api"
	"github.com/madebook/madebook/web/webtest"
)

// TestTheOpenAPIDocumentDescribesEveryJSONRoute fails when a JSON route is
// served that the document does not describe, or the document describes
// one that is not served. (Every HTTP test also checks its answers, and
// the requests the server accepted, against the document: webtest.API.)
func TestTheOpenAPIDocumentDescribesEveryJSONRoute(t *testing.T) {
	t.Parallel()
	e := web.NewServer(webtest.Deps(testkit.New(t)))
	var routes []apicheck.Route
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/") || strings.HasPrefix(r.Path, "/hooks/") || r.Path == "/brief" || r.Path == "/healthz" {
			routes = append(routes, apicheck.Route{Method: r.Method, Path: r.Path})
		}
	}
	apicheck.New(t, api.OpenAPI).Routes(t, routes)
}

// TestTheOpenAPIDocumentIsServed checks that GET /api/v1/openapi.json
// answers the embedded document, to anyone.
func TestTheOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	r := a.Do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, api.OpenAPI) {
		t.Fatalf("GET /api/v1/openapi.json: %d, %d bytes (want the %d embedded)", r.Status, len(r.Body), len(api.OpenAPI))
	}
	webtest.CheckJSONContentType(t, r)
}
