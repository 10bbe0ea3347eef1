package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// queue reads GET /api/v1/attention with the query as token, and returns
// its items as "kind session ref" and its next.
func queue(a *webtest.API, token, query string) ([]string, string) {
	a.T.Helper()
	page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention"+query, token, nil)
	var out []string
	for _, it := range page["items"].([]any) {
		m := it.(map[string]any)
		out = append(out, fmt.Sprint(m["kind"], " ", m["session"], " ", m["ref"]))
	}
	next, _ := page["next"].(string)
	return out, next
}

// openGate opens a gate on the session as the agent and returns its ref.
func openGate(a *webtest.API, key, session string) string {
	a.T.Helper()
	d := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+session+"/decisions", key,
		map[string]any{"title": "Drop the table?", "question": "May I drop it?"})
	return d["ref"].(string)
}

func TestTheAttentionQueueOverTheAPI(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	billing, docs := a.Kit.Mission(a.Lead, false), a.Kit.Mission(a.Lead, false)
	gated := a.Kit.Session(a.Agent, billing)
	ref := openGate(a, a.AgentKey, gated)
	paused := a.Kit.Session(a.Other, docs)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+paused+"/pause", a.LeadTok, map[string]any{"reason": "Release freeze"})
	decision, pause := "decision "+gated+" "+ref, "paused "+paused+" "+paused
	claimPath := "/api/v1/attention/decision/" + gated + "/" + ref + "/claim"
	a.Must(http.StatusOK, http.MethodPost, claimPath, a.LeadTok, map[string]any{})

	t.Run("each filter", func(t *testing.T) {
		a.T = t
		tests := []struct {
			query string
			want  []string
		}{
			{"", []string{pause, decision}},
			{"?kind=decision", []string{decision}},
			{"?kind=paused", []string{pause}},
			{"?kind=ask", nil},
			{"?state=BLOCKED", []string{pause}},
			{"?state=DECISION_REQUIRED", []string{decision}},
			{"?mission=" + docs, []string{pause}},
			{"?agent=" + a.Agent.KeyName, []string{decision}},
			{"?session=" + gated, []string{decision}},
			{"?claimed=yes", []string{decision}},
			{"?claimed=no", []string{pause}},
			{"?claimed=me", nil}, // the viewer claimed nothing
			{"?kind=decision&claimed=yes&mission=" + billing, []string{decision}},
		}
		for _, tt := range tests {
			if got, next := queue(a, a.ViewerTok, tt.query); !slices.Equal(got, tt.want) || next != "" {
				t.Errorf("%q lists %q (next %q), want %q", tt.query, got, next, tt.want)
			}
		}
		if got, _ := queue(a, a.LeadTok, "?claimed=me"); !slices.Equal(got, []string{decision}) {
			t.Errorf("the claimer's claimed=me lists %q", got)
		}
	})

	t.Run("the item shows who claimed it, to everyone", func(t *testing.T) {
		a.T = t
		page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention?kind=decision", a.ViewerTok, nil)
		it := page["items"].([]any)[0].(map[string]any)
		if it["claimed_by"] != a.Lead.Email || it["claimed_at"] == nil || len(it["snoozes"].([]any)) != 0 {
			t.Fatalf("item %v", it)
		}
	})

	t.Run("claims: viewers refused, another lead 409 unless take_over", func(t *testing.T) {
		a.T = t
		a.Refused(gated, http.StatusForbidden, "forbidden", http.MethodPost, claimPath, a.ViewerTok, map[string]any{})
		a.Refused(gated, http.StatusForbidden, "forbidden", http.MethodPost, claimPath, a.AgentKey, map[string]any{})
		r := a.Do(http.MethodPost, claimPath, a.AdminTok, map[string]any{})
		webtest.CheckError(t, r, http.StatusConflict, "already_claimed")
		if e := errorBody(t, r); e["claimed_by"] != a.Lead.Email {
			t.Errorf("already_claimed does not name who: %v", e)
		}
		a.Refused(gated, http.StatusUnprocessableEntity, "unknown_field", http.MethodPost, claimPath, a.AdminTok, map[string]any{"takeover": true})
		a.Refused(gated, http.StatusNotFound, "attention_item_not_found", http.MethodPost,
			"/api/v1/attention/decision/"+gated+"/DEC-999/claim", a.LeadTok, map[string]any{})
		a.Refused(gated, http.StatusForbidden, "forbidden", http.MethodDelete, claimPath, a.ViewerTok, nil)
		it := a.Must(http.StatusOK, http.MethodPost, claimPath, a.AdminTok, map[string]any{"take_over": true})
		if it["claimed_by"] != a.Admin.Email {
			t.Fatalf("take over left %v", it["claimed_by"])
		}
		a.Refused(gated, http.StatusForbidden, "forbidden", http.MethodDelete, claimPath, a.LeadTok, nil)
		if it := a.Must(http.StatusOK, http.MethodDelete, claimPath, a.AdminTok, nil); it["claimed_by"] != nil {
			t.Fatalf("unclaimed item %v", it)
		}
		a.Refused(gated, http.StatusConflict, "not_claimed", http.MethodDelete, claimPath, a.AdminTok, nil)
		a.Must(http.StatusOK, http.MethodPost, claimPath, a.LeadTok, nil)
	})

	t.Run("snoozes hide the item from the snoozer only", func(t *testing.T) {
		a.T = t
		path := "/api/v1/attention/paused/" + paused + "/" + paused + "/snooze"
		for _, body := range []map[string]any{{"for": "30s"}, {"for": "8d"}, {"for": "soon"}, {"for": ""}, {}} {
			a.Refused(paused, http.StatusUnprocessableEntity, "invalid_snooze", http.MethodPost, path, a.ViewerTok, body)
		}
		a.Refused(paused, http.StatusBadRequest, "malformed_json", http.MethodPost, path, a.ViewerTok, nil)
		a.Refused(paused, http.StatusForbidden, "forbidden", http.MethodPost, path, a.OtherKey, map[string]any{"for": "1h"})
		it := a.Must(http.StatusOK, http.MethodPost, path, a.ViewerTok, map[string]any{"for": "1h"})
		if z := it["snoozes"].([]any); len(z) != 1 || z[0].(map[string]any)["by"] != a.Viewer.Email {
			t.Fatalf("snoozes %v", it["snoozes"])
		}
		if got, _ := queue(a, a.ViewerTok, ""); !slices.Equal(got, []string{decision}) {
			t.Errorf("the snoozer sees %q", got)
		}
		if got, _ := queue(a, a.ViewerTok, "?snoozed=only"); !slices.Equal(got, []string{pause}) {
			t.Errorf("snoozed=only lists %q", got)
		}
		if got, _ := queue(a, a.ViewerTok, "?snoozed=include"); !slices.Equal(got, []string{pause, decision}) {
			t.Errorf("snoozed=include lists %q", got)
		}
		if got, _ := queue(a, a.LeadTok, ""); !slices.Equal(got, []string{pause, decision}) {
			t.Errorf("another person sees %q", got)
		}
		if got, _ := queue(a, a.LeadTok, "?snoozed=only"); got != nil {
			t.Errorf("another person's snoozed=only lists %q", got)
		}
		a.Refused(paused, http.StatusConflict, "not_snoozed", http.MethodDelete, path, a.LeadTok, nil)
		a.Must(http.StatusOK, http.MethodDelete, path, a.ViewerTok, nil)
		if got, _ := queue(a, a.ViewerTok, ""); !slices.Equal(got, []string{pause, decision}) {
			t.Errorf("after unsnooze the snoozer sees %q", got)
		}
	})

	t.Run("bad parameters are 422 and name themselves", func(t *testing.T) {
		a.T = t
		for query, code := range map[string]string{
			"?bogus=1":                             "unknown_parameter",
			"?kind=decision&kind=ask":              "repeated_parameter",
			"?kind=gate":                           "unknown_kind",
			"?state=PAUSED":                        "unknown_state",
			"?state=blocked":                       "unknown_state",
			"?claimed=maybe":                       "invalid_claimed",
			"?snoozed=yes":                         "invalid_snoozed",
			"?limit=0":                             "invalid_limit",
			"?limit=501":                           "invalid_limit",
			"?limit=ten":                           "invalid_limit",
			"?limit=-1":                            "invalid_limit",
			"?next=garbage":                        "invalid_next",
			"?next=" + url.QueryEscape("e30"):      "invalid_next",
			"?mission=" + strings.Repeat("m", 201): "filter_too_long",
		} {
			webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/attention"+query, a.ViewerTok, nil), http.StatusUnprocessableEntity, code)
		}
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/attention", a.AgentKey, nil), http.StatusForbidden, "forbidden")
	})
}

