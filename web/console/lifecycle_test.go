package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// The session page of an untracked session (its agent has reported no
// lifecycle event) says the lifecycle gates nothing, without a drawing;
// from its first event the page draws the twelve states, the one it is
// in lit.
func TestTheSessionPageDrawsTheLifecycle(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, false))
	b := webtest.ConsoleAs(t, base, lead.Email)
	page := b.Open("/sessions/" + session)
	if page.Status != http.StatusOK {
		t.Fatalf("session page: %d", page.Status)
	}
	if webtest.CountTestID(page.Body, "lifecycle-section") != 1 || webtest.CountTestID(page.Body, "lifecycle-diagram") != 0 ||
		!strings.Contains(page.Text(), "Untracked: this agent has reported no lifecycle event, so the lifecycle gates nothing.") {
		t.Fatalf("an untracked session's page draws the lifecycle or does not say it is untracked: %s", webtest.Short([]byte(page.Body)))
	}
	if _, err := kit.Gov.Lifecycle.Report(context.Background(), agent, session, governance.EventInput{Name: "user.message.created"}); err != nil {
		t.Fatal(err)
	}
	page = b.Open("/sessions/" + session)
	if webtest.CountTestID(page.Body, "lifecycle-diagram") != 1 {
		t.Fatalf("no lifecycle drawing once the agent reports: %s", webtest.Short([]byte(page.Body)))
	}
	for _, s := range []string{"IDLE", "CLASSIFYING", "ANSWERING", "DELEGATING", "SCHEDULING", "ARCHITECTURE_DESIGNING",
		"CONFIRMING", "EXECUTING", "INTERRUPTING", "ARCHITECTURE_REVISING", "SUMMARIZING", "DIRECT_MODE"} {
		if n := webtest.CountTestID(page.Body, "lifecycle-state-"+s); n != 1 {
			t.Errorf("state %s drawn %d times", s, n)
		}
	}
	if webtest.CountTestID(page.Body, "lifecycle-current") != 1 ||
		!strings.Contains(page.Body, `data-testid="lifecycle-state-CLASSIFYING" data-state="CLASSIFYING" aria-current="step"`) {
		t.Error("CLASSIFYING is not the lit state")
	}
	if webtest.CountTestID(page.Body, "lifecycle-edge") != 21 {
		t.Errorf("%d arrows drawn, want 21", webtest.CountTestID(page.Body, "lifecycle-edge"))
	}
}

// A session whose agent reports its lifecycle is drawn where it is, with
// the path its timeline recorded marked, and is no longer "untracked".
func TestTheSessionPageMarksThePathTaken(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, false))
	for _, ev := range []governance.EventInput{
		{Name: "user.message.created"},
		{Name: "IntentClassified", Payload: json.RawMessage(`{"intent":"task"}`)},
		{Name: "architecture.impact.completed", Payload: json.RawMessage(`{"level":"implementation"}`)},
		{Name: "task.created", Payload: json.RawMessage(`{"task":"T1"}`)},
	} {
		if _, err := kit.Gov.Lifecycle.Report(context.Background(), agent, session, ev); err != nil {
			t.Fatalf("%s: %v", ev.Name, err)
		}
	}
	untracked := kit.Session(agent, kit.Mission(lead, false))
	b := webtest.ConsoleAs(t, base, lead.Email)
	list := b.Open("/sessions")
	for id, want := range map[string]string{session: "<code>EXECUTING</code>", untracked: ">untracked</span>"} {
		row := regexp.MustCompile(`(?s)data-session="` + id + `".*?</tr>`).FindString(list.Body)
		if !strings.Contains(row, want) {
			t.Errorf("the sessions list shows session %s without %s: %s", id, want, row)
		}
	}
	page := b.Open("/sessions/" + session)
	if !strings.Contains(page.Body, `data-testid="lifecycle-state-EXECUTING" data-state="EXECUTING" aria-current="step"`) {
		t.Fatal("EXECUTING is not the lit state")
	}
	if strings.Contains(page.Text(), "Untracked:") {
		t.Error("a session that reported its lifecycle is drawn as untracked")
	}
	if !strings.Contains(page.Text(), "Now EXECUTING. Path: IDLE → CLASSIFYING → DELEGATING → SCHEDULING → EXECUTING.") {
		t.Errorf("the drawing's description does not give the path: %s", webtest.Short([]byte(page.Text())))
	}
	if n := strings.Count(page.Body, `class="lc-edge taken"`); n != 4 {
		t.Errorf("%d arrows marked taken, want the 4 of the path", n)
	}
}

