package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// errorField returns a field of the error object of an error answer.
func errorField(t testing.TB, r webtest.Response, field string) any {
	t.Helper()
	e, _ := r.Object(t)["error"].(map[string]any)
	return e[field]
}

// openRun starts a run of a.Agent over HTTP and returns its id.
func openRun(a *webtest.API, session, name string) string {
	a.T.Helper()
	r := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+session+"/runs", a.AgentKey, map[string]any{"name": name})
	id, _ := r["id"].(string)
	if id == "" {
		a.T.Fatalf("run without an id: %v", r)
	}
	return id
}

// askOn parks the run on the seed's question over HTTP and returns the ask.
func askOn(a *webtest.API, run string) string {
	a.T.Helper()
	r := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/asks", a.AgentKey, map[string]any{
		"prompt": "save this reading?", "options": map[string]string{"1": "Yes", "2": "No"}})
	id, _ := r["id"].(string)
	if id == "" || r["run_status"] != "parked" {
		a.T.Fatalf("ask: %v", r)
	}
	return id
}

// attentionAsks returns the refs of the ask items in the Attention queue.
func attentionAsks(a *webtest.API) []string {
	a.T.Helper()
	items, _ := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)["items"].([]any)
	var refs []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["kind"] == "ask" {
			refs = append(refs, fmt.Sprint(m["ref"]))
		}
	}
	return refs
}

