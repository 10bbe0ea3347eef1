package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/web/httpx"
)

func TestRequireJSON(t *testing.T) {
	for _, tc := range []struct {
		name, method, ct, body string
		unknownLength          bool // sent chunked: no Content-Length
		refused                bool
	}{
		{name: "JSON", method: http.MethodPost, ct: "application/json", body: `{}`},
		{name: "JSON with a charset", method: http.MethodPut, ct: "application/json; charset=utf-8", body: `{}`},
		{name: "JSON in capitals", method: http.MethodPatch, ct: "Application/JSON", body: `{}`},
		{name: "no body, no type", method: http.MethodPost},
		{name: "no body of unknown length, no type", method: http.MethodPost, unknownLength: true},
		{name: "a body of unknown length, no type", method: http.MethodPost, body: `{}`, unknownLength: true, refused: true},
		{name: "a body, no type", method: http.MethodPost, body: `{}`, refused: true},
		{name: "a form", method: http.MethodPost, ct: "application/x-www-form-urlencoded", body: "a=1", refused: true},
		{name: "text", method: http.MethodPost, ct: "text/plain", body: `{}`, refused: true},
		{name: "a type that only starts like JSON", method: http.MethodPost, ct: "application/json-seq", body: `{}`, refused: true},
		{name: "a broken type", method: http.MethodPost, ct: "application/json; =", body: `{}`, refused: true},
		{name: "an empty body declared as text", method: http.MethodPost, ct: "text/plain", refused: true},
		{name: "a GET with any type", method: http.MethodGet, ct: "text/plain", body: "x"},
		{name: "a DELETE without a body", method: http.MethodDelete, ct: "text/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.unknownLength {
				body = io.MultiReader(strings.NewReader(tc.body)) // hides the length
			}
			req := httptest.NewRequest(tc.method, "/api/v1/x", body)
			if tc.unknownLength {
				req.ContentLength = -1
			}
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			c := echo.New().NewContext(req, httptest.NewRecorder())
			var read string
			err := httpx.RequireJSON(func(c echo.Context) error {
				b, err := io.ReadAll(c.Request().Body)
				read = string(b)
				return err
			})(c)
			if tc.refused {
				if e, ok := errs.As(err); !ok || e.Code != "unsupported_media_type" || httpx.Status(e.Kind) != http.StatusUnsupportedMediaType {
					t.Fatalf("got %v, want a 415 unsupported_media_type", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if read != tc.body {
				t.Errorf("the handler read %q, want the whole body %q", read, tc.body)
			}
		})
	}
}
