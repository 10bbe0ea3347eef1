package web

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/web/console"
	"github.com/madebook/madebook/web/httpx"
)

// errorHandler answers every error in the contract's shape,
// {"error":{"code","message"}}. Only server faults are logged, and their
// details never reach the caller.
func errorHandler(log *slog.Logger, page console.ErrorRenderer) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, body := errorBody(err)
		if status >= http.StatusInternalServerError && clientGone(c, err) {
			// Nobody is left to answer: the status is for the request log.
			c.Response().WriteHeader(StatusClientGone)
			return
		}
		if status >= http.StatusInternalServerError {
			log.ErrorContext(c.Request().Context(), "internal error", "path", c.Request().URL.Path, "error", err)
		}
		var werr error
		switch {
		case c.Request().Method == http.MethodHead:
			werr = c.NoContent(status)
		case httpx.IsAPI(c):
			werr = c.JSON(status, map[string]any{"error": body})
		default:
			werr = page(c, status, body["message"].(string))
		}
		if werr != nil {
			log.ErrorContext(c.Request().Context(), "write error response", "error", werr)
		}
	}
}

func errorBody(err error) (int, map[string]any) {
	if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
		return httpx.Status(e.Kind), errs.Body(err)
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code < http.StatusInternalServerError {
		code, msg := "http_error", http.StatusText(he.Code)
		switch he.Code {
		case http.StatusNotFound:
			code, msg = "not_found", "There is nothing at this address."
		case http.StatusMethodNotAllowed:
			code, msg = "method_not_allowed", "This address does not accept that method."
		case http.StatusRequestEntityTooLarge:
			code, msg = "body_too_large", "The request body is over 1 MiB; send less."
		}
		return he.Code, map[string]any{"code": code, "message": msg}
	}
	return http.StatusInternalServerError, errs.Body(err)
}