// TestAParkedRunOverHTTP walks the seed's graph-ask-demo through the API:
// the probes run, the run parks at "save this reading?", nothing that
// writes gets past the question, a lead answers, and the run resumes from
// the outcome it parked from and may then end.
func TestAParkedRunOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)

	r := a.Do(http.MethodPost, "/api/v1/sessions/"+sess+"/runs", a.AgentKey, map[string]any{"name": "graph-ask-demo"})
	if r.Status != http.StatusCreated {
		t.Fatalf("start run: %d %s", r.Status, r.Body)
	}
	webtest.CheckJSONContentType(t, r)
	started := r.Object(t)
	run, _ := started["id"].(string)
	if run == "" || started["status"] != "running" || started["session"] != sess {
		t.Fatalf("start run: %v, want {\"id\",\"status\":\"running\"}", started)
	}

	t.Log("an admin classifies the probes as read-only; they are recorded as not side-effecting")
	for _, tool := range []string{"get_cpu_info", "get_memory_info"} {
		a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/mcp-monitor/"+tool, a.AdminTok, map[string]any{"side_effecting": false})
	}
	for _, tool := range []string{"get_cpu_info", "get_memory_info"} {
		c := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
			"server": "mcp-monitor", "tool": tool, "side_effecting": false})
		if c["side_effecting"] != false || c["run"] != run {
			t.Errorf("probe %s: %v", tool, c)
		}
	}

	t.Log("the run asks, and is parked in the same call")
	r = a.Do(http.MethodPost, "/api/v1/runs/"+run+"/asks", a.AgentKey, map[string]any{
		"prompt": "save this reading?", "options": map[string]string{"1": "Yes", "2": "No"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("ask: %d %s", r.Status, r.Body)
	}
	asked := r.Object(t)
	ask, _ := asked["id"].(string)
	if ask == "" || asked["run_status"] != "parked" || asked["parked_from"] != "running" {
		t.Fatalf("ask: %v, want {\"id\",\"run_status\":\"parked\"}", asked)
	}
	if refs := attentionAsks(a); !strings.Contains(strings.Join(refs, " "), ask) {
		t.Errorf("the Attention queue does not list the parked ask %s: %v", ask, refs)
	}

	t.Log("a run holding a question is never terminal")
	for _, status := range []string{"complete", "partial", "blocked", "failed", "cancelled"} {
		r := a.Do(http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey, map[string]string{"status": status})
		webtest.CheckError(t, r, http.StatusConflict, "run_has_open_ask")
		if got := errorField(t, r, "ask"); got != ask {
			t.Errorf("run_has_open_ask names ask %v, want %s: %s", got, ask, r.Body)
		}
	}
	a.Refused(sess, http.StatusConflict, "run_has_open_ask", http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey,
		map[string]string{"status": "complete"})

	t.Log("memory_store must wait for the answer, whether it says it writes, says it only reads, or nobody classified it")
	for _, body := range []map[string]any{
		{"server": "Vodou-Recall", "tool": "memory_store"},
		{"server": "Vodou-Recall", "tool": "memory_store", "side_effecting": true},
		{"server": "Vodou-Recall", "tool": "memory_store", "side_effecting": false},
	} {
		r := a.Do(http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, body)
		webtest.CheckError(t, r, http.StatusConflict, "run_parked")
		if got := errorField(t, r, "ask"); got != ask {
			t.Errorf("run_parked names ask %v, want %s: %s", got, ask, r.Body)
		}
		a.RefusedAndKept(sess, http.StatusConflict, "run_parked", http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, body)
	}
	t.Log("a read-only probe on the parked run is accepted")
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
		"server": "mcp-monitor", "tool": "get_cpu_info", "side_effecting": false})
	t.Log("one question at a time")
	a.Refused(sess, http.StatusConflict, "run_parked", http.MethodPost, "/api/v1/runs/"+run+"/asks", a.AgentKey,
		map[string]any{"prompt": "and this?", "options": map[string]string{"1": "Yes"}})

	t.Log("only a lead answers, with an option that exists")
	answer := "/api/v1/asks/" + ask + "/answer"
	for _, tok := range []string{a.ViewerTok, a.AgentKey, a.OtherKey} {
		a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, answer, tok, map[string]string{"option": "1"})
	}
	for _, opt := range []string{"3", "0", "Yes", ""} {
		a.Refused(sess, http.StatusUnprocessableEntity, "invalid_option", http.MethodPost, answer, a.LeadTok, map[string]string{"option": opt})
	}
	if refs := attentionAsks(a); !strings.Contains(strings.Join(refs, " "), ask) {
		t.Errorf("a refused answer took the ask off the queue: %v", refs)
	}

	got := a.Must(http.StatusOK, http.MethodPost, answer, a.LeadTok, map[string]string{"option": "1"})
	if got["run_status"] != "running" || got["answer"] != "1" || got["answered_at"] == nil {
		t.Fatalf("answer: %v, want run_status running (the outcome it parked from)", got)
	}
	if refs := attentionAsks(a); strings.Contains(strings.Join(refs, " "), ask) {
		t.Errorf("the answered ask is still in the Attention queue: %v", refs)
	}
	a.Refused(sess, http.StatusConflict, "already_answered", http.MethodPost, answer, a.AdminTok, map[string]string{"option": "2"})

	t.Log("answered, the side effect may run, and the run may end, once")
	c := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
		"server": "Vodou-Recall", "tool": "memory_store"})
	if c["side_effecting"] != true {
		t.Errorf("memory_store, unclassified, recorded as %v, want side-effecting", c["side_effecting"])
	}
	done := a.Must(http.StatusOK, http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey, map[string]string{"status": "complete"})
	if done["status"] != "complete" || done["ended_at"] == nil {
		t.Errorf("finish: %v", done)
	}
	a.Refused(sess, http.StatusConflict, "run_finished", http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey, map[string]string{"status": "failed"})
}

// TestAnsweringRestoresTheOutcomeItParkedFrom: a run waiting on a person
// was already marked complete (or partial); answering gives that back, not
// running.
func TestAnsweringRestoresTheOutcomeItParkedFrom(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	for _, status := range []string{"complete", "partial", "failed"} {
		t.Run(status, func(t *testing.T) {
			a.T = t
			sess := a.Session(false)
			run := openRun(a, sess, "phase")
			a.Must(http.StatusOK, http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey, map[string]string{"status": status})
			ask := askOn(a, run)
			got := a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+ask+"/answer", a.LeadTok, map[string]string{"option": "2"})
			if got["run_status"] != status || got["parked_from"] != status {
				t.Errorf("answer: %v, want run_status %s", got, status)
			}
			a.Refused(sess, http.StatusConflict, "run_finished", http.MethodPatch, "/api/v1/runs/"+run, a.AgentKey,
				map[string]string{"status": "complete"})
		})
	}
	a.T = t
}

