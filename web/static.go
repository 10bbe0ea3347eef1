package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/static"
)

// handleStatic serves GET /static/*: embedded assets, cached forever when
// addressed by their current hash. Only the assets themselves are served:
// a folder (/static/ itself) is a 404, never a listing.
func handleStatic() echo.HandlerFunc {
	files := http.FileServer(http.FS(static.FS))
	return func(c echo.Context) error {
		name := strings.TrimPrefix(c.Request().URL.Path, "/static/")
		if !static.Has(name) {
			return echo.ErrNotFound
		}
		if static.Current(name, c.QueryParam("v")) {
			c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			c.Response().Header().Set("Cache-Control", "no-cache")
		}
		r := c.Request().Clone(c.Request().Context())
		r.URL.Path = "/" + name
		files.ServeHTTP(c.Response(), r)
		return nil
	}
}

// handleFavicon serves GET /favicon.ico, where browsers look for an icon:
// the console's SVG icon.
func handleFavicon() echo.HandlerFunc {
	icon := static.Icon()
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		return c.Blob(http.StatusOK, "image/svg+xml", icon)
	}
}
