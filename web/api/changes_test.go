package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// The seed's secret: a line of config/deploy.sh.
const (
	seedSecretValue = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	seedSecretLine  = "AWS_SECRET_ACCESS_KEY=" + seedSecretValue + "\n"
	seedHardStop    = "Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh. This is a critical control: stop, and do not work around it."
)

func changeBody(files ...[2]string) map[string]any {
	fs := make([]map[string]string, len(files))
	for i, f := range files {
		fs[i] = map[string]string{"path": f[0], "content": f[1]}
	}
	return map[string]any{"files": fs}
}

// reportChange posts a change report as the session's agent and returns the
// raw answer.
func reportChange(a *webtest.API, session string, body any) webtest.Response {
	a.T.Helper()
	return a.Do(http.MethodPost, "/api/v1/sessions/"+session+"/changes", a.AgentKey, body)
}

func violationsOf(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	list, ok := m["violations"].([]any)
	if !ok {
		t.Fatalf("no violations list: %v", m)
	}
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i], _ = v.(map[string]any)
	}
	return out
}

func TestChangeReportOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)

	t.Run("the seed's AWS secret is a critical violation, without the secret, and the brief is HARD_STOP", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		r := reportChange(a, id, changeBody([2]string{"config/deploy.sh", "#!/bin/sh\n" + seedSecretLine}))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, webtest.Short(r.Body))
		}
		webtest.CheckJSONContentType(t, r)
		if strings.Contains(string(r.Body), seedSecretValue) || strings.Contains(string(r.Body), "wJalr") {
			t.Fatalf("the answer holds the secret: %s", r.Body)
		}
		m := r.Object(t)
		vs := violationsOf(t, m)
		if len(vs) != 1 || vs[0]["match"] != "AWS_SECRET_ACCESS_KEY" || vs[0]["file"] != "config/deploy.sh" ||
			vs[0]["severity"] != "critical" {
			t.Fatalf("violations = %v", vs)
		}
		risk, _ := m["risk"].(map[string]any)
		if _, ok := risk["score"]; !ok || risk["band"] == nil {
			t.Errorf("risk = %v, want score and band", m["risk"])
		}
		b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]string{"session": id})
		if b["next_action"] != "HARD_STOP" || b["reason"] != seedHardStop {
			t.Fatalf("brief = %v %q", b["next_action"], b["reason"])
		}
	})

	t.Run("a body over 1 MiB is 413", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		r := reportChange(a, id, changeBody([2]string{"big.txt", strings.Repeat("x", 1<<20+1)}))
		webtest.CheckError(t, r, http.StatusRequestEntityTooLarge, "")
	})

	t.Run("a binary file is skipped, not crashed on", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		r := reportChange(a, id, changeBody([2]string{"assets/logo.png", "\x89PNG\x00\x00\x00" + seedSecretLine}))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, webtest.Short(r.Body))
		}
		if vs := violationsOf(t, r.Object(t)); len(vs) != 0 {
			t.Fatalf("a binary file raised violations: %v", vs)
		}
	})

	t.Run("a lead clears a violation once; a second clear is 409", func(t *testing.T) {
		a.T = t
		id := a.Session(false)
		r := reportChange(a, id, changeBody([2]string{"config/deploy.sh", seedSecretLine}))
		vs := violationsOf(t, r.Object(t))
		if len(vs) != 1 {
			t.Fatalf("violations = %v", vs)
		}
		path := fmt.Sprintf("/api/v1/violations/%v/clear", vs[0]["id"])
		body := map[string]any{"as": "false_positive", "note": "A documented example key."}
		webtest.CheckError(t, a.Do(http.MethodPost, path, a.ViewerTok, body), http.StatusForbidden, "")
		webtest.CheckError(t, a.Do(http.MethodPost, path, a.AgentKey, body), http.StatusForbidden, "")
		a.Must(http.StatusOK, http.MethodPost, path, a.LeadTok, body)
		webtest.CheckError(t, a.Do(http.MethodPost, path, a.LeadTok, body), http.StatusConflict, "already_closed")
		b := a.Must(http.StatusOK, http.MethodPost, "/brief", a.AgentKey, map[string]string{"session": id})
		if b["next_action"] == "HARD_STOP" {
			t.Fatalf("still HARD_STOP after the clear: %q", b["reason"])
		}
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/violations/999999/clear", a.LeadTok, body), http.StatusNotFound, "")
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/violations/abc/clear", a.LeadTok, body), http.StatusNotFound, "")
	})

	t.Run("evidence and complete: the mission's gate decides", func(t *testing.T) {
		a.T = t
		slug := "evidence-http"
		a.Must(http.StatusCreated, http.MethodPost, "/api/v1/missions", a.LeadTok, map[string]any{"slug": slug, "title": "Evidence",
			"evidence": []string{"tests", "review"}})
		id := a.Kit.Session(a.Agent, slug)
		ev := "/api/v1/sessions/" + id + "/evidence"
		a.Must(http.StatusCreated, http.MethodPost, ev, a.AgentKey, map[string]any{"kind": "tests", "passed": true, "detail": "go test ./..."})
		webtest.CheckError(t, a.Do(http.MethodPost, ev, a.AgentKey, map[string]any{"passed": true}), http.StatusUnprocessableEntity, "")
		webtest.CheckError(t, a.Do(http.MethodPost, ev, a.OtherKey, map[string]any{"kind": "tests", "passed": true}), http.StatusForbidden, "")
		done := "/api/v1/sessions/" + id + "/complete"
		g := a.Must(http.StatusOK, http.MethodPost, done, a.AgentKey, map[string]any{})
		if g["evidence_gate"] != "unsatisfied" || fmt.Sprint(g["missing"]) != "[review]" {
			t.Fatalf("gate = %v", g)
		}
		a.Must(http.StatusCreated, http.MethodPost, ev, a.AgentKey, map[string]any{"kind": "review", "passed": true})
		g = a.Must(http.StatusOK, http.MethodPost, done, a.AgentKey, map[string]any{})
		if g["evidence_gate"] != "satisfied" || fmt.Sprint(g["missing"]) != "[]" {
			t.Fatalf("gate = %v", g)
		}
	})
}

