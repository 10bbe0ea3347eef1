package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/web/webtest"
)

// An admin creates an agent key that expires in 90 days in the browser,
// sees its secret once (and not after a reload), the key works, the admin
// revokes it, and it stops.
func TestBrowserAdminCreatesAKeyAndRevokesIt(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	bg := context.Background()
	admin, _ := app.Kit.Person(auth.Admin)
	app.Kit.Lead()
	viewer, _ := app.Kit.Person(auth.Viewer)
	if _, err := app.Kit.Auth.SetDisabled(bg, admin, viewer.UserID, true); err != nil {
		t.Fatal(err)
	}
	app.Kit.Agent()

	webtest.SignIn(t, ctx, app.URL, admin.Email)
	webtest.Do(t, ctx, "open the users page",
		webtest.Click(`header.top a[href="/admin/users"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-row]`)),
	)
	webtest.Screenshot(t, ctx, "admin-users")

	row := `[data-testid=key-row][data-name="browser-agent"]`
	webtest.Do(t, ctx, "create a key",
		webtest.Click(`header.top a[href="/admin/keys"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=create-key-form]`)),
		webtest.Fill(`[data-testid=create-key-form] input[name=name]`, "browser-agent"),
		webtest.Fill(`[data-testid=create-key-form] input[name=expires]`, "90d"),
		webtest.Click(`[data-testid=create-key-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=new-secret]`)),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	if got := webtest.TextOf(t, ctx, `[data-testid=new-key-expires]`); !strings.Contains(got, "Expires: 20") {
		t.Errorf("the new key's expiry: %q", got)
	}
	if got := webtest.TextOf(t, ctx, row+` [data-testid=key-expires]`); !strings.HasPrefix(got, "20") {
		t.Errorf("the key's row shows the expiry %q", got)
	}
	secret := webtest.TextOf(t, ctx, `[data-testid=new-secret]`)
	if !strings.HasPrefix(secret, "mbk_") {
		t.Fatalf("secret = %q", secret)
	}
	if got := webtest.TextOf(t, ctx, `[data-testid=new-key]`); !strings.Contains(got, "will not be shown again") {
		t.Errorf("no warning with the secret: %q", got)
	}
	webtest.Screenshot(t, ctx, "admin-keys-new-secret")
	if a, err := app.Kit.Auth.Authenticate(bg, secret); err != nil || a.KeyName != "browser-agent" {
		t.Fatalf("the new key: %+v %v", a, err)
	}

	webtest.Do(t, ctx, "reload the page", chromedp.Navigate(app.URL+"/admin/keys"), chromedp.WaitVisible(chromedp.CSS(row)))
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

	webtest.Do(t, ctx, "open the revoke form",
		webtest.Click(row+` summary`),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=revoke-form] button`)),
	)
	webtest.Screenshot(t, ctx, "admin-keys-revoke-form")
	webtest.Do(t, ctx, "revoke the key",
		webtest.Click(row+` [data-testid=revoke-form] button`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=key-row][data-name="browser-agent"][data-revoked=true]`)),
	)
	if got := webtest.TextOf(t, ctx, `main .notice`); !strings.Contains(got, `Revoked the agent key "browser-agent"`) {
		t.Errorf("notice = %q", got)
	}
	webtest.Screenshot(t, ctx, "admin-keys-revoked")
	if _, err := app.Kit.Auth.Authenticate(bg, secret); err == nil {
		t.Fatal("the revoked key still authenticates")
	}

	// A name is never reused, even a revoked key's: the form says so.
	webtest.Do(t, ctx, "create a key with a taken name",
		webtest.Fill(`[data-testid=create-key-form] input[name=name]`, "browser-agent"),
		webtest.Click(`[data-testid=create-key-form] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=create-key-error]`)),
	)
	if got := webtest.TextOf(t, ctx, `[data-testid=create-key-error]`); !strings.Contains(got, "already exists") {
		t.Errorf("error = %q", got)
	}
	webtest.Screenshot(t, ctx, "admin-keys-error")
}
