package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// oddBodies are bodies no well-behaved client sends. Each must get a clear
// answer below 500: bad input is never the server's fault.
func oddBodies() []struct{ name, body string } {
	deepArrays := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepObjects := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	manyFiles := make([]string, 101)
	for i := range manyFiles {
		manyFiles[i] = fmt.Sprintf("%q", fmt.Sprintf("f%d.go", i))
	}
	return []struct{ name, body string }{
		{"null", `null`},
		{"an empty list", `[]`},
		{"a string", `"x"`},
		{"a number", `123`},
		{"true", `true`},
		{"an empty object", `{}`},
		{"a null session", `{"session":null}`},
		{"a numeric session", `{"session":123}`},
		{"an object session", `{"session":{}}`},
		{"a very long session", `{"session":"` + strings.Repeat("x", 100_000) + `"}`},
		{"a session that is SQL", `{"session":"ses_'; DROP TABLE sessions;--"}`},
		{"deeply nested lists", deepArrays},
		{"deeply nested objects", deepObjects},
		{"deeply nested value in a known field", `{"title":` + deepArrays + `}`},
		{"a NUL and a lone surrogate", `{"title":"\u0000","question":"\ud800","summary":"\u0000","reason":"\u0000"}`},
		{"invalid UTF-8", "{\"title\":\"\xff\xfe\",\"question\":\"\xc3\"}"},
		{"duplicate keys", `{"title":"a","title":"b","question":"q"}`},
		{"nulls in a list", `{"title":"T","question":"Q","blocked_scope":[null,null]}`},
		{"numbers in a list", `{"title":"T","question":"Q","blocked_scope":[1,2]}`},
		{"a huge number", `{"support":1e999,"high_risk":1e999}`},
		{"a negative id in a plan", `{"summary":"S","stopping_points":[{"id":-1,"title":"t","options":{"1":{"label":"x"}}}]}`},
		{"a float stopping point id", `{"summary":"S","stopping_points":[{"id":1.5}]}`},
		{"an overflowing stopping point id", `{"summary":"S","stopping_points":[{"id":1e400}]}`},
		{"a stopping point without options", `{"summary":"S","stopping_points":[{"id":1,"title":"t"}]}`},
		{"an option with an empty key", `{"summary":"S","stopping_points":[{"id":1,"title":"t","options":{"":{"label":""}}}]}`},
		{"duplicate step ids", `{"summary":"S","initial_steps":[{"id":"a"},{"id":"a"}]}`},
		{"a step of the wrong type", `{"summary":"S","initial_steps":["a"]}`},
		{"side_effecting as a string", `{"summary":"S","initial_steps":[{"id":"a","side_effecting":"yes"}]}`},
		{"a contract clause with no value", `{"slug":"odd-1","title":"T","contract":[{"kind":"forbid_path","value":""}]}`},
		{"max_files_changed past int", `{"slug":"odd-2","title":"T","contract":[{"kind":"max_files_changed","value":"99999999999999999999"}]}`},
		{"evidence of the wrong type", `{"slug":"odd-3","title":"T","evidence":{"a":1}}`},
		{"a mission path", `{"mission":"../../etc/passwd"}`},
		{"too many remediation files", `{"severity":"required","instruction":"x","files":[` + strings.Join(manyFiles, ",") + `]}`},
		{"an empty remediation file", `{"severity":"advisory","instruction":"x","files":[""]}`},
		{"severity of the wrong type", `{"severity":1,"instruction":"x"}`},
		{"an extremely long reason", `{"reason":"` + strings.Repeat("r", 10_000) + `","note":"` + strings.Repeat("n", 10_000) + `"}`},
		{"an extremely long resolution", `{"resolution":"` + strings.Repeat("r", 10_000) + `","instruction":"i"}`},
		{"unknown fields only", `{"zzz":1,"yyy":[{}]}`},
		{"whitespace only", " \n\t "},
	}
}

