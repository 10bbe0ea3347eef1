package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

func TestMalformedJSONIs400AndWritesNothing(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	hr := a.Session(true)
	ctx := context.Background()
	if _, err := a.Kit.Gov.Plans.Propose(ctx, a.Agent, hr, governance.PlanInput{Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "T", Question: "Q?"})
	if err != nil {
		t.Fatal(err)
	}
	rem, err := a.Kit.Gov.Remediations.Request(ctx, a.Lead, id, governance.RemediationInput{Severity: "advisory", Instruction: "Tidy."})
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		path, token, session string
		bodyRequired         bool
	}
	targets := []target{
		{"/brief", a.AgentKey, id, true},
		{"/api/v1/missions", a.LeadTok, "", true},
		{"/api/v1/sessions", a.AgentKey, "", true},
		{"/api/v1/sessions/" + id + "/decisions", a.AgentKey, id, true},
		{"/api/v1/sessions/" + hr + "/plan", a.AgentKey, hr, true},
		{"/api/v1/sessions/" + hr + "/plan/approve", a.LeadTok, hr, false},
		{"/api/v1/sessions/" + hr + "/plan/reject", a.LeadTok, hr, false},
		{"/api/v1/sessions/" + id + "/pause", a.LeadTok, id, false},
		{"/api/v1/sessions/" + id + "/resume", a.LeadTok, id, false},
		{"/api/v1/sessions/" + id + "/remediations", a.LeadTok, id, true},
		{fmt.Sprintf("/api/v1/remediations/%d/close", rem.ID), a.LeadTok, id, false},
		{"/api/v1/decisions/" + d.Ref + "/resolve", a.LeadTok, id, true},
	}
	bodies := []struct{ name, body string }{
		{"a truncated object", `{"title":"Schema","question":"Drop`},
		{"an object cut after the colon", `{"session":`},
		{"a lone brace", `{`},
		{"trailing garbage after the object", `{"title":"T"} garbage`},
		{"two objects", `{}{}`},
		{"a trailing bracket", `{}]`},
		{"not JSON at all", `title=T&question=Q`},
		{"a single quote string", `{'title':'T'}`},
		{"a NaN", `{"support":NaN}`},
		{"a byte-order mark", "\ufeff{}"},
	}
	for _, tg := range targets {
		for _, b := range bodies {
			t.Run("POST "+tg.path+" with "+b.name+" is 400", func(t *testing.T) {
				a.T = t
				a.Refused(tg.session, http.StatusBadRequest, "malformed_json", http.MethodPost, tg.path, tg.token, webtest.RawBody(b.body))
			})
		}
		if tg.bodyRequired {
			t.Run("POST "+tg.path+" with an empty body is 400", func(t *testing.T) {
				a.T = t
				a.Refused(tg.session, http.StatusBadRequest, "malformed_json", http.MethodPost, tg.path, tg.token, webtest.RawBody(""))
				a.Refused(tg.session, http.StatusBadRequest, "malformed_json", http.MethodPost, tg.path, tg.token, nil)
			})
		}
	}
	a.T = t
}

func TestAnOptionalBodyMayBeEmpty(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	// The brake's body may be left out, but not its reason.
	a.Refused(id, http.StatusUnprocessableEntity, "reason_required", http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok, nil)
	a.Refused(id, http.StatusUnprocessableEntity, "reason_required", http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok,
		map[string]any{"reason": "   "})
	got := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok, map[string]any{"reason": "Hold."})
	if got["paused"] != true {
		t.Errorf("a pause with a reason did not pause: %v", got)
	}
	got = a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/resume", a.LeadTok, webtest.RawBody("  \n"))
	if got["paused"] != false {
		t.Errorf("a blank resume body did not resume: %v", got)
	}
}

