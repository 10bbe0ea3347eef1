package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// rowIDs are the session ids of a sessions page's rows, in order.
func rowIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`data-testid="session-row" data-session="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestTheSessionsListFiltersAndPages: the sessions page lists the most
// severe next action first, filters by state, mission, agent and words of
// the title, pages on with a link that keeps the filters, and answers a
// filter it cannot use with a message, not a 500.
func TestTheSessionsListFiltersAndPages(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	ann, _ := kit.Agent()
	bob, _ := kit.Agent()
	plain, other := kit.Mission(lead, false), kit.Mission(lead, false)
	open := func(agent auth.Actor, mission, title string) string {
		kit.Clock.Advance(time.Second) // "oldest first" has an order to keep
		s, err := kit.Gov.Sessions.Create(ctx, agent, governance.SessionInput{Mission: mission, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	first := open(ann, plain, "Billing split")
	paused := open(bob, other, "Invoice export")
	if _, err := kit.Gov.Sessions.Pause(ctx, lead, paused, "Release freeze"); err != nil {
		t.Fatal(err)
	}
	for i := range governance.DefaultLimit {
		open(ann, plain, fmt.Sprintf("Filler %d", i))
	}
	b := webtest.ConsoleAs(t, base, lead.Email)

	p := b.Open("/sessions")
	ids := rowIDs(p.Body)
	if p.Status != http.StatusOK || len(ids) != governance.DefaultLimit || ids[0] != paused || ids[1] != first {
		t.Fatalf("the first page: %d, %d rows, starting %v (want the paused %s, then the oldest %s)", p.Status, len(ids), ids[:min(2, len(ids))], paused, first)
	}
	next := regexp.MustCompile(`href="(/sessions\?next=[^"]+)" data-testid="next-page"`).FindStringSubmatch(p.Body)
	if next == nil {
		t.Fatalf("no next page link")
	}
	p2 := b.Open(strings.ReplaceAll(next[1], "&amp;", "&"))
	if got := rowIDs(p2.Body); len(got) != 2 || webtest.CountTestID(p2.Body, "next-page") != 0 || webtest.CountTestID(p2.Body, "first-page") != 1 {
		t.Errorf("the second page has %d rows (want 2), next %d, first %d", len(got), webtest.CountTestID(p2.Body, "next-page"), webtest.CountTestID(p2.Body, "first-page"))
	}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"state=BLOCKED", []string{paused}},
		{"mission=" + other, []string{paused}},
		{"agent=" + bob.KeyName, []string{paused}},
		{"q=billing", []string{first}},
		{"q=BILLING&state=CONTINUE&mission=" + plain, []string{first}},
		{"q=nothing+like+it", nil},
	} {
		p := b.Open("/sessions?" + tc.query)
		if got := rowIDs(p.Body); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: rows %v, want %v", tc.query, got, tc.want)
		}
		if webtest.CountTestID(p.Body, "clear-filters") != 1 {
			t.Errorf("%s: no way back to every session", tc.query)
		}
		if tc.want == nil && webtest.CountTestID(p.Body, "sessions-empty") != 1 {
			t.Errorf("%s: an empty list says nothing", tc.query)
		}
	}
	if p := b.Open("/sessions?state=" + "BLOCKED"); !strings.Contains(p.Body, `<option value="BLOCKED" selected>`) {
		t.Errorf("the state filter does not show what it filters by")
	}
	for query, want := range map[string]string{
		"state=STUCK":                   "There is no state called",
		"next=not-a-cursor":             "next",
		"q=" + strings.Repeat("x", 300): "at most",
	} {
		p := b.Open("/sessions?" + query)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text(), want) {
			t.Errorf("%s: %d, want 422 saying %q: %s", query, p.Status, want, webtest.Short([]byte(p.Body)))
		}
	}
}