func TestTheAttentionQueuePagesLoseNothing(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	m := a.Kit.Mission(a.Lead, false)
	for i := range 9 {
		s := a.Kit.Session(a.Agent, m)
		openGate(a, a.AgentKey, s)
		if i%3 == 0 {
			a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+s+"/pause", a.LeadTok, map[string]any{"reason": "Hold"})
		}
	}
	all, next := queue(a, a.ViewerTok, "?limit=500")
	if len(all) != 12 || next != "" {
		t.Fatalf("%d items, next %q", len(all), next)
	}
	if def, _ := queue(a, a.ViewerTok, ""); !slices.Equal(def, all) {
		t.Fatalf("the default page differs from limit=500")
	}
	for _, limit := range []int{1, 5, 11, 12} {
		var got []string
		next := ""
		pages := 0
		for {
			q := fmt.Sprintf("?limit=%d", limit)
			if next != "" {
				q += "&next=" + url.QueryEscape(next)
			}
			items, n := queue(a, a.ViewerTok, q)
			got, next, pages = append(got, items...), n, pages+1
			if next == "" || pages > 20 {
				break
			}
		}
		if !slices.Equal(got, all) {
			t.Errorf("limit %d: the pages list\n%q\nwant\n%q", limit, got, all)
		}
		if want := (12 + limit - 1) / limit; pages != want {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
		}
	}
	// A filter keeps its pages too.
	first, next := queue(a, a.ViewerTok, "?kind=paused&limit=2")
	rest, last := queue(a, a.ViewerTok, "?kind=paused&limit=2&next="+url.QueryEscape(next))
	if len(first) != 2 || len(rest) != 1 || last != "" || slices.Contains(first, rest[0]) {
		t.Errorf("paused pages %q then %q (next %q)", first, rest, last)
	}
}

