package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// An admin disables a policy in the browser, then opens the Activity page
// from the main navigation and sees the change: who, what, on which
// policy, enabled true → false.
func TestBrowserAdminSeesAPolicyChangeOnTheActivityPage(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	admin, _ := app.Kit.Person(auth.Admin)
	p, err := app.Kit.Gov.Policies.Create(context.Background(), admin, governance.PolicyInput{Name: "No console.log",
		Severity: "high", Kind: "content_regex", Pattern: `console\.log\(`, Action: "violation"})
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`[data-testid=policy-row][data-ref="%d"]`, p.ID)

	webtest.SignIn(t, ctx, app.URL, admin.Email)
	webtest.Do(t, ctx, "open the policies page from the admin navigation",
		webtest.Click(`header.top [data-testid=nav-admin]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=admin-nav]`)),
		webtest.Click(`[data-testid=admin-nav] a[href="/admin/policies"]`),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	webtest.Do(t, ctx, "disable the policy",
		webtest.Click(row+` [data-testid=policy-disable]`),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-state=disabled]`)),
	)
	webtest.Do(t, ctx, "open the Activity page",
		webtest.Click(`header.top [data-testid=nav-activity]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=activity-row][data-action="policy.disable"]`)),
	)
	webtest.Screenshot(t, ctx, "admin-activity")
	entry := `[data-testid=activity-row][data-action="policy.disable"]`
	if got := webtest.TextOf(t, ctx, entry+` [data-testid=activity-actor]`); got != admin.Email {
		t.Errorf("who = %q, want %s", got, admin.Email)
	}
	if got := webtest.TextOf(t, ctx, entry+` [data-testid=activity-target]`); !strings.Contains(got, "No console.log") {
		t.Errorf("target = %q", got)
	}
	if got := webtest.TextOf(t, ctx, entry+` [data-testid=activity-change]`); !strings.Contains(got, "enabled") ||
		!strings.Contains(got, "true → false") {
		t.Errorf("change = %q, want enabled true → false", got)
	}
	if got := webtest.TextOf(t, ctx, `[data-testid=activity-row]:nth-child(2)`); !strings.Contains(got, "policy.create") {
		t.Errorf("the entry before = %q, want the policy's creation", got)
	}
}