func TestMissingOrWrongCredentialsAre401(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	headers := []struct{ name, value string }{
		{"no Authorization header", ""},
		{"a bare Bearer", "Bearer"},
		{"Bearer and spaces", "Bearer    "},
		{"Basic auth", "Basic " + a.AgentKey},
		{"the key without a scheme", a.AgentKey},
		{"an unknown agent key", "Bearer mbk_" + strings.Repeat("A", 43)},
		{"an unknown personal token", "Bearer mbt_" + strings.Repeat("A", 43)},
		{"a secret with no known prefix", "Bearer hunter2"},
		{"a key with one character changed", "Bearer " + a.AgentKey[:len(a.AgentKey)-1] + flip(a.AgentKey[len(a.AgentKey)-1])},
	}
	type call struct {
		method, path string
		body         any
	}
	calls := []call{
		{http.MethodPost, "/brief", map[string]string{"session": id}},
		{http.MethodGet, "/api/v1/missions", nil},
		{http.MethodGet, "/api/v1/sessions/" + id, nil},
		{http.MethodPost, "/api/v1/sessions/" + id + "/decisions", map[string]any{"title": "T", "question": "Q"}},
		{http.MethodPost, "/api/v1/sessions/" + id + "/pause", map[string]any{"reason": "r"}},
	}
	for _, h := range headers {
		for _, c := range calls {
			t.Run(c.method+" "+c.path+" with "+h.name+" is 401", func(t *testing.T) {
				a.T = t
				before := a.Snapshot(id)
				req, err := http.NewRequest(c.method, a.Srv.URL+c.path, strings.NewReader(fmt.Sprint(jsonOf(t, c.body))))
				if err != nil {
					t.Fatal(err)
				}
				if h.value != "" {
					req.Header.Set("Authorization", h.value)
				}
				r := a.Send(req)
				webtest.CheckError(t, r, http.StatusUnauthorized, "unauthorized")
				if after := a.Snapshot(id); after != before {
					t.Errorf("refused call changed state")
				}
			})
		}
	}
	a.T = t
	t.Run("the scheme is case-insensitive", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, a.Srv.URL+"/api/v1/missions", nil)
		req.Header.Set("Authorization", "bearer "+a.ViewerTok)
		if r := a.Send(req); r.Status != http.StatusOK {
			t.Errorf("lower-case bearer: %d %s", r.Status, r.Body)
		}
	})
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

func jsonOf(t *testing.T, v any) string {
	if v == nil {
		return ""
	}
	return string(mustJSON(t, v))
}

func TestForbiddenIs403AndWritesNothing(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	t.Run("another agent cannot read, brief, gate or plan a session", func(t *testing.T) {
		a.T = t
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodGet, "/api/v1/sessions/"+id, a.OtherKey, nil)
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, "/brief", a.OtherKey, map[string]string{"session": id})
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.OtherKey,
			map[string]any{"title": "T", "question": "Q"})
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/sessions/"+id+"/plan", a.OtherKey,
			map[string]any{"summary": "S"})
	})
	t.Run("a viewer cannot act on the queue", func(t *testing.T) {
		a.T = t
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.ViewerTok, map[string]any{"reason": "r"})
		a.Refused("", http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/missions", a.ViewerTok, map[string]any{"slug": "v", "title": "T"})
	})
	t.Run("a person cannot open a gate: gates opened by a person do not exist", func(t *testing.T) {
		a.T = t
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.LeadTok,
			map[string]any{"title": "T", "question": "Q"})
	})
	a.T = t
}

func TestNotFoundIs404(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	cases := []struct {
		name, method, path, token string
		body                      any
		code                      string
	}{
		{"GET an unknown session", http.MethodGet, "/api/v1/sessions/ses_nope", a.LeadTok, nil, "session_not_found"},
		{"brief on an unknown session", http.MethodPost, "/brief", a.AgentKey, map[string]string{"session": "ses_nope"}, "session_not_found"},
		{"open a gate on an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/decisions", a.AgentKey,
			map[string]any{"title": "T", "question": "Q"}, "session_not_found"},
		{"propose a plan on an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/plan", a.AgentKey,
			map[string]any{"summary": "S"}, "session_not_found"},
		{"pause an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/pause", a.LeadTok, map[string]any{"reason": "Hold."}, "session_not_found"},
		{"resume an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/resume", a.LeadTok, map[string]any{}, "session_not_found"},
		{"approve the plan of an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/plan/approve", a.LeadTok, map[string]any{}, "session_not_found"},
		{"request a remediation on an unknown session", http.MethodPost, "/api/v1/sessions/ses_nope/remediations", a.LeadTok,
			map[string]any{"severity": "required", "instruction": "x"}, "session_not_found"},
		{"resolve an unknown DEC ref", http.MethodPost, "/api/v1/decisions/DEC-999/resolve", a.LeadTok,
			map[string]any{"resolution": "r", "instruction": "i"}, "decision_not_found"},
		{"close an unknown remediation", http.MethodPost, "/api/v1/remediations/999999/close", a.LeadTok, map[string]any{}, "remediation_not_found"},
		{"close a remediation that is not a number", http.MethodPost, "/api/v1/remediations/abc/close", a.LeadTok, map[string]any{}, "remediation_not_found"},
		{"close a remediation with a huge id", http.MethodPost, "/api/v1/remediations/99999999999999999999999/close", a.LeadTok, map[string]any{}, "remediation_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.T = t
			a.Refused(id, http.StatusNotFound, c.code, c.method, c.path, c.token, c.body)
		})
	}
	a.T = t
}

