package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document (openapi.json) that describes every
// JSON route Madebook serves: each operation's credential, request body,
// answers and errors. It is written by hand, served at
// GET /api/v1/openapi.json, and tests hold the routes and their answers to
// it (internal/testkit/apicheck).
//
//go:embed openapi.json
var OpenAPI []byte
