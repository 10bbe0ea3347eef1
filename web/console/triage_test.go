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

// fromItemPage posts a form as htmx does from an item's own page.
func fromItemPage(t *testing.T, b *webtest.Client, page, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	form.Set("csrf", b.CSRF)
	req, err := http.NewRequest(http.MethodPost, b.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", b.Base+page)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.Do(req)
}

// TestTriageFromAnItemPage: the page a notification links to survives
// sign-in, is headed by its item's title, confirms an action in place
// with the next item to go to, and says what became of an item acted on
// already instead of a 404.
func TestTriageFromAnItemPage(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	other, _ := kit.Lead()
	agent, _ := kit.Agent()
	id := kit.Session(agent, kit.Mission(lead, false))
	open := func(title, proposal string) string {
		d, err := kit.Gov.Decisions.Open(ctx, agent, id, governance.DecisionInput{Title: title, Question: "Drop the legacy table?",
			Proposal: proposal, BlockedScope: []string{"db/"}})
		if err != nil {
			t.Fatal(err)
		}
		return d.Ref
	}
	ref := open("Schema change", "Keep the table, archive its rows")
	next := open("Rename", "")
	page := "/attention/items/decision/" + id + "/" + ref
	b := webtest.ConsoleAs(t, base, lead.Email)

	t.Run("sign-in returns to the page asked for", func(t *testing.T) {
		c := webtest.NewClient(t, base)
		res, _ := c.Get(page)
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
			t.Fatalf("signed out: %d to %q", res.StatusCode, loc)
		}
		login := c.Open(loc)
		if !strings.Contains(login.Body, `name="next" value="`+page+`"`) {
			t.Fatalf("the sign-in form does not carry next=%s: %s", page, webtest.Short([]byte(login.Body)))
		}
		res, _ = c.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}, "next": {page}}, "same-origin")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != page {
			t.Errorf("signed in: %d to %q, want %s", res.StatusCode, res.Header.Get("Location"), page)
		}
		for _, evil := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "/ok\r\nSet-Cookie: x", "javascript:alert(1)"} {
			c := webtest.NewClient(t, base)
			res, _ := c.Post("/login", url.Values{"email": {lead.Email}, "password": {"password-123"}, "next": {evil}}, "same-origin")
			if res.Header.Get("Location") != "/" {
				t.Errorf("next=%q sent the person to %q, want /", evil, res.Header.Get("Location"))
			}
		}
	})

	t.Run("the heading is the item's title, the page has a live region, and a proposal one button", func(t *testing.T) {
		p := b.Open(page)
		if p.Status != http.StatusOK || !strings.Contains(p.Body, ref+": Schema change") ||
			!strings.Contains(p.Body, `data-testid="announce"`) || webtest.CountTestID(p.Body, "accept-proposal") != 1 {
			t.Fatalf("status %d, no title, live region or Accept proposal: %s", p.Status, webtest.Short([]byte(p.Body)))
		}
		h1 := p.Body[strings.Index(p.Body, `data-testid="item-title"`):]
		if h1 = h1[:strings.Index(h1, "</h1>")]; !strings.Contains(h1, "Schema change") {
			t.Errorf("the h1 lacks the title: %s", h1)
		}
		if !strings.Contains(p.Body, `value="Go ahead as you proposed."`) {
			t.Error("the accept form's instruction is not prefilled")
		}
	})

	t.Run("a form's mistakes come all at once, each tied to its field", func(t *testing.T) {
		res, body := fromItemPage(t, b, page, "/decisions/"+ref+"/resolve", url.Values{"resolution": {" "}, "instruction": {""}})
		if res.StatusCode != http.StatusUnprocessableEntity || webtest.CountTestID(body, "error-resolution") != 1 ||
			webtest.CountTestID(body, "error-instruction") != 1 || strings.Count(body, `aria-invalid="true"`) != 2 {
			t.Fatalf("status %d, want both fields' errors: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
	})

	t.Run("Accept proposal resolves with the proposal and gives way to the next item", func(t *testing.T) {
		res, body := fromItemPage(t, b, page, "/decisions/"+ref+"/resolve", url.Values{"instruction": {"Go ahead as you proposed."}, "accepted": {"1"}})
		if res.StatusCode != http.StatusOK || res.Header.Get("HX-Retarget") != "#item-decision-"+ref {
			t.Fatalf("status %d retarget %q", res.StatusCode, res.Header.Get("HX-Retarget"))
		}
		for _, want := range []string{`data-testid="item-done"`, "You resolved " + ref + " just now: Keep the table, archive its rows.",
			`data-testid="next-item"`, "/attention/items/decision/" + id + "/" + next, `<div id="announce" hx-swap-oob="innerHTML">`} {
			if !strings.Contains(body, want) {
				t.Errorf("the answer lacks %q: %s", want, webtest.Short([]byte(body)))
			}
		}
		d, err := kit.Gov.Sessions.Get(ctx, lead, id)
		if err != nil || d.Decisions[0].Resolution != "Keep the table, archive its rows" {
			t.Errorf("decisions %+v, %v", d.Decisions, err)
		}
	})

	t.Run("a page followed late says who resolved it, when, with what", func(t *testing.T) {
		o := webtest.ConsoleAs(t, base, other.Email)
		p := o.Open(page)
		if p.Status != http.StatusOK || !strings.Contains(p.Body, ref+" was resolved by "+lead.Email+" just now: Keep the table, archive its rows.") {
			t.Fatalf("status %d: %s", p.Status, webtest.Short([]byte(p.Body)))
		}
		res, body := o.Get("/attention/items/decision/" + id + "/" + ref + "/outcome")
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="outcome"`) {
			t.Errorf("outcome: %d %s", res.StatusCode, body)
		}
		if res, _ := o.Get("/attention/items/decision/" + id + "/" + next + "/outcome"); res.StatusCode != http.StatusNoContent {
			t.Errorf("the outcome of a gate still open: %d, want 204", res.StatusCode)
		}
		if res, _ := o.Get("/attention/items/decision/" + id + "/DEC-999/outcome"); res.StatusCode != http.StatusNotFound {
			t.Errorf("the outcome of a gate that never was: %d, want 404", res.StatusCode)
		}
	})

	t.Run("accepting a gate without a proposal says to write the resolution", func(t *testing.T) {
		res, body := b.HTMXPost("/decisions/"+next+"/resolve", url.Values{"instruction": {"Go."}, "accepted": {"1"}})
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "The agent proposed nothing on "+next) {
			t.Fatalf("status %d: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
	})

	t.Run("bulk resolve takes gates of one kind only", func(t *testing.T) {
		a, c := open("Alike", ""), open("Unlike", "")
		res, body := b.HTMXPost("/decisions/resolve", url.Values{"refs": {a, c}, "resolution": {"Yes."}, "instruction": {"Go."}})
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "One answer fits only gates of one kind") {
			t.Fatalf("status %d: %s", res.StatusCode, webtest.Short([]byte(body)))
		}
		d, err := kit.Gov.Sessions.Get(ctx, lead, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, dec := range d.Decisions {
			if (dec.Ref == a || dec.Ref == c) && dec.Status != governance.DecisionOpen {
				t.Errorf("%s is %s after a refused bulk resolve", dec.Ref, dec.Status)
			}
		}
	})
}
