package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// An admin disables, enables and deletes a policy from the Policies page,
// sees what each costs, and is told why an oversized pattern is refused.
func TestConsolePolicyControls(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	admin, _ := kit.Person(auth.Admin)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	p, err := kit.Gov.Policies.Create(ctx, admin, governance.PolicyInput{Name: "No console.log", Severity: "high",
		Kind: "content_regex", Pattern: `console\.log\(`})
	if err != nil {
		t.Fatal(err)
	}
	s := kit.Session(agent, kit.Mission(lead, false))
	if _, err := kit.Gov.Changes.Report(ctx, agent, s, change.Change{Files: []change.File{{Path: "a.js", Content: "console.log(1)"}}}); err != nil {
		t.Fatal(err)
	}
	row := func(body string) string {
		i := strings.Index(body, fmt.Sprintf(`data-ref="%d"`, p.ID))
		if i < 0 {
			return ""
		}
		j := strings.Index(body[i:], "</tr>")
		return body[i : i+j]
	}
	b := webtest.ConsoleAs(t, base, admin.Email)
	res, body := b.Get("/admin/policies")
	r := row(body)
	if res.StatusCode != http.StatusOK || !strings.Contains(r, `data-state="enabled"`) || !strings.Contains(r, "instructions") ||
		!strings.Contains(r, "slowest") || !strings.Contains(r, fmt.Sprintf(`action="/admin/policies/%d/disable"`, p.ID)) ||
		!strings.Contains(r, `name="csrf"`) {
		t.Fatalf("policies page: %d\n%s", res.StatusCode, r)
	}
	// Deleting cannot be undone: its button is behind a disclosure that
	// says so, in a form of its own.
	if i := strings.Index(r, "<details>"); i < 0 || !strings.Contains(r[i:], fmt.Sprintf(`action="/admin/policies/%d/delete" data-testid="policy-delete-form"`, p.ID)) ||
		!strings.Contains(r[i:], "cannot be undone") {
		t.Errorf("the delete button is not behind a confirming disclosure:\n%s", r)
	}

	for _, step := range []struct{ action, state, notice string }{
		{"disable", "disabled", "Policy disabled"},
		{"enable", "enabled", "Policy enabled"},
	} {
		res, _ := b.PostForm(fmt.Sprintf("/admin/policies/%d/%s", p.ID, step.action), url.Values{})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/policies?done="+step.state {
			t.Fatalf("%s: %d %s", step.action, res.StatusCode, res.Header.Get("Location"))
		}
		_, body := b.Get(res.Header.Get("Location"))
		if !strings.Contains(row(body), `data-state="`+step.state+`"`) || !strings.Contains(body, step.notice) {
			t.Fatalf("after %s:\n%s", step.action, row(body))
		}
	}
	res, _ = b.PostForm(fmt.Sprintf("/admin/policies/%d/delete", p.ID), url.Values{})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if _, body := b.Get("/admin/policies?done=deleted"); row(body) != "" || !strings.Contains(body, "Policy deleted") {
		t.Fatal("a deleted policy is still listed")
	}
	if res, body := b.PostForm(fmt.Sprintf("/admin/policies/%d/enable", p.ID), url.Values{}); res.StatusCode != http.StatusNotFound ||
		!strings.Contains(body, `data-testid="policies-error"`) {
		t.Fatalf("enable a deleted policy: %d", res.StatusCode)
	}
	// The violation it found is still on the session's page.
	if _, body := b.Get("/sessions/" + s); !strings.Contains(body, "No console.log") {
		t.Fatal("the deleted policy's violation is not on the session's page")
	}

	before, _ := kit.Gov.Policies.List(ctx)
	res, body = b.PostForm("/admin/policies", url.Values{"name": {"Huge"}, "severity": {"high"}, "kind": {"content_regex"},
		"pattern": {strings.Repeat("a", 900_000)}, "action": {"violation"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="error-pattern"`) ||
		!strings.Contains(body, "at most 1000") {
		t.Fatalf("a 900,000-character pattern: %d", res.StatusCode)
	}
	if after, _ := kit.Gov.Policies.List(ctx); len(after) != len(before) {
		t.Fatal("a refused policy was written")
	}

	t.Run("a lead is refused", func(t *testing.T) {
		l := webtest.ConsoleAs(t, base, lead.Email)
		q, _ := kit.Gov.Policies.Create(ctx, admin, governance.PolicyInput{Name: "Keep", Severity: "low", Kind: "dependency", Pattern: "keep"})
		if res, _ := l.PostForm(fmt.Sprintf("/admin/policies/%d/disable", q.ID), url.Values{}); res.StatusCode != http.StatusForbidden {
			t.Fatalf("%d", res.StatusCode)
		}
	})
}
