package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A critical violation's severity is a badge whose colour says critical,
// on the session page and on its Attention line; a required
// remediation's says required.
func TestSeverityBadgesCarryTheirSeverity(t *testing.T) {
	e := newConsoleEnv(t)
	id := e.Session(false)
	e.criticalViolation(id)
	_, err := e.Kit.Gov.Remediations.Request(context.Background(), e.Lead, id, governance.RemediationInput{
		Severity: governance.SeverityRequired, Instruction: "Rotate the key."})
	e.fatal(err)
	c := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	critical := `<span class="badge sev-critical" data-testid="severity" data-severity="critical">critical</span>`
	required := `<span class="badge sev-required" data-testid="severity" data-severity="required">required</span>`
	session := c.Open("/sessions/" + id).Body
	if n := strings.Count(session, critical); n < 2 { // waiting on a person, and among the open violations
		t.Errorf("the session page has %d critical badges, want 2: %s", n, webtest.Short([]byte(session)))
	}
	if !strings.Contains(session, required) {
		t.Errorf("the session page's remediation has no required badge")
	}
	if strings.Contains(session, `<span class="badge">critical</span>`) {
		t.Errorf("a plain badge says critical")
	}
	attention := c.Open("/?session=" + id).Body
	if !strings.Contains(attention, critical) || !strings.Contains(attention, required) {
		t.Errorf("the Attention lines carry no severity badges: %s", webtest.Short([]byte(attention)))
	}
}

// An action from the session page's plain forms comes back to the page
// with what it did and what happens next, once, in its status region;
// the words are the Attention view's.
func TestTheSessionPageSaysWhatAnActionDid(t *testing.T) {
	e := newConsoleEnv(t)
	id, ref := e.decision()
	c := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	back := "/sessions/" + id
	if page := c.Open(back); !strings.Contains(page.Text(), "The agent gets the resolution and the instruction on its next brief.") {
		t.Fatalf("the resolve form has no hint of what happens next")
	}
	res := c.Submit("/decisions/"+ref+"/resolve", url.Values{"resolution": {"Keep it"}, "instruction": {"Archive instead."}, "back": {back}})
	if res.Status != http.StatusSeeOther || res.Location() != back {
		t.Fatalf("resolve: %d to %q", res.Status, res.Location())
	}
	want := `<p class="notice" role="status">` + ref + " resolved — the agent gets the resolution and instruction on its next brief.</p>"
	if page := c.Open(back); !strings.Contains(page.Text(), want) {
		t.Fatalf("after resolving, the page does not say %q: %s", want, webtest.Short([]byte(page.Body)))
	}
	if page := c.Open(back); strings.Contains(page.Body, `class="notice"`) {
		t.Fatalf("the notice shows a second time")
	}

	// Words are only ever the console's own: a flash cookie made up
	// elsewhere (or another session's) shows nothing.
	u, _ := url.Parse(e.Base)
	c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "madebook_flash", Value: "SGFja2Vk.AAAA", Path: "/"}})
	if page := c.Open(back); strings.Contains(page.Body, `class="notice"`) {
		t.Fatalf("a forged flash showed: %s", webtest.Short([]byte(page.Body)))
	}

	// The brake, from the session page, says so too.
	res = c.Submit("/sessions/"+id+"/pause", url.Values{"reason": {"Release freeze"}, "back": {back}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("pause: %d", res.Status)
	}
	if page := c.Open(back); !strings.Contains(page.Text(), "paused — the agent is told to stop on its next brief.") {
		t.Fatalf("after the brake, the page says nothing of it")
	}
}

// The remediation form pre-selects no severity: a lead must choose, and
// a request without one comes back with the message, nothing written.
func TestARemediationNeedsAChosenSeverity(t *testing.T) {
	e := newConsoleEnv(t)
	id := e.Session(false)
	c := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	page := c.Open("/sessions/" + id)
	if !strings.Contains(page.Body, `<option value="" selected disabled>choose…</option>`) {
		t.Fatalf("the severity select pre-selects a choice")
	}
	page = c.Submit("/sessions/"+id+"/remediations", url.Values{"severity": {""}, "instruction": {"Add a test."}})
	if page.Status != http.StatusUnprocessableEntity || webtest.CountTestID(page.Body, "error-severity") != 1 ||
		!strings.Contains(page.Text(), "Choose a severity") {
		t.Fatalf("no severity: %d %s", page.Status, webtest.Short([]byte(page.Body)))
	}
	d, err := e.Kit.Gov.Sessions.Get(context.Background(), e.Lead, id)
	e.fatal(err)
	if len(d.Remediations) != 0 {
		t.Fatalf("a remediation without a severity was written: %+v", d.Remediations)
	}
}

// A session whose run is parked on a question says so beside its next
// action, on the brief preview and on the sessions list: the brief does
// not weigh a parked run (seed 000), and the page must not read as if
// nothing waited.
func TestAParkedRunShowsBesideTheNextAction(t *testing.T) {
	e := newConsoleEnv(t)
	id, _ := e.parkedAsk()
	quiet := e.Session(false)
	c := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	page := c.Open("/sessions/" + id)
	if webtest.CountTestID(page.Body, "brief-parked") != 1 || !strings.Contains(page.Text(), "roles-run</strong> parked: waiting on a person's answer to “Save this reading?”") {
		t.Fatalf("the brief preview does not say the run is parked: %s", webtest.Short([]byte(page.Body)))
	}
	if !strings.Contains(page.Body, `data-testid="next-action">CONTINUE<`) {
		t.Errorf("the next action is no longer the protocol's CONTINUE")
	}
	if webtest.CountTestID(c.Open("/sessions/"+quiet).Body, "brief-parked") != 0 {
		t.Errorf("a session with no parked run says one is parked")
	}
	list := c.Open("/sessions").Body
	row := func(s string) string {
		i := strings.Index(list, `data-session="`+s+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", s)
		}
		j := strings.Index(list[i:], "</tr>")
		return list[i : i+j]
	}
	if r := row(id); !strings.Contains(r, `data-testid="session-parked"`) || !strings.Contains(r, "1 question waits") {
		t.Errorf("the sessions list does not mark the parked session: %s", r)
	}
	if r := row(quiet); strings.Contains(r, `data-testid="session-parked"`) {
		t.Errorf("the sessions list marks a session with nothing parked")
	}
}