// A lead answers a permission prompt from the session page: one button per
// option, back to the page, which then shows the answer; a viewer sees the
// prompt but no buttons.
func TestTheSessionPageAnswersAPermissionPrompt(t *testing.T) {
	kit, base := consoleServer(t, false)
	lead, _ := kit.Lead()
	viewer, _ := kit.Person(auth.Viewer)
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, false))
	r, err := kit.Gov.Lifecycle.Report(context.Background(), agent, session, governance.EventInput{Name: "permission.prompt.requested",
		Payload: json.RawMessage(`{"prompt":"Push to main?","options":{"1":"Allow","2":"Deny"},"tool":"Bash"}`)})
	if err != nil {
		t.Fatal(err)
	}
	path := "/sessions/" + session
	if page := webtest.ConsoleAs(t, base, viewer.Email).Open(path); !strings.Contains(page.Text(), "Push to main?") ||
		webtest.CountTestID(page.Body, "session-permission-form") != 0 {
		t.Fatalf("a viewer's session page: prompt shown %v, forms %d", strings.Contains(page.Text(), "Push to main?"),
			webtest.CountTestID(page.Body, "session-permission-form"))
	}
	c := webtest.ConsoleAs(t, base, lead.Email)
	if page := c.Open(path); webtest.CountTestID(page.Body, "session-permission-form") != 1 {
		t.Fatalf("no answer form on the lead's session page")
	}
	answered := c.Submit("/permissions/"+strconv.FormatInt(r.Permission.ID, 10)+"/answer", url.Values{"option": {"1"}, "back": {path}})
	if answered.Status != http.StatusSeeOther || answered.Location() != path {
		t.Fatalf("answer: %d to %q, want 303 back to the session", answered.Status, answered.Location())
	}
	page := c.Open(path)
	if webtest.CountTestID(page.Body, "session-permission-form") != 0 || !strings.Contains(page.Text(), "1. Allow — "+lead.Email) ||
		!strings.Contains(page.Text(), "not yet delivered") {
		t.Fatalf("the page after the answer: %s", webtest.Short([]byte(page.Body)))
	}
}

// The 404 and 403 pages keep the navigation for a signed-in person (not
// for anyone else), and the icon is where browsers look for it.
func TestErrorPagesKeepTheNavigation(t *testing.T) {
	kit, base := consoleServer(t, false)
	viewer, _ := kit.Person(auth.Viewer)
	c := webtest.ConsoleAs(t, base, viewer.Email)
	for path, status := range map[string]int{"/no/such/page": http.StatusNotFound, "/admin/users": http.StatusForbidden} {
		page := c.Open(path)
		if page.Status != status || webtest.CountTestID(page.Body, "viewer") != 1 || webtest.CountTestID(page.Body, "error-page") != 1 {
			t.Errorf("%s signed in: %d, navigation %d; want %d with the navigation", path, page.Status,
				webtest.CountTestID(page.Body, "viewer"), status)
		}
	}
	page := webtest.NewClient(t, base).Open("/no/such/page")
	if page.Status != http.StatusNotFound || webtest.CountTestID(page.Body, "viewer") != 0 || !strings.Contains(page.Body, `rel="icon"`) {
		t.Errorf("/no/such/page signed out: %d, navigation %d", page.Status, webtest.CountTestID(page.Body, "viewer"))
	}
	icon := webtest.NewClient(t, base).Open("/favicon.ico")
	if icon.Status != http.StatusOK || icon.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(icon.Body, "<svg") {
		t.Errorf("/favicon.ico: %d %s", icon.Status, icon.Header.Get("Content-Type"))
	}
}
