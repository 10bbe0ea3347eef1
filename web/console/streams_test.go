package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/console"
	"github.com/madebook/madebook/web/webtest"
)

// countingStore is the kit's store, counting the queue counts read
// through it (CountAttention, the one query a stream's update costs).
type countingStore struct {
	*db.Store
	counts *atomic.Int64
}

// Reader counts CountAttention.
func (s countingStore) Reader() db.Querier { return countingQuerier{s.Store.Reader(), s.counts} }

// Read counts CountAttention.
func (s countingStore) Read(ctx context.Context, fn func(db.Querier) error) error {
	return s.Store.Read(ctx, func(q db.Querier) error { return fn(countingQuerier{q, s.counts}) })
}

type countingQuerier struct {
	db.Querier
	counts *atomic.Int64
}

func (q countingQuerier) CountAttention(ctx context.Context, arg db.CountAttentionParams) (db.CountAttentionRow, error) {
	q.counts.Add(1)
	return q.Querier.CountAttention(ctx, arg)
}

// streamEnv is a console whose services read through a countingStore,
// with the stream limits given; the kit's own services write.
func streamEnv(t *testing.T, limits console.StreamLimits) (*consoleEnv, *atomic.Int64) {
	t.Helper()
	kit := testkit.New(t)
	counts := &atomic.Int64{}
	d := webtest.Deps(kit)
	d.Gov = governance.New(countingStore{kit.Store, counts}, kit.Clock.Now, governance.Options{})
	d.ConsoleStreams = limits
	srv := httptest.NewServer(web.NewServer(d))
	t.Cleanup(srv.Close)
	e := &consoleEnv{T: t, Kit: kit, Base: srv.URL}
	e.Lead, _ = kit.Lead()
	e.Admin, _ = kit.Person(auth.Admin)
	e.Agent, _ = kit.Agent()
	return e, counts
}

// stream is an open push stream, its events read as they come.
type stream struct {
	t      *testing.T
	res    *http.Response
	events chan string
	cancel context.CancelFunc
}

// openStream opens GET /attention/stream?since=… as the client, failing
// unless it is 200 and its first event is the retry line.
func openStream(t *testing.T, b *webtest.Client, since string) *stream {
	t.Helper()
	s, res := tryStream(t, b, since)
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("open a stream: %d %s", res.StatusCode, body)
	}
	if ev := s.next(5 * time.Second); !strings.HasPrefix(ev, "retry: ") {
		t.Fatalf("the stream opens with %q", ev)
	}
	return s
}

// tryStream opens a stream and returns it with its response, whatever the
// status.
func tryStream(t *testing.T, b *webtest.Client, since string) (*stream, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.Base+"/attention/stream?since="+since, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := b.HTTP.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{t: t, res: res, events: make(chan string, 64), cancel: cancel}
	t.Cleanup(s.close)
	if res.StatusCode == http.StatusOK {
		go s.read()
	}
	return s, res
}

func (s *stream) read() {
	defer close(s.events)
	r := bufio.NewReader(s.res.Body)
	var ev strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if line == "\n" {
			s.events <- ev.String()
			ev.Reset()
			continue
		}
		ev.WriteString(line)
	}
}

// next is the next event ("" when none comes within the wait, "EOF" when
// the stream ended).
func (s *stream) next(within time.Duration) string {
	select {
	case ev, ok := <-s.events:
		if !ok {
			return "EOF"
		}
		return ev
	case <-time.After(within):
		return ""
	}
}

func (s *stream) close() {
	s.cancel()
	s.res.Body.Close()
}

// quietCounts is the queue's fingerprint now, for ?since=.
func quietCounts(t *testing.T, e *consoleEnv) string {
	t.Helper()
	c, err := e.Kit.Gov.Attention.Counts(context.Background(), governance.AttentionFilter{})
	e.fatal(err)
	return c.Fingerprint()
}

