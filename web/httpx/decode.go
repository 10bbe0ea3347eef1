package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
)

// Decode reads the request's JSON body into v. Not JSON is a 400, JSON of
// the wrong shape a 422, over 1 MiB a 413. An empty body is a 400 unless
// optional is set, when it reads as {}. A field the type does not have is
// a 422 unknown_field naming it.
func Decode(c echo.Context, v any, optional bool) error {
	body, err := readBody(c.Request())
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return TooLarge(tooBig.Limit)
	} else if err != nil {
		return errs.E(errs.Malformed, "malformed_json", "The body could not be read: %v.", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return errs.E(errs.Malformed, "malformed_json", "The body is empty; send a JSON object.")
	}
	return DecodeBody(body, v)
}

// readBody reads r's body whole: into a slice of its declared length when
// it declares one (the usual small body, read without io.ReadAll's
// growing), as io.ReadAll otherwise.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 64<<10 {
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(r.Body)
}

// DecodeBody decodes body, one JSON value, into v as a request's body is
// decoded: not JSON is a 400 malformed_json, JSON of the wrong shape a
// 422 (a field v does not have unknown_field, a value of the wrong type
// invalid_field, both naming the field). The MCP tools decode their
// arguments with it, so that they refuse what REST refuses, in its words.
func DecodeBody(body []byte, v any) error {
	if f, ok := v.(FlatDecoder); ok && f.DecodeFlat(body) {
		return nil
	}
	// One JSON value and nothing after it: broken JSON is a 400 whatever
	// fields it names (DecodeJSON checks the syntax of the whole body
	// before any field, and what follows the value).
	err := input.DecodeJSON(body, v, "body", "")
	if _, ours := errs.As(err); err != nil && !ours {
		if why := json.Unmarshal(body, new(json.RawMessage)); why != nil {
			err = why // encoding/json's words for what is wrong, as ever
		}
		return errs.E(errs.Malformed, "malformed_json", "The body is not valid JSON: %v.", err)
	}
	return err
}

// FlatDecoder is a body type that reads the plainest shape of its body
// itself (input.Shallow), faster than encoding/json: DecodeFlat
// reports false for any other body, which is then decoded, or refused,
// as every body is. The brief's and the executor check's requests are.
type FlatDecoder interface {
	DecodeFlat(body []byte) bool
}

// Bind decodes the body into a fresh T.
func Bind[T any](c echo.Context) (T, error) {
	var v T
	return v, Decode(c, &v, false)
}

// BindOptional decodes the body into a fresh T; an empty body is {}.
func BindOptional[T any](c echo.Context) (T, error) {
	var v T
	return v, Decode(c, &v, true)
}

// PathID reads a numeric :id path parameter; anything else is a 404 with
// the code, and the message (a format taking the id as its one %q).
func PathID(c echo.Context, code, message string) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return 0, errs.E(errs.NotFound, code, message, c.Param("id"))
	}
	return id, nil
}

// TooLarge is the 413 for a body over max bytes.
func TooLarge(max int64) error {
	return errs.E(errs.TooLarge, "body_too_large", "The request body is over %d bytes (1 MiB); send less.", max)
}

// Query returns the request's query when it names only the parameters
// given, each at most once; otherwise unknown_parameter or
// repeated_parameter, naming the first such parameter in order, so that a
// misspelt filter or cursor is not silently ignored.
func Query(c echo.Context, names ...string) (url.Values, error) {
	q := c.QueryParams()
	given := make([]string, 0, len(q))
	for name := range q {
		given = append(given, name)
	}
	sort.Strings(given)
	for _, name := range given {
		if !slices.Contains(names, name) {
			return nil, errs.E(errs.Invalid, "unknown_parameter",
				"The query parameter %q is not one this call reads: use %s.", name, strings.Join(names, ", ")).In(name)
		}
		if len(q[name]) > 1 {
			return nil, errs.E(errs.Invalid, "repeated_parameter",
				"The query parameter %q is given %d times; give it once.", name, len(q[name])).In(name)
		}
	}
	return q, nil
}
