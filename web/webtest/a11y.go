package webtest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core, the accessibility engine the browser tests run on
// every page they check (see axe/README.md).
//
//go:embed axe/axe.min.js
var axeSource string

// A11yViolation is one rule axe-core found broken on a page, with the
// elements that break it.
type A11yViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

// Audit runs axe-core on the page the browser shows and returns the
// violations of impact serious or critical (WCAG 2 A and AA rules, and
// axe's best practices).
func Audit(ctx context.Context) ([]A11yViolation, error) {
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](axeSource)); err != nil {
		return nil, fmt.Errorf("inject axe-core: %w", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical"))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("run axe-core: %w", err)
	}
	var out []A11yViolation
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("read axe-core's answer: %w", err)
	}
	return out, nil
}

// CheckA11y fails the test when axe-core finds a serious or critical
// violation on the page the browser shows; page names it in the message.
func CheckA11y(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	vs, err := Audit(ctx)
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	for _, v := range vs {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Join(n.Target, " "))
		}
		t.Errorf("%s: axe-core %s (%s): %s — at %s", page, v.ID, v.Impact, v.Help, strings.Join(where, "; "))
	}
}
