// Package httpx is the HTTP plumbing the JSON API and the console share:
// the actor on a request's context, strict JSON bodies, numeric path
// parameters, and the status that answers each kind of domain error.
package httpx

import (
	"net/http"
	"strconv"
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

// RequireBearer authenticates `Authorization: Bearer <secret>` (an agent
// key or a personal token) and puts the actor on the context. Errors:
// unauthorized.
func RequireBearer(a *auth.Service) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, secret, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
				return errs.E(errs.Unauthorized, "unauthorized", "Send an agent key or personal token as `Authorization: Bearer …`.")
			}
			actor, err := a.Authenticate(c.Request().Context(), strings.TrimSpace(secret))
			if err != nil {
				return err
			}
			SetActor(c, actor)
			return next(c)
		}
	}
}

// IsHTMX reports whether htmx sent the request (it wants a fragment).
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// IsAPI reports whether a request is for the JSON API rather than the
// console: the API's paths, or anything asked for by a client that does
// not take HTML (an agent, a script, curl).
func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/api/") || p == "/brief" || p == "/healthz" || p == "/mcp" {
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
	errs.Unsupported:  http.StatusUnsupportedMediaType,
	errs.Unavailable:  http.StatusServiceUnavailable,
}

// Status is the HTTP status that answers an error of kind k.
func Status(k errs.Kind) int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// JSONBytes answers body, already encoded JSON in parts written one after
// another, with its length: one write and no chunked encoding, however
// long the body (net/http chunks an answer of unknown length past 2 KB,
// as a brief with its protocol text is).
func JSONBytes(c echo.Context, status int, body ...[]byte) error {
	n := 0
	for _, p := range body {
		n += len(p)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Set(echo.HeaderContentLength, strconv.Itoa(n))
	c.Response().WriteHeader(status)
	for _, p := range body {
		if _, err := c.Response().Write(p); err != nil {
			return err
		}
	}
	return nil
}
