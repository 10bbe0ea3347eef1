package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/web/webtest"
)

// TestAPermissionPromptsOptionsAreThoseAPersonCanPick refuses options a
// person could not answer (Answer looks an option up by its trimmed key)
// as an ask's are refused, 422 naming payload.options, writing nothing.
func TestAPermissionPromptsOptionsAreThoseAPersonCanPick(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/events"
	ten := map[string]any{}
	for _, k := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"} {
		ten[k] = "Option " + k
	}
	cases := []struct {
		name    string
		options any
		code    string
	}{
		{"an empty key", map[string]any{"": "Allow"}, "invalid_options"},
		{"a key with a space", map[string]any{" 1": "x"}, "invalid_options"},
		{"a key past 9", map[string]any{"10": "x"}, "invalid_options"},
		{"a key that is no number", map[string]any{"a": "x"}, "invalid_options"},
		{"an empty label", map[string]any{"1": ""}, "invalid_options"},
		{"a blank label", map[string]any{"2": "   "}, "invalid_options"},
		{"ten options", ten, "invalid_options"},
		{"a label of two lines", map[string]any{"1": "Allow\nthis"}, "invalid_characters"},
		{"a label too long", map[string]any{"1": strings.Repeat("x", 201)}, "options_too_long"},
		{"no options", map[string]any{}, "options_required"},
	}
	for _, c := range cases {
		t.Run(c.name+" is 422 "+c.code, func(t *testing.T) {
			a.T = t
			before := a.Snapshot(id)
			r := a.Do(http.MethodPost, path, a.AgentKey, map[string]any{"name": "permission.prompt.requested",
				"payload": map[string]any{"prompt": "Run it?", "options": c.options}})
			webtest.CheckError(t, r, http.StatusUnprocessableEntity, c.code)
			if f := errorBody(t, r)["field"]; f != "payload.options" {
				t.Errorf("field %v, want payload.options", f)
			}
			if after := a.Snapshot(id); after != before {
				t.Fatal("a refused prompt wrote")
			}
		})
	}
	t.Run("options numbered 1 to 9 with labels are taken, the labels trimmed", func(t *testing.T) {
		a.T = t
		got := a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "permission.prompt.requested",
			"payload": map[string]any{"prompt": "Run it?", "options": map[string]any{"1": " Allow ", "2": "Deny"}}})
		options := got["permission"].(map[string]any)["options"]
		if s := jsonOf(t, options); !strings.Contains(s, `"Allow"`) || strings.Contains(s, `" Allow "`) {
			t.Fatalf("options %s", s)
		}
	})
}

// TestAnEventRefusesTheFieldsOfAnother: every event takes its own payload
// fields and no other event's; a field it does not take is 422
// unknown_field naming the field (and the event), writing nothing.
func TestAnEventRefusesTheFieldsOfAnother(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/events"
	// A valid value of every payload field some event takes.
	values := map[string]any{"intent": "task", "level": "execution", "task": "T-1", "prompt": "Run it?",
		"options": map[string]any{"1": "Allow"}, "tool": "shell", "paths": []any{"a.go"}}
	own := map[string][]string{
		lifecycle.IntentClassified:            {"intent"},
		lifecycle.ArchitectureImpactCompleted: {"level"},
		lifecycle.RequirementChanged:          {"level"},
		lifecycle.TaskCreated:                 {"task"},
		lifecycle.TaskProgress:                {"task"},
		lifecycle.TaskCompleted:               {"task"},
		lifecycle.TaskFailed:                  {"task"},
		lifecycle.TaskBlocked:                 {"task"},
		lifecycle.PermissionPromptRequested:   {"prompt", "options", "tool", "paths"},
	}
	plan := map[string]any{"summary": "Read first", "initial_steps": []any{}, "stopping_points": []any{}}
	for _, ev := range lifecycle.Events() {
		base := map[string]any{}
		if ev == lifecycle.ArchitecturePlanUpdated {
			base = plan
		}
		for _, f := range own[ev] {
			base[f] = values[f]
		}
		if ev == lifecycle.ArchitectureImpactCompleted {
			base["level"] = "implementation"
		}
		for _, f := range slices.Sorted(func(yield func(string) bool) {
			for k := range values {
				if !yield(k) {
					return
				}
			}
		}) {
			if slices.Contains(own[ev], f) {
				continue
			}
			t.Run(ev+" with "+f+" is 422 unknown_field", func(t *testing.T) {
				a.T = t
				payload := map[string]any{f: values[f]}
				for k, v := range base {
					payload[k] = v
				}
				before := a.Snapshot(id)
				r := a.Do(http.MethodPost, path, a.AgentKey, map[string]any{"name": ev, "payload": payload})
				webtest.CheckError(t, r, http.StatusUnprocessableEntity, "unknown_field")
				e := errorBody(t, r)
				if e["field"] != "payload."+f {
					t.Errorf("field %v, want payload.%s", e["field"], f)
				}
				if msg, _ := e["message"].(string); !strings.Contains(msg, f) {
					t.Errorf("message %q does not name %s", msg, f)
				}
				if ev != lifecycle.ArchitecturePlanUpdated {
					if msg, _ := e["message"].(string); !strings.Contains(msg, ev) {
						t.Errorf("message %q does not name the event %s", msg, ev)
					}
				}
				if after := a.Snapshot(id); after != before {
					t.Fatal("a refused event wrote")
				}
			})
		}
		t.Run(ev+" with its own fields is not refused for them", func(t *testing.T) {
			a.T = t
			r := a.Do(http.MethodPost, path, a.AgentKey, map[string]any{"name": ev, "payload": base})
			if r.Status == http.StatusUnprocessableEntity {
				t.Fatalf("%s with %v: %s", ev, base, r.Body)
			}
		})
	}
}