// TestRunsAreGroupedByAnExplicitParent: the run a menu answer starts names
// the run that asked; a parent from another session is refused.
func TestRunsAreGroupedByAnExplicitParent(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	parent := openRun(a, sess, "phase 1")
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/asks/"+askOn(a, parent)+"/answer", a.LeadTok, map[string]string{"option": "1"})
	child := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+sess+"/runs", a.AgentKey,
		map[string]any{"name": "phase 2", "parent": parent})
	if child["parent"] != parent || child["status"] != "running" {
		t.Errorf("child run: %v, want parent %s", child, parent)
	}
	elsewhere := a.Session(false)
	a.Refused(elsewhere, http.StatusUnprocessableEntity, "parent_not_found", http.MethodPost, "/api/v1/sessions/"+elsewhere+"/runs",
		a.AgentKey, map[string]any{"name": "phase 2", "parent": parent})
	a.Refused(sess, http.StatusUnprocessableEntity, "parent_not_found", http.MethodPost, "/api/v1/sessions/"+sess+"/runs",
		a.AgentKey, map[string]any{"name": "phase 2", "parent": "run_nope"})
	a.Refused(sess, http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/sessions/"+sess+"/runs",
		a.OtherKey, map[string]any{"name": "mine now"})
	a.Refused("", http.StatusNotFound, "session_not_found", http.MethodPost, "/api/v1/sessions/ses_nope/runs",
		a.AgentKey, map[string]any{"name": "r"})
}

// TestTheToolRegistryOverHTTP: an admin classifies a tool; a call that
// does not say is then taken from the registry, so a read-only probe may
// run on a parked run; a tool nobody classified is side-effecting.
func TestTheToolRegistryOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	body := map[string]any{"server": "mcp-monitor", "tool": "get_cpu_info", "side_effecting": false}
	for _, tok := range []string{a.LeadTok, a.ViewerTok, a.AgentKey} {
		a.Refused("", http.StatusForbidden, "forbidden", http.MethodPut, "/api/v1/tools", tok, body)
		// The wrong caller is refused whatever the body says.
		a.Refused("", http.StatusForbidden, "forbidden", http.MethodPut, "/api/v1/tools", tok, map[string]any{})
	}
	a.Refused("", http.StatusUnprocessableEntity, "side_effecting_required", http.MethodPut, "/api/v1/tools", a.AdminTok,
		map[string]any{"server": "mcp-monitor", "tool": "get_cpu_info"})
	a.Refused("", http.StatusUnprocessableEntity, "tool_required", http.MethodPut, "/api/v1/tools", a.AdminTok,
		map[string]any{"server": "mcp-monitor", "tool": " ", "side_effecting": true})
	set := a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools", a.AdminTok, body)
	if set["side_effecting"] != false || set["tool"] != "get_cpu_info" {
		t.Errorf("set: %v", set)
	}
	list, _ := a.Must(http.StatusOK, http.MethodGet, "/api/v1/tools", a.LeadTok, nil)["tools"].([]any)
	if len(list) != 1 {
		t.Fatalf("tools: %v", list)
	}

	sess := a.Session(false)
	run := openRun(a, sess, "probes")
	ask := askOn(a, run)
	c := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
		"server": "mcp-monitor", "tool": "get_cpu_info"})
	if c["side_effecting"] != false {
		t.Errorf("a registered read-only probe recorded as %v", c["side_effecting"])
	}
	r := a.Do(http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{"server": "mcp-monitor", "tool": "get_disk_info"})
	webtest.CheckError(t, r, http.StatusConflict, "run_parked")
	if got := errorField(t, r, "ask"); got != ask {
		t.Errorf("run_parked names %v, want %s", got, ask)
	}
}

