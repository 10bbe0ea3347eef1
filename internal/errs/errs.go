// Package errs is Madebook's one error type: a kind that says what went
// wrong in general (and so which HTTP status answers it), a snake_case code
// an agent or script can switch on, and a sentence a person can act on.
package errs

import (
	"errors"
	"fmt"
)

// Kind is the general class of an error.
type Kind int

// The kinds. Internal is the zero value: anything unclassified is ours.
const (
	Internal     Kind = iota // 500: a bug or an outage, never bad input
	Malformed                // 400: the body is not valid JSON
	Unauthorized             // 401: no credential, or a wrong one
	Forbidden                // 403: the right credential, the wrong owner or role
	NotFound                 // 404
	Conflict                 // 409: the state does not allow it
	TooLarge                 // 413: the body is over the limit
	Invalid                  // 422: valid JSON, invalid content
	TooMany                  // 429: slow down
	Unsupported              // 415: a body in a media type not taken
	Unavailable              // 503: not now, through no fault of the request
)

// Error is a domain error with a code and a message for people.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Field names the input field the error is about, when there is one:
	// the JSON API answers it as "field", the console shows the message
	// beside that field of the form.
	Field string
	// Details are extra fields for the JSON answer (e.g. "allowed").
	Details map[string]any
	// Also are more mistakes found in the same input, each about its own
	// field (see Join): a form shows them all at once, the JSON answer
	// lists every one under "errors".
	Also []*Error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// E returns an error of the given kind and code with a formatted message.
func E(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// With returns a copy of e carrying one more detail.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// In returns a copy of e about the input field named field.
func (e *Error) In(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// Join returns the first of the domain errors among errs with the
// others in its Also, so that one answer names every mistake of an
// input; nil when all are nil. A non-domain error wins outright.
func Join(errs ...error) error {
	var first *Error
	for _, err := range errs {
		if err == nil {
			continue
		}
		e, ok := As(err)
		if !ok {
			return err
		}
		if first == nil {
			c := *e
			first = &c
			continue
		}
		first.Also = append(first.Also, e)
	}
	if first == nil {
		return nil
	}
	return first
}

// FieldOf returns the field err is about, or "" when it names none.
func FieldOf(err error) string {
	if e, ok := As(err); ok {
		return e.Field
	}
	return ""
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	if err == nil {
		return nil, false // and errors.As is not asked: its target would escape
	}
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Body is err as every surface answers it, the object inside
// {"error": …}: a domain error's details, the field it is about, its code
// and its message. Anything else, an Internal error included, is only
// {"code":"internal","message":"Internal error."}: its detail is for the
// log, never the caller.
func Body(err error) map[string]any {
	e, ok := As(err)
	if !ok || e.Kind == Internal {
		return map[string]any{"code": "internal", "message": "Internal error."}
	}
	body := make(map[string]any, len(e.Details)+3)
	for k, v := range e.Details {
		body[k] = v
	}
	if e.Field != "" {
		body["field"] = e.Field
	}
	body["code"], body["message"] = e.Code, e.Message
	if len(e.Also) > 0 {
		all := make([]map[string]any, 0, len(e.Also)+1)
		for _, one := range append([]*Error{e}, e.Also...) {
			all = append(all, map[string]any{"field": one.Field, "code": one.Code, "message": one.Message})
		}
		body["errors"] = all
	}
	return body
}

// KindOf returns the kind of err: Internal unless err wraps an *Error.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return Internal
}

// CodeOf returns the code of err, or "internal" unless err wraps an *Error.
func CodeOf(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return "internal"
}
