package console_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// A filter or a page number that names nothing is a clear message, not an
// empty list and never a 500.
func TestAttentionRefusesBadFilters(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	lead := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	for _, c := range []struct{ path, says string }{
		{"/?kind=gate", `There is no kind of item called &#34;gate&#34;`},
		{"/?from=-1", "from must be a whole number from 0"},
		{"/attention/queue?limit=5000", "limit must be a whole number from 1 to 1000"},
		{"/?agent=" + strings.Repeat("a", 201), "The agent filter is 201 characters long"},
		{"/attention/items/decision/ses_nothing/DEC-999", "may have been acted on already"},
		{"/attention/items/nonsense/ses_nothing/1", "may have been acted on already"},
	} {
		res, body := lead.Get(c.path)
		if res.StatusCode != http.StatusUnprocessableEntity && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 422 or 404", c.path, res.StatusCode)
		}
		if !strings.Contains(body, c.says) {
			t.Errorf("%s does not say %q: %s", c.path, c.says, webtest.Short([]byte(body)))
		}
	}
	// A filter that matches nothing says what would appear there.
	res, body := lead.Get("/?kind=permission")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "When an agent&#39;s tool asks for permission, the prompt appears here.") {
		t.Errorf("an empty kind: %d %s", res.StatusCode, webtest.Short([]byte(body)))
	}
}

// The push stream stays quiet while the queue is as the page saw it, says
// "queue" with the new count when an item joins or leaves it, and not for
// a write that changes nothing in it.
func TestStreamSaysWhenTheQueueChanges(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	lead := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	ctx := context.Background()
	counts, err := e.Kit.Gov.Attention.Counts(ctx, governance.AttentionFilter{})
	e.fatal(err)

	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, e.Base+"/attention/stream?since="+counts.Fingerprint(), nil)
	e.fatal(err)
	req.Header.Set("Accept", "text/event-stream")
	res, err := lead.HTTP.Do(req)
	e.fatal(err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		r := bufio.NewReader(res.Body)
		var ev strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\n" {
				events <- ev.String()
				ev.Reset()
				continue
			}
			ev.WriteString(line)
		}
	}()
	next := func(within time.Duration) string {
		select {
		case ev := <-events:
			return ev
		case <-time.After(within):
			return ""
		}
	}
	if ev := next(5 * time.Second); !strings.HasPrefix(ev, "retry: ") {
		t.Fatalf("the stream opens with %q", ev)
	}
	// A write that leaves the queue as it was says nothing.
	e.Session(false)
	if ev := next(500 * time.Millisecond); ev != "" {
		t.Errorf("a new session with nothing to act on sent %q", ev)
	}
	_, ref := e.decision()
	if ev := next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
		t.Errorf("after a gate opened the stream sent %q, want the queue event with 1", ev)
	}
	_, err = e.Kit.Gov.Decisions.Resolve(ctx, e.Lead, ref, "Yes.", "Go.")
	e.fatal(err)
	if ev := next(5 * time.Second); ev != "event: queue\ndata: 0\n" {
		t.Errorf("after the gate was resolved the stream sent %q, want the queue event with 0", ev)
	}
}
