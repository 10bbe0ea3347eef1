package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

const actorKey = "madebook.actor"

// requireBearer authenticates `Authorization: Bearer <secret>` (an agent
// key or a personal token) and puts the actor on the context.
func requireBearer(a *auth.Service) echo.MiddlewareFunc {
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
			c.Set(actorKey, actor)
			return next(c)
		}
	}
}

// actorOf returns the authenticated actor; the zero Actor may do nothing.
func actorOf(c echo.Context) auth.Actor {
	a, _ := c.Get(actorKey).(auth.Actor)
	return a
}

// limitBody refuses bodies over max bytes with 413: at once when the
// declared length says so, and while reading otherwise.
func limitBody(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				return tooLarge(max)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			return next(c)
		}
	}
}

func tooLarge(max int64) error {
	return errs.E(errs.TooLarge, "body_too_large", "The request body is over %d bytes (1 MiB); send less.", max)
}
