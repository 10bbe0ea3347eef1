package api_test

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/web/webtest"
)

// requireKeys fails unless obj has every key (extra keys are welcome).
func requireKeys(t testing.TB, what string, obj map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			t.Errorf("%s has no %q field: %v", what, k, keysOf(obj))
		}
	}
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// list returns obj[key] as a JSON array, failing if it is anything else
// (null included: an empty list is [], never null).
func jsonList(t testing.TB, obj map[string]any, key string) []any {
	t.Helper()
	l, ok := obj[key].([]any)
	if !ok {
		t.Fatalf("%q is %T (%v), want a JSON array", key, obj[key], obj[key])
	}
	return l
}

func objects(t testing.TB, obj map[string]any, key string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, v := range jsonList(t, obj, key) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] is %T, want an object", key, i, v)
		}
		out = append(out, m)
	}
	return out
}

func strs(t testing.TB, obj map[string]any, key string) []string {
	t.Helper()
	out := []string{}
	for i, v := range jsonList(t, obj, key) {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s[%d] is %T, want a string", key, i, v)
		}
		out = append(out, s)
	}
	return out
}

// checkTimes walks a decoded JSON value and fails for every field named
// "*_at" that is not null and not an RFC 3339 UTC time ("…Z").
func checkTimes(t testing.TB, path string, v any) int {
	t.Helper()
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.HasSuffix(k, "_at") && x != nil {
				s, ok := x.(string)
				tm, err := time.Parse(time.RFC3339Nano, s)
				if !ok || err != nil || !strings.HasSuffix(s, "Z") || tm.IsZero() {
					t.Errorf("%s.%s = %v: not an RFC 3339 UTC time", path, k, x)
				}
				n++
				continue
			}
			n += checkTimes(t, path+"."+k, x)
		}
	case []any:
		for _, x := range v {
			n += checkTimes(t, path+"[]", x)
		}
	}
	return n
}

// checkBrief checks a brief's shape against API.md and returns it.
func checkBrief(t testing.TB, r webtest.Response, session string) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("brief: status %d: %s", r.Status, r.Body)
	}
	webtest.CheckJSONContentType(t, r)
	b := r.Object(t)
	requireKeys(t, "the brief", b, "session", "next_action", "reason", "reasons", "also", "blocked_scope",
		"allowed_scope", "decisions", "resolutions", "remediations", "protocol", "generated_at")
	if b["session"] != session {
		t.Errorf("session %v, want %s", b["session"], session)
	}
	for _, k := range []string{"next_action", "reason", "protocol", "generated_at"} {
		if s, ok := b[k].(string); !ok || s == "" {
			t.Errorf("%s is %v, want a non-empty string", k, b[k])
		}
	}
	states := []string{"HARD_STOP", "BLOCKED", "DECISION_REQUIRED", "REMEDIATE", "CONTINUE_WITH_WARNING", "CONTINUE"}
	if !slices.Contains(states, b["next_action"].(string)) {
		t.Errorf("next_action %v is not one of the six states", b["next_action"])
	}
	strs(t, b, "blocked_scope")
	strs(t, b, "allowed_scope")
	reasons := objects(t, b, "reasons")
	if len(reasons) == 0 && b["next_action"] != "CONTINUE" {
		t.Errorf("reasons is empty at %v: a brief gives the reasons for its next_action", b["next_action"])
	}
	for _, key := range []string{"reasons", "also"} {
		for i, x := range objects(t, b, key) {
			requireKeys(t, key+" item", x, "state", "code", "ref", "text")
			for _, f := range []string{"state", "code", "ref", "text"} {
				if _, ok := x[f].(string); !ok {
					t.Errorf("%s[%d].%s is %T, want a string", key, i, f, x[f])
				}
			}
			if key == "reasons" && x["state"] != b["next_action"] {
				t.Errorf("reasons[%d] is at %v, not at next_action %v", i, x["state"], b["next_action"])
			}
			if key == "also" && x["state"] == b["next_action"] {
				t.Errorf("also[%d] is at next_action's state %v", i, x["state"])
			}
		}
	}
	if len(reasons) > 0 && b["reason"] != reasons[0]["text"] {
		t.Errorf("reason %q is not the first reason's text %q", b["reason"], reasons[0]["text"])
	}
	for _, d := range objects(t, b, "decisions") {
		requireKeys(t, "decisions item", d, "ref", "title", "question", "proposal", "status", "blocked_scope", "allowed_scope", "opened_at")
	}
	for _, r := range objects(t, b, "resolutions") {
		requireKeys(t, "resolutions item", r, "ref", "resolution", "instruction", "resolved_at", "resolved_by")
	}
	for _, m := range objects(t, b, "remediations") {
		requireKeys(t, "remediations item", m, "id", "severity", "instruction", "files", "delivered_at")
	}
	if checkTimes(t, "brief", b) == 0 {
		t.Error("no time fields checked: generated_at at least must be there")
	}
	return b
}

