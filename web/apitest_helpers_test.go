package web_test

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
	"github.com/madebook/madebook/web"
)

// apiEnv is a real Madebook server (real SQLite, real services) served over
// loopback HTTP, with one person of each role and two agent keys.
type apiEnv struct {
	t   *testing.T
	kit *testkit.Kit
	e   *echo.Echo
	srv *httptest.Server

	viewer, lead, admin, agent, other                auth.Actor
	viewerTok, leadTok, adminTok, agentKey, otherKey string
}

func newAPIEnv(t *testing.T) *apiEnv {
	t.Helper()
	kit := testkit.New(t)
	e := web.NewServer(web.Deps{Auth: kit.Auth, Gov: kit.Gov, Ledger: kit.Ledger, Audit: kit.Audit, Health: kit.Store.Ping,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	a := &apiEnv{t: t, kit: kit, e: e, srv: srv}
	a.viewer, a.viewerTok = kit.Person(auth.Viewer)
	a.lead, a.leadTok = kit.Lead()
	a.admin, a.adminTok = kit.Person(auth.Admin)
	a.agent, a.agentKey = kit.Agent()
	a.other, a.otherKey = kit.Agent()
	return a
}

// session opens a fresh session of a.agent on a fresh mission.
func (a *apiEnv) session(highRisk bool) string {
	a.t.Helper()
	return a.kit.Session(a.agent, a.kit.Mission(a.lead, highRisk))
}

// apiResponse is a response with its body read.
type apiResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// rawBody is a request body sent byte for byte.
type rawBody string

// do sends one request. body is nil (no body), a rawBody, url.Values (a
// form), or a value sent as JSON. token is the bearer secret ("" sends no Authorization).
func (a *apiEnv) do(method, path, token string, body any) apiResponse {
	a.t.Helper()
	var r io.Reader = http.NoBody
	switch b := body.(type) {
	case nil:
	case rawBody:
		r = strings.NewReader(string(b))
	case url.Values:
		r = strings.NewReader(b.Encode())
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, r)
	if err != nil {
		a.t.Fatal(err)
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
	return a.send(req)
}

func (a *apiEnv) send(req *http.Request) apiResponse {
	a.t.Helper()
	// A redirect is an answer: an API client must see it, not its target.
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return apiResponse{Status: res.StatusCode, Header: res.Header, Body: b}
}

// must sends a request and fails the test unless the status is want. It
// returns the decoded JSON object.
func (a *apiEnv) must(want int, method, path, token string, body any) map[string]any {
	a.t.Helper()
	r := a.do(method, path, token, body)
	if r.Status != want {
		a.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, short(r.Body))
	}
	return r.object(a.t)
}

// object decodes the body as a JSON object.
func (r apiResponse) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkJSONContentType fails unless the response says it is JSON.
func checkJSONContentType(t testing.TB, r apiResponse) {
	t.Helper()
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", r.Header.Get("Content-Type"))
	}
}

// checkError fails unless r is an error answer of the contract's shape,
// {"error":{"code","message"}}, with the status and (when not "") the code.
func checkError(t testing.TB, r apiResponse, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d; body %s", r.Status, status, short(r.Body))
	}
	checkErrorShape(t, r)
	if code != "" {
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &env)
		if env.Error.Code != code {
			t.Errorf("error code %q, want %q; body %s", env.Error.Code, code, short(r.Body))
		}
	}
}

// checkErrorShape fails unless r is JSON {"error":{"code":snake_case,"message":sentence}}.
func checkErrorShape(t testing.TB, r apiResponse) {
	t.Helper()
	checkJSONContentType(t, r)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Errorf("error body is not a JSON object: %v: %q", err, r.Body)
		return
	}
	if len(env) != 1 || env["error"] == nil {
		t.Errorf("error body must be exactly {\"error\":{…}}: %s", short(r.Body))
		return
	}
	var e map[string]any
	if err := json.Unmarshal(env["error"], &e); err != nil {
		t.Errorf("\"error\" is not an object: %s", r.Body)
		return
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if !snakeCase.MatchString(code) {
		t.Errorf("error code %q is not snake_case: %s", code, r.Body)
	}
	if strings.TrimSpace(msg) == "" {
		t.Errorf("error message is empty: %s", r.Body)
	}
	if strings.Contains(strings.ToLower(msg), "internal") && r.Status < 500 {
		t.Errorf("a %d says internal error: %s", r.Status, r.Body)
	}
}

// detail returns the session as a lead sees it (GET /api/v1/sessions/{id}).
func (a *apiEnv) detail(id string) map[string]any {
	a.t.Helper()
	return a.must(http.StatusOK, http.MethodGet, "/api/v1/sessions/"+id, a.adminTok, nil)
}

// detailOf reads the session through the service, typed.
func (a *apiEnv) detailOf(id string) governance.SessionDetail {
	a.t.Helper()
	r := a.do(http.MethodGet, "/api/v1/sessions/"+id, a.adminTok, nil)
	if r.Status != http.StatusOK {
		a.t.Fatalf("GET session %s: %d %s", id, r.Status, r.Body)
	}
	var d governance.SessionDetail
	if err := json.Unmarshal(r.Body, &d); err != nil {
		a.t.Fatalf("decode session: %v: %s", err, r.Body)
	}
	return d
}

// snapshot is everything a refused call must leave unchanged: the session
// as the API shows it (when one is named), the missions, and the number of
// sessions, timeline events, runs, asks, tool calls and registered tools in
// the database.
func (a *apiEnv) snapshot(session string) string {
	a.t.Helper()
	var b strings.Builder
	if session != "" {
		r := a.do(http.MethodGet, "/api/v1/sessions/"+session, a.adminTok, nil)
		fmt.Fprintf(&b, "%d %s\n", r.Status, r.Body)
	}
	r := a.do(http.MethodGet, "/api/v1/missions", a.adminTok, nil)
	fmt.Fprintf(&b, "%d %s\n", r.Status, r.Body)
	for _, table := range []string{"sessions", "events", "missions", "runs", "asks", "tool_calls", "tools"} {
		var n int
		if err := a.kit.Store.Writer().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			a.t.Fatalf("count %s: %v", table, err)
		}
		fmt.Fprintf(&b, "%s=%d ", table, n)
	}
	return b.String()
}

// timeline returns the kinds of the session's timeline events, in order.
func (a *apiEnv) timeline(id string) []string {
	a.t.Helper()
	var kinds []string
	for _, e := range a.detailOf(id).Timeline {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// short cuts a body for a failure message (a brief carries kilobytes of
// protocol text).
func short(b []byte) string {
	const max = 400
	if len(b) <= max {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:max], len(b))
}