func TestBlockedTasksOverTheAPI(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)
	for _, ev := range []map[string]any{{"name": "user.message.created"}, {"name": "IntentClassified", "payload": map[string]any{"intent": "direct"}},
		{"name": "task.created", "payload": map[string]any{"task": "t1"}}, {"name": "task.blocked", "payload": map[string]any{"task": "t1"}}} {
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+id+"/events", a.AgentKey, ev)
	}
	ack := "/api/v1/sessions/" + id + "/tasks/t1/acknowledge"
	remedy := "/api/v1/sessions/" + id + "/tasks/t1/remediation"
	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, ack, a.ViewerTok, nil)
	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, ack, a.AgentKey, nil)
	a.Refused(id, http.StatusNotFound, "attention_item_not_found", http.MethodPost, "/api/v1/sessions/"+id+"/tasks/t9/acknowledge", a.LeadTok, nil)
	it := a.Must(http.StatusOK, http.MethodPost, ack, a.LeadTok, nil)
	if it["acknowledged_by"] != a.Lead.Email || it["kind"] != "task" {
		t.Fatalf("acknowledged %v", it)
	}
	a.Refused(id, http.StatusConflict, "already_acknowledged", http.MethodPost, ack, a.AdminTok, map[string]any{})
	if got, _ := queue(a, a.ViewerTok, "?kind=task"); len(got) != 1 {
		t.Fatalf("the acknowledged task left the queue: %q", got)
	}
	a.Refused(id, http.StatusUnprocessableEntity, "instruction_required", http.MethodPost, remedy, a.LeadTok, map[string]any{"instruction": " "})
	a.Refused(id, http.StatusUnprocessableEntity, "unknown_field", http.MethodPost, remedy, a.LeadTok, map[string]any{"instruction": "x", "severity": "advisory"})
	a.Refused(id, http.StatusForbidden, "forbidden", http.MethodPost, remedy, a.ViewerTok, map[string]any{"instruction": "x"})
	r := a.Must(http.StatusCreated, http.MethodPost, remedy, a.LeadTok, map[string]any{"instruction": "Split the migration."})
	if r["severity"] != "required" || r["instruction"] != "Task t1 is blocked: Split the migration." {
		t.Fatalf("remediation %v", r)
	}
	page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/activity?kind=attention", a.ViewerTok, nil)
	if items := page["items"].([]any); len(items) != 1 || items[0].(map[string]any)["action"] != "attention.acknowledge" {
		t.Errorf("activity %v", items)
	}
}