func TestUnknownRoutesAre404(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	// Under the API's prefix every answer is the contract's JSON.
	api := []struct {
		name, method, path, token string
		want                      []int
	}{
		{"an unknown API path", http.MethodGet, "/api/v1/nope", a.LeadTok, []int{http.StatusNotFound}},
		{"an unknown API path, as an agent", http.MethodPost, "/api/v1/briefs", a.AgentKey, []int{http.StatusNotFound}},
		{"an unknown sub-resource", http.MethodPost, "/api/v1/sessions/ses_x/nope", a.LeadTok, []int{http.StatusNotFound}},
		{"the API root", http.MethodGet, "/api/v1", a.LeadTok, []int{http.StatusNotFound}},
		{"the API root with a slash", http.MethodGet, "/api/v1/", a.LeadTok, []int{http.StatusNotFound}},
		{"a known API path with the wrong method", http.MethodDelete, "/api/v1/missions", a.LeadTok,
			[]int{http.StatusNotFound, http.StatusMethodNotAllowed}},
		// The bearer check answers first: an anonymous caller learns
		// nothing about which API paths exist.
		{"an unknown API path without a token", http.MethodGet, "/api/v1/nope", "", []int{http.StatusUnauthorized}},
	}
	for _, c := range api {
		t.Run(c.name, func(t *testing.T) {
			a.T = t
			r := a.Do(c.method, c.path, c.token, nil)
			if !slices.Contains(c.want, r.Status) {
				t.Errorf("status %d, want one of %v; body %s", r.Status, c.want, webtest.Short(r.Body))
			}
			webtest.CheckErrorShape(t, r)
		})
	}
	a.T = t
	r := a.Do(http.MethodGet, "/api/v1/nope", a.AgentKey, nil)
	webtest.CheckError(t, r, http.StatusNotFound, "not_found")

	// Outside the API the console owns the paths: an unknown one is never
	// a success and never a server error, and a redirect goes to sign-in.
	for _, c := range []struct{ method, path, token string }{
		{http.MethodGet, "/nope", ""},
		{http.MethodPost, "/briefs", a.AgentKey},
		{http.MethodDelete, "/brief", a.AgentKey},
		{http.MethodGet, "/api/v2/missions", a.LeadTok},
	} {
		r := a.Do(c.method, c.path, c.token, nil)
		if r.Status < 300 || r.Status >= 500 {
			t.Errorf("%s %s: status %d; body %s", c.method, c.path, r.Status, webtest.Short(r.Body))
		}
		if loc := r.Header.Get("Location"); r.Status < 400 && !strings.HasPrefix(loc, "/login") {
			t.Errorf("%s %s: redirect to %q", c.method, c.path, loc)
		}
	}
}

