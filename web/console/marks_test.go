package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// TestClaimAndSnoozeInTheQueue: "I'm on it" shows the lead's name to
// everyone and refuses a second lead until they take it over; a snooze
// hides the item from the snoozer's queue only (it stays in the count:
// it still blocks the agent) and shows as snoozed to others; the queue's
// "on it" filter and "Snoozed by you" list find them again.
func TestClaimAndSnoozeInTheQueue(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	other, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, false))
	d, err := kit.Gov.Decisions.Open(ctx, agent, id, governance.DecisionInput{Title: "Schema change", Question: "Drop it?", BlockedScope: []string{"db/"}})
	if err != nil {
		t.Fatal(err)
	}
	item := "/attention/items/decision/" + id + "/" + d.Ref
	a := webtest.ConsoleAs(t, base, lead.Email)
	b := webtest.ConsoleAs(t, base, other.Email)

	res, body := a.HTMXPost(item+"/claim", url.Values{})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="unclaim"`) || !strings.Contains(body, "You are on it") {
		t.Fatalf("claim: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	if p := b.Open("/"); !strings.Contains(p.Text(), lead.Email+" is on it") {
		t.Errorf("the other lead's queue does not show the claim: %s", webtest.Short([]byte(p.Body)))
	}
	res, body = b.HTMXPost(item+"/claim", url.Values{})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, lead.Email+" is on it already: ask them, or take it over.") ||
		!strings.Contains(body, `data-testid="take-over"`) {
		t.Errorf("a second claim: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	if p := b.Open("/?claimed=me"); webtest.CountTestID(p.Body, "attention-item") != 0 {
		t.Errorf("claimed=me shows another lead's claim")
	}
	if p := a.Open("/?claimed=me"); webtest.CountTestID(p.Body, "attention-item") != 1 {
		t.Errorf("claimed=me does not show the lead's own claim")
	}
	if res, body = b.HTMXPost(item+"/claim", url.Values{"take_over": {"1"}}); res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="unclaim"`) {
		t.Errorf("take over: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}

	res, body = a.HTMXPost(item+"/snooze", url.Values{"for": {"4h"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Snoozed for 4h") {
		t.Fatalf("snooze: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	if p := a.Open("/"); webtest.CountTestID(p.Body, "attention-item") != 0 || !strings.Contains(p.Body, `data-testid="show-snoozed"`) {
		t.Errorf("the snoozed item is still in the snoozer's queue")
	}
	if p := a.Open("/?snoozed=only"); webtest.CountTestID(p.Body, "attention-item") != 1 || !strings.Contains(p.Body, `data-testid="unsnooze"`) && !strings.Contains(p.Text(), "snoozed by "+lead.Email) {
		t.Errorf("Snoozed by you does not list it: %s", webtest.Short([]byte(p.Body)))
	}
	if p := b.Open("/"); !strings.Contains(p.Text(), "snoozed by "+lead.Email+" until") {
		t.Errorf("others do not see the snooze")
	}
	if n, err := kit.Gov.Attention.Count(ctx); err != nil || n != 1 {
		t.Errorf("the count is %d (%v): a snoozed gate still blocks", n, err)
	}
	for _, bad := range []string{"", "forever", "0m", "90d"} {
		res, body := a.HTMXPost(item+"/snooze", url.Values{"for": {bad}})
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `class="error"`) {
			t.Errorf("snooze for %q: %d %s", bad, res.StatusCode, webtest.Short([]byte(body)))
		}
	}
	if p := a.Open("/?claimed=maybe"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text(), "claimed is") {
		t.Errorf("an unknown claimed filter: %d", p.Status)
	}
	if res, _ := a.HTMXPost(item+"/unsnooze", url.Values{}); res.StatusCode != http.StatusOK {
		t.Errorf("unsnooze: %d", res.StatusCode)
	}
	if p := a.Open("/"); webtest.CountTestID(p.Body, "attention-item") != 1 {
		t.Errorf("unsnoozed, the item is not back")
	}

	// Without a script a mark goes back to the item's page, which says so.
	if p := b.Submit(item+"/unclaim", url.Values{"back": {item}}); p.Status != http.StatusSeeOther || p.Location() != item {
		t.Errorf("unclaim without htmx: %d to %q", p.Status, p.Location())
	}
	if p := b.Open(item); !strings.Contains(p.Text(), "Unclaimed: no one is on it now.") || webtest.CountTestID(p.Body, "claim") != 1 {
		t.Errorf("the item page after unclaiming: %s", webtest.Short([]byte(p.Body)))
	}
	if p := b.Submit(item+"/claim", url.Values{"back": {item}}); p.Status != http.StatusSeeOther {
		t.Errorf("claim without htmx: %d", p.Status)
	}

	// What leads did shows on the Activity page, under its own filter.
	if p := a.Open("/activity?kind=attention."); !strings.Contains(p.Body, `<option value="attention." selected>`) ||
		strings.Count(p.Text(), "attention.claim") < 3 || !strings.Contains(p.Text(), "attention.snooze") {
		t.Errorf("the Activity page's claims and snoozes: %s", webtest.Short([]byte(p.Body)))
	}

	// A viewer sees the marks but has no buttons to set them.
	viewer, _ := kit.Person(auth.Viewer)
	v := webtest.ConsoleAs(t, base, viewer.Email)
	if p := v.Open(item); !strings.Contains(p.Text(), other.Email+" is on it") || strings.Contains(p.Body, `data-testid="marks"`) {
		t.Errorf("a viewer's item page: %s", webtest.Short([]byte(p.Body)))
	}
	if res, _ := v.HTMXPost(item+"/claim", url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's claim: %d", res.StatusCode)
	}
}

// TestBlockedTaskAnswers: a blocked task is acknowledged (seen by the
// lead, for everyone) or answered with a required remediation the agent
// is told on its next brief; an empty instruction is refused on the form.
func TestBlockedTaskAnswers(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, false))
	for _, e := range []struct{ name, payload string }{
		{"user.message.created", ""}, {"IntentClassified", `{"intent":"task"}`},
		{"architecture.impact.completed", `{"level":"implementation"}`},
		{"task.created", `{"task":"t1"}`}, {"task.blocked", `{"task":"t1"}`},
	} {
		in := governance.EventInput{Name: e.name}
		if e.payload != "" {
			in.Payload = json.RawMessage(e.payload)
		}
		if _, err := kit.Gov.Lifecycle.Report(ctx, agent, id, in); err != nil {
			t.Fatal(err)
		}
	}
	a := webtest.ConsoleAs(t, base, lead.Email)
	p := a.Open("/attention/items/task/" + id + "/t1")
	if webtest.CountTestID(p.Body, "acknowledge") != 1 || webtest.CountTestID(p.Body, "task-remediation-form") != 1 {
		t.Fatalf("the task's page has no acknowledge or remediation: %s", webtest.Short([]byte(p.Body)))
	}
	task := "/sessions/" + id + "/tasks/t1"
	res, body := a.HTMXPost(task+"/acknowledge", url.Values{})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Seen by "+lead.Email) || strings.Contains(body, `data-testid="acknowledge"`) {
		t.Errorf("acknowledge: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, body = a.HTMXPost(task+"/remediation", url.Values{"instruction": {"  "}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="error-instruction"`) {
		t.Errorf("an empty remediation: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	res, body = a.HTMXPost(task+"/remediation", url.Values{"instruction": {"Split the migration first."}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Remediation required") {
		t.Fatalf("remediation: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
	br, err := kit.Gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if br.NextAction.String() != "REMEDIATE" {
		t.Errorf("after the remediation the brief is %s", br.NextAction)
	}
	// Without a script, the form goes back to the page it came from.
	pl := a.Submit(task+"/acknowledge", url.Values{"back": {"/sessions/" + id}})
	if pl.Status != http.StatusSeeOther && pl.Status != http.StatusConflict {
		t.Errorf("a second acknowledge without htmx: %d", pl.Status)
	}
}
