package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
)

// Decode reads the request's JSON body into v. Not JSON is a 400, JSON of
// the wrong shape a 422, over 1 MiB a 413. An empty body is a 400 unless
// optional is set, when it reads as {}. A field the type does not have is
// a 422 unknown_field naming it.
func Decode(c echo.Context, v any, optional bool) error {
	body, err := io.ReadAll(c.Request().Body)
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
	// One JSON value and nothing after it (Unmarshal refuses trailing
	// data), and no field the type does not have: a misspelt field silently
	// ignored is a request half-obeyed.
	if !json.Valid(body) {
		err := json.Unmarshal(body, new(json.RawMessage)) // only to say why
		return errs.E(errs.Malformed, "malformed_json", "The body is not valid JSON: %v.", err)
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		return errs.E(errs.Invalid, "invalid_body", "The body must be a JSON object, not null.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errs.E(errs.Invalid, "invalid_body", "The body must be a JSON object, not %s.", typ.Value)
		}
		return errs.E(errs.Invalid, "invalid_field", "The field %q must be %s, not %s.", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value).
			In(typ.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error; its text is stable.
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return errs.E(errs.Invalid, "unknown_field", "The body has a field %q that this call does not take; check its name against the API (GET /api/v1/openapi.json).", name).
			In(name)
	default:
		return errs.E(errs.Malformed, "malformed_json", "The body is not valid JSON: %v.", err)
	}
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

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "a number"
	}
	return fmt.Sprintf("a %s", goKind)
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