func TestStateConflictsAre409(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	ctx := context.Background()

	t.Run("a gate resolves once: the second resolve is already_resolved and keeps the first answer", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, id, governance.DecisionInput{Title: "T", Question: "Q?"})
		if err != nil {
			t.Fatal(err)
		}
		path := "/api/v1/decisions/" + d.Ref + "/resolve"
		a.Must(http.StatusOK, http.MethodPost, path, a.LeadTok, map[string]string{"resolution": "Keep it.", "instruction": "Archive."})
		a.Refused(id, http.StatusConflict, "already_resolved", http.MethodPost, path, a.AdminTok,
			map[string]string{"resolution": "Drop it.", "instruction": "Drop."})
		got := a.DetailOf(id).Decisions
		if len(got) != 1 || got[0].Resolution != "Keep it." || got[0].Instruction != "Archive." {
			t.Errorf("the first resolution was not kept: %+v", got)
		}
	})
	t.Run("pausing a paused session is already_paused and keeps the first reason", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok, map[string]string{"reason": "first"})
		a.Refused(id, http.StatusConflict, "already_paused", http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok,
			map[string]string{"reason": "second"})
		if s := a.DetailOf(id); s.PauseReason != "first" {
			t.Errorf("pause reason %q, want first", s.PauseReason)
		}
	})
	t.Run("resuming a running session is not_paused", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		a.Refused(id, http.StatusConflict, "not_paused", http.MethodPost, "/api/v1/sessions/"+id+"/resume", a.LeadTok, map[string]any{})
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/pause", a.LeadTok, map[string]any{"reason": "Hold."})
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/resume", a.LeadTok, map[string]any{})
		a.Refused(id, http.StatusConflict, "not_paused", http.MethodPost, "/api/v1/sessions/"+id+"/resume", a.LeadTok, map[string]any{})
	})
	t.Run("approving or rejecting without a proposed plan is no_plan_proposed", func(t *testing.T) {
		a.T = t
		id := a.Session(true)
		for _, verb := range []string{"approve", "reject"} {
			a.Refused(id, http.StatusConflict, "no_plan_proposed", http.MethodPost, "/api/v1/sessions/"+id+"/plan/"+verb, a.LeadTok, map[string]any{})
		}
		a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/plan", a.AgentKey, map[string]any{"summary": "S"})
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/plan/approve", a.LeadTok, map[string]any{"note": "ok"})
		for _, verb := range []string{"approve", "reject"} {
			a.Refused(id, http.StatusConflict, "no_plan_proposed", http.MethodPost, "/api/v1/sessions/"+id+"/plan/"+verb, a.LeadTok, map[string]any{})
		}
		if p := a.DetailOf(id).Plan; p == nil || p.Status != "approved" {
			t.Errorf("plan = %+v, want approved", p)
		}
	})
	a.T = t
}

