package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
)

// An admin creates an agent key in the browser, sees its secret once (and
// not after a reload), the key works, the admin revokes it, and it stops.
func TestBrowserAdminCreatesAKeyAndRevokesIt(t *testing.T) {
	app := startBrowserApp(t)
	ctx := newBrowser(t)
	bg := context.Background()
	admin, _ := app.kit.Person(auth.Admin)
	app.kit.Lead()
	viewer, _ := app.kit.Person(auth.Viewer)
	if _, err := app.kit.Auth.SetDisabled(bg, admin, viewer.UserID, true); err != nil {
		t.Fatal(err)
	}
	app.kit.Agent()

	signIn(t, ctx, app.url, admin.Email)
	do(t, ctx, "open the users page",
		chromedp.Click(chromedp.CSS(`header.top a[href="/admin/users"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-row]`)),
	)
	screenshot(t, ctx, "admin-users")

	row := `[data-testid=key-row][data-name="browser-agent"]`
	do(t, ctx, "create a key",
		chromedp.Click(chromedp.CSS(`header.top a[href="/admin/keys"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=create-key-form]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=create-key-form] input[name=name]`), "browser-agent"),
		chromedp.Click(chromedp.CSS(`[data-testid=create-key-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=new-secret]`)),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	secret := textOf(t, ctx, `[data-testid=new-secret]`)
	if !strings.HasPrefix(secret, "mbk_") {
		t.Fatalf("secret = %q", secret)
	}
	if got := textOf(t, ctx, `[data-testid=new-key]`); !strings.Contains(got, "will not be shown again") {
		t.Errorf("no warning with the secret: %q", got)
	}
	screenshot(t, ctx, "admin-keys-new-secret")
	if a, err := app.kit.Auth.Authenticate(bg, secret); err != nil || a.KeyName != "browser-agent" {
		t.Fatalf("the new key: %+v %v", a, err)
	}

	do(t, ctx, "reload the page", chromedp.Navigate(app.url+"/admin/keys"), chromedp.WaitVisible(chromedp.CSS(row)))
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`[data-testid=new-secret]`), chromedp.AtLeast(0)))
	if err != nil {
		t.Fatal(err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(`html`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 0 || strings.Contains(html, secret) {
		t.Fatalf("the secret is shown again")
	}

	do(t, ctx, "open the revoke form",
		chromedp.Click(chromedp.CSS(row+` summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=revoke-form] button`)),
	)
	screenshot(t, ctx, "admin-keys-revoke-form")
	do(t, ctx, "revoke the key",
		chromedp.Click(chromedp.CSS(row+` [data-testid=revoke-form] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=key-row][data-name="browser-agent"][data-revoked=true]`)),
	)
	if got := textOf(t, ctx, `main .notice`); !strings.Contains(got, `Revoked the agent key "browser-agent"`) {
		t.Errorf("notice = %q", got)
	}
	screenshot(t, ctx, "admin-keys-revoked")
	if _, err := app.kit.Auth.Authenticate(bg, secret); err == nil {
		t.Fatal("the revoked key still authenticates")
	}

	// A name is never reused, even a revoked key's: the form says so.
	do(t, ctx, "create a key with a taken name",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=create-key-form] input[name=name]`), "browser-agent"),
		chromedp.Click(chromedp.CSS(`[data-testid=create-key-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=create-key-error]`)),
	)
	if got := textOf(t, ctx, `[data-testid=create-key-error]`); !strings.Contains(got, "already exists") {
		t.Errorf("error = %q", got)
	}
	screenshot(t, ctx, "admin-keys-error")
}