func TestTheSessionsListOverTheAPI(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	billing, docs := a.Kit.Mission(a.Lead, false), a.Kit.Mission(a.Lead, false)
	quiet := a.Kit.Session(a.Agent, billing)
	a.Kit.Clock.Advance(1e9)
	gated := a.Kit.Session(a.Agent, docs)
	openGate(a, a.AgentKey, gated)
	a.Kit.Clock.Advance(1e9)
	theirs := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.OtherKey, map[string]any{"mission": billing,
		"agent": "claude-code", "title": "Nightly Billing cleanup", "external_id": "cc-123"})["id"].(string)
	a.Kit.Clock.Advance(1e9)
	stopped := a.Kit.Session(a.Agent, billing)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions/"+stopped+"/pause", a.LeadTok, map[string]any{"reason": "Hold"})
	list := func(token, query string) ([]string, string) {
		t.Helper()
		page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions"+query, token, nil)
		var out []string
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		next, _ := page["next"].(string)
		return out, next
	}
	tests := []struct {
		name, token, query string
		want               []string
	}{
		{"most severe first, then oldest", a.ViewerTok, "", []string{stopped, gated, quiet, theirs}},
		{"mission", a.ViewerTok, "?mission=" + docs, []string{gated}},
		{"state", a.ViewerTok, "?state=CONTINUE", []string{quiet, theirs}},
		{"state BLOCKED", a.LeadTok, "?state=BLOCKED", []string{stopped}},
		{"agent", a.ViewerTok, "?agent=" + a.Other.KeyName, []string{theirs}},
		{"executor", a.ViewerTok, "?executor=claude-code", []string{theirs}},
		{"external_id", a.ViewerTok, "?external_id=cc-123", []string{theirs}},
		{"q, ignoring case", a.ViewerTok, "?q=BILLING", []string{theirs}},
		{"an agent key sees only its own", a.OtherKey, "", []string{theirs}},
		{"and filters only its own", a.OtherKey, "?mission=" + docs, nil},
		{"the other key", a.AgentKey, "?mission=" + billing, []string{stopped, quiet}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.T = t
			if got, next := list(tt.token, tt.query); !slices.Equal(got, tt.want) || next != "" {
				t.Errorf("%q lists %q (next %q), want %q", tt.query, got, next, tt.want)
			}
		})
	}
	t.Run("a row", func(t *testing.T) {
		a.T = t
		page := a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions?external_id=cc-123", a.ViewerTok, nil)
		r := page["items"].([]any)[0].(map[string]any)
		for k, want := range map[string]any{"id": theirs, "mission": billing, "agent": a.Other.KeyName, "executor": "claude-code",
			"external_id": "cc-123", "title": "Nightly Billing cleanup", "lifecycle": "IDLE", "next_action": "CONTINUE"} {
			if r[k] != want {
				t.Errorf("%s is %v, want %v", k, r[k], want)
			}
		}
		if r["created_at"] == nil || r["updated_at"] == nil {
			t.Errorf("row %v", r)
		}
	})
	t.Run("pages", func(t *testing.T) {
		a.T = t
		first, next := list(a.ViewerTok, "?limit=3")
		rest, last := list(a.ViewerTok, "?limit=3&next="+url.QueryEscape(next))
		if got := append(first, rest...); !slices.Equal(got, []string{stopped, gated, quiet, theirs}) || last != "" {
			t.Errorf("pages %q then %q (next %q)", first, rest, last)
		}
	})
	t.Run("bad parameters", func(t *testing.T) {
		a.T = t
		for query, code := range map[string]string{"?status=open": "unknown_parameter", "?state=STUCK": "unknown_state",
			"?limit=0": "invalid_limit", "?limit=501": "invalid_limit", "?next=abc": "invalid_next", "?next=e30": "invalid_next",
			"?q=" + strings.Repeat("q", 201): "filter_too_long"} {
			r := a.Do(http.MethodGet, "/api/v1/sessions"+query, a.ViewerTok, nil)
			webtest.CheckError(t, r, http.StatusUnprocessableEntity, code)
		}
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/sessions", "", nil), http.StatusUnauthorized, "unauthorized")
	})
}
