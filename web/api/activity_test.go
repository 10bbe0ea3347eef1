package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/web/webtest"
)

// TestAdminActivityOverTheAPI: what an admin does over the API and in the
// console is listed by GET /api/v1/admin/activity, newest first, paged
// and filtered; only admins read it; a refused call adds nothing.
func TestAdminActivityOverTheAPI(t *testing.T) {
	t.Parallel()
	a := webtest.NewAPI(t)
	list := func(query string) map[string]any {
		return a.Must(http.StatusOK, http.MethodGet, "/api/v1/admin/activity"+query, a.AdminTok, nil)
	}
	items := func(page map[string]any) []map[string]any {
		var out []map[string]any
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any))
		}
		return out
	}
	p := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "No TODO",
		"severity": "low", "kind": "content_regex", "pattern": "TODO", "action": "violation"})
	id := fmt.Sprint(p["id"])
	a.Must(http.StatusOK, http.MethodPost, "/api/v1/policies/"+id+"/disable", a.AdminTok, nil)
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/risk-gates", a.AdminTok, map[string]any{"critical": "the CTO signs"})
	a.Must(http.StatusOK, http.MethodPut, "/api/v1/tools/github/create_issue", a.AdminTok, map[string]any{"side_effecting": true})
	a.Must(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", a.AdminTok, map[string]any{"url": "https://hooks.example.com/a",
		"secret": "api-webhook-signing-secret", "events": []string{"hard_stop"}})
	admin := webtest.ConsoleAs(t, a.Srv.URL, a.Admin.Email)
	if res, _ := admin.PostForm("/admin/tools", url.Values{"server": {"github"}, "tool": {"merge_pr"}, "side_effecting": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("classify a tool in the console: %d", res.StatusCode)
	}
	if res, _ := admin.PostForm("/admin/users/"+fmt.Sprint(a.Viewer.UserID)+"/role", url.Values{"role": {"lead"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change a role in the console: %d", res.StatusCode)
	}

	page := list("?limit=7")
	var got []string
	for _, e := range items(page) {
		if e["actor"] != a.Admin.Email {
			t.Errorf("%v by %v, want %s", e["action"], e["actor"], a.Admin.Email)
		}
		got = append(got, fmt.Sprint(e["action"], " ", e["target"]))
	}
	want := []string{"user.role user " + a.Viewer.Email, "tool.set tool github.merge_pr", "webhook.create webhook 1 (https://hooks.example.com/a)",
		"tool.set tool github.create_issue", "risk_gates.set risk gates", "policy.disable policy " + id + " (No TODO)",
		"policy.create policy " + id + " (No TODO)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("activity:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(string(a.Do(http.MethodGet, "/api/v1/admin/activity?limit=500", a.AdminTok, nil).Body), "api-webhook-signing-secret") {
		t.Errorf("the activity shows the webhook's secret")
	}
	if wh := items(page)[2]; fmt.Sprint(wh["after"].(map[string]any)["secret"]) != "(set)" || wh["before"] != nil {
		t.Errorf("the webhook entry: %v", wh)
	}

	t.Run("pages follow next_before, and ?action= filters by prefix", func(t *testing.T) {
		a.T = t
		first := list("?limit=1&action=policy")
		if len(items(first)) != 1 || items(first)[0]["action"] != "policy.disable" || first["next_before"] == nil {
			t.Fatalf("first page %v", first)
		}
		cursor := fmt.Sprintf("%.0f", first["next_before"].(float64))
		second := list("?limit=1&action=policy&before=" + cursor)
		if len(items(second)) != 1 || items(second)[0]["action"] != "policy.create" || second["next_before"] != nil {
			t.Errorf("the last page: %v", second)
		}
	})
	t.Run("only an admin reads it", func(t *testing.T) {
		a.T = t
		for _, tok := range []string{a.ViewerTok, a.LeadTok, a.AgentKey} {
			webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/admin/activity", tok, nil), http.StatusForbidden, "forbidden")
		}
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/admin/activity", "", nil), http.StatusUnauthorized, "unauthorized")
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/admin/activity?limit=501", a.AdminTok, nil), http.StatusUnprocessableEntity, "invalid_limit")
		webtest.CheckError(t, a.Do(http.MethodGet, "/api/v1/admin/activity?before=x", a.AdminTok, nil), http.StatusUnprocessableEntity, "invalid_before")
	})
	t.Run("a refused admin call records nothing", func(t *testing.T) {
		a.T = t
		before := list("?limit=500")
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies", a.LeadTok, map[string]any{"name": "x", "severity": "low",
			"kind": "path_glob", "pattern": "x"}), http.StatusForbidden, "forbidden")
		webtest.CheckError(t, a.Do(http.MethodPost, "/api/v1/policies", a.AdminTok, map[string]any{"name": "x", "severity": "low",
			"kind": "content_regex", "pattern": "a("}), http.StatusUnprocessableEntity, "")
		webtest.CheckError(t, a.Do(http.MethodPut, "/api/v1/risk-gates", a.AdminTok, map[string]any{"huge": "x"}), http.StatusUnprocessableEntity, "invalid_band")
		if after := list("?limit=500"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refused calls were recorded")
		}
	})
}