// A person holds at most 8 streams: their 9th ends their first, which is
// told "closed" (its page stops reconnecting), and leaves the others and
// other people's streams open.
func TestAPersonsNinthStreamClosesTheirFirst(t *testing.T) {
	t.Parallel()
	e, _ := streamEnv(t, console.StreamLimits{})
	lead := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	admin := webtest.ConsoleAs(t, e.Base, e.Admin.Email)
	since := quietCounts(t, e)
	theirs := openStream(t, admin, since)
	var mine []*stream
	for range console.DefaultStreamsPerUser {
		mine = append(mine, openStream(t, lead, since))
	}
	if ev := mine[0].next(300 * time.Millisecond); ev != "" {
		t.Fatalf("the 8th stream ended the first: %q", ev)
	}
	ninth := openStream(t, lead, since)
	if ev := mine[0].next(5 * time.Second); !strings.HasPrefix(ev, "event: closed\n") {
		t.Fatalf("after the 9th the first stream sent %q, want the closed event", ev)
	}
	if ev := mine[0].next(5 * time.Second); ev != "EOF" {
		t.Fatalf("after the closed event the first stream sent %q, want its end", ev)
	}
	// Every other stream is live: a gate opening reaches each.
	e.decision()
	for i, s := range append(append(mine[1:], ninth), theirs) {
		if ev := s.next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
			t.Errorf("stream %d sent %q after a gate opened, want the queue event", i+2, ev)
		}
	}
}

// At most Total streams are open in all: one more is 503 with
// Retry-After, in the error shape, until one closes; a person at their
// own limit still gets a new one (their oldest ends, making room).
func TestStreamsPastTheTotalAreRefused(t *testing.T) {
	t.Parallel()
	e, _ := streamEnv(t, console.StreamLimits{PerUser: 2, Total: 3})
	lead := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	admin := webtest.ConsoleAs(t, e.Base, e.Admin.Email)
	viewerActor, _ := e.Kit.Person(auth.Viewer)
	viewer := webtest.ConsoleAs(t, e.Base, viewerActor.Email)
	since := quietCounts(t, e)
	l1, l2 := openStream(t, lead, since), openStream(t, lead, since)
	a1 := openStream(t, admin, since)

	_, res := tryStream(t, viewer, since)
	body, _ := io.ReadAll(res.Body)
	var env struct {
		Error struct {
			Code       string  `json:"code"`
			Message    string  `json:"message"`
			RetryAfter float64 `json:"retry_after"`
		} `json:"error"`
	}
	if res.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &env) != nil || env.Error.Code != "too_many_streams" {
		t.Fatalf("the 4th stream: %d %s, want 503 too_many_streams", res.StatusCode, body)
	}
	if ra := res.Header.Get("Retry-After"); ra != "30" || env.Error.RetryAfter != 30 || env.Error.Message == "" {
		t.Errorf("Retry-After %q, retry_after %v, message %q", ra, env.Error.RetryAfter, env.Error.Message)
	}

	// The lead is at their own limit: their third replaces their first.
	l3 := openStream(t, lead, since)
	if ev := l1.next(5 * time.Second); !strings.HasPrefix(ev, "event: closed\n") {
		t.Fatalf("the lead's first stream sent %q, want the closed event", ev)
	}
	// One closes: the viewer gets in.
	a1.close()
	var v *stream
	for deadline := time.Now().Add(5 * time.Second); v == nil; {
		s, res := tryStream(t, viewer, since)
		switch {
		case res.StatusCode == http.StatusOK:
			v = s
		case time.Now().After(deadline):
			t.Fatalf("after a stream closed the viewer's is still %d", res.StatusCode)
		default:
			s.close()
			time.Sleep(20 * time.Millisecond) // the server notices the close
		}
	}
	if ev := v.next(5 * time.Second); !strings.HasPrefix(ev, "retry: ") {
		t.Fatalf("the viewer's stream opens with %q", ev)
	}
	e.decision()
	for i, s := range []*stream{l2, l3, v} {
		if ev := s.next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
			t.Errorf("stream %d sent %q after a gate opened, want the queue event", i, ev)
		}
	}
}

