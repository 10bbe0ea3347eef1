package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
	"github.com/madebook/madebook/web/webtest"
)

// BenchmarkBriefThroughput compares POST /brief with a no-op JSON handler
// on the same server, over loopback HTTP with parallel clients, with 10,000
// sessions in the database (one in ten with an open decision gate). The
// goal: brief reaches at least 0.7× the no-op's requests per second.
//
// Beside it, check is the executor gate's question (POST
// /api/v1/sessions/{id}/tool-calls/check as a Claude Code hook asks it
// before an Edit, on the run it holds the session's calls in; hookCheck)
// on the same sessions: it reports its time per request as a multiple of
// the brief's (x-brief).
//
//	go test -run '^$' -bench BriefThroughput -benchtime 3s ./web
func BenchmarkBriefThroughput(b *testing.B) {
	const sessions = 10_000
	kit := testkit.New(b)
	lead, _ := kit.Lead()
	agent, key := kit.Agent()
	mission := kit.Mission(lead, false)
	ids := seedSessions(b, kit, agent.KeyID, mission, sessions)
	ctx := context.Background()
	checks := make([][]byte, sessions)
	for i, id := range ids {
		checks[i] = hookCheck(b, kit, agent, id)
	}
	for i := 0; i < sessions; i += 10 {
		if _, err := kit.Gov.Decisions.Open(ctx, agent, ids[i], governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}}); err != nil {
			b.Fatal(err)
		}
	}

	d := webtest.Deps(kit)
	// One key briefs for all 10,000 sessions, faster on a quick machine
	// than the default 10,000 a second: the limits are there and counted,
	// set past anything a benchmark reaches.
	d.Limits = ratelimit.New(ratelimit.Config{Requests: ratelimit.Limit{N: 1 << 30, Per: time.Second}})
	e := web.NewServer(d)
	e.POST("/noop", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	srv := httptest.NewServer(e)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}

	bodies := make([][]byte, sessions)
	for i, id := range ids {
		bodies[i] = []byte(fmt.Sprintf(`{"session":%q}`, id))
	}
	// Steady state: every session has briefed once and its hook has
	// checked once, as agents do all day.
	warm := func(path string, body []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("warming up %s: status %d", path, res.StatusCode)
		}
	}
	for i, id := range ids {
		warm("/brief", bodies[i])
		warm("/api/v1/sessions/"+id+"/tool-calls/check", checks[i])
	}
	fixed := func(path string) func(int64) (string, []byte) {
		return func(i int64) (string, []byte) { return path, bodies[i] }
	}
	check := func(i int64) (string, []byte) { return "/api/v1/sessions/" + ids[i] + "/tool-calls/check", checks[i] }
	var briefNs float64
	run := func(b *testing.B, request func(int64) (string, []byte), auth bool) float64 {
		var next atomic.Int64
		b.SetParallelism(4)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				path, body := request(next.Add(1) % sessions)
				req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if auth {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body) //nolint:errcheck // draining for reuse
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Errorf("%s: status %d", path, res.StatusCode)
					return
				}
			}
		})
		elapsed := time.Since(start)
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
		return float64(elapsed.Nanoseconds()) / float64(b.N)
	}
	b.Run("noop", func(b *testing.B) { run(b, fixed("/noop"), false) })
	b.Run("brief", func(b *testing.B) { briefNs = run(b, fixed("/brief"), true) })
	b.Run("check", func(b *testing.B) {
		ns := run(b, check, true)
		if briefNs > 0 {
			b.ReportMetric(ns/briefNs, "x-brief")
		}
	})
}

// hookCheck opens the run a Claude Code hook holds session's calls in and
// returns the check the hook sends before an Edit on it: the path
// absolute, in the working directory Claude Code reports.
func hookCheck(tb testing.TB, kit *testkit.Kit, agent auth.Actor, session string) []byte {
	tb.Helper()
	run, _, err := kit.Ledger.OpenRun(context.Background(), agent, session, gate.ClaudeCode, "", "claude-"+session)
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(`{"tool":"Edit","input":{"file_path":"/home/dev/shop/web/app.js","old_string":"a","new_string":"b"},` +
		`"cwd":"/home/dev/shop","run":"` + run.ID + `"}`)
}

// hookBashCheck is the check the Claude Code hook sends before a Bash
// command on the session's hook run, with the project root and the home
// directory: in a session whose gate blocks a path, the command is parsed.
func hookBashCheck(tb testing.TB, kit *testkit.Kit, agent auth.Actor, session string) []byte {
	tb.Helper()
	run, _, err := kit.Ledger.OpenRun(context.Background(), agent, session, gate.ClaudeCode, "", "claude-"+session)
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(`{"tool":"Bash","input":{"command":"cd web && go test ./... 2>&1 | tail -20","description":"Run the web tests"},` +
		`"cwd":"/home/dev/shop","root":"/home/dev/shop","home":"/home/dev","run":"` + run.ID + `"}`)
}