func TestPoliciesAndRulesOverHTTP(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)

	t.Run("a pattern that does not compile is 422 with the compile error", func(t *testing.T) {
		a.T = t
		r := a.Do(http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "Broken", "severity": "high",
			"kind": "content_regex", "pattern": "a(b", "action": "violation"})
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "invalid_policy")
		if !strings.Contains(string(r.Body), "missing closing )") {
			t.Errorf("the message lacks the compile error: %s", r.Body)
		}
	})
	t.Run("only an admin defines a policy", func(t *testing.T) {
		a.T = t
		body := map[string]any{"name": "No TODO", "severity": "low", "kind": "content_regex", "pattern": "TODO"}
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies", a.ViewerTok, body), http.StatusForbidden, "")
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies", a.LeadTok, body), http.StatusForbidden, "")
		p := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/policies", a.AdminTok, body)
		if p["name"] != "No TODO" || p["action"] != "violation" {
			t.Errorf("policy = %v", p)
		}
		list := a.Must(http.StatusOK, http.MethodGet, "/api/v1/policies", a.ViewerTok, nil)
		if !strings.Contains(fmt.Sprint(list["policies"]), "No TODO") {
			t.Errorf("the list lacks the new policy: %v", list)
		}
	})
	t.Run("a 900,000-character pattern is 422 pattern_too_long and writes nothing", func(t *testing.T) {
		a.T = t
		before := a.Must(http.StatusOK, http.MethodGet, "/api/v1/policies", a.AdminTok, nil)
		r := a.Do(http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "Huge", "severity": "high",
			"kind": "content_regex", "pattern": strings.Repeat("a", 900_000)})
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "pattern_too_long")
		if o := r.Object(t); fmt.Sprint(o["error"].(map[string]any)["field"]) != "pattern" {
			t.Errorf("the error names no field: %v", o)
		}
		r = a.Do(http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "Costly", "severity": "high",
			"kind": "content_regex", "pattern": `(?s).{500}`})
		webtest.CheckError(t, r, http.StatusUnprocessableEntity, "pattern_too_costly")
		after := a.Must(http.StatusOK, http.MethodGet, "/api/v1/policies", a.AdminTok, nil)
		if len(after["policies"].([]any)) != len(before["policies"].([]any)) {
			t.Errorf("a refused policy was written")
		}
	})
	t.Run("an admin disables, enables and deletes a policy, and it is logged", func(t *testing.T) {
		a.T = t
		p := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "No left-pad",
			"severity": "high", "kind": "dependency", "pattern": "left-pad"})
		id := fmt.Sprint(p["id"])
		if p["enabled"] != true {
			t.Errorf("a new policy is not enabled: %v", p)
		}
		for _, tok := range []string{a.ViewerTok, a.LeadTok, a.AgentKey} {
			webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies/"+id+"/disable", tok, nil), http.StatusForbidden, "forbidden")
			webtest.CheckError(t, a.Do(http.MethodDelete, "/api/v1/policies/"+id, tok, nil), http.StatusForbidden, "forbidden")
		}
		if d := a.Must(http.StatusOK, http.MethodPost, "/api/v1/policies/"+id+"/disable", a.AdminTok, nil); d["enabled"] != false || d["disabled_at"] == nil {
			t.Errorf("disabled = %v", d)
		}
		if d := a.Must(http.StatusOK, http.MethodPost, "/api/v1/policies/"+id+"/enable", a.AdminTok, map[string]any{}); d["enabled"] != true {
			t.Errorf("enabled = %v", d)
		}
		a.Must(http.StatusOK, http.MethodDelete, "/api/v1/policies/"+id, a.AdminTok, nil)
		webtest.CheckError(t, a.Do(http.MethodDelete, "/api/v1/policies/"+id, a.AdminTok, nil), http.StatusNotFound, "policy_not_found")
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies/x/enable", a.AdminTok, nil), http.StatusNotFound, "policy_not_found")
		for _, action := range []string{"policy.created", "policy.disabled", "policy.enabled", "policy.deleted"} {
			if !strings.Contains(a.Log.String(), "action="+action) || !strings.Contains(a.Log.String(), "by=person:"+a.Admin.Email) {
				t.Errorf("the log lacks %s by the admin", action)
			}
		}
	})
	t.Run("a rule's confidence is support/total", func(t *testing.T) {
		a.T = t
		r := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/rules", a.AdminTok, map[string]any{"concern": "server state",
			"chosen": "React Query", "departures": []string{"redux-toolkit"}, "support": 31, "total": 34, "enforced": true})
		if r["confidence"] != float64(91) || r["enforced"] != true {
			t.Errorf("rule = %v", r)
		}
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/rules", a.LeadTok, map[string]any{"concern": "x", "chosen": "y",
			"support": 1, "total": 2}), http.StatusForbidden, "")
		list := a.Must(http.StatusOK, http.MethodGet, "/api/v1/rules", a.ViewerTok, nil)
		if !strings.Contains(fmt.Sprint(list["rules"]), "React Query") {
			t.Errorf("the list lacks the new rule: %v", list)
		}
	})
}