func TestInvalidContentIs422AndWritesNothing(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	ctx := context.Background()
	id := a.Session(false)
	decisions := "/api/v1/sessions/" + id + "/decisions"
	scope := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("dir%d/", i)
		}
		return s
	}
	d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, a.Session(false), governance.DecisionInput{Title: "T", Question: "Q?"})
	if err != nil {
		t.Fatal(err)
	}
	resolve := "/api/v1/decisions/" + d.Ref + "/resolve"
	cases := []struct {
		name, path, token, session string
		body                       any
		code                       string
	}{
		{"21 blocked scope entries", decisions, a.AgentKey, id,
			map[string]any{"title": "T", "question": "Q", "blocked_scope": scope(21)}, "too_many_entries"},
		{"21 allowed scope entries", decisions, a.AgentKey, id,
			map[string]any{"title": "T", "question": "Q", "allowed_scope": scope(21)}, "too_many_entries"},
		{"an empty scope entry", decisions, a.AgentKey, id,
			map[string]any{"title": "T", "question": "Q", "blocked_scope": []string{"db/", " "}}, "empty_entry"},
		{"an empty title", decisions, a.AgentKey, id, map[string]any{"title": "", "question": "Q"}, "title_required"},
		{"a blank title", decisions, a.AgentKey, id, map[string]any{"title": "  \t", "question": "Q"}, "title_required"},
		{"no question", decisions, a.AgentKey, id, map[string]any{"title": "T"}, "question_required"},
		{"a number for the title", decisions, a.AgentKey, id, webtest.RawBody(`{"title":5,"question":"Q"}`), "invalid_field"},
		{"a string for the scope list", decisions, a.AgentKey, id, webtest.RawBody(`{"title":"T","question":"Q","blocked_scope":"db/"}`), "invalid_field"},
		{"a list for the body", decisions, a.AgentKey, id, webtest.RawBody(`[]`), "invalid_body"},
		{"a string for the body", decisions, a.AgentKey, id, webtest.RawBody(`"x"`), "invalid_body"},
		{"an empty resolution", resolve, a.LeadTok, "", map[string]any{"resolution": "", "instruction": "Do it."}, "resolution_required"},
		{"an empty instruction", resolve, a.LeadTok, "", map[string]any{"resolution": "Yes.", "instruction": ""}, "instruction_required"},
		{"a blank instruction", resolve, a.LeadTok, "", map[string]any{"resolution": "Yes.", "instruction": " \n "}, "instruction_required"},
		{"an unknown severity", "/api/v1/sessions/" + id + "/remediations", a.LeadTok, id,
			map[string]any{"severity": "urgent", "instruction": "Fix it."}, "invalid_severity"},
		{"an empty remediation instruction", "/api/v1/sessions/" + id + "/remediations", a.LeadTok, id,
			map[string]any{"severity": "required", "instruction": ""}, "instruction_required"},
		{"an unknown mission", "/api/v1/sessions", a.AgentKey, "", map[string]any{"mission": "no-such-mission", "title": "T"}, "unknown_mission"},
		{"no mission", "/api/v1/sessions", a.AgentKey, "", map[string]any{"title": "T"}, "mission_required"},
		{"a session body of the wrong type", "/brief", a.AgentKey, id, webtest.RawBody(`{"session":5}`), "invalid_field"},
		{"a brief naming no session", "/brief", a.AgentKey, id, map[string]any{}, "session_required"},
		{"a bad mission slug", "/api/v1/missions", a.LeadTok, "", map[string]any{"slug": "Not A Slug", "title": "T"}, "invalid_slug"},
		{"a mission without a title", "/api/v1/missions", a.LeadTok, "", map[string]any{"slug": "ok-slug"}, "title_required"},
		{"a string for high_risk", "/api/v1/missions", a.LeadTok, "", webtest.RawBody(`{"slug":"ok-slug","title":"T","high_risk":"yes"}`), "invalid_field"},
		{"an unknown clause kind", "/api/v1/missions", a.LeadTok, "",
			map[string]any{"slug": "ok-slug", "title": "T", "contract": []map[string]string{{"kind": "forbid_everything", "value": "x"}}}, "invalid_clause"},
		{"a plan without a summary", "/api/v1/sessions/" + id + "/plan", a.AgentKey, id, map[string]any{}, "summary_required"},
		{"a plan step without an id", "/api/v1/sessions/" + id + "/plan", a.AgentKey, id,
			map[string]any{"summary": "S", "initial_steps": []map[string]any{{"tool": "x"}}}, "invalid_plan"},
		{"a plan step id that is a number", "/api/v1/sessions/" + id + "/plan", a.AgentKey, id,
			webtest.RawBody(`{"summary":"S","initial_steps":[{"id":1}]}`), "invalid_field"},
		{"a mission with a field no mission has", "/api/v1/missions", a.LeadTok, "",
			map[string]any{"slug": "ok-slug", "title": "T", "bogus_field": 1}, "unknown_field"},
		{"a plan wrapped in body, the shape of no request", "/api/v1/sessions/" + id + "/plan", a.AgentKey, id,
			map[string]any{"summary": "S", "body": map[string]any{"initial_steps": []map[string]any{{"id": "a"}}}}, "unknown_field"},
		{"a misspelt field in a plan step", "/api/v1/sessions/" + id + "/plan", a.AgentKey, id,
			map[string]any{"summary": "S", "initial_steps": []map[string]any{{"id": "a", "side_efecting": true}}}, "unknown_field"},
		{"a gate with a misspelt scope", decisions, a.AgentKey, id,
			map[string]any{"title": "T", "question": "Q", "blocked_scopes": []string{"db/"}}, "unknown_field"},
		{"a brief with a field it does not take", "/brief", a.AgentKey, id, map[string]any{"session": id, "sesion": id}, "unknown_field"},
	}
	for _, c := range cases {
		t.Run(c.name+" is 422 "+c.code, func(t *testing.T) {
			a.T = t
			a.Refused(c.session, http.StatusUnprocessableEntity, c.code, http.MethodPost, c.path, c.token, c.body)
		})
	}
	a.T = t

	t.Run("an unknown field is named in the message and in field", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodPost, "/api/v1/missions", a.LeadTok, map[string]any{"slug": "ok-slug", "title": "T", "bogus_field": 1})
		var body struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Field != "bogus_field" || !strings.Contains(body.Error.Message, `"bogus_field"`) {
			t.Errorf("error %+v, want it to name bogus_field", body.Error)
		}
	})
	t.Run("the refused resolves left the gate open", func(t *testing.T) {
		a.T = t
		got := a.DetailOf(d.Session)
		if len(got.Decisions) != 1 || got.Decisions[0].Status != "open" {
			t.Errorf("decisions %+v, want one open", got.Decisions)
		}
		if n := webtest.CountOf(a.Timeline(d.Session), "decision.resolved"); n != 0 {
			t.Errorf("%d decision.resolved events after refused resolves", n)
		}
	})
	t.Run("20 scope entries each are accepted", func(t *testing.T) {
		a.T = t
		got := a.Must(http.StatusCreated, http.MethodPost, decisions, a.AgentKey,
			map[string]any{"title": "T", "question": "Q", "blocked_scope": scope(20), "allowed_scope": scope(20)})
		if n := len(got["blocked_scope"].([]any)); n != 20 {
			t.Errorf("blocked_scope kept %d entries, want 20", n)
		}
	})
	a.T = t
	t.Run("the field named in a type error is the one that was wrong", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodPost, decisions, a.AgentKey, webtest.RawBody(`{"title":5,"question":"Q"}`))
		if !strings.Contains(string(r.Body), "title") {
			t.Errorf("the message does not name the field: %s", r.Body)
		}
	})
	a.T = t
}

