package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// consoleRole is who signs in to the console. Who may do what on every
// console route is the authorization matrix, web/authz_matrix_test.go;
// the tests here drive what a page does beyond that.
type consoleRole int

const (
	consoleAnonymous consoleRole = iota
	consoleViewer
	consoleLead
	consoleAdmin
)

func (r consoleRole) String() string {
	return [...]string{"anonymous", "viewer", "lead", "admin"}[r]
}

// authRole is the role of the person a signed-in caller is.
func (r consoleRole) authRole() auth.Role {
	return [...]auth.Role{"", auth.Viewer, auth.Lead, auth.Admin}[r]
}

// consoleEnv is a real Madebook over loopback HTTP, with a lead, an admin
// and an agent key that set up what each request needs (never signed in).
type consoleEnv struct {
	T    *testing.T
	Kit  *testkit.Kit
	e    *echo.Echo
	Base string

	Lead, Admin, Agent auth.Actor
}

func newConsoleEnv(t *testing.T) *consoleEnv {
	t.Helper()
	kit := testkit.New(t)
	e := web.NewServer(webtest.Deps(kit))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	c := &consoleEnv{T: t, Kit: kit, e: e, Base: srv.URL}
	c.Lead, _ = kit.Lead()
	c.Admin, _ = kit.Person(auth.Admin)
	c.Agent, _ = kit.Agent()
	return c
}

// consoleCaller is the browser a request is sent from: a person of the
// role, freshly signed in, or nobody.
type consoleCaller struct {
	role consoleRole
	who  auth.Actor // zero for anonymous
	b    *webtest.Client
}

func (e *consoleEnv) callerAs(t *testing.T, role consoleRole) consoleCaller {
	t.Helper()
	if role == consoleAnonymous {
		return consoleCaller{role: role, b: webtest.NewClient(t, e.Base)}
	}
	who, _ := e.Kit.Person(role.authRole())
	return consoleCaller{role: role, who: who, b: webtest.ConsoleAs(t, e.Base, who.Email)}
}

func (e *consoleEnv) fatal(err error) {
	if err != nil {
		e.T.Helper()
		e.T.Fatal(err)
	}
}

// session opens a fresh session on a fresh mission.
func (e *consoleEnv) Session(highRisk bool) string {
	return e.Kit.Session(e.Agent, e.Kit.Mission(e.Lead, highRisk))
}

