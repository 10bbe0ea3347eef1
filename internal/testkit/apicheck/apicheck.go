// Package apicheck holds HTTP tests to an OpenAPI 3.1 document: a request
// or a response that the document does not describe fails the test, and so
// does a route the document lacks or an operation no route serves.
//
// Build one Checker per document with New (it is built once per process
// and shared), then check what a test sends and gets:
//
//	c := apicheck.New(t, api.OpenAPI)
//	c.Request(t, req, body)                                  // only for requests meant to be valid
//	c.Response(t, req, body, res.StatusCode, res.Header, out) // for every answer, 4xx included
//
// A test of a deliberately invalid request (a 400 or a 422) checks only
// the response: the error it gets must still be one the document lists.
// Requests to addresses the document does not describe (a test of the
// 404 for unknown paths) cannot be checked at all.
package apicheck

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Checker validates requests, responses and routes against one document.
// It is safe for concurrent use by parallel tests.
type Checker struct {
	v     validator.Validator
	model *v3.Document
}

// Route is one route a server serves: an HTTP method and a path in echo's
// syntax, e.g. {"GET", "/api/v1/sessions/:id"}.
type Route struct{ Method, Path string }

// built is a document parsed and made into a validator, once.
type built struct {
	once sync.Once
	c    *Checker
	err  error
}

// checkers caches one built Checker per document (keyed by its SHA-256),
// so that hundreds of tests share one parse.
var checkers sync.Map

// New returns the Checker for doc, parsing and building it on the first
// call for this document only. A document that does not parse or build as
// OpenAPI 3.1 stops the test.
func New(tb testing.TB, doc []byte) *Checker {
	tb.Helper()
	b, _ := checkers.LoadOrStore(sha256.Sum256(doc), &built{})
	entry := b.(*built)
	entry.once.Do(func() { entry.c, entry.err = build(doc) })
	if entry.err != nil {
		tb.Fatalf("apicheck: %v", entry.err)
	}
	return entry.c
}

func build(doc []byte) (*Checker, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI document does not parse: %w", err)
	}
	if v := d.GetSpecInfo().Version; !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("the document is OpenAPI %q, not 3.1", v)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI document does not build: %w", err)
	}
	// Formats are asserted: a time that is not RFC 3339 fails like a
	// wrong type does.
	v, errs := validator.NewValidator(d, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("no validator for the document: %w", errors.Join(errs...))
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("the document is not valid OpenAPI:\n%s", describe(verrs))
	}
	return &Checker{v: v, model: &m.Model}, nil
}

// Request fails the test unless the request — its path, method, query,
// credential and body (nil for none) — is one the document describes.
// Use it only for requests meant to be valid.
func (c *Checker) Request(tb testing.TB, r *http.Request, body []byte) {
	tb.Helper()
	if ok, errs := c.v.ValidateHttpRequestSync(withBody(r, body)); !ok {
		tb.Errorf("apicheck: the request %s %s does not match the OpenAPI document:\n%s\nrequest body: %s",
			r.Method, r.URL.Path, describe(errs), excerpt(body))
	}
}

// Response fails the test unless the document lists the status for the
// request's operation and the body matches that answer's schema. reqBody is
// the request's body (nil for none); only the response is checked, so a
// deliberately invalid request may be given.
func (c *Checker) Response(tb testing.TB, r *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) {
	tb.Helper()
	req := withBody(r, reqBody)
	res := &http.Response{StatusCode: status, Header: header.Clone(), Request: req,
		Body: io.NopCloser(bytes.NewReader(respBody)), ContentLength: int64(len(respBody))}
	if res.Header == nil {
		res.Header = http.Header{}
	}
	if ok, errs := c.v.ValidateHttpResponse(req, res); !ok {
		tb.Errorf("apicheck: the %d answer to %s %s does not match the OpenAPI document:\n%s\nresponse body: %s",
			status, r.Method, r.URL.Path, describe(errs), excerpt(respBody))
	}
}

// Routes fails the test for every route the document does not describe
// and every operation in the document that no route serves. Paths are in
// echo's syntax (`:id`), which is compared as the document's `{id}`.
// Echo's RouteNotFound entries (which e.Routes() lists for a group) are
// not routes a client calls, and are skipped.
func (c *Checker) Routes(tb testing.TB, routes []Route) {
	tb.Helper()
	served := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound {
			continue
		}
		served[strings.ToUpper(r.Method)+" "+openAPIPath(r.Path)] = true
	}
	documented := map[string]bool{}
	if c.model.Paths != nil {
		for path, item := range c.model.Paths.PathItems.FromOldest() {
			for method := range item.GetOperations().FromOldest() {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	var undocumented, unserved []string
	for k := range served {
		if !documented[k] {
			undocumented = append(undocumented, k)
		}
	}
	for k := range documented {
		if !served[k] {
			unserved = append(unserved, k)
		}
	}
	slices.Sort(undocumented)
	slices.Sort(unserved)
	if len(undocumented) > 0 {
		tb.Errorf("apicheck: routes the OpenAPI document does not describe:\n\t%s", strings.Join(undocumented, "\n\t"))
	}
	if len(unserved) > 0 {
		tb.Errorf("apicheck: operations in the OpenAPI document that no route serves:\n\t%s", strings.Join(unserved, "\n\t"))
	}
}

// Documents reports whether the document describes the operation that
// answers method and path (a concrete path, e.g. /api/v1/sessions/ses_1).
func (c *Checker) Documents(method, path string) bool {
	if c.model.Paths == nil {
		return false
	}
	for template, item := range c.model.Paths.PathItems.FromOldest() {
		if !pathMatches(template, path) {
			continue
		}
		for m := range item.GetOperations().FromOldest() {
			if strings.EqualFold(m, method) {
				return true
			}
		}
	}
	return false
}

// pathMatches reports whether a concrete path fits a template such as
// /api/v1/sessions/{id}: the same segments, a {parameter} standing for
// any one non-empty segment.
func pathMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		isParam := strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")
		if (isParam && ps[i] == "") || (!isParam && t != ps[i]) {
			return false
		}
	}
	return true
}

// openAPIPath turns echo's `/sessions/:id` into `/sessions/{id}`.
func openAPIPath(echoPath string) string {
	segs := strings.Split(echoPath, "/")
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

// withBody returns a copy of r whose body reads body from the start, so
// that a request already sent (or a body already read) can be validated.
func withBody(r *http.Request, body []byte) *http.Request {
	req := r.Clone(r.Context())
	req.Body, req.ContentLength = http.NoBody, 0
	// A body of nothing but white space is no body: JSON has no value there.
	if len(bytes.TrimSpace(body)) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return req
}

// describe renders the validator's errors, one per line, with the field
// each schema failure is about.
func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\t- %s", e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			fmt.Fprintf(&b, ": %s", e.Reason)
		}
		b.WriteByte('\n')
		for _, f := range e.SchemaValidationErrors {
			at := f.FieldPath
			if at == "" {
				at = "/" + strings.Join(f.InstancePath, "/")
			}
			reason := f.Reason
			if reason == "false schema" { // what unevaluatedProperties: false says
				reason = "a property the document does not describe"
			}
			fmt.Fprintf(&b, "\t    at %s: %s\n", at, reason)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// excerpt is the start of a body, for a failure message.
func excerpt(body []byte) string {
	const max = 600
	if body == nil {
		return "(none)"
	}
	if len(body) > max {
		return string(body[:max]) + "…"
	}
	return string(body)
}
