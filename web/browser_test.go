package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
)

// browserApp is a real Madebook on a real port, for a real browser.
type browserApp struct {
	kit *testkit.Kit
	url string
}

func startBrowserApp(t *testing.T) *browserApp {
	t.Helper()
	kit := testkit.New(t)
	e := web.NewServer(web.Deps{Auth: kit.Auth, Gov: kit.Gov, Ledger: kit.Ledger, Health: kit.Store.Ping,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &browserApp{kit: kit, url: srv.URL}
}

// newBrowser starts headless Chromium. Without it the test is skipped,
// unless MADEBOOK_REQUIRE_BROWSER=1 (as in CI), when it fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("MADEBOOK_REQUIRE_BROWSER") == "1" {
			t.Fatal("chromium is not installed, and MADEBOOK_REQUIRE_BROWSER=1")
		}
		t.Skip("chromium is not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// do runs browser steps and fails the test on the first error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// signIn signs in through the form.
func signIn(t *testing.T, ctx context.Context, base, email string) {
	t.Helper()
	do(t, ctx, "open the sign-in page",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)))
	screenshot(t, ctx, "login")
	do(t, ctx, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-123"),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue]`)),
	)
}

// screenshot saves the page at desktop and narrow widths when
// MADEBOOK_SCREENSHOTS names a directory (for people to look at).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("MADEBOOK_SCREENSHOTS")
	if dir == "" {
		return
	}
	for _, w := range []struct {
		label         string
		width, height int64
	}{{"desktop", 1280, 900}, {"narrow", 390, 844}} {
		do(t, ctx, "resize", chromedp.EmulateViewport(w.width, w.height), chromedp.Sleep(150*time.Millisecond))
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+w.label+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, "resize", chromedp.EmulateViewport(1280, 900))
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}
