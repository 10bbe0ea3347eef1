package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// firstItem is the first line of the queue on a page: the <article> of
// the first attention item.
func firstItem(t *testing.T, body string) string {
	t.Helper()
	start := strings.Index(body, `data-testid="attention-item"`)
	if start < 0 {
		t.Fatalf("no item on the page:\n%s", webtest.Short([]byte(body)))
	}
	start = strings.LastIndex(body[:start], "<article")
	end := strings.Index(body[start:], "</article>")
	return body[start : start+end]
}

// A gate open past its mission's gate_ttl is the first line of the
// Attention view, before a paused session, marked EXPIRED; its own page
// and its session's page say it expired and still let a lead resolve it.
func TestTheConsoleShowsExpiredGatesFirst(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	paused := kit.Session(agent, kit.Mission(lead, false))
	if _, err := kit.Gov.Sessions.Pause(ctx, lead, paused, "Wait for the review"); err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Gov.Missions.Create(ctx, lead, governance.MissionInput{Slug: "expiring", Title: "Expiring gates", GateTTL: "1h"}); err != nil {
		t.Fatal(err)
	}
	id := kit.Session(agent, "expiring")
	kit.Clock.Advance(time.Minute)
	d, err := kit.Gov.Decisions.Open(ctx, agent, id, governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
	if err != nil {
		t.Fatal(err)
	}
	c := webtest.ConsoleAs(t, base, lead.Email)

	t.Run("before the gate_ttl runs out the paused session comes first and nothing says expired", func(t *testing.T) {
		page := c.Open("/")
		first := firstItem(t, page.Body)
		if !strings.Contains(first, `data-kind="paused"`) || webtest.CountTestID(page.Body, "expired-badge") != 0 {
			t.Fatalf("first line %s; %d expired badges", first, webtest.CountTestID(page.Body, "expired-badge"))
		}
	})

	kit.Clock.Advance(time.Hour)
	c = webtest.ConsoleAs(t, base, lead.Email) // the hour idled the first sign-in out

	t.Run("once it runs out the gate is the first line, marked EXPIRED, on the page and in a refresh", func(t *testing.T) {
		for _, path := range []string{"/", "/attention/queue?limit=50", "/?kind=decision"} {
			page := c.Open(path)
			first := firstItem(t, page.Body)
			if !strings.Contains(first, `data-ref="`+d.Ref+`"`) || !strings.Contains(first, `data-expired="true"`) ||
				webtest.CountTestID(first, "expired-badge") != 1 || !strings.Contains(first, ">EXPIRED</span>") {
				t.Fatalf("%s: first line\n%s\nwant %s marked expired", path, first, d.Ref)
			}
			if webtest.CountTestID(page.Body, "expired-badge") != 1 {
				t.Errorf("%s: %d expired badges, want 1", path, webtest.CountTestID(page.Body, "expired-badge"))
			}
		}
		all := c.Open("/")
		if !strings.Contains(all.Body, `data-testid="kind-all">All <span class="n">2</span>`) {
			t.Errorf("the counts changed with the order:\n%s", webtest.Short([]byte(all.Body)))
		}
		// A page of one line is the expired gate; the next page the rest.
		one := c.Open("/attention/queue?limit=1")
		if webtest.CountTestID(one.Body, "attention-item") != 1 || !strings.Contains(firstItem(t, one.Body), `data-ref="`+d.Ref+`"`) {
			t.Fatalf("a one-line queue: %s", webtest.Short([]byte(one.Body)))
		}
		more := c.Open("/attention/queue?from=1")
		if webtest.CountTestID(more.Body, "attention-item") != 1 || !strings.Contains(firstItem(t, more.Body), `data-kind="paused"`) {
			t.Fatalf("the next page: %s", webtest.Short([]byte(more.Body)))
		}
	})

	t.Run("the item's own page and the session page say it expired unanswered, and it is not rejected", func(t *testing.T) {
		item := c.Open("/attention/items/decision/" + id + "/" + d.Ref)
		if item.Status != http.StatusOK || webtest.CountTestID(item.Body, "expired-badge") != 1 ||
			webtest.CountTestID(item.Body, "expired-note") != 1 || webtest.CountTestID(item.Body, "resolve-form") != 1 {
			t.Fatalf("the item's page: %d\n%s", item.Status, webtest.Short([]byte(item.Body)))
		}
		s := c.Open("/sessions/" + id)
		text := s.Text()
		for _, want := range []string{d.Ref + " expired unanswered after 1h: Drop the legacy billing table?", "open, expired unanswered at"} {
			if !strings.Contains(text, want) {
				t.Errorf("the session page does not say %q", want)
			}
		}
		if n := webtest.CountTestID(s.Body, "expired-badge"); n != 1 {
			t.Errorf("the session page has %d expired badges, want 1", n)
		}
		if !strings.Contains(s.Body, `data-expired="true"`) || webtest.CountTestID(s.Body, "session-resolve-form") != 1 {
			t.Errorf("the session page's gate is not shown expired with its form")
		}
		// Where the gate is shown, nothing speaks of rejection.
		for _, part := range []struct{ from, to string }{{`data-testid="session-needs"`, `data-testid="brief-preview"`},
			{`data-testid="decisions"`, "</table>"}} {
			i := strings.Index(s.Body, part.from)
			j := strings.Index(s.Body[max(i, 0):], part.to)
			if i < 0 || j < 0 {
				t.Fatalf("no %s on the session page", part.from)
			}
			if strings.Contains(strings.ToLower(s.Body[i:i+j]), "reject") {
				t.Errorf("the gate is shown as rejected: %s", s.Body[i:i+j])
			}
		}
	})

	t.Run("a lead resolves it from the queue as any gate, and the line leaves", func(t *testing.T) {
		r := c.Submit("/decisions/"+d.Ref+"/resolve", url.Values{"resolution": {"Keep it"}, "instruction": {"Archive instead."}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("resolve: %d\n%s", r.Status, webtest.Short([]byte(r.Body)))
		}
		page := c.Open("/")
		if strings.Contains(page.Body, `data-ref="`+d.Ref+`"`) || webtest.CountTestID(page.Body, "expired-badge") != 0 {
			t.Fatalf("the resolved gate is still in the queue")
		}
		s := c.Open("/sessions/" + id).Text()
		if !strings.Contains(s, "decided, not yet delivered") {
			t.Errorf("the session page does not show the resolution waiting for delivery")
		}
	})
}
