package webtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/internal/testkit/apicheck"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/api"
)

// API is a real Madebook server (real SQLite, real services) served over
// loopback HTTP, with one person of each role and two agent keys.
type API struct {
	T   testing.TB
	Kit *testkit.Kit
	E   *echo.Echo
	Srv *httptest.Server
	// Log is what the server logged.
	Log *Log

	Viewer, Lead, Admin, Agent, Other                auth.Actor
	ViewerTok, LeadTok, AdminTok, AgentKey, OtherKey string
}

// NewAPI starts a real server on a fresh kit, with a viewer, a lead, an
// admin and two agent keys, logging to a.Log, closed when the test ends;
// opts configure the kit's governance services.
func NewAPI(t testing.TB, opts ...testkit.Option) *API {
	t.Helper()
	return NewAPIWith(t, func(*web.Deps) {}, opts...)
}

// NewAPIWith is NewAPI with the server's settings changed by set (its
// limits, e.g.) before it starts.
func NewAPIWith(t testing.TB, set func(*web.Deps), opts ...testkit.Option) *API {
	t.Helper()
	log := &Log{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	// The services log where the server does, as serve has them.
	kit := testkit.New(t, append([]testkit.Option{func(o *governance.Options) { o.Logger = logger }}, opts...)...)
	d := Deps(kit)
	d.Logger = logger
	set(&d)
	e := web.NewServer(d)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	a := &API{T: t, Kit: kit, E: e, Srv: srv, Log: log}
	a.Viewer, a.ViewerTok = kit.Person(auth.Viewer)
	a.Lead, a.LeadTok = kit.Lead()
	a.Admin, a.AdminTok = kit.Person(auth.Admin)
	a.Agent, a.AgentKey = kit.Agent()
	a.Other, a.OtherKey = kit.Agent()
	return a
}

// Session opens a fresh session of a.Agent on a fresh mission.
func (a *API) Session(highRisk bool) string {
	a.T.Helper()
	return a.Kit.Session(a.Agent, a.Kit.Mission(a.Lead, highRisk))
}

// Response is a response with its body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// RawBody is a request body sent byte for byte.
type RawBody string

// Do sends one request. body is nil (no body), a RawBody, url.Values (a
// form), or a value sent as JSON. token is the bearer secret ("" sends no Authorization).
func (a *API) Do(method, path, token string, body any) Response {
	a.T.Helper()
	return a.DoWith(method, path, token, body, nil)
}

// DoWith is Do with more headers (e.g. the Accept an MCP client sends).
func (a *API) DoWith(method, path, token string, body any, header http.Header) Response {
	a.T.Helper()
	var r io.Reader = http.NoBody
	switch b := body.(type) {
	case nil:
	case RawBody:
		r = strings.NewReader(string(b))
	case url.Values:
		r = strings.NewReader(b.Encode())
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			a.T.Fatal(err)
		}
		r = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, a.Srv.URL+path, r)
	if err != nil {
		a.T.Fatal(err)
	}
	switch body.(type) {
	case nil:
	case url.Values:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	default:
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return a.Send(req)
}

// Send sends a request as an API client does: redirects are answers.
// Every answer to a route the OpenAPI document describes is checked
// against it, and so is every request such a route accepted (a 2xx): a
// server and a document that disagree fail the test that saw it.
func (a *API) Send(req *http.Request) Response {
	a.T.Helper()
	var sent []byte
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			a.T.Fatal(err)
		}
		if sent, err = io.ReadAll(body); err != nil {
			a.T.Fatal(err)
		}
	}
	// A redirect is an answer: an API client must see it, not its target.
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		a.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.T.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	if contract := apicheck.New(a.T, api.OpenAPI); contract.Documents(req.Method, req.URL.Path) {
		contract.Response(a.T, req, sent, res.StatusCode, res.Header, b)
		if res.StatusCode < 300 {
			contract.Request(a.T, req, sent)
		}
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Must sends a request and fails the test unless the status is want. It
// returns the decoded JSON object.
func (a *API) Must(want int, method, path, token string, body any) map[string]any {
	a.T.Helper()
	r := a.Do(method, path, token, body)
	if r.Status != want {
		a.T.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, Short(r.Body))
	}
	return r.Object(a.T)
}

