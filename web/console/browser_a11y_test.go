package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// Every page of the console passes axe-core with no serious or critical
// violation, with something in every state on it. The pages come from the
// server's own route table: a new page without an entry here fails.
func TestBrowserEveryPagePassesAxe(t *testing.T) {
	w := a11yWorkspace(t)
	e, srv, admin, gated, planned, plain, stopped := w.e, w.srv, w.admin, w.gated, w.planned, w.plain, w.stopped
	ctx := webtest.NewBrowser(t)
	// The concrete pages of each GET route that renders a page.
	pages := map[string][]string{
		"/login":               {"/login"},
		"/":                    {"/"},
		"/sessions":            {"/sessions"},
		"/sessions/:id":        {"/sessions/" + planned, "/sessions/" + gated, "/sessions/" + stopped},
		"/missions":            {"/missions"},
		"/missions/new":        {"/missions/new"},
		"/missions/:slug/edit": {"/missions/" + plain + "/edit"},
		"/audit":               {"/audit"},
		"/audit/:report":       nil,
		"/admin/users":         {"/admin/users"},
		"/admin/keys":          {"/admin/keys"},
		"/admin/tokens":        {"/admin/tokens"},
		"/admin/policies":      {"/admin/policies"},
		"/admin/rules":         {"/admin/rules"},
		"/admin/tools":         {"/admin/tools"},
		"/admin/webhooks":      {"/admin/webhooks"},
		"/admin/activity":      {"/admin/activity"},
		"/activity":            {"/activity"},
	}
	for _, name := range audit.Names() {
		pages["/audit/:report"] = append(pages["/audit/:report"], "/audit/"+name)
	}
	// Not pages: fragments the Attention page loads, assets, JSON, the
	// metrics (Prometheus text).
	// The stream is no page; one item's page and the inbox's states are
	// checked by TestBrowserInboxPassesAxe.
	fragments := map[string]bool{"/attention/queue": true, "/attention/count": true, "/attention/stream": true,
		"/attention/items/:kind/:session/:ref": true, "/attention/items/:kind/:session/:ref/outcome": true, "/static/*": true, "/healthz": true,
		"/favicon.ico": true, "/metrics": true}
	for _, r := range e.Routes() {
		if r.Method != http.MethodGet || strings.HasPrefix(r.Path, "/api/") || fragments[r.Path] {
			continue
		}
		if _, ok := pages[r.Path]; !ok {
			t.Errorf("GET %s renders a page this test does not check: add it to pages", r.Path)
		}
	}

	webtest.Do(t, ctx, "open the sign-in page", chromedp.Navigate(srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)))
	webtest.CheckA11y(t, ctx, "/login")
	webtest.SignIn(t, ctx, srv.URL, admin.Email)
	for route, paths := range pages {
		if route == "/login" {
			continue
		}
		for _, path := range paths {
			webtest.Do(t, ctx, "open "+path, chromedp.Navigate(srv.URL+path), chromedp.WaitReady(chromedp.CSS(`main`)))
			passesAt(t, ctx, path)
		}
	}
	webtest.Do(t, ctx, "open a page that does not exist", chromedp.Navigate(srv.URL+"/no/such/page"), chromedp.WaitReady(chromedp.CSS(`body`)))
	webtest.CheckA11y(t, ctx, "the 404 page")

	// The 403 page: a viewer opening an admin page.
	viewer, _ := w.kit.Person(auth.Viewer)
	webtest.Do(t, ctx, "sign out", webtest.Click(`form[action="/logout"] button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)))
	webtest.SignIn(t, ctx, srv.URL, viewer.Email)
	webtest.Do(t, ctx, "open an admin page as a viewer", chromedp.Navigate(srv.URL+"/admin/users"), chromedp.WaitReady(chromedp.CSS(`main`)))
	if got := webtest.TextOf(t, ctx, `main`); !strings.Contains(got, "admin") {
		t.Errorf("the 403 page says %q", got)
	}
	if n := webtest.TextOf(t, ctx, `nav[aria-label=Main]`); !strings.Contains(n, "Sessions") {
		t.Errorf("the 403 page has no navigation: %q", n)
	}
	webtest.CheckA11y(t, ctx, "the 403 page")
}

// axeWorkspace is a workspace with something in every state, for the
// accessibility tests.
type axeWorkspace struct {
	kit                            *testkit.Kit
	e                              *echo.Echo
	srv                            *httptest.Server
	admin                          auth.Actor
	gated, planned, plain, stopped string
}

func a11yWorkspace(t *testing.T) axeWorkspace {
	t.Helper()
	kit := testkit.New(t, testkit.WithLoopbackWebhooks) // the refusing endpoint is on 127.0.0.1
	e := web.NewServer(webtest.Deps(kit))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	bg := context.Background()
	admin, _ := kit.Person(auth.Admin)
	agent, _ := kit.Agent()
	// An endpoint that refuses, so that the notifications page lists
	// deliveries of everything below, and their failures.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "this endpoint refuses every delivery, with a long explanation that must wrap on a phone", http.StatusBadGateway)
	}))
	t.Cleanup(refusing.Close)
	must(t)(kit.Gov.Webhooks.Create(bg, admin, governance.WebhookInput{URL: refusing.URL + "/services/T000/B000/a-long-path-that-must-wrap-on-a-phone",
		Secret: "a11y-signing-secret", Events: []string{"attention.created", "hard_stop"}}))

	// Sessions in the states a lead acts on.
	risky, plain := kit.Mission(admin, true), kit.Mission(admin, false)
	planned := kit.Session(agent, risky)
	yes := true
	must(t)(kit.Gov.Plans.Propose(bg, agent, planned, governance.PlanInput{Summary: "Read, then ask", Plan: plan.Plan{
		InitialSteps: []plan.Step{{ID: "read", Server: "claude-code", Tool: "Read", SideEffecting: new(false)}},
		StoppingPoints: []plan.StoppingPoint{{ID: 1, Type: "menu", Title: "Drop it?", Options: map[string]plan.Option{
			"1": {Label: "Drop", Steps: []plan.Step{{ID: "drop", Tool: "run_migration", SideEffecting: &yes}}}}}}}}))
	gated := kit.Session(agent, plain)
	must(t)(kit.Gov.Decisions.Open(bg, agent, gated, governance.DecisionInput{Title: "Schema", Question: "Drop the table?",
		BlockedScope: []string{"db/"}}))
	run, err := kit.Ledger.StartRun(bg, agent, gated, "load-test", "")
	if err != nil {
		t.Fatal(err)
	}
	must(t)(kit.Ledger.RecordAsk(bg, agent, run.ID, ledger.AskInput{Prompt: "Run it?", Options: map[string]string{"1": "Yes", "2": "No"}}))
	must(t)(kit.Gov.Lifecycle.Report(bg, agent, gated, governance.EventInput{Name: "permission.prompt.requested",
		Payload: json.RawMessage(`{"prompt":"Run make?","options":{"1":"Allow","2":"Deny"},"tool":"Bash"}`)}))
	stopped := kit.Session(agent, plain)
	must(t)(kit.Gov.Changes.Report(bg, agent, stopped, change.Change{Files: []change.File{{Path: "deploy.sh",
		Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}}))
	must(t)(kit.Gov.Remediations.Request(bg, admin, stopped, governance.RemediationInput{Severity: governance.SeverityRequired,
		Instruction: "Rotate the key.", Files: []string{"deploy.sh"}}))
	sender := notify.NewSender(kit.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), testkit.LoopbackWebhooks)
	sender.Now = kit.Clock.Now
	must(t)(sender.RunOnce(bg))
	return axeWorkspace{kit: kit, e: e, srv: srv, admin: admin, gated: gated, planned: planned, plain: plain, stopped: stopped}
}

// The Attention inbox passes axe-core in its states: each item's own page,
// filtered views, forms open in place and gates selected.
func TestBrowserInboxPassesAxe(t *testing.T) {
	w := a11yWorkspace(t)
	ctx := webtest.NewBrowser(t)
	items, err := w.kit.Gov.Attention.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/?kind=decision", "/?kind=task", "/?session=" + w.gated, "/?snoozed=only&claimed=me"}
	for _, it := range items {
		paths = append(paths, "/attention/items/"+it.Kind+"/"+it.Session+"/"+it.Ref)
	}
	webtest.SignIn(t, ctx, w.srv.URL, w.admin.Email)
	for _, path := range paths {
		webtest.Do(t, ctx, "open "+path, chromedp.Navigate(w.srv.URL+path), chromedp.WaitReady(chromedp.CSS(`main`)))
		passesAt(t, ctx, path)
	}
	srv := w.srv
	// The inbox with its forms open in place, and with gates selected.
	webtest.Do(t, ctx, "open the inbox", chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(`main`)))
	for _, kind := range []string{governance.ItemViolation, governance.ItemPlan, governance.ItemDecision, governance.ItemPermission} {
		webtest.OpenItem(t, ctx, `[data-testid=attention-item][data-kind=`+kind+`]`)
	}
	webtest.Do(t, ctx, "select a gate", webtest.Click(`[data-testid=select]`), chromedp.WaitVisible(chromedp.CSS(`#bulk`)))
	passesAt(t, ctx, "/ with forms open and a gate selected")
}

// passesAt checks the page at a desktop width (1440 px) and at a phone's
// (390 px): axe-core finds no serious or critical violation, and nothing
// scrolls sideways.
func passesAt(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	for _, width := range []int64{1440, 390} {
		webtest.Do(t, ctx, "resize", chromedp.EmulateViewport(width, 900))
		webtest.CheckA11y(t, ctx, fmt.Sprintf("%s at %d px", page, width))
		got, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if got > width {
			wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > %d).slice(-3).map(e => e.tagName + "." + e.getAttribute("class") + " " + (e.dataset.testid || "")).join(", ")`, width+1)))
			t.Errorf("%s is %d px wide in a %d px window (too wide: %s)", page, got, width, wide)
		}
	}
	webtest.Do(t, ctx, "resize", chromedp.EmulateViewport(1280, 900))
}

// must fails the test on an error.
func must(t *testing.T) func(_ any, err error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
