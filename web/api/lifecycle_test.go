package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// errorBody is an error answer's "error" object.
func errorBody(t *testing.T, r webtest.Response) map[string]any {
	t.Helper()
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	return env.Error
}

func TestLifecycleEventsOverHTTP(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/events"

	t.Run("an allowed event answers the state and its transitions", func(t *testing.T) {
		got := a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "user.message.created"})
		if got["lifecycle"] != "CLASSIFYING" {
			t.Fatalf("answer %v", got)
		}
		tr := got["transitions"].([]any)
		if len(tr) != 1 || tr[0].(map[string]any)["from"] != "IDLE" || tr[0].(map[string]any)["to"] != "CLASSIFYING" {
			t.Fatalf("transitions %v", tr)
		}
		d := a.Detail(id)
		if d["tracked"] != true || d["lifecycle"] != "CLASSIFYING" {
			t.Fatalf("session shows %v tracked %v", d["lifecycle"], d["tracked"])
		}
	})
	t.Run("an event the state does not allow is 409 with allowed and lifecycle", func(t *testing.T) {
		before := a.Snapshot(id)
		r := a.Do(http.MethodPost, path, a.AgentKey, map[string]any{"name": "reply.sent"})
		webtest.CheckError(t, r, http.StatusConflict, "transition_not_allowed")
		e := errorBody(t, r)
		var allowed []string
		for _, v := range e["allowed"].([]any) {
			allowed = append(allowed, v.(string))
		}
		if e["lifecycle"] != "CLASSIFYING" || !slices.Equal(allowed, []string{"IntentClassified", "DirectModeEntered", "permission.prompt.requested"}) {
			t.Fatalf("error %v", e)
		}
		if after := a.Snapshot(id); after != before {
			t.Fatalf("a refused event wrote:\n%s\n%s", before, after)
		}
	})
	t.Run("an agent resolving a permission prompt is 409", func(t *testing.T) {
		a.Refused(id, http.StatusConflict, "transition_not_allowed", http.MethodPost, path, a.AgentKey,
			map[string]any{"name": "permission.prompt.resolved"})
	})
	refusals := []struct {
		name        string
		body        any
		code, field string
	}{
		{"an unknown event", map[string]any{"name": "task.exploded"}, "unknown_event", "name"},
		{"no name", map[string]any{"payload": map[string]any{}}, "name_required", "name"},
		{"an unknown intent", map[string]any{"name": "IntentClassified", "payload": map[string]any{"intent": "banter"}}, "invalid_intent", "payload.intent"},
		{"no intent", map[string]any{"name": "IntentClassified"}, "intent_required", "payload.intent"},
		{"a payload field the event does not take", map[string]any{"name": "DirectModeEntered", "payload": map[string]any{"why": "x"}}, "unknown_field", "payload.why"},
		{"a payload of the wrong type", map[string]any{"name": "IntentClassified", "payload": map[string]any{"intent": 3}}, "invalid_field", "payload.intent"},
		{"a field the body does not take", map[string]any{"name": "reply.sent", "state": "IDLE"}, "unknown_field", "state"},
	}
	for _, c := range refusals {
		t.Run(c.name+" is 422 naming "+c.field, func(t *testing.T) {
			before := a.Snapshot(id)
			r := a.Do(http.MethodPost, path, a.AgentKey, c.body)
			webtest.CheckError(t, r, http.StatusUnprocessableEntity, c.code)
			if f := errorBody(t, r)["field"]; f != c.field {
				t.Fatalf("field %v, want %s", f, c.field)
			}
			if after := a.Snapshot(id); after != before {
				t.Fatal("a refused event wrote")
			}
		})
	}
	t.Run("a missing task id is 422 in EXECUTING too", func(t *testing.T) {
		a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "IntentClassified", "payload": map[string]any{"intent": "task"}})
		a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "architecture.impact.completed", "payload": map[string]any{"level": "implementation"}})
		a.Refused(id, http.StatusUnprocessableEntity, "task_required", http.MethodPost, path, a.AgentKey, map[string]any{"name": "task.created", "payload": map[string]any{}})
		a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "task.created", "payload": map[string]any{"task": "T-1"}})
		tasks := a.Detail(id)["tasks"].(map[string]any)
		if tasks["open"] != float64(1) || tasks["created"] != float64(1) {
			t.Fatalf("tasks %v", tasks)
		}
	})
	t.Run("a plan that starts a side effect before its gate is 422 and writes nothing", func(t *testing.T) {
		s := a.Session(true)
		p := "/api/v1/sessions/" + s + "/events"
		for _, e := range []map[string]any{{"name": "user.message.created"}, {"name": "IntentClassified", "payload": map[string]any{"intent": "task"}},
			{"name": "architecture.impact.completed", "payload": map[string]any{"level": "architecture"}}} {
			a.Must(http.StatusOK, http.MethodPost, p, a.AgentKey, e)
		}
		a.Refused(s, http.StatusUnprocessableEntity, "side_effect_before_gate", http.MethodPost, p, a.AgentKey, map[string]any{
			"name": "architecture.plan.updated", "payload": map[string]any{"summary": "Drop it",
				"initial_steps":   []any{map[string]any{"id": "drop", "server": "db", "tool": "drop", "side_effecting": true}},
				"stopping_points": []any{map[string]any{"id": 1, "type": "menu", "title": "Drop?", "options": map[string]any{"1": map[string]any{"label": "Yes", "steps": []any{}}}}}}})
		got := a.Must(http.StatusOK, http.MethodPost, p, a.AgentKey, map[string]any{
			"name": "architecture.plan.updated", "payload": map[string]any{"summary": "Read first", "initial_steps": []any{}, "stopping_points": []any{}}})
		if got["lifecycle"] != "CONFIRMING" || got["plan"].(map[string]any)["status"] != "proposed" {
			t.Fatalf("answer %v", got)
		}
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/plan/approve", a.LeadTok, map[string]any{"note": "ok"})
		if d := a.Detail(s); d["lifecycle"] != "EXECUTING" {
			t.Fatalf("after approval %v", d["lifecycle"])
		}
	})
	t.Run("another agent is 403, a person 403, an unknown session 404", func(t *testing.T) {
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, path, a.OtherKey, map[string]any{"name": "reply.sent"})
		a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, path, a.LeadTok, map[string]any{"name": "reply.sent"})
		a.Refused("", http.StatusNotFound, "session_not_found", http.MethodPost, "/api/v1/sessions/ses_nope/events", a.AgentKey, map[string]any{"name": "reply.sent"})
	})
}

