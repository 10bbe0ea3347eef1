package httpx

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Chain is h behind the middleware, outermost first, composed once. Echo
// composes a route's middleware anew on every request (a closure each);
// a route registered with its chain already built does not.
func Chain(h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// Group is routes under one prefix behind the same middleware, as echo's
// Group, but each route's chain composed once (Chain). As with echo's, a
// path under the prefix that no route serves goes through the middleware
// too before its 404: a caller without a credential learns nothing of
// which paths exist.
type Group struct {
	e      *echo.Echo
	prefix string
	mw     []echo.MiddlewareFunc
}

// NewGroup returns the group of routes under prefix behind mw.
func NewGroup(e *echo.Echo, prefix string, mw ...echo.MiddlewareFunc) *Group {
	g := &Group{e: e, prefix: prefix, mw: mw}
	e.RouteNotFound(prefix, Chain(echo.NotFoundHandler, mw...))
	e.RouteNotFound(prefix+"/*", Chain(echo.NotFoundHandler, mw...))
	return g
}

// Add registers h for method and the path under the group's prefix.
func (g *Group) Add(method, path string, h echo.HandlerFunc) *echo.Route {
	return g.e.Add(method, g.prefix+path, Chain(h, g.mw...))
}

// GET registers h for GET.
func (g *Group) GET(path string, h echo.HandlerFunc) *echo.Route {
	return g.Add(http.MethodGet, path, h)
}

// POST registers h for POST.
func (g *Group) POST(path string, h echo.HandlerFunc) *echo.Route {
	return g.Add(http.MethodPost, path, h)
}

// PUT registers h for PUT.
func (g *Group) PUT(path string, h echo.HandlerFunc) *echo.Route {
	return g.Add(http.MethodPut, path, h)
}

// PATCH registers h for PATCH.
func (g *Group) PATCH(path string, h echo.HandlerFunc) *echo.Route {
	return g.Add(http.MethodPatch, path, h)
}

// DELETE registers h for DELETE.
func (g *Group) DELETE(path string, h echo.HandlerFunc) *echo.Route {
	return g.Add(http.MethodDelete, path, h)
}