func (e *consoleEnv) decision() (string, string) {
	id := e.Session(false)
	d, err := e.Kit.Gov.Decisions.Open(context.Background(), e.Agent, id, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
	e.fatal(err)
	return id, d.Ref
}

func (e *consoleEnv) proposed() string {
	id := e.Session(true)
	_, err := e.Kit.Gov.Plans.Propose(context.Background(), e.Agent, id, governance.PlanInput{Summary: "read, then change"})
	e.fatal(err)
	return id
}

func (e *consoleEnv) paused() string {
	id := e.Session(false)
	_, err := e.Kit.Gov.Sessions.Pause(context.Background(), e.Lead, id, "wait")
	e.fatal(err)
	return id
}

// parkedAsk starts a run on a fresh session and parks it on a question
// with two options; it returns the session and the ask.
func (e *consoleEnv) parkedAsk() (string, string) {
	ctx := context.Background()
	id := e.Session(false)
	run, err := e.Kit.Ledger.StartRun(ctx, e.Agent, id, "roles-run", "")
	e.fatal(err)
	ask, err := e.Kit.Ledger.RecordAsk(ctx, e.Agent, run.ID, ledger.AskInput{Prompt: "Save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}})
	e.fatal(err)
	return id, ask.ID
}

// criticalViolation has the agent report a change with a secret in it on
// session id, and returns the critical violation's id.
func (e *consoleEnv) criticalViolation(id string) string {
	res, err := e.Kit.Gov.Changes.Report(context.Background(), e.Agent, id, change.Change{Files: []change.File{{Path: "config/deploy.sh",
		Content: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}}})
	e.fatal(err)
	if len(res.Violations) == 0 {
		e.T.Fatal("the seed's secret raised no violation")
	}
	return fmt.Sprint(res.Violations[0].ID)
}

// waits reports whether an item of kind with ref still waits in the
// Attention queue.
func (e *consoleEnv) waits(kind, ref string) bool {
	items, err := e.Kit.Gov.Attention.List(context.Background())
	e.fatal(err)
	for _, it := range items {
		if it.Kind == kind && it.Ref == ref {
			return true
		}
	}
	return false
}

// sessionState is a session as the services see it: the brake, the plan,
// every decision and remediation, and the length of its timeline.
func (e *consoleEnv) sessionState(id string) func() string {
	return func() string {
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		var b strings.Builder
		fmt.Fprintf(&b, "paused=%t %q events=%d", d.Paused, d.PauseReason, len(d.Timeline))
		if d.Plan != nil {
			fmt.Fprintf(&b, " plan=%s %q", d.Plan.Status, d.Plan.Note)
		}
		for _, dec := range d.Decisions {
			fmt.Fprintf(&b, " %s=%s %q %q", dec.Ref, dec.Status, dec.Resolution, dec.Instruction)
		}
		for _, r := range d.Remediations {
			fmt.Fprintf(&b, " remediation-%d=%+v", r.ID, r)
		}
		return b.String()
	}
}

// htmx posts a form as htmx does from the Attention page.
func (e *consoleEnv) htmx(b *webtest.Client, path string, form url.Values) (*http.Response, string) {
	e.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.CSRF)
	req, err := http.NewRequest(http.MethodPost, e.Base+path, strings.NewReader(form.Encode()))
	e.fatal(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", e.Base+"/")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.Do(req)
}

// TestTheQueueActionsAnswerHTMX sends the Attention queue's actions as htmx does:
// a success answers the new count; a mistake answers the item (or the
// queue) again, 422, with the message; a viewer is refused with a message
// and the anonymous caller sent to sign in.
func TestTheQueueActionsAnswerHTMX(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	lead := e.callerAs(t, consoleLead)
	viewer := e.callerAs(t, consoleViewer)
	// Each case runs as its own subtest, and reports failures there.
	parent := t
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			e.T, lead.b.T, viewer.b.T = t, t, t
			defer func() { e.T, lead.b.T, viewer.b.T = parent, parent, parent }()
			f(t)
		})
	}
	decisionOf := func(id, ref string) governance.Decision {
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		for _, dec := range d.Decisions {
			if dec.Ref == ref {
				return dec
			}
		}
		t.Fatalf("no decision %s on %s", ref, id)
		return governance.Decision{}
	}
	wantCount := func(t *testing.T, res *http.Response, body string) {
		t.Helper()
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="nav-count"`) || !strings.Contains(body, `hx-swap-oob="true"`) {
			t.Fatalf("status %d, want 200 with the count update: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
	}
	// A success says what happens next in the live region, and asks the
	// queue to refresh itself.
	wantAnnounce := func(t *testing.T, res *http.Response, body string, words ...string) {
		t.Helper()
		if !strings.Contains(body, `id="announce" hx-swap-oob="innerHTML"`) {
			t.Errorf("no words for the live region: %s", webtest.Short([]byte(body)))
		}
		for _, w := range words {
			if !strings.Contains(body, w) {
				t.Errorf("the words lack %q: %s", w, body)
			}
		}
		if res.Header.Get("HX-Trigger") != "queue-changed" {
			t.Errorf("HX-Trigger %q, want queue-changed", res.Header.Get("HX-Trigger"))
		}
	}
	// An action on an item removes its line: the answer replaces it.
	wantLineGone := func(t *testing.T, res *http.Response, id string) {
		t.Helper()
		if res.Header.Get("HX-Retarget") != "#"+id || res.Header.Get("HX-Reswap") != "outerHTML" {
			t.Errorf("HX-Retarget %q, HX-Reswap %q: want the line #%s replaced", res.Header.Get("HX-Retarget"), res.Header.Get("HX-Reswap"), id)
		}
	}
	want422 := func(t *testing.T, res *http.Response, body string, parts ...string) {
		t.Helper()
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		for _, p := range parts {
			if !strings.Contains(body, p) {
				t.Errorf("the answer lacks %q: %s", p, body)
			}
		}
	}

	run("resolve without an instruction is 422 with the item and the message", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {""}})
		want422(t, res, body, `data-ref="`+ref+`"`, `data-testid="error-instruction"`, "The instruction is required.", `value="Keep it."`)
		if strings.Contains(body, "<html") {
			t.Errorf("the answer is a whole webtest.Page, not the item")
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
	})
	run("resolve answers the count update", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive instead."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, ref+" resolved — the agent gets the resolution and instruction on its next brief.")
		wantLineGone(t, res, "item-decision-"+ref)
		if d := decisionOf(id, ref); d.Status != governance.DecisionResolved || d.Instruction != "Archive instead." {
			t.Errorf("the decision is %s %q, want resolved", d.Status, d.Instruction)
		}
	})
	run("resolve of a gate someone else resolved keeps the form and says who resolved it with what", func(t *testing.T) {
		id, ref := e.decision()
		_, err := e.Kit.Gov.Decisions.Resolve(context.Background(), e.Lead, ref, "First.", "Do it.")
		e.fatal(err)
		res, body := e.htmx(lead.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Second."}, "instruction": {"Do that."}})
		wantCount(t, res, body)
		said := ref + " was resolved by " + e.Lead.Email + " just now: First."
		wantAnnounce(t, res, body, said)
		if got := res.Header.Get("HX-Retarget"); got != "#item-decision-"+ref+"-gone" || res.Header.Get("HX-Reswap") != "innerHTML" {
			t.Errorf("HX-Retarget %q: want the line's outcome note, the form left as typed", got)
		}
		if !strings.Contains(body, `data-testid="outcome"><strong>`+said+`</strong>`) || !strings.Contains(body, `data-action="dismiss"`) {
			t.Errorf("the note does not say %q with a way to dismiss it: %s", said, webtest.Short([]byte(body)))
		}
		if d := decisionOf(id, ref); d.Resolution != "First." {
			t.Errorf("the stale submit changed the resolution to %q", d.Resolution)
		}
	})
	run("bulk resolve without an instruction is 422 with the bulk bar and the message", func(t *testing.T) {
		id1, ref1 := e.decision()
		id2, ref2 := e.decision()
		res, body := e.htmx(lead.b, "/decisions/resolve", url.Values{"refs": {ref1, ref2}, "resolution": {"Keep them."}})
		want422(t, res, body, `id="bulk"`, `data-testid="error-instruction"`, "The instruction is required.", `value="Keep them."`)
		if decisionOf(id1, ref1).Status != governance.DecisionOpen || decisionOf(id2, ref2).Status != governance.DecisionOpen {
			t.Errorf("a refused bulk resolve resolved something")
		}
	})
	run("bulk resolve answers an empty bulk bar, the words, the count update and a refresh", func(t *testing.T) {
		id1, ref1 := e.decision()
		id2, ref2 := e.decision()
		res, body := e.htmx(lead.b, "/decisions/resolve", url.Values{"refs": {ref1, ref2}, "resolution": {"Keep them."}, "instruction": {"Archive."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, ref1+", "+ref2+" resolved — each agent gets the resolution and instruction on its next brief.")
		if !strings.Contains(body, `id="bulk"`) || strings.Contains(body, `value="Keep them."`) {
			t.Errorf("the bulk bar does not come back empty: %s", webtest.Short([]byte(body)))
		}
		if decisionOf(id1, ref1).Status != governance.DecisionResolved || decisionOf(id2, ref2).Status != governance.DecisionResolved {
			t.Errorf("bulk resolve did not resolve both")
		}
	})
	for _, verb := range []string{"approve", "reject"} {
		status := map[string]string{"approve": governance.PlanApproved, "reject": governance.PlanRejected}[verb]
		run(verb+" with a note too long is 422 with the item and the message", func(t *testing.T) {
			id := e.proposed()
			before := e.sessionState(id)()
			res, body := e.htmx(lead.b, "/sessions/"+id+"/plan/"+verb, url.Values{"note": {strings.Repeat("n", 4001)}})
			want422(t, res, body, `data-ref="`+id+`"`, `data-kind="plan"`, `data-testid="error-note"`, "at most 4000 are allowed")
			if after := e.sessionState(id)(); after != before {
				t.Errorf("a refused %s changed the session:\nbefore %s\nafter  %s", verb, before, after)
			}
		})
		run(verb+" answers the count update", func(t *testing.T) {
			id := e.proposed()
			res, body := e.htmx(lead.b, "/sessions/"+id+"/plan/"+verb, url.Values{"note": {"Noted."}})
			wantCount(t, res, body)
			wantAnnounce(t, res, body, map[string]string{"approve": "approved — the agent may proceed; it is told on its next brief.",
				"reject": "rejected — the agent is told on its next brief and goes back to idle."}[verb])
			wantLineGone(t, res, "item-plan-"+id)
			d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
			e.fatal(err)
			if d.Plan == nil || d.Plan.Status != status {
				t.Errorf("the plan is %+v, want %s", d.Plan, status)
			}
		})
	}
	run("pause answers the words, the count update and a refresh of the queue", func(t *testing.T) {
		id := e.Session(false)
		res, body := e.htmx(lead.b, "/sessions/"+id+"/pause", url.Values{"reason": {"Stop."}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "paused — the agent is told to stop on its next brief.")
		if !e.waits(governance.ItemPaused, id) {
			t.Errorf("the paused session does not wait in the queue")
		}
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		if !d.Paused || d.PauseReason != "Stop." {
			t.Errorf("the session is paused=%t %q", d.Paused, d.PauseReason)
		}
	})
	run("pausing a paused session is 422 with the brake form, open, and the message", func(t *testing.T) {
		id := e.paused()
		before := e.sessionState(id)()
		res, body := e.htmx(lead.b, "/sessions/"+id+"/pause", url.Values{"reason": {"Again."}})
		want422(t, res, body, `data-testid="pause-form"`, "<details class=\"brake\" open", "already paused", `value="Again."`)
		if after := e.sessionState(id)(); after != before {
			t.Errorf("a refused pause changed the session:\nbefore %s\nafter  %s", before, after)
		}
	})
	run("resume answers the count update", func(t *testing.T) {
		id := e.paused()
		res, body := e.htmx(lead.b, "/sessions/"+id+"/resume", nil)
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Brake released on ", "the agent may continue on its next brief.")
		wantLineGone(t, res, "item-paused-"+id)
		d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
		e.fatal(err)
		if d.Paused {
			t.Errorf("the session is still paused")
		}
	})
	run("an answer that is not an option is 422 with the item and the message", func(t *testing.T) {
		_, ask := e.parkedAsk()
		res, body := e.htmx(lead.b, "/asks/"+ask+"/answer", url.Values{"option": {"7"}})
		want422(t, res, body, `data-ref="`+ask+`"`, `data-kind="ask"`, `has no option &#34;7&#34;: choose one of 1, 2.`)
		if !e.waits(governance.ItemAsk, ask) {
			t.Errorf("a refused answer took the ask out of the queue")
		}
	})
	run("answer answers the count update", func(t *testing.T) {
		_, ask := e.parkedAsk()
		res, body := e.htmx(lead.b, "/asks/"+ask+"/answer", url.Values{"option": {"2"}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Answered &#34;No&#34; — the run resumes from where it parked")
		wantLineGone(t, res, "item-ask-"+ask)
		if e.waits(governance.ItemAsk, ask) {
			t.Errorf("the answered ask still waits")
		}
	})
	run("clearing a violation without saying how is 422 with the item and the message", func(t *testing.T) {
		id := e.Session(false)
		v := e.criticalViolation(id)
		before := e.sessionState(id)()
		res, body := e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"note": {"Rotated."}})
		want422(t, res, body, `data-kind="violation"`, `data-testid="error-as"`, "Choose how the violation was cleared: fixed, or a false positive.", `value="Rotated."`)
		res, body = e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"as": {"gone"}})
		want422(t, res, body, `data-testid="error-as"`, "(not &#34;gone&#34;)")
		if after := e.sessionState(id)(); after != before || !e.waits(governance.ItemViolation, v) {
			t.Errorf("a refused clear changed the session:\nbefore %s\nafter  %s", before, after)
		}
		res, body = e.htmx(lead.b, "/violations/"+v+"/clear", url.Values{"as": {"false_positive"}})
		wantCount(t, res, body)
		wantAnnounce(t, res, body, "Violation cleared as a false positive — the HARD_STOP lifts on the agent&#39;s next brief.")
		wantLineGone(t, res, "item-violation-"+v)
	})
	run("a viewer is refused with a message and nothing changes", func(t *testing.T) {
		id, ref := e.decision()
		res, body := e.htmx(viewer.b, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive."}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "lead") {
			t.Fatalf("status %d, want 403 with a message: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
		pid := e.Session(false)
		if res, _ := e.htmx(viewer.b, "/sessions/"+pid+"/pause", url.Values{"reason": {"No."}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's pause: %d, want 403", res.StatusCode)
		}
		if d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, pid); err != nil || d.Paused {
			t.Errorf("a viewer paused the session (%v)", err)
		}
	})
	run("an anonymous caller is sent to sign in", func(t *testing.T) {
		id, ref := e.decision()
		anon := webtest.NewClient(t, e.Base)
		res, _ := e.htmx(anon, "/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it."}, "instruction": {"Archive."}})
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("HX-Redirect") != "/login" {
			t.Fatalf("status %d, HX-Redirect %q; want 401 to /login", res.StatusCode, res.Header.Get("HX-Redirect"))
		}
		if d := decisionOf(id, ref); d.Status != governance.DecisionOpen {
			t.Errorf("the decision is %s, want still open", d.Status)
		}
	})
}
