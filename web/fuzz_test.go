package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/api"
	"github.com/madebook/madebook/web/mcp"
	"github.com/madebook/madebook/web/webtest"
)

// The fuzz targets of the HTTP surfaces: every JSON body (FuzzAPIBody,
// FuzzHookEndpoint), every path parameter (FuzzPathParameters) and every
// console form (FuzzConsoleForm), sent through the real server on a real
// database, built once per target. Each input gets a fresh world from the
// matrix's setup (a session, a gate, a run…), so what it refers to
// exists; a refusal must then leave the database as it was.
//
// Run one with, e.g.:
//
//	go test -run '^$' -fuzz '^FuzzAPIBody$' -fuzztime 10m -parallel 1 ./web/
//
// Plain `go test` runs the seeds below and the corpus in testdata/fuzz.

// sessionMark stands for the session a route's setup opened: a fuzzed body
// holding it refers to that session (a body naming a session cannot be
// guessed by the fuzzer).
const sessionMark = "@session"

// refMark stands for the gate a console form's setup opened.
const refMark = "@ref"

// bodyRoutes are the rows of the authorization matrix that take a JSON
// body: every POST, PUT, PATCH and DELETE of the JSON API, /brief and the
// Claude Code hook. The console's forms have FuzzConsoleForm; the MCP
// tools speak JSON-RPC through the MCP library, whose answers are not the
// API's, and are not fuzzed here.
func bodyRoutes() []routeCase {
	var out []routeCase
	for _, rc := range routeTable() {
		if rc.method != http.MethodGet && !rc.page && !rc.console && rc.mcp == "" && rc.path != mcp.Path {
			out = append(out, rc)
		}
	}
	return out
}

// allowedCaller is the first caller a route answers with a success: the
// caller whose request goes past authorization to the body.
func allowedCaller(rc routeCase) caller {
	for _, c := range callers[1:] {
		if s, ok := rc.want[c]; ok && s < 300 {
			return c
		}
	}
	return asAnonymous
}

// latestSession is the session opened last: the one a route's setup
// opened, when it opened one, whose rows a refusal must leave as they
// were ("" before the first).
func latestSession(a *webtest.API) string {
	// Every session's first event is session.created, and events are
	// numbered in order on both engines (sessions' text ids are not).
	rows := a.Kit.Rows(`SELECT session_id FROM events WHERE kind = 'session.created' ORDER BY id DESC LIMIT 1`)
	if len(rows) == 0 {
		return ""
	}
	return strings.TrimPrefix(rows[0], "session_id=")
}

// serve sends one request straight to the server's handler, in process.
func serve(a *webtest.API, method, path, token string, body []byte) webtest.Response {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	a.E.ServeHTTP(rec, req)
	return webtest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// checkAnswer fails on a 5xx, and on an error answer of a JSON route that
// is not {"error":{"code","message"}} with a snake_case code and a
// message; before and after are the database's fingerprints around the
// call, which a refusal must leave equal.
func checkAnswer(t *testing.T, r webtest.Response, page bool, before, after, what string) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s: status %d; body %s", what, r.Status, webtest.Short(r.Body))
	}
	if r.Status < 400 {
		return
	}
	if !page {
		webtest.CheckErrorShape(t, r)
	}
	if before != after {
		t.Fatalf("%s: a refusal (%d %s) changed the database:\nbefore %s\nafter  %s", what, r.Status, webtest.Short(r.Body), before, after)
	}
}

