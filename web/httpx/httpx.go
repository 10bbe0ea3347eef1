// Package httpx is the HTTP plumbing the JSON API and the console share:
// the actor on a request's context, strict JSON bodies, numeric path
// parameters, and the status that answers each kind of domain error.
package httpx

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

const actorKey = "madebook.actor"

// SetActor puts the authenticated actor on the request's context.
func SetActor(c echo.Context, a auth.Actor) { c.Set(actorKey, a) }

// Actor returns the authenticated actor; the zero Actor may do nothing.
func Actor(c echo.Context) auth.Actor {
	a, _ := c.Get(actorKey).(auth.Actor)
	return a
}

// IsHTMX reports whether htmx sent the request (it wants a fragment).
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// IsAPI reports whether a request is for the JSON API rather than the
// console: the API's paths, or anything asked for by a client that does
// not take HTML (an agent, a script, curl).
func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/api/") || p == "/brief" || p == "/healthz" {
		return true
	}
	return !IsHTMX(c) && !strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/html")
}

var statusOf = map[errs.Kind]int{
	errs.Internal:     http.StatusInternalServerError,
	errs.Malformed:    http.StatusBadRequest,
	errs.Unauthorized: http.StatusUnauthorized,
	errs.Forbidden:    http.StatusForbidden,
	errs.NotFound:     http.StatusNotFound,
	errs.Conflict:     http.StatusConflict,
	errs.TooLarge:     http.StatusRequestEntityTooLarge,
	errs.Invalid:      http.StatusUnprocessableEntity,
	errs.TooMany:      http.StatusTooManyRequests,
}

// Status is the HTTP status that answers an error of kind k.
func Status(k errs.Kind) int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}