// Object decodes the body as a JSON object.
func (r Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// SnakeCase is what every error code looks like.
var SnakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// CheckJSONContentType fails unless the response says it is JSON.
func CheckJSONContentType(t testing.TB, r Response) {
	t.Helper()
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", r.Header.Get("Content-Type"))
	}
}

// CheckError fails unless r is an error answer of the contract's shape,
// {"error":{"code","message"}}, with the status and (when not "") the code.
func CheckError(t testing.TB, r Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d; body %s", r.Status, status, Short(r.Body))
	}
	CheckErrorShape(t, r)
	if code != "" {
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &env)
		if env.Error.Code != code {
			t.Errorf("error code %q, want %q; body %s", env.Error.Code, code, Short(r.Body))
		}
	}
}

// CheckErrorShape fails unless r is JSON {"error":{"code":snake_case,"message":sentence}}.
func CheckErrorShape(t testing.TB, r Response) {
	t.Helper()
	CheckJSONContentType(t, r)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Errorf("error body is not a JSON object: %v: %q", err, r.Body)
		return
	}
	if len(env) != 1 || env["error"] == nil {
		t.Errorf("error body must be exactly {\"error\":{…}}: %s", Short(r.Body))
		return
	}
	var e map[string]any
	if err := json.Unmarshal(env["error"], &e); err != nil {
		t.Errorf("\"error\" is not an object: %s", r.Body)
		return
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if !SnakeCase.MatchString(code) {
		t.Errorf("error code %q is not snake_case: %s", code, r.Body)
	}
	if strings.TrimSpace(msg) == "" {
		t.Errorf("error message is empty: %s", r.Body)
	}
	if strings.Contains(strings.ToLower(msg), "internal error") && r.Status < 500 {
		t.Errorf("a %d says internal error: %s", r.Status, r.Body)
	}
}