// TestAToolCallIsRecordedAsReported: an explicit started_at, even an
// earlier one, is recorded as reported; one that is not a time is a 422.
func TestAToolCallIsRecordedAsReported(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	run := openRun(a, sess, "import")
	c := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, map[string]any{
		"server": "Vodou-Recall", "tool": "memory_store", "started_at": "2026-11-29T13:02:11+01:00"})
	if c["started_at"] != "2026-11-29T12:02:11Z" || c["side_effecting"] != true {
		t.Errorf("recorded %v, want started_at 2026-11-29T12:02:11Z (UTC), side-effecting", c)
	}
	path := "/api/v1/runs/" + run + "/tool-calls"
	for _, b := range []struct{ name, body, code string }{
		{"a started_at that is not a time", `{"server":"s","tool":"t","started_at":"yesterday"}`, "invalid_started_at"},
		{"a started_at without a zone", `{"server":"s","tool":"t","started_at":"2026-11-29T12:00:00"}`, "invalid_started_at"},
		{"a started_at that is a number", `{"server":"s","tool":"t","started_at":5}`, "invalid_field"},
		{"side_effecting as a string", `{"server":"s","tool":"t","side_effecting":"yes"}`, "invalid_field"},
		{"no tool", `{"server":"s"}`, "tool_required"},
	} {
		t.Run(b.name, func(t *testing.T) {
			a.T = t
			a.Refused(sess, http.StatusUnprocessableEntity, b.code, http.MethodPost, path, a.AgentKey, webtest.RawBody(b.body))
		})
	}
	a.T = t
}