// seedSessions inserts n sessions in one transaction, as fast as the
// database allows, and returns their ids.
func seedSessions(tb testing.TB, kit *testkit.Kit, keyID int64, mission string, n int) []string {
	tb.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	err := kit.Store.Write(ctx, func(q db.Querier) error {
		m, err := q.GetMissionBySlug(ctx, mission)
		if err != nil {
			return err
		}
		for i := range ids {
			ids[i] = fmt.Sprintf("ses_bench%06d", i)
			if _, err := q.CreateSession(ctx, db.CreateSessionParams{ID: ids[i], MissionID: m.ID, AgentKeyID: keyID,
				Agent: "bench", Title: "bench", Lifecycle: "IDLE", CreatedAt: db.FormatTime(kit.Clock.Now())}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

// BenchmarkAttentionView renders the Attention view (GET /, through the
// real handler, database and templates) with 1,000 open items: 700 gates,
// 200 plans waiting on high-risk missions and 100 paused sessions. The
// goal: under 50 ms per render.
//
//	go test -run '^$' -bench AttentionView -benchmem ./web
func BenchmarkAttentionView(b *testing.B) {
	benchAttention(b, queueMix{gates: 700, plans: 200, paused: 100})
}

// BenchmarkAttentionFirstPage renders the Attention view's first page with
// 2,000 open items, as after a runaway agent: 1,284 gates on 13 sessions
// (a session holds at most 100 open gates), 316 more on others, 200 plans
// waiting and 200 paused sessions. The goal: well under a second (the
// page used to render every item's form: 1,800 items made 3.5 MB of HTML).
// TestAttentionFirstPageIsSmall checks its size.
//
//	go test -run '^$' -bench AttentionFirstPage -benchmem ./web
func BenchmarkAttentionFirstPage(b *testing.B) {
	benchAttention(b, runawayMix)
}

// runawayMix is the queue after a runaway agent: 2,000 open items.
var runawayMix = queueMix{runaway: 1284, gates: 316, plans: 200, paused: 200}

// maxFirstPage is the most bytes the Attention view's first page may be,
// however long the queue: 50 one-line items and their frame.
const maxFirstPage = 100 << 10

// TestAttentionFirstPageIsSmall opens 2,000 items and checks that the
// Attention view's first page is a page, not the queue: 50 lines, a
// "Show more", the count of all 2,000, and a bounded size. Size, not
// time: the time is the benchmark's.
func TestAttentionFirstPageIsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 items")
	}
	e, cookie := seedQueue(t, runawayMix)
	body := renderAttention(t, e, cookie, runawayMix)
	if len(body) > maxFirstPage {
		t.Fatalf("the first page of 2,000 items is %d bytes, over %d", len(body), maxFirstPage)
	}
	if want := fmt.Sprintf("Show 50 more of %d left", runawayMix.total()-50); !strings.Contains(body, `data-testid="load-more"`) ||
		!strings.Contains(body, want) {
		t.Fatalf("the first page has no %q", want)
	}
	t.Logf("first page of %d items: %d bytes", runawayMix.total(), len(body))
}

// queueMix is how many items of each kind a benchmark's queue holds.
type queueMix struct {
	runaway, gates, plans, paused int
}

func (m queueMix) total() int { return m.runaway + m.gates + m.plans + m.paused }

// runawayPerSession is how many of a runaway agent's gates one session
// holds: under the cap of open gates a session may hold.
const runawayPerSession = 99

// benchAttention opens the mix's items and renders GET / with them.
func benchAttention(b *testing.B, mix queueMix) {
	e, cookie := seedQueue(b, mix)
	b.ReportAllocs()
	b.ResetTimer()
	var size int
	for i := 0; i < b.N; i++ {
		size = len(renderAttention(b, e, cookie, mix))
	}
	b.ReportMetric(float64(size), "bytes/page")
}

// seedQueue opens the mix's items (the runaway's gates spread over as few
// sessions as the cap allows) and starts a server, signed in as a lead.
func seedQueue(tb testing.TB, mix queueMix) (*echo.Echo, *http.Cookie) {
	tb.Helper()
	kit := testkit.New(tb)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	ctx := context.Background()
	plain, risky := kit.Mission(lead, false), kit.Mission(lead, true)
	runaway := (mix.runaway + runawayPerSession - 1) / runawayPerSession
	ids := seedSessions(tb, kit, agent.KeyID, plain, mix.gates+mix.paused+runaway)
	gate := func(session string) {
		if _, err := kit.Gov.Decisions.Open(ctx, agent, session, governance.DecisionInput{Title: "Schema change",
			Question: "Drop the legacy billing table?", Proposal: "Drop it in one reversible migration.",
			BlockedScope: []string{"db/migrations", "internal/billing"}, AllowedScope: []string{"web/", "views/"}}); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range mix.runaway {
		gate(ids[mix.gates+mix.paused+i/runawayPerSession])
	}
	for i := range mix.gates {
		gate(ids[i])
	}
	for i := mix.gates; i < mix.gates+mix.paused; i++ {
		if _, err := kit.Gov.Sessions.Pause(ctx, lead, ids[i], "Release freeze"); err != nil {
			tb.Fatal(err)
		}
	}
	for range mix.plans {
		s := kit.Session(agent, risky)
		if _, err := kit.Gov.Plans.Propose(ctx, agent, s, governance.PlanInput{Summary: "Migrate in two steps."}); err != nil {
			tb.Fatal(err)
		}
	}
	if n, err := kit.Gov.Attention.Count(ctx); err != nil || n != mix.total() {
		tb.Fatalf("%d items (%v), want %d", n, err, mix.total())
	}

	e := web.NewServer(webtest.Deps(kit))
	srv := httptest.NewServer(e)
	tb.Cleanup(srv.Close)
	return e, signInCookie(tb, srv.URL, lead.Email)
}

// renderAttention renders GET / as the lead and checks it is the first
// page: 50 lines, and the count of every item.
func renderAttention(tb testing.TB, e *echo.Echo, cookie *http.Cookie, mix queueMix) string {
	tb.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", "text/html")
	req.AddCookie(cookie)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || strings.Count(body, `data-testid="attention-item"`) != 50 ||
		!strings.Contains(body, fmt.Sprintf(`All <span class="n">%d</span>`, mix.total())) {
		tb.Fatalf("status %d, %d bytes, %d lines", rec.Code, rec.Body.Len(), strings.Count(body, `data-testid="attention-item"`))
	}
	return body
}

// signInCookie signs in through the form and returns the session cookie.
func signInCookie(tb testing.TB, base, email string) *http.Cookie {
	tb.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(base+"/login", url.Values{"email": {email}, "password": {"password-123"}})
	if err != nil {
		tb.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "madebook_session" {
			return ck
		}
	}
	tb.Fatalf("no session cookie (status %d)", res.StatusCode)
	return nil
}

// BenchmarkServe is each agent route's own cost on the server, without
// the network: the request handed to the handler, the answer written to a
// writer that keeps nothing, as /healthz, POST /brief and the executor
// check (an Edit, and a Bash command parsed under a gate). The machine's noise weighs less here than in madebook-bench, and
// allocations are the server's alone.
//
//	go test -run '^$' -bench Serve -benchmem ./web
func BenchmarkServe(b *testing.B) {
	kit := testkit.New(b)
	lead, _ := kit.Lead()
	agent, key := kit.Agent()
	mission := kit.Mission(lead, false)
	ids := seedSessions(b, kit, agent.KeyID, mission, 2)
	if _, err := kit.Gov.Decisions.Open(context.Background(), agent, ids[1], governance.DecisionInput{Title: "Schema",
		Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}}); err != nil {
		b.Fatal(err)
	}
	d := webtest.Deps(kit)
	d.Limits = ratelimit.New(ratelimit.Config{Requests: ratelimit.Limit{N: 1 << 30, Per: time.Second}})
	e := web.NewServer(d)
	routes := []struct {
		name, method, path, body string
	}{
		{"healthz", http.MethodGet, "/healthz", ""},
		{"brief", http.MethodPost, "/brief", `{"session":"` + ids[0] + `"}`},
		{"check", http.MethodPost, "/api/v1/sessions/" + ids[0] + "/tool-calls/check", string(hookCheck(b, kit, agent, ids[0]))},
		// A Bash command in a session whose gate blocks db/migrations: parsed
		// and compared with the scope, the gate's dearest check.
		{"check-bash-gated", http.MethodPost, "/api/v1/sessions/" + ids[1] + "/tool-calls/check", string(hookBashCheck(b, kit, agent, ids[1]))},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) {
			body := strings.NewReader(r.body)
			req := httptest.NewRequest(r.method, r.path, body)
			if r.body != "" {
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
			}
			w := &discardWriter{h: http.Header{}}
			serve := func() {
				body.Reset(r.body)
				req.Body = io.NopCloser(body)
				clear(w.h)
				w.status = 0
				e.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("%s: status %d", r.path, w.status)
				}
			}
			serve()
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
