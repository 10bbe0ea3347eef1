package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// BenchmarkDecode is the strict decoding of a brief's body, which every
// POST /brief pays: it must stay a small part of a brief's cost.
func BenchmarkDecode(b *testing.B) {
	e := echo.New()
	type brief struct {
		Session string `json:"session"`
	}
	const body = `{"session":"ses_4f2kq9w7x1ab"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/brief", strings.NewReader(body))
		c := e.NewContext(req, httptest.NewRecorder())
		if _, err := Bind[brief](c); err != nil {
			b.Fatal(err)
		}
	}
}