// openAPIExamples returns the request examples of the OpenAPI document,
// by "METHOD /path/:param" as echo names the route.
func openAPIExamples(tb testing.TB) map[string][][]byte {
	tb.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		tb.Fatal(err)
	}
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	out := map[string][][]byte{}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				RequestBody struct {
					Content map[string]struct {
						Example  json.RawMessage `json:"example"`
						Examples map[string]struct {
							Value json.RawMessage `json:"value"`
						} `json:"examples"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // "parameters" and the like
			}
			key := strings.ToUpper(method) + " " + param.ReplaceAllString(path, ":$1")
			for _, c := range op.RequestBody.Content {
				if c.Example != nil {
					out[key] = append(out[key], c.Example)
				}
				for _, e := range c.Examples {
					out[key] = append(out[key], e.Value)
				}
			}
		}
	}
	return out
}

// setupBody runs a route's setup for a seed and returns its body as JSON,
// with the session it names replaced by sessionMark.
func setupBody(tb testing.TB, a *webtest.API, rc routeCase) []byte {
	tb.Helper()
	_, body := rc.setup(a)
	session := latestSession(a)
	if body == nil {
		return []byte{}
	}
	b, err := json.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	if session != "" {
		b = bytes.ReplaceAll(b, []byte(session), []byte(sessionMark))
	}
	return b
}

// fuzzBodies is a JSON body target over routes: each input is the route's
// index and the body, sent as the route's caller to what the route's
// setup made.
func fuzzBodies(f *testing.F, routes []routeCase, seeds [][]byte) {
	a := webtest.NewAPI(f, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	examples := openAPIExamples(f)
	for i, rc := range routes {
		f.Add(uint8(i), setupBody(f, a, rc))
		for _, ex := range examples[rc.method+" "+rc.path] {
			f.Add(uint8(i), ex)
		}
	}
	for j, b := range seeds {
		f.Add(uint8(j%len(routes)), b)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		a.T, a.Kit.TB = t, t
		rc := routes[int(route)%len(routes)]
		path, _ := rc.setup(a)
		session := latestSession(a)
		if session != "" {
			body = bytes.ReplaceAll(body, []byte(sessionMark), []byte(session))
		}
		before := a.Kit.Fingerprint(session)
		r := serve(a, rc.method, path, tokenOf(a, allowedCaller(rc)), body)
		checkAnswer(t, r, false, before, a.Kit.Fingerprint(session), rc.method+" "+rc.path)
	})
}

// FuzzAPIBody sends fuzzed JSON bodies to every route of the JSON API that
// takes one, /brief and the hook endpoint, as the caller the route is for:
// never a 5xx, every refusal of the contract's shape and writing nothing.
func FuzzAPIBody(f *testing.F) {
	var seeds [][]byte
	for _, b := range oddBodies() {
		seeds = append(seeds, []byte(b.body))
	}
	fuzzBodies(f, bodyRoutes(), seeds)
}

// FuzzHookEndpoint sends fuzzed hook inputs to POST /hooks/claude-code as
// an agent, seeded with the payloads Claude Code sends (recorded in
// cmd/madebook/testdata/claude-code).
func FuzzHookEndpoint(f *testing.F) {
	var hook []routeCase
	for _, rc := range bodyRoutes() {
		if rc.path == "/hooks/:executor" {
			hook = append(hook, rc)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "cmd", "madebook", "testdata", "claude-code", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no recorded hook payloads: %v", err)
	}
	var seeds [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	fuzzBodies(f, hook, seeds)
}

// paramRoutes are the routes of the authorization matrix with a path
// parameter, of every surface (JSON API and console pages and forms).
func paramRoutes() []routeCase {
	var out []routeCase
	for _, rc := range routeTable() {
		if strings.Contains(rc.path, "/:") && rc.mcp == "" {
			out = append(out, rc)
		}
	}
	return out
}

// withParams puts values in place of the path parameters of concrete,
// the path the route's setup made for template: each value escaped as one
// path segment, the first parameter taking the first value, and so on.
func withParams(template, concrete string, values ...string) string {
	query := ""
	if i := strings.IndexByte(concrete, '?'); i >= 0 {
		concrete, query = concrete[:i], concrete[i:]
	}
	tsegs, csegs := strings.Split(template, "/"), strings.Split(concrete, "/")
	n := 0
	for i, s := range tsegs {
		if strings.HasPrefix(s, ":") && i < len(csegs) {
			csegs[i] = url.PathEscape(values[n%len(values)])
			n++
		}
	}
	return strings.Join(csegs, "/") + query
}

// FuzzPathParameters puts fuzzed strings in every path parameter (session
// ids, refs such as DEC-001, numeric ids, :report, :server/:tool, :slug,
// the Attention item's :kind/:session/:ref), each escaped as one path
// segment, with the body the route takes, as its caller (a signed-in
// admin for a console route): never a 5xx, every refusal of the JSON
// API's shape, and no refusal writes.
func FuzzPathParameters(f *testing.F) {
	a := webtest.NewAPI(f, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	admin := webtest.ConsoleAs(f, a.Srv.URL, a.Admin.Email)
	defaults := defaultPolicies(a) // before the seeds' setups add theirs
	routes := paramRoutes()
	// The seeds: what the route's setup makes (a real id), and the odd
	// values the path tests use.
	for i, rc := range routes {
		path, _ := rc.setup(a)
		tsegs, psegs := strings.Split(rc.path, "/"), strings.Split(strings.SplitN(path, "?", 2)[0], "/")
		var vals []string
		for j, s := range tsegs {
			if strings.HasPrefix(s, ":") && j < len(psegs) {
				v, err := url.PathUnescape(psegs[j])
				if err != nil {
					f.Fatal(err)
				}
				vals = append(vals, v)
			}
		}
		for len(vals) < 3 {
			vals = append(vals, vals[len(vals)-1])
		}
		f.Add(uint8(i), vals[0], vals[1], vals[2])
	}
	for j, odd := range []string{"\x00", " ", "%", "..", "../../etc/passwd", "ses_'; DROP TABLE sessions;--", strings.Repeat("x", 4000),
		"-1", "0", "1e9", "99999999999999999999999", "DEC-000", "DEC-", "DEC-99999999999999999999", "💩", "\xff", "PRM-1", "ask_", "run_"} {
		f.Add(uint8(j%len(routes)), odd, odd, odd)
	}
	// The target calls as these people and keys: a fuzzed id that
	// disabled, demoted or revoked one would turn every later input into a
	// sign-in redirect or a 401, so their ids are left alone (the route
	// and admin tests cover disabling and revoking). So are the default
	// policies' (defaults): the setup of /violations/:id/clear needs the
	// secrets policies to find its secret.
	protected := func(rc routeCase, v string) bool {
		id, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return false
		case strings.HasPrefix(rc.path, "/admin/users/:id/"):
			return id == a.Admin.UserID || id == a.Lead.UserID || id == a.Viewer.UserID
		case rc.path == "/admin/keys/:id/revoke":
			return id == a.Agent.KeyID || id == a.Other.KeyID
		case rc.path == "/admin/tokens/:id/revoke":
			return id <= 3 // the world's own tokens: webtest.NewAPI issues the viewer's, lead's and admin's first
		case strings.Contains(rc.path, "/policies/:id"):
			return slices.Contains(defaults, id)
		}
		return false
	}
	f.Fuzz(func(t *testing.T, route uint8, p1, p2, p3 string) {
		a.T, a.Kit.TB, admin.T = t, t, t
		rc := routes[int(route)%len(routes)]
		if protected(rc, p1) {
			t.Skip("the id of a caller the target needs")
		}
		concrete, body := rc.setup(a)
		session := latestSession(a)
		path := withParams(rc.path, concrete, p1, p2, p3)
		before := a.Kit.Fingerprint(session)
		var r webtest.Response
		if rc.console {
			var p webtest.Page
			if form, _ := body.(url.Values); rc.method == http.MethodPost {
				p = admin.Submit(path, form)
			} else {
				p = admin.Open(path)
			}
			r = webtest.Response{Status: p.Status, Header: p.Header, Body: []byte(p.Body)}
		} else {
			var b []byte
			if body != nil {
				var err error
				if b, err = json.Marshal(body); err != nil {
					t.Fatal(err)
				}
			}
			r = serve(a, rc.method, path, tokenOf(a, allowedCaller(rc)), b)
		}
		checkAnswer(t, r, rc.console || rc.page, before, a.Kit.Fingerprint(session), fmt.Sprintf("%s %q", rc.method, path))
	})
}

// defaultPolicies are the ids of the policies a fresh database has.
func defaultPolicies(a *webtest.API) []int64 {
	var ids []int64
	for _, row := range a.Kit.Rows(`SELECT id FROM policies`) {
		id, err := strconv.ParseInt(strings.TrimPrefix(row, "id="), 10, 64)
		if err != nil {
			a.T.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// consoleForm is one console form: its fields, the first four taking the
// fuzzed values, the rest a valid default.
type consoleForm struct {
	fields   []string
	defaults url.Values
}

// consoleForms are the fields of every form of the console, by route. Sign
// out (/logout, /logout/everywhere) is left out: it has no field but the
// CSRF token, and would end the session the target signs in with.
var consoleForms = map[string]consoleForm{
	"POST /login":                                        {fields: []string{"email", "password"}},
	"POST /decisions/resolve":                            {fields: []string{"resolution", "instruction", "refs"}},
	"POST /decisions/:ref/resolve":                       {fields: []string{"resolution", "instruction"}},
	"POST /sessions/:id/plan/approve":                    {fields: []string{"note"}},
	"POST /sessions/:id/plan/reject":                     {fields: []string{"note"}},
	"POST /sessions/:id/plan/modify":                     {fields: []string{"note"}},
	"POST /permissions/:id/answer":                       {fields: []string{"option"}},
	"POST /asks/:id/answer":                              {fields: []string{"option"}},
	"POST /sessions/:id/pause":                           {fields: []string{"reason", "back"}},
	"POST /sessions/:id/resume":                          {fields: []string{"back"}},
	"POST /sessions/:id/remediations":                    {fields: []string{"instruction", "files", "severity"}},
	"POST /remediations/:id/close":                       {fields: []string{"note"}},
	"POST /attention/items/:kind/:session/:ref/claim":    {fields: []string{"take_over"}},
	"POST /attention/items/:kind/:session/:ref/unclaim":  {},
	"POST /attention/items/:kind/:session/:ref/snooze":   {fields: []string{"for"}},
	"POST /attention/items/:kind/:session/:ref/unsnooze": {},
	"POST /sessions/:id/tasks/:task/acknowledge":         {},
	"POST /sessions/:id/tasks/:task/remediation":         {fields: []string{"instruction"}},
	"POST /missions/changes/:id":                         {fields: []string{"do", "note"}},
	"POST /violations/:id/clear":                         {fields: []string{"as", "note"}},
	"POST /missions":                                     {fields: []string{"slug", "title", "contract", "gate_ttl"}, defaults: url.Values{"text": {"Do the thing."}, "evidence": {"tests"}, "high_risk": {"on"}}},
	"POST /missions/:slug":                               {fields: []string{"title", "contract", "evidence", "gate_ttl"}, defaults: url.Values{"text": {"Do the thing."}, "two_person": {"on"}}},
	"POST /admin/users":                                  {fields: []string{"email", "role", "password"}},
	"POST /admin/users/:id/role":                         {fields: []string{"role"}},
	"POST /admin/users/:id/disable":                      {},
	"POST /admin/users/:id/enable":                       {},
	"POST /admin/keys":                                   {fields: []string{"name"}},
	"POST /admin/keys/:id/revoke":                        {},
	"POST /admin/tokens/:id/revoke":                      {},
	"POST /admin/policies":                               {fields: []string{"pattern", "kind", "name", "severity"}, defaults: url.Values{"action": {"violation"}}},
	"POST /admin/policies/:id/disable":                   {},
	"POST /admin/policies/:id/enable":                    {},
	"POST /admin/policies/:id/delete":                    {},
	"POST /admin/rules":                                  {fields: []string{"departures", "support", "total", "concern"}, defaults: url.Values{"chosen": {"react-query"}, "enforced": {"on"}}},
	"POST /admin/tools":                                  {fields: []string{"server", "tool", "side_effecting"}},
	"POST /admin/tools/delete":                           {fields: []string{"server", "tool"}},
	"POST /admin/webhooks":                               {fields: []string{"url", "secret", "events"}},
	"POST /admin/webhooks/:id/remove":                    {},
	"POST /admin/webhooks/:id/test":                      {},
}

// formRoutes are the console's forms: the matrix's console POST rows, but
// signing out.
func formRoutes(tb testing.TB) []routeCase {
	var out []routeCase
	for _, rc := range routeTable() {
		if !rc.console || rc.method != http.MethodPost || rc.signsOut {
			continue
		}
		if _, ok := consoleForms[rc.method+" "+rc.path]; !ok {
			tb.Fatalf("no fields for the form %s %s: add them to consoleForms", rc.method, rc.path)
		}
		out = append(out, rc)
	}
	return out
}

// FuzzConsoleForm submits every console form with fuzzed field values, as
// a signed-in admin with the session's CSRF token, to what the route's
// setup made: never a 5xx, and a refused form (4xx) leaves no row behind.
func FuzzConsoleForm(f *testing.F) {
	a := webtest.NewAPI(f, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	admin := webtest.ConsoleAs(f, a.Srv.URL, a.Admin.Email)
	routes := formRoutes(f)
	// Seeds: a valid form of each route, then the odd values.
	valid := map[string][]string{
		"email": {"new@example.com"}, "password": {"password-123"}, "resolution": {"Keep it."}, "instruction": {"Archive instead."},
		"refs": {refMark}, "note": {"ok"}, "option": {"1"}, "reason": {"wait"}, "back": {"/"}, "files": {"web/x.go"}, "severity": {"advisory"},
		"as": {"fixed"}, "slug": {"fuzz-seed"}, "title": {"T"}, "contract": {"forbid_path db/"}, "gate_ttl": {"24h"}, "evidence": {"tests"},
		"role": {"lead"}, "name": {"ci"}, "pattern": {"TODO"}, "kind": {"content_regex"}, "departures": {"redux-toolkit"},
		"support": {"3"}, "total": {"4"}, "concern": {"server state"}, "server": {"github"}, "tool": {"create_issue"},
		"side_effecting": {"true"}, "url": {"https://hooks.example.com/x"}, "secret": {"a-signing-secret-of-length"}, "events": {"hard_stop"},
		"do": {"approve"}, "take_over": {"1"}, "for": {"1h"},
	}
	for i, rc := range routes {
		form := consoleForms[rc.method+" "+rc.path]
		v := []string{"", "", "", ""}
		for j, field := range form.fields {
			if j < len(v) {
				v[j] = valid[field][0]
			}
		}
		f.Add(uint8(i), v[0], v[1], v[2], v[3])
	}
	for j, odd := range []string{"\x00", "\r\n", "\x1b[2J", "\u202e", "\xff", strings.Repeat("x", 5000), "-1", "1e999", "on", "false",
		"forbid_path\nmax_files_changed 99999999999999999999", "(a+)+$", "[", "https://", "//evil.example.com", "javascript:alert(1)"} {
		f.Add(uint8(j%len(routes)), odd, odd, odd, odd)
	}
	f.Fuzz(func(t *testing.T, route uint8, v1, v2, v3, v4 string) {
		a.T, a.Kit.TB, admin.T = t, t, t
		rc := routes[int(route)%len(routes)]
		path, body := rc.setup(a)
		session := latestSession(a)
		form := consoleForms[rc.method+" "+rc.path]
		// The fuzzed fields take the fuzzed values; the others keep the
		// matrix's valid form's.
		values := url.Values{}
		valid, _ := body.(url.Values)
		for k, vs := range valid {
			values[k] = vs
		}
		for k, vs := range form.defaults {
			values[k] = vs
		}
		// refMark stands for the gate the route's setup opened (the bulk
		// form's refs name it; the fuzzer cannot guess one).
		ref := valid.Get("refs")
		for j, field := range form.fields {
			if j < 4 {
				values.Set(field, strings.ReplaceAll([]string{v1, v2, v3, v4}[j], refMark, ref))
			}
		}
		fingerprint := func() string {
			fp := a.Kit.Fingerprint(session)
			if rc.path == "/login" {
				// A failed sign-in is written down by design: the
				// per-account and per-address limits count them.
				fp = regexp.MustCompile(`(?m)^login_failures=.*$`).ReplaceAllString(fp, "")
			}
			return fp
		}
		before := fingerprint()
		var p webtest.Page
		if rc.path == "/login" {
			// Signing in from the admin's browser would make it someone
			// else's: a sign-in comes from a browser of its own.
			p = webtest.NewClient(t, a.Srv.URL).Send(http.MethodPost, path, values)
		} else {
			p = admin.Submit(path, values)
		}
		r := webtest.Response{Status: p.Status, Header: p.Header, Body: []byte(p.Body)}
		checkAnswer(t, r, true, before, fingerprint(), fmt.Sprintf("%s %s %q", rc.method, path, values))
	})
}