// BriefDelivers takes one brief of the session over REST with the agent
// key and returns how many resolutions it delivered. It does not touch
// a.T, so racing goroutines may call it; a failed brief is its error.
func (a *API) BriefDelivers(session string) (int, error) {
	body, err := json.Marshal(map[string]string{"session": session})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, a.Srv.URL+"/brief", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.AgentKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /brief: %s", res.Status)
	}
	var b struct {
		Resolutions []json.RawMessage `json:"resolutions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		return 0, fmt.Errorf("POST /brief: %w", err)
	}
	return len(b.Resolutions), nil
}

// CheckDeliveredOnce fails unless racing briefs of a session with one
// resolution, none of them failed, delivered it exactly once in total,
// and the session's timeline records one delivery.
func (a *API) CheckDeliveredOnce(session string, delivered int, failures []string) {
	a.T.Helper()
	if len(failures) > 0 {
		a.T.Fatalf("failed briefs: %v", failures)
	}
	if delivered != 1 {
		a.T.Errorf("the briefs delivered the resolution %d times, want exactly 1", delivered)
	}
	if n := CountOf(a.Timeline(session), "resolution.delivered"); n != 1 {
		a.T.Errorf("%d resolution.delivered events, want 1", n)
	}
}

// Detail returns the session as a lead sees it (GET /api/v1/sessions/{id}).
func (a *API) Detail(id string) map[string]any {
	a.T.Helper()
	return a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions/"+id, a.AdminTok, nil)
}

// DetailOf reads the session through the service, typed.
func (a *API) DetailOf(id string) governance.SessionDetail {
	a.T.Helper()
	r := a.Do(http.MethodGet, "/api/v1/sessions/"+id, a.AdminTok, nil)
	if r.Status != http.StatusOK {
		a.T.Fatalf("GET session %s: %d %s", id, r.Status, r.Body)
	}
	var d governance.SessionDetail
	if err := json.Unmarshal(r.Body, &d); err != nil {
		a.T.Fatalf("decode session: %v: %s", err, r.Body)
	}
	return d
}

// Snapshot is everything a refused call must leave unchanged: the session
// as the API shows it (when one is named), the missions, and the number of
// sessions, timeline events, runs, asks, tool calls and registered tools in
// the database.
func (a *API) Snapshot(session string) string {
	a.T.Helper()
	return a.snapshot(session, -1)
}

// snapshot is Snapshot; with kept >= 0 the session is decoded and
// encoded again with its last kept timeline events left out, and so are
// they of the count of events (the timeline is append-only: a test cannot
// take back the events it expects).
func (a *API) snapshot(session string, kept int) string {
	a.T.Helper()
	var b strings.Builder
	if session != "" {
		r := a.Do(http.MethodGet, "/api/v1/sessions/"+session, a.AdminTok, nil)
		body := r.Body
		if kept >= 0 && r.Status == http.StatusOK {
			var d map[string]any
			if err := json.Unmarshal(r.Body, &d); err != nil {
				a.T.Fatalf("decode session: %v: %s", err, r.Body)
			}
			if tl, ok := d["timeline"].([]any); ok && len(tl) >= kept {
				d["timeline"] = tl[:len(tl)-kept]
			}
			var err error
			if body, err = json.Marshal(d); err != nil {
				a.T.Fatal(err)
			}
		}
		fmt.Fprintf(&b, "%d %s\n", r.Status, body)
	}
	r := a.Do(http.MethodGet, "/api/v1/missions", a.AdminTok, nil)
	fmt.Fprintf(&b, "%d %s\n", r.Status, r.Body)
	for _, table := range []string{"sessions", "events", "missions", "runs", "asks", "tool_calls", "tools", "permission_prompts", "tasks", "plans",
		"blocked_changes", "violations", "scope_breaches"} {
		var n int
		if err := a.Kit.Store.Writer().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			a.T.Fatalf("count %s: %v", table, err)
		}
		if table == "events" && kept > 0 {
			n -= kept
		}
		fmt.Fprintf(&b, "%s=%d ", table, n)
	}
	return b.String()
}

// Timeline returns the kinds of the session's timeline events, in order.
func (a *API) Timeline(id string) []string {
	a.T.Helper()
	var kinds []string
	for _, e := range a.DetailOf(id).Timeline {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// CountOf counts the entries of list equal to s.
func CountOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// Short cuts a body for a failure message (a brief carries kilobytes of
// protocol text).
func Short(b []byte) string {
	const max = 400
	if len(b) <= max {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:max], len(b))
}

// Refused sends a request that must be refused with status and code, and
// fails if the session (or the database's row counts) changed.
func (a *API) Refused(session string, status int, code, method, path, token string, body any) {
	a.T.Helper()
	before := a.Snapshot(session)
	r := a.Do(method, path, token, body)
	CheckError(a.T, r, status, code)
	if after := a.Snapshot(session); after != before {
		a.T.Errorf("%s %s was refused but changed state:\nbefore %s\nafter  %s", method, path, before, after)
	}
}

// RefusedAndKept sends a tool call the executor gate must refuse with
// status and code, and fails unless the refusal wrote nothing of the call
// and kept the attempt: one tool_call.refused event in the session's
// timeline, naming the code.
func (a *API) RefusedAndKept(session string, status int, code, method, path, token string, body any) {
	a.T.Helper()
	before := a.snapshot(session, 0)
	r := a.Do(method, path, token, body)
	CheckError(a.T, r, status, code)
	var of, kind, detail string
	if err := a.Kit.SQL().QueryRow("SELECT session_id, kind, detail FROM events ORDER BY id DESC LIMIT 1").Scan(&of, &kind, &detail); err != nil {
		a.T.Fatalf("read the last event: %v", err)
	}
	if of != session || kind != "tool_call.refused" || !strings.Contains(detail, code) {
		a.T.Errorf("%s %s was refused but not kept: the last event is %s %q", method, path, kind, detail)
		return
	}
	if after := a.snapshot(session, 1); after != before {
		a.T.Errorf("%s %s was refused but changed more than its tool_call.refused event:\nbefore %s\nafter  %s", method, path, before, after)
	}
}
