package webtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
)

// BrowserApp is a real Madebook on a real port, for a real browser.
type BrowserApp struct {
	Kit *testkit.Kit
	URL string
}

// StartBrowserApp serves a real Madebook on a fresh kit over loopback.
func StartBrowserApp(t *testing.T, opts ...testkit.Option) *BrowserApp {
	t.Helper()
	kit := testkit.New(t, opts...)
	e := web.NewServer(Deps(kit))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &BrowserApp{Kit: kit, URL: srv.URL}
}

// NewBrowser starts headless Chromium. Without it the test is skipped,
// unless MADEBOOK_REQUIRE_BROWSER=1 (as in CI), when it fails. The test
// fails at its end if the browser refused anything under the Content
// Security Policy (an inline script or style, an eval): that part of the
// console would be broken.
func NewBrowser(t *testing.T) context.Context {
	t.Helper()
	ctx := OpenBrowser(t)
	violations := WatchCSP(t, ctx)
	t.Cleanup(func() {
		for _, v := range violations() {
			t.Errorf("the browser reported a Content Security Policy violation: %s", v)
		}
	})
	return ctx
}

// WatchCSP collects what the browser of ctx reports about the Content
// Security Policy from now on (the console's "Refused to …" lines); the
// function returns them so far.
func WatchCSP(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*cdplog.EventEntryAdded); ok && e.Entry != nil && strings.Contains(e.Entry.Text, "Content Security Policy") {
			mu.Lock()
			seen = append(seen, e.Entry.Text)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// OpenBrowser is NewBrowser without the check of the Content Security
// Policy, for a test of that check itself.
func OpenBrowser(t *testing.T) context.Context {
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

// PressEnter presses Enter as a person does: a key down and a key up.
// chromedp.KeyEvent("\r") also sends the key's character as an event of
// its own, after the key down is handled, so on a busy machine it can land
// where the key down's handler moved the focus (a form it opened, whose
// select it then opens) rather than where Enter was pressed.
func PressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, k := range kb.Encode('\r') {
			if k.Type == kb.KeyChar {
				continue
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
				return err
			}
		}
		return nil
	})
}

// Do runs browser steps and fails the test on the first error.
func Do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// SignIn signs in through the form.
func SignIn(t *testing.T, ctx context.Context, base, email string) {
	t.Helper()
	Do(t, ctx, "open the sign-in page",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)))
	Screenshot(t, ctx, "login")
	Do(t, ctx, "sign in",
		Fill(`input[name=email]`, email),
		Fill(`input[name=password]`, "password-123"),
		Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue]`)),
	)
}

// Screenshot saves the page at desktop and narrow widths when
// MADEBOOK_SCREENSHOTS names a directory (for people to look at).
func Screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("MADEBOOK_SCREENSHOTS")
	if dir == "" {
		return
	}
	for _, w := range []struct {
		label         string
		width, height int64
	}{{"desktop", 1280, 900}, {"narrow", 390, 844}} {
		Do(t, ctx, "resize", chromedp.EmulateViewport(w.width, w.height), chromedp.Sleep(150*time.Millisecond))
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+w.label+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Do(t, ctx, "resize", chromedp.EmulateViewport(1280, 900))
}

// TextOf is the trimmed text of the element sel selects.
//
// The text is read in the page, in one step with finding the element: an
// htmx swap that replaces the element between a lookup and a read (an
// out-of-band count, a refreshed line) cannot make it fail.
func TextOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.PollFunction[struct{ Text string }](
		`(sel) => { const el = document.querySelector(sel); return el ? {Text: el.innerText} : null }`,
		chromedp.WithPollingArgs(sel), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(got.Text)
}

// ValueOf is the value of the field sel selects, read in one step with
// finding it, as TextOf reads text.
func ValueOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.PollFunction[struct{ Value string }](
		`(sel) => { const el = document.querySelector(sel); return el ? {Value: el.value} : null }`,
		chromedp.WithPollingArgs(sel), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("value of %s: %v", sel, err)
	}
	return got.Value
}

// WaitText waits until the element sel selects shows want (trimmed), for
// text a push or a swap updates after the action that caused it; it fails
// with the text last seen.
func WaitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.PollFunction[bool](
		`(sel, want) => { const el = document.querySelector(sel); return !!el && el.innerText.trim() === want }`,
		chromedp.WithPollingArgs(sel, want), chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatalf("%s never showed %q (it shows %q): %v", sel, want, TextOf(t, ctx, sel), err)
	}
}

// Click clicks the visible, enabled element sel selects, found and
// clicked in one step inside the page (the DOM's click, as htmx sees a
// person's). chromedp's Click finds a node, then clicks it by its id in a
// second round trip; a push or an out-of-band swap that replaces the node
// in between fails it with "Could not find node with given id".
func Click(sel string) chromedp.Action[chromedp.Void] {
	return act(sel, `el.click()`)
}

// ClickTwice clicks a button that asks once (data-confirm): the first
// click turns it into its question, the second acts.
func ClickTwice(sel string) chromedp.Action[chromedp.Void] {
	first, second := Click(sel), act(sel+`[data-armed]`, `el.click()`)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := first(ctx, t); err != nil {
			return chromedp.Void{}, err
		}
		return second(ctx, t)
	}
}

// Focus focuses the element sel selects, found and focused in one step
// inside the page, as Click does.
func Focus(sel string) chromedp.Action[chromedp.Void] {
	return act(sel, `el.focus()`)
}

// Fill puts text in the field sel selects and tells the page it changed
// (input and change events), in one step with finding it, as Click does.
// Use chromedp.SendKeys where a test is about key-by-key typing.
func Fill(sel, text string) chromedp.Action[chromedp.Void] {
	return act(sel, `el.focus(); el.value = arg; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true}))`, text)
}

// act waits up to ten seconds for a visible, enabled element that htmx
// has taken in, and runs do on it (as el, with arg) in the same
// evaluation. Content htmx swapped in is visible a moment before htmx has
// processed it; a click in that moment submits the form the plain way (it
// works, as it does without script, but reloads the page).
func act(sel, do string, arg ...string) chromedp.Action[chromedp.Void] {
	a := ""
	if len(arg) > 0 {
		a = arg[0]
	}
	fn := `(sel, arg) => { const el = document.querySelector(sel);
		if (!el || el.disabled || el.getClientRects().length === 0) return null;
		const hx = el.closest('[hx-get],[hx-post]') || (el.form && el.form.matches('[hx-get],[hx-post]') ? el.form : null);
		if (hx && !(hx['htmx-internal-data'] && hx['htmx-internal-data'].initHash)) return null;
		if (el.closest('.htmx-settling, .htmx-swapping')) return null;
		` + do + `; return true }`
	poll := chromedp.PollFunction[bool](fn, chromedp.WithPollingArgs(sel, a), chromedp.WithPollingTimeout(10*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := poll(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("%s: %w", sel, err)
		}
		return chromedp.Void{}, nil
	}
}

// OpenItem opens an Attention line (sel selects the line) by clicking its
// title, and waits for its form to load in place. The click is the DOM's,
// not the mouse's at the title's coordinates: on a long list that is still
// laying itself out, those can land on the line next to it.
func OpenItem(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	link := sel + ` [data-testid=open-item]`
	Do(t, ctx, "open "+sel,
		Click(link),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid=item-body]`)))
}