// TestTasksCountPerCycle: a task left open in DIRECT_MODE no longer keeps
// a later cycle's EXECUTING from reaching SUMMARIZING when that cycle's
// last task completes; completed and failed are counted apart, and the
// earlier cycle's task is counted as earlier.
func TestTasksCountPerCycle(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/events"
	send := func(name string, payload map[string]any) map[string]any {
		a.T.Helper()
		body := map[string]any{"name": name}
		if payload != nil {
			body["payload"] = payload
		}
		return a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, body)
	}
	send("user.message.created", nil)
	send("IntentClassified", map[string]any{"intent": "direct"})
	send("task.created", map[string]any{"task": "OLD"})
	send("task.blocked", map[string]any{"task": "OLD"})
	if got := send("DirectModeExited", nil); got["lifecycle"] != "IDLE" {
		t.Fatalf("after /done %v", got["lifecycle"])
	}
	tasks := a.Detail(id)["tasks"].(map[string]any)
	if tasks["created"] != float64(1) || tasks["blocked"] != float64(1) || tasks["earlier"] != float64(0) {
		t.Fatalf("the first cycle's tasks before the next starts: %v", tasks)
	}

	blockedTasks := func() int {
		a.T.Helper()
		n := 0
		for _, it := range a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention?session="+id, a.ViewerTok, nil)["items"].([]any) {
			if it.(map[string]any)["kind"] == "task" {
				n++
			}
		}
		return n
	}
	if n := blockedTasks(); n != 1 {
		t.Fatalf("the blocked task is %d Attention items, want 1", n)
	}
	send("user.message.created", nil)
	tasks = a.Detail(id)["tasks"].(map[string]any)
	if tasks["created"] != float64(0) || tasks["open"] != float64(0) || tasks["earlier"] != float64(1) {
		t.Fatalf("a new cycle's tasks: %v", tasks)
	}
	if n := blockedTasks(); n != 0 {
		t.Fatalf("an earlier cycle's blocked task is still %d Attention items", n)
	}
	send("IntentClassified", map[string]any{"intent": "task"})
	send("architecture.impact.completed", map[string]any{"level": "implementation"})
	send("task.created", map[string]any{"task": " T-1 "})
	send("task.created", map[string]any{"task": "T-2"})
	send("task.progress", map[string]any{"task": "T-1"})
	if got := send("task.failed", map[string]any{"task": "T-2"}); got["lifecycle"] != "EXECUTING" {
		t.Fatalf("one task left open: %v", got["lifecycle"])
	}
	tasks = a.Detail(id)["tasks"].(map[string]any)
	want := map[string]any{"created": float64(2), "progress": float64(1), "completed": float64(0), "failed": float64(1),
		"done": float64(1), "open": float64(1), "blocked": float64(0), "earlier": float64(1)}
	if jsonOf(t, tasks) != jsonOf(t, want) {
		t.Fatalf("tasks %v, want %v", tasks, want)
	}
	if got := send("task.completed", map[string]any{"task": "T-1"}); got["lifecycle"] != "SUMMARIZING" {
		t.Fatalf("the cycle's last task completed, an earlier cycle's left open: %v", got["lifecycle"])
	}
	tasks = a.Detail(id)["tasks"].(map[string]any)
	if tasks["completed"] != float64(1) || tasks["failed"] != float64(1) || tasks["open"] != float64(0) {
		t.Fatalf("tasks %v", tasks)
	}
	d := a.DetailOf(id)
	var told int
	for _, e := range d.Timeline {
		if e.Kind == "lifecycle.event" && strings.Contains(e.Detail, `"OLD"`) {
			told++
		}
	}
	if told != 2 {
		t.Fatalf("the earlier cycle's task events in the timeline: %d, want 2", told)
	}

	t.Run("an earlier cycle's task reported again counts in this cycle", func(t *testing.T) {
		a.T = t
		send("reply.sent", nil)
		send("user.message.created", nil)
		send("IntentClassified", map[string]any{"intent": "direct"})
		send("task.progress", map[string]any{"task": "OLD"})
		tasks := a.Detail(id)["tasks"].(map[string]any)
		if tasks["created"] != float64(1) || tasks["progress"] != float64(1) || tasks["earlier"] != float64(2) {
			t.Fatalf("tasks %v", tasks)
		}
	})
}

// jsonOf is v as JSON (maps' keys sorted), for comparing.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