// TestRunRoutesRefuseBadInput: not JSON is a 400, the wrong shape a 422,
// an unknown id a 404, and odd ids never a 500; nothing is written.
func TestRunRoutesRefuseBadInput(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	sess := a.Session(false)
	run := openRun(a, sess, "r")
	parkedRun := openRun(a, sess, "p")
	ask := askOn(a, parkedRun)
	targets := []struct{ method, path, token string }{
		{http.MethodPost, "/api/v1/sessions/" + sess + "/runs", a.AgentKey},
		{http.MethodPatch, "/api/v1/runs/" + run, a.AgentKey},
		{http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey},
		{http.MethodPost, "/api/v1/runs/" + run + "/tool-calls", a.AgentKey},
		{http.MethodPost, "/api/v1/asks/" + ask + "/answer", a.LeadTok},
		{http.MethodPut, "/api/v1/tools", a.AdminTok},
	}
	for _, tg := range targets {
		for _, body := range []string{`{"name":"r`, `{`, `{} garbage`, `name=r`, "", "\ufeff{}"} {
			t.Run(fmt.Sprintf("%s %s with %q is 400", tg.method, tg.path, body), func(t *testing.T) {
				a.T = t
				a.Refused(sess, http.StatusBadRequest, "malformed_json", tg.method, tg.path, tg.token, webtest.RawBody(body))
			})
		}
	}
	shapes := []struct {
		name, method, path, token, body, code string
	}{
		{"a run name that is a number", http.MethodPost, "/api/v1/sessions/" + sess + "/runs", a.AgentKey, `{"name":1}`, "invalid_field"},
		{"a run without a name", http.MethodPost, "/api/v1/sessions/" + sess + "/runs", a.AgentKey, `{}`, "name_required"},
		{"a status that is not an outcome", http.MethodPatch, "/api/v1/runs/" + run, a.AgentKey, `{"status":"parked"}`, "invalid_status"},
		{"no status", http.MethodPatch, "/api/v1/runs/" + run, a.AgentKey, `{}`, "invalid_status"},
		{"options as a list", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"prompt":"p","options":["Yes","No"]}`, "invalid_field"},
		{"an option numbered 0", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"prompt":"p","options":{"0":"Yes"}}`, "invalid_options"},
		{"an option keyed 10", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"prompt":"p","options":{"10":"Yes"}}`, "invalid_options"},
		{"an empty label", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"prompt":"p","options":{"1":""}}`, "invalid_options"},
		{"no options", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"prompt":"p"}`, "invalid_options"},
		{"no prompt", http.MethodPost, "/api/v1/runs/" + run + "/asks", a.AgentKey, `{"options":{"1":"Yes"}}`, "prompt_required"},
		{"an option that is a number", http.MethodPost, "/api/v1/asks/" + ask + "/answer", a.LeadTok, `{"option":1}`, "invalid_field"},
		{"side_effecting that is not a boolean", http.MethodPut, "/api/v1/tools", a.AdminTok, `{"server":"s","tool":"t","side_effecting":"no"}`, "invalid_field"},
	}
	for _, s := range shapes {
		t.Run(s.name+" is 422", func(t *testing.T) {
			a.T = t
			a.Refused(sess, http.StatusUnprocessableEntity, s.code, s.method, s.path, s.token, webtest.RawBody(s.body))
		})
	}
	unknown := []struct{ method, path, token, body, code string }{
		{http.MethodPatch, "/api/v1/runs/run_nope", a.AgentKey, `{"status":"complete"}`, "run_not_found"},
		{http.MethodPost, "/api/v1/runs/run_nope/asks", a.AgentKey, `{"prompt":"p","options":{"1":"Yes"}}`, "run_not_found"},
		{http.MethodPost, "/api/v1/runs/run_nope/tool-calls", a.AgentKey, `{"server":"s","tool":"t"}`, "run_not_found"},
		{http.MethodPost, "/api/v1/asks/ask_nope/answer", a.LeadTok, `{"option":"1"}`, "ask_not_found"},
	}
	for _, u := range unknown {
		t.Run(u.path+" is 404", func(t *testing.T) {
			a.T = t
			a.Refused(sess, http.StatusNotFound, u.code, u.method, u.path, u.token, webtest.RawBody(u.body))
		})
	}
	t.Run("odd ids are never a 500", func(t *testing.T) {
		a.T = t
		odd := []string{"%00", "%20", "%25", "..", "%2e%2e%2fetc", "run_%27%3B%20DROP%20TABLE%20runs%3B--",
			strings.Repeat("x", 4000), "-1", "0", "%F0%9F%92%A9", "%ff"}
		templates := []struct{ method, path, token, body string }{
			{http.MethodPost, "/api/v1/sessions/%s/runs", a.AgentKey, `{"name":"r"}`},
			{http.MethodPatch, "/api/v1/runs/%s", a.AgentKey, `{"status":"complete"}`},
			{http.MethodPost, "/api/v1/runs/%s/asks", a.AgentKey, `{"prompt":"p","options":{"1":"Yes"}}`},
			{http.MethodPost, "/api/v1/runs/%s/tool-calls", a.AgentKey, `{"server":"s","tool":"t"}`},
			{http.MethodPost, "/api/v1/asks/%s/answer", a.LeadTok, `{"option":"1"}`},
		}
		before := a.Snapshot(sess)
		for _, tp := range templates {
			for _, p := range odd {
				req, err := http.NewRequest(tp.method, a.Srv.URL+fmt.Sprintf(tp.path, p), strings.NewReader(tp.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+tp.token)
				req.Header.Set("Content-Type", "application/json")
				r := a.Send(req)
				if r.Status >= 500 {
					t.Errorf("%s %s: status %d; body %s", tp.method, webtest.Short([]byte(tp.path)), r.Status, webtest.Short(r.Body))
				} else if r.Status >= 400 {
					webtest.CheckErrorShape(t, r)
				}
			}
		}
		if after := a.Snapshot(sess); after != before {
			t.Errorf("odd ids wrote something:\nbefore %s\nafter  %s", before, after)
		}
	})
	a.T = t
}