func brief(a *webtest.API, id string) map[string]any {
	a.T.Helper()
	return checkBrief(a.T, a.Do(http.MethodPost, "/brief", a.AgentKey, map[string]string{"session": id}), id)
}

func codes(t *testing.T, b map[string]any, key string) []string {
	t.Helper()
	var out []string
	for _, r := range objects(t, b, key) {
		out = append(out, r["code"].(string))
	}
	return out
}

// TestBriefFollowsTheContract walks one session through a gate and a
// remediation and checks every brief's field names, types and times, and
// that a resolution is delivered once and then shows as delivered.
func TestBriefFollowsTheContract(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	id := a.Session(false)

	b := brief(a, id)
	if b["next_action"] != "CONTINUE" || len(jsonList(t, b, "resolutions")) != 0 || len(jsonList(t, b, "also")) != 0 {
		t.Errorf("a fresh session: %v", b)
	}
	if b["generated_at"] != "2026-11-29T12:00:00Z" {
		t.Errorf("generated_at %v, want the kit clock's 2026-11-29T12:00:00Z", b["generated_at"])
	}
	if p := b["protocol"].(string); !strings.Contains(p, "DECISION_REQUIRED") || !strings.Contains(p, "HARD_STOP") {
		t.Errorf("protocol text does not name the states: %.200s", p)
	}

	gate := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey, map[string]any{
		"title": "Schema", "question": "Drop the legacy billing table?", "proposal": "Drop it after the export.",
		"blocked_scope": []string{"db/migrations"}, "allowed_scope": []string{"web/", "views/"}})
	ref, _ := gate["ref"].(string)
	if !strings.HasPrefix(ref, "DEC-") || gate["status"] != "open" {
		t.Fatalf("opened gate: %v", gate)
	}
	a.Kit.Clock.Advance(time.Minute)
	rem := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/remediations", a.LeadTok, map[string]any{
		"severity": "required", "instruction": "Add a test for the export.", "files": []string{"billing/export.go"}})
	if rem["delivered_at"] != nil {
		t.Errorf("a new remediation is already delivered: %v", rem)
	}

	a.Kit.Clock.Advance(time.Minute)
	b = brief(a, id)
	if b["next_action"] != "DECISION_REQUIRED" {
		t.Fatalf("next_action %v, want DECISION_REQUIRED", b["next_action"])
	}
	rs := objects(t, b, "reasons")
	if len(rs) != 1 || rs[0]["code"] != "decision_open" || rs[0]["ref"] != ref || rs[0]["state"] != "DECISION_REQUIRED" {
		t.Errorf("reasons %v, want one decision_open for %s", rs, ref)
	}
	if !strings.Contains(b["reason"].(string), "Drop the legacy billing table?") {
		t.Errorf("reason %q does not carry the question", b["reason"])
	}
	if !slices.Contains(codes(t, b, "also"), "remediation_required") {
		t.Errorf("also %v does not keep the required remediation", b["also"])
	}
	if got := strs(t, b, "blocked_scope"); !reflect.DeepEqual(got, []string{"db/migrations"}) {
		t.Errorf("blocked_scope %v, want the gate's", got)
	}
	if got := strs(t, b, "allowed_scope"); !reflect.DeepEqual(got, []string{"web/", "views/"}) {
		t.Errorf("allowed_scope %v, want the gate's", got)
	}
	ds := objects(t, b, "decisions")
	if len(ds) != 1 || ds[0]["ref"] != ref || ds[0]["status"] != "open" || ds[0]["proposal"] != "Drop it after the export." {
		t.Errorf("decisions %v", ds)
	}
	ms := objects(t, b, "remediations")
	if len(ms) != 1 || ms[0]["delivered_at"] != "2026-11-29T12:02:00Z" || ms[0]["severity"] != "required" {
		t.Errorf("remediations %v: want the request, stamped delivered by this brief", ms)
	}
	if len(jsonList(t, b, "resolutions")) != 0 {
		t.Errorf("resolutions %v before anyone resolved", b["resolutions"])
	}

	a.Kit.Clock.Advance(time.Minute)
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+ref+"/resolve", a.LeadTok,
		map[string]string{"resolution": "Keep the table.", "instruction": "Archive rows instead of dropping."})
	{ // decided, not yet delivered
		d := a.Detail(id)
		dec := objects(t, d, "decisions")[0]
		if dec["status"] != "resolved" || dec["delivered_at"] != nil {
			t.Errorf("before the brief: status %v delivered_at %v, want resolved and none", dec["status"], dec["delivered_at"])
		}
		// The preview on the session shows what the next brief would deliver,
		// and delivers nothing.
		prev, _ := d["brief"].(map[string]any)
		if prev == nil || len(objects(t, prev, "resolutions")) != 1 {
			t.Errorf("the session's brief preview does not show the pending resolution: %v", d["brief"])
		}
		if dec := objects(t, a.Detail(id), "decisions")[0]; dec["status"] != "resolved" {
			t.Errorf("reading the session delivered the resolution: %v", dec["status"])
		}
	}

	a.Kit.Clock.Advance(time.Minute)
	b = brief(a, id)
	res := objects(t, b, "resolutions")
	if len(res) != 1 {
		t.Fatalf("resolutions %v, want the one resolution", b["resolutions"])
	}
	want := map[string]any{"ref": ref, "resolution": "Keep the table.", "instruction": "Archive rows instead of dropping.",
		"resolved_at": "2026-11-29T12:03:00Z", "resolved_by": a.Lead.Email}
	for k, v := range want {
		if res[0][k] != v {
			t.Errorf("resolution %s = %v, want %v", k, res[0][k], v)
		}
	}
	if len(jsonList(t, b, "decisions")) != 0 {
		t.Errorf("decisions %v: a resolved gate is not open", b["decisions"])
	}
	if b["next_action"] != "REMEDIATE" {
		t.Errorf("next_action %v, want REMEDIATE (the required remediation is still open)", b["next_action"])
	}

	a.Kit.Clock.Advance(time.Minute)
	b = brief(a, id)
	if res := jsonList(t, b, "resolutions"); len(res) != 0 {
		t.Errorf("the second brief delivered again: %v", res)
	}

	d := a.Detail(id)
	dec := objects(t, d, "decisions")[0]
	if dec["status"] != "delivered" || dec["delivered_at"] != "2026-11-29T12:04:00Z" {
		t.Errorf("after delivery: status %v delivered_at %v, want delivered at 12:04", dec["status"], dec["delivered_at"])
	}
	checkTimes(t, "session", d)
	if n := webtest.CountOf(a.Timeline(id), "resolution.delivered"); n != 1 {
		t.Errorf("%d resolution.delivered events, want 1", n)
	}
	if d["last_brief_at"] != "2026-11-29T12:05:00Z" {
		t.Errorf("last_brief_at %v, want the last brief's time", d["last_brief_at"])
	}
}

// TestRacingBriefsDeliverAResolutionOnce fires briefs at one session at
// once: exactly one of them carries the resolution.
func TestRacingBriefsDeliverAResolutionOnce(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	for round := range 3 {
		id := a.Session(false)
		gate := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/decisions", a.AgentKey,
			map[string]any{"title": "T", "question": "Q?"})
		a.Must(http.StatusOK, http.MethodPost, "/api/v1/decisions/"+gate["ref"].(string)+"/resolve", a.LeadTok,
			map[string]string{"resolution": "R", "instruction": "I"})
		const n = 12
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			delivered int
			failures  []string
		)
		for range n {
			wg.Go(func() {
				got, err := a.BriefDelivers(id)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures = append(failures, err.Error())
				}
				delivered += got
			})
		}
		wg.Wait()
		t.Logf("round %d", round)
		a.CheckDeliveredOnce(id, delivered, failures)
	}
}
