package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/madebook/madebook/internal/errs"
)

// DecodeJSON decodes one JSON value, data, into v, refusing a field v does
// not have: a misspelt field silently ignored is a request half-obeyed.
// where names the JSON in messages ("body", "payload"); prefix goes before
// the field an error names ("" for a body, "payload." for a payload).
// Errors: 422 unknown_field and invalid_field, naming the field; 422
// invalid_<where> when data is not a JSON object (null, a list, a
// string); any other decoding error (data that is not JSON) is returned as
// encoding/json returned it, for the caller to answer.
func DecodeJSON(data []byte, v any, where, prefix string) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return errs.E(errs.Invalid, "invalid_"+where, "The %s must be a JSON object, not null.", where).In(strings.TrimSuffix(prefix, "."))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typ *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return err // not JSON: the caller says so
	case len(bytes.TrimSpace(data[dec.InputOffset():])) > 0:
		// The decoder read one value; anything after it makes data not
		// JSON, whatever that value's fields were: encoding/json says how.
		return json.Unmarshal(data, new(json.RawMessage))
	case err == nil:
		return nil
	case errors.As(err, &typ) && typ.Field == "":
		return errs.E(errs.Invalid, "invalid_"+where, "The %s must be a JSON object, not %s.", where, typ.Value).In(strings.TrimSuffix(prefix, "."))
	case errors.As(err, &typ):
		field := jsonField(typ.Field)
		return errs.E(errs.Invalid, "invalid_field", "The field %q must be %s, not %s.", prefix+field, jsonKind(typ.Type.Kind().String()), typ.Value).
			In(prefix + field)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error; its text is stable.
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return errs.E(errs.Invalid, "unknown_field", "The %s has a field %q that this call does not take; check its name against the API (GET /api/v1/openapi.json).", where, name).
			In(prefix + name)
	default:
		return err
	}
}

// jsonField is the JSON name of the field encoding/json names: it names a
// field of an embedded struct after the struct's Go name ("Site.paths"),
// whose fields the JSON holds at the level above ("paths"). The API's
// JSON names are lowercase, Go's exported names are not.
func jsonField(f string) string {
	parts := strings.Split(f, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && p[0] >= 'A' && p[0] <= 'Z' {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}

// jsonKind is how a message names the JSON type a Go kind takes.
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