// rawRequest writes an HTTP/1.1 request head to the server by hand, then
// the body from writeBody (in the background, ignoring write errors: the
// server may answer and close before reading it all), and returns the
// response.
func rawRequest(a *webtest.API, head string, writeBody func(io.Writer)) webtest.Response {
	a.T.Helper()
	u, _ := url.Parse(a.Srv.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		a.T.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		a.T.Fatal(err)
	}
	if writeBody != nil {
		go writeBody(conn)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		a.T.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.T.Fatalf("read response body: %v", err)
	}
	return webtest.Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// bigTitle is a decision body whose title makes it exactly n bytes long.
func bigTitle(n int) string {
	const head, tail = `{"question":"Q","title":"`, `"}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

func TestBodyOver1MiBIs413(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/decisions"
	head := func(extra string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: madebook\r\nAuthorization: Bearer " + a.AgentKey +
			"\r\nContent-Type: application/json\r\n" + extra + "\r\n"
	}

	t.Run("a declared Content-Length over 1 MiB is refused before the body is read", func(t *testing.T) {
		a.T = t
		before := a.Snapshot(id)
		// The body is never sent: the server must answer from the header.
		r := rawRequest(a, head(fmt.Sprintf("Content-Length: %d\r\n", web.MaxBody+1)), nil)
		webtest.CheckError(t, r, http.StatusRequestEntityTooLarge, "body_too_large")
		if a.Snapshot(id) != before {
			t.Error("a 413 changed state")
		}
	})
	t.Run("a Content-Length body over 1 MiB sent in full is refused", func(t *testing.T) {
		a.T = t
		before := a.Snapshot(id)
		body := bigTitle(web.MaxBody + 1)
		r := rawRequest(a, head(fmt.Sprintf("Content-Length: %d\r\n", len(body))), func(w io.Writer) { _, _ = io.WriteString(w, body) })
		webtest.CheckError(t, r, http.StatusRequestEntityTooLarge, "body_too_large")
		if a.Snapshot(id) != before {
			t.Error("a 413 changed state")
		}
	})
	t.Run("a chunked body over 1 MiB is refused while reading", func(t *testing.T) {
		a.T = t
		before := a.Snapshot(id)
		body := bigTitle(web.MaxBody + 1)
		r := rawRequest(a, head("Transfer-Encoding: chunked\r\n"), func(w io.Writer) {
			const chunk = 32 << 10
			for i := 0; i < len(body); i += chunk {
				part := body[i:min(i+chunk, len(body))]
				if _, err := fmt.Fprintf(w, "%x\r\n%s\r\n", len(part), part); err != nil {
					return
				}
			}
			_, _ = io.WriteString(w, "0\r\n\r\n")
		})
		webtest.CheckError(t, r, http.StatusRequestEntityTooLarge, "body_too_large")
		if a.Snapshot(id) != before {
			t.Error("a 413 changed state")
		}
	})
	t.Run("a body of exactly 1 MiB is read, and judged on its content", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodPost, path, a.AgentKey, webtest.RawBody(bigTitle(web.MaxBody)))
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "title_too_long")
	})
	a.T = t
}

// A body cut short of its Content-Length (the client stops sending) is a
// 400, on the brief's fast path as on any call, and writes nothing.
func TestBodyShorterThanItsLengthIs400(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	for _, path := range []string{"/brief", "/api/v1/sessions/" + id + "/decisions"} {
		t.Run(path, func(t *testing.T) {
			a.T = t
			before := a.Snapshot(id)
			body := `{"session":"` + id + `"}`
			head := "POST " + path + " HTTP/1.1\r\nHost: madebook\r\nAuthorization: Bearer " + a.AgentKey +
				"\r\nContent-Type: application/json\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)+10)
			r := rawRequest(a, head, func(w io.Writer) {
				_, _ = io.WriteString(w, body)
				_ = w.(*net.TCPConn).CloseWrite()
			})
			webtest.CheckError(t, r, http.StatusBadRequest, "malformed_json")
			if a.Snapshot(id) != before {
				t.Error("a cut-short body changed state")
			}
		})
	}
	a.T = t
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