// TestOddBodiesNeverGet500 sends every odd body to every POST and PATCH route, as the
// caller the route is for, and checks the answer is below 500 and, when an
// error, of the contract's shape. The server must stay healthy afterwards.
func TestOddBodiesNeverGet500(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	ctx := context.Background()
	posts := 0
	for _, rc := range routeTable() {
		if rc.method == http.MethodGet || rc.mcp != "" { // the MCP tools' calls are one route's bodies: its row has them
			continue
		}
		posts++
		for _, b := range oddBodies() {
			for _, tok := range []struct{ name, token string }{{"its caller", ""}, {"the wrong caller", a.ViewerTok}} {
				if rc.console && tok.token != "" {
					continue // a console route treats every bearer caller alike
				}
				t.Run(fmt.Sprintf("%s %s with %s as %s", rc.method, rc.path, b.name, tok.name), func(t *testing.T) {
					a.T = t
					path, _ := rc.setup(a)
					token := tok.token
					if token == "" {
						for _, c := range callers[1:] {
							if s, ok := rc.want[c]; ok && s < 300 {
								token = tokenOf(a, c)
								break
							}
						}
					}
					r := a.Do(rc.method, path, token, webtest.RawBody(b.body))
					if r.Status >= 500 {
						t.Fatalf("status %d for bad input; body %s", r.Status, webtest.Short(r.Body))
					}
					if rc.page || rc.console {
						return // a console form answers in HTML
					}
					webtest.CheckJSONContentType(t, r)
					if r.Status >= 400 {
						webtest.CheckErrorShape(t, r)
					}
				})
			}
		}
	}
	a.T = t
	if posts < 10 {
		t.Fatalf("only %d POST or PATCH routes found in the route table", posts)
	}
	a.Must(http.StatusOK, http.MethodGet, "/healthz", "", nil)
	// The database is still whole: a session can still be opened and briefed.
	id := a.Session(false)
	if _, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "T", Question: "Q?"}); err != nil {
		t.Fatal(err)
	}
	got := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]string{"session": id})
	if got["next_action"] != "DECISION_REQUIRED" {
		t.Errorf("next_action %v after the odd bodies", got["next_action"])
	}
}

// TestOddPathParametersNeverGet500 puts odd values where a route takes an
// id or a reference.
func TestOddPathParametersNeverGet500(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t, testkit.WithLoopbackWebhooks) // the route table's webhook receiver is on 127.0.0.1
	odd := []string{"%00", "%20", "%25", "..", "%2e%2e%2fetc", "ses_%27%3B%20DROP%20TABLE%20sessions%3B--",
		strings.Repeat("x", 4000), "-1", "0", "1e9", "99999999999999999999999", "DEC-000", "DEC-", "%F0%9F%92%A9", "%ff"}
	templates := []struct{ method, path, token string }{
		{http.MethodGet, "/api/v1/sessions/%s", a.LeadTok},
		{http.MethodGet, "/api/v1/sessions/%s", a.AgentKey},
		{http.MethodPost, "/api/v1/sessions/%s/decisions", a.AgentKey},
		{http.MethodPost, "/api/v1/sessions/%s/plan", a.AgentKey},
		{http.MethodPost, "/api/v1/sessions/%s/plan/approve", a.LeadTok},
		{http.MethodPost, "/api/v1/sessions/%s/plan/reject", a.LeadTok},
		{http.MethodPost, "/api/v1/sessions/%s/pause", a.LeadTok},
		{http.MethodPost, "/api/v1/sessions/%s/resume", a.LeadTok},
		{http.MethodPost, "/api/v1/sessions/%s/remediations", a.LeadTok},
		{http.MethodPost, "/api/v1/remediations/%s/close", a.LeadTok},
		{http.MethodPost, "/api/v1/decisions/%s/resolve", a.LeadTok},
	}
	body := map[string]any{"title": "T", "question": "Q", "summary": "S", "severity": "advisory",
		"instruction": "I", "resolution": "R"}
	for _, tp := range templates {
		for _, p := range odd {
			path := fmt.Sprintf(tp.path, p)
			req, err := http.NewRequest(tp.method, a.Srv.URL+path, strings.NewReader(string(mustJSON(t, body))))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tp.token)
			req.Header.Set("Content-Type", "application/json")
			r := a.Send(req)
			if r.Status >= 500 {
				t.Errorf("%s %s: status %d; body %s", tp.method, webtest.Short([]byte(path)), r.Status, webtest.Short(r.Body))
				continue
			}
			if r.Status >= 400 {
				webtest.CheckErrorShape(t, r)
			}
		}
	}
}
