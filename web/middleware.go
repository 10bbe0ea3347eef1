package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/httpx"
)

// limitBody refuses bodies over max bytes with 413: at once when the
// declared length says so, and while reading otherwise.
func limitBody(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				return httpx.TooLarge(max)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			return next(c)
		}
	}
}