// However many streams are open, a write costs one count of the queue,
// shared by all of them; and a stream that opens while others run costs
// none.
func TestOneWriteIsOneCountForEveryStream(t *testing.T) {
	t.Parallel()
	e, counts := streamEnv(t, console.StreamLimits{})
	lead := webtest.ConsoleAs(t, e.Base, e.Lead.Email)
	admin := webtest.ConsoleAs(t, e.Base, e.Admin.Email)
	since := quietCounts(t, e)
	var streams []*stream
	for i := range 12 {
		b := lead
		if i%2 == 1 {
			b = admin
		}
		streams = append(streams, openStream(t, b, since))
	}
	// The streams are quiet (the queue is as ?since= says): let the
	// broadcaster's first count land before taking the figure.
	time.Sleep(300 * time.Millisecond)
	before := counts.Load()
	e.decision()
	for i, s := range streams {
		if ev := s.next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
			t.Fatalf("stream %d sent %q after a gate opened, want the queue event", i, ev)
		}
	}
	if n := counts.Load() - before; n != 1 {
		t.Errorf("12 streams and one write counted the queue %d times, want 1", n)
	}
	// A stream opening now starts from the last count: no query, and
	// it says at once that the queue changed since its page's.
	before = counts.Load()
	late := openStream(t, lead, since)
	if ev := late.next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
		t.Fatalf("a late stream sent %q, want the queue event", ev)
	}
	if n := counts.Load() - before; n != 0 {
		t.Errorf("a stream opened beside running ones counted the queue %d times, want 0", n)
	}
}

// A page whose stream was replaced (its person opened 8 more) stops
// reconnecting, which would end another of their streams in turn, and
// polls instead: a gate an agent opens still appears, without a reload.
func TestBrowserAPageWhoseStreamWasReplacedPolls(t *testing.T) {
	app := webtest.StartBrowserApp(t)
	ctx := webtest.NewBrowser(t)
	lead, _ := app.Kit.Lead()
	agent, _ := app.Kit.Agent()
	session := app.Kit.Session(agent, app.Kit.Mission(lead, false))
	webtest.SignIn(t, ctx, app.URL, lead.Email)
	webtest.Do(t, ctx, "the queue shows", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-empty]`)))
	webtest.Do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.madebookMark = 1`))
	streamDown := func() bool {
		down, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`madebookStreamDown()`))
		if err != nil {
			t.Fatal(err)
		}
		return down
	}
	for deadline := time.Now().Add(10 * time.Second); streamDown(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page's stream did not open")
		}
	}

	c, err := app.Kit.Gov.Attention.Counts(context.Background(), governance.AttentionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.ConsoleAs(t, app.URL, lead.Email)
	var others []*stream
	for range console.DefaultStreamsPerUser {
		others = append(others, openStream(t, b, c.Fingerprint()))
	}
	for deadline := time.Now().Add(10 * time.Second); !streamDown(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page's stream is still up after its person opened 8 more")
		}
	}
	d, err := app.Kit.Gov.Decisions.Open(context.Background(), agent, session, governance.DecisionInput{Title: "Legacy table", Question: "Drop it?"})
	if err != nil {
		t.Fatal(err)
	}
	webtest.Do(t, ctx, "the poll brings the gate",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=attention-item][data-ref="`+d.Ref+`"]`)))
	notReloaded(t, ctx)
	// The page did not reconnect: every one of the 8 is still open and
	// says the gate opened.
	for i, s := range others {
		if ev := s.next(5 * time.Second); ev != "event: queue\ndata: 1\n" {
			t.Errorf("stream %d sent %q, want the queue event (the page reconnected and ended it?)", i, ev)
		}
	}
	if !streamDown() {
		t.Error("the page's stream came back up")
	}
}
