package httpx

import (
	"bufio"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
)

// RequireJSON refuses a request body that is not declared JSON with 415
// unsupported_media_type: the body of a POST, PUT or PATCH needs
// `Content-Type: application/json` (parameters such as charset allowed);
// one with no body may leave the header out. It keeps a browser's form or text/plain
// post, which a page on another site can send without asking, from ever
// reaching a JSON handler.
func RequireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return next(c)
		}
		ct := r.Header.Get(echo.HeaderContentType)
		if ct == echo.MIMEApplicationJSON {
			return next(c) // as almost every agent sends it, without parsing
		}
		if ct == "" {
			if empty, err := bodyEmpty(r); err != nil || empty {
				return next(c) // a body that cannot be read is the handler's to refuse
			}
			return unsupported("none")
		}
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != echo.MIMEApplicationJSON {
			return unsupported(ct)
		}
		return next(c)
	}
}

// bodyEmpty reports whether r has no body, reading at most one byte of
// it (and putting it back) when its length is not declared.
func bodyEmpty(r *http.Request) (bool, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true, nil
	}
	if r.ContentLength > 0 {
		return false, nil
	}
	br := bufio.NewReaderSize(r.Body, 16)
	_, err := br.Peek(1)
	r.Body = readCloser{br, r.Body}
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

type readCloser struct {
	io.Reader
	io.Closer
}

func unsupported(ct string) error {
	return errs.E(errs.Unsupported, "unsupported_media_type",
		"The body's Content-Type is %s; send JSON with `Content-Type: application/json`.", ct)
}
