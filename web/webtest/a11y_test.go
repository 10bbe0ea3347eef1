package webtest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/web/webtest"
)

// The check is real: a page with a nameless button and an image without
// alt text fails it, and a plain page passes.
func TestAuditFindsWhatAxeFinds(t *testing.T) {
	ctx := webtest.NewBrowser(t)
	webtest.Do(t, ctx, "open a broken page", chromedp.Navigate(`data:text/html,<html lang="en"><title>x</title><main><button></button><img src="x.png"></main></html>`))
	vs, err := webtest.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, v := range vs {
		found[v.ID] = true
	}
	if !found["button-name"] || !found["image-alt"] {
		t.Fatalf("axe-core found %v, want button-name and image-alt", found)
	}
	webtest.Do(t, ctx, "open a plain page", chromedp.Navigate(`data:text/html,<html lang="en"><title>x</title><main><h1>Fine</h1><button>Go</button></main></html>`))
	if vs, err = webtest.Audit(ctx); err != nil || len(vs) != 0 {
		t.Fatalf("a plain page: %v %v", vs, err)
	}
}