func TestSessionPageShowsTheChange(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/missions", a.LeadTok, map[string]any{"slug": "change-page", "title": "Change page",
		"evidence": []string{"tests", "review"}})
	id := a.Kit.Session(a.Agent, "change-page")
	r := reportChange(a, id, changeBody([2]string{"config/deploy.sh", seedSecretLine}))
	vs := violationsOf(t, r.Object(t))
	if len(vs) != 1 {
		t.Fatalf("violations = %v", vs)
	}
	vid := fmt.Sprint(vs[0]["id"])
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/evidence", a.AgentKey, map[string]any{"kind": "tests", "passed": false})

	viewer := webtest.ConsoleAs(t, a.Srv.URL, a.Viewer.Email)
	res, body := viewer.Get("/sessions/" + id)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	for _, want := range []string{`data-testid="risk-score"`, `data-testid="risk-band"`, `data-testid="violation-row" data-ref="` + vid + `"`,
		"AWS_SECRET_ACCESS_KEY", `data-gate="unsatisfied"`, `data-testid="evidence-missing"`, `data-testid="evidence-failed"`,
		`data-testid="evidence-row" data-kind="tests"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, seedSecretValue) {
		t.Errorf("the page shows the secret")
	}
	if strings.Contains(body, `data-testid="violation-clear-form"`) {
		t.Errorf("a viewer sees the clear form")
	}
	if res, _ := viewer.PostForm("/violations/"+vid+"/clear", nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's clear: %d, want 403", res.StatusCode)
	}

	lead := webtest.ConsoleAs(t, a.Srv.URL, a.Lead.Email)
	_, body = lead.Get("/sessions/" + id)
	if !strings.Contains(body, `data-testid="violation-clear-form"`) {
		t.Fatalf("a lead has no clear form")
	}
	res, _ = lead.PostForm("/violations/"+vid+"/clear", url.Values{"as": {"false_positive"}, "note": {"Example key."},
		"back": {"/sessions/" + id}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/sessions/"+id {
		t.Fatalf("clear: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	_, body = lead.Get("/sessions/" + id)
	if strings.Contains(body, `data-testid="violation-row"`) || !strings.Contains(body, "violation.cleared") {
		t.Errorf("the cleared violation is still shown, or the timeline lacks the clear")
	}
	if res, body := lead.PostForm("/violations/"+vid+"/clear", url.Values{"as": {"fixed"}, "back": {"/sessions/" + id}}); res.StatusCode != http.StatusConflict {
		t.Errorf("clearing twice: %d, want 409 %s", res.StatusCode, webtest.Short([]byte(body)))
	}
}

func TestAttentionShowsCriticalViolationsAndRequiredRemediations(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	ctx := t.Context()
	id := a.Session(false)
	vs := violationsOf(t, reportChange(a, id, changeBody([2]string{"config/deploy.sh", seedSecretLine})).Object(t))
	if len(vs) != 1 {
		t.Fatalf("violations = %v", vs)
	}
	vref := fmt.Sprint(vs[0]["id"])
	rem := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/remediations", a.LeadTok,
		map[string]any{"severity": "required", "instruction": "Move the key to the vault.", "files": []string{"config/deploy.sh"}})
	rref := fmt.Sprint(rem["id"])
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions/"+id+"/remediations", a.LeadTok,
		map[string]any{"severity": "advisory", "instruction": "Tidy up."})

	items, err := a.Kit.Gov.Attention.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Kind != "violation" || items[0].Ref != vref || items[1].Kind != "remediation" || items[1].Ref != rref {
		t.Fatalf("items = %+v", items)
	}
	if strings.Contains(fmt.Sprint(items), seedSecretValue) {
		t.Fatal("an item holds the secret")
	}
	if n, err := a.Kit.Gov.Attention.Count(ctx); err != nil || n != len(items) {
		t.Fatalf("count %d (%v), list %d", n, err, len(items))
	}
	list := a.Must(http.StatusOK, http.MethodGet, "/api/v1/attention", a.ViewerTok, nil)
	if got := fmt.Sprint(list["items"]); !strings.Contains(got, "kind:violation") || !strings.Contains(got, "kind:remediation") {
		t.Errorf("the API lacks the items: %s", got)
	}

	viewer := webtest.ConsoleAs(t, a.Srv.URL, a.Viewer.Email)
	_, body := viewer.Get("/")
	for _, want := range []string{`data-testid="attention-item" data-ref="` + vref + `" data-kind="violation"`,
		`data-testid="attention-item" data-ref="` + rref + `" data-kind="remediation"`, "Secrets in source was violated by AWS_SECRET_ACCESS_KEY"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Index(body, `data-ref="`+vref+`"`) > strings.Index(body, `data-ref="`+rref+`"`) {
		t.Errorf("the HARD_STOP is not first")
	}
	// Each line opens its item, with the lead's form on it.
	itemPages := func(c *webtest.Client) string {
		_, v := c.Get("/attention/items/violation/" + id + "/" + vref)
		_, r := c.Get("/attention/items/remediation/" + id + "/" + rref)
		return v + r
	}
	if body := itemPages(viewer); strings.Contains(body, `data-testid="violation-clear-form"`) || strings.Contains(body, `data-testid="remediation-close-form"`) ||
		!strings.Contains(body, "Secrets in source was violated by AWS_SECRET_ACCESS_KEY") {
		t.Errorf("a viewer sees the lead's forms, or not the items: %s", webtest.Short([]byte(body)))
	}

	lead := webtest.ConsoleAs(t, a.Srv.URL, a.Lead.Email)
	if body := itemPages(lead); !strings.Contains(body, `data-testid="violation-clear-form"`) || !strings.Contains(body, `data-testid="remediation-close-form"`) {
		t.Fatalf("a lead lacks the forms")
	}
	res, body := lead.HTMXPost("/violations/"+vref+"/clear", url.Values{"as": {"bogus"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-ref="`+vref+`"`) ||
		!strings.Contains(body, "Choose how the violation was cleared: fixed, or a false positive (not &#34;bogus&#34;).") || strings.Contains(body, "<html") {
		t.Fatalf("a bad clear: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, body = lead.HTMXPost("/violations/"+vref+"/clear", url.Values{"as": {"fixed"}, "note": {"Rotated."}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="nav-count"`) {
		t.Fatalf("clear: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, body = lead.HTMXPost("/remediations/"+rref+"/close", url.Values{"note": {"Moved to the vault."}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="nav-count"`) {
		t.Fatalf("close: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	items, err = a.Kit.Gov.Attention.List(ctx)
	if err != nil || len(items) != 0 {
		t.Fatalf("items after acting: %+v (%v)", items, err)
	}
	if n, _ := a.Kit.Gov.Attention.Count(ctx); n != 0 {
		t.Errorf("count %d after acting", n)
	}
	d := a.DetailOf(id)
	if len(d.Remediations) != 2 || d.Remediations[0].CloseNote != "Moved to the vault." {
		t.Errorf("remediations = %+v", d.Remediations)
	}
}

func TestPoliciesAndRulesPages(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	admin := webtest.ConsoleAs(t, a.Srv.URL, a.Admin.Email)
	_, body := admin.Get("/admin/policies")
	for _, want := range []string{`href="/admin/policies"`, `href="/admin/rules"`, `data-testid="policy-row"`, `data-testid="policy-form"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the policies page lacks %s", want)
		}
	}
	res, body := admin.PostForm("/admin/policies", url.Values{"name": {"Broken"}, "severity": {"high"}, "kind": {"content_regex"},
		"pattern": {"a(b"}, "action": {"violation"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="error-pattern"`) ||
		!strings.Contains(body, "missing closing )") || !strings.Contains(body, `value="a(b"`) {
		t.Fatalf("a bad pattern: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, _ = admin.PostForm("/admin/policies", url.Values{"name": {"No console.log"}, "severity": {"high"}, "kind": {"content_regex"},
		"pattern": {`console\.log\(`}, "action": {"violation"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a good policy: %d", res.StatusCode)
	}
	if _, body = admin.Get("/admin/policies"); !strings.Contains(body, "No console.log") {
		t.Errorf("the list lacks the new policy")
	}

	res, body = admin.PostForm("/admin/rules", url.Values{"concern": {"server state"}, "chosen": {"React Query"},
		"departures": {"redux-toolkit"}, "support": {"40"}, "total": {"34"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="error-total"`) {
		t.Fatalf("support over total: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, _ = admin.PostForm("/admin/rules", url.Values{"concern": {"server state"}, "chosen": {"React Query"},
		"departures": {"redux-toolkit\nswr"}, "support": {"31"}, "total": {"34"}, "enforced": {"true"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a good rule: %d", res.StatusCode)
	}
	if _, body = admin.Get("/admin/rules"); !strings.Contains(body, "91%") || !strings.Contains(body, "swr") {
		t.Errorf("the list lacks the new rule: %s", webtest.Short([]byte(body)))
	}

	lead := webtest.ConsoleAs(t, a.Srv.URL, a.Lead.Email)
	if res, _ := lead.Get("/admin/policies"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a lead's policies page: %d, want 403", res.StatusCode)
	}
	if _, body := lead.Get("/"); strings.Contains(body, `href="/admin/policies"`) {
		t.Errorf("a lead sees the admin links")
	}
}