func TestASideEffectOutsideExecutionIs409NotExecuting(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	run := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/runs", a.AgentKey, map[string]any{"name": "r"})["id"].(string)
	call := map[string]any{"server": "fs", "tool": "write", "side_effecting": true}
	got := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, call)
	if got["source_kind"] != "executor" {
		t.Fatalf("untracked call %v", got)
	}
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, map[string]any{"name": "user.message.created"})
	a.RefusedAndKept(id, http.StatusConflict, "not_executing", http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, call)
	r := a.Do(http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, call)
	webtest.CheckError(t, r, http.StatusConflict, "not_executing")
	if e := errorBody(t, r); e["lifecycle"] != "CLASSIFYING" {
		t.Fatalf("error %v", e)
	}
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, map[string]any{"name": "DirectModeEntered"})
	got = a.Must(http.StatusCreated, http.MethodPost, "/api/v1/runs/"+run+"/tool-calls", a.AgentKey, call)
	if got["source_kind"] != "main" {
		t.Fatalf("direct mode call %v", got)
	}
	if d := a.Detail(id); d["lifecycle"] != "DIRECT_MODE" || d["permission_template"] != "main_direct" {
		t.Fatalf("in direct mode the session shows lifecycle %v, permission_template %v", d["lifecycle"], d["permission_template"])
	}
}
