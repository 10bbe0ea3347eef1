package governance_test

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
)

// The race: raceSessions sessions, each with one resolved-but-undelivered
// decision and one new remediation request, and briefsPerSession briefs of
// each session started at the same moment.
const (
	raceSessions     = 50
	briefsPerSession = 8
)

// briefFunc takes one brief for the session and returns the refs of the
// resolutions that brief delivered. The race runs any implementation.
type briefFunc func(ctx context.Context, actor auth.Actor, session string) ([]string, error)

type raceSession struct {
	id          string
	agent       auth.Actor
	ref         string // the resolved decision waiting to be delivered
	remediation int64  // the remediation request waiting to be delivered
}

type raceFixture struct {
	kit      *testkit.Kit
	sessions []raceSession
}

// newRaceFixture builds the sessions of the race on a fresh database, with
// one agent key per session or one key shared by all.
func newRaceFixture(t *testing.T, sharedKey bool) *raceFixture {
	t.Helper()
	k := testkit.New(t)
	ctx := t.Context()
	lead := person(t, k, auth.Lead)
	mission := k.Mission(lead, false)
	shared, _ := k.Agent()
	fx := &raceFixture{kit: k}
	for i := range raceSessions {
		agent := shared
		if !sharedKey {
			agent, _ = k.Agent()
		}
		id := k.Session(agent, mission)
		d := must(k.Gov.Decisions.Open(ctx, agent, id, gate(fmt.Sprintf("Question %d?", i))))(t)
		must(k.Gov.Decisions.Resolve(ctx, lead, d.Ref, "Yes.", fmt.Sprintf("Go ahead with %d.", i)))(t)
		m := must(k.Gov.Remediations.Request(ctx, lead, id, governance.RemediationInput{
			Severity: governance.SeverityRequired, Instruction: fmt.Sprintf("Fix %d.", i)}))(t)
		fx.sessions = append(fx.sessions, raceSession{id: id, agent: agent, ref: d.Ref, remediation: m.ID})
	}
	k.Clock.Advance(time.Minute)
	return fx
}

type raceOutcome struct {
	delivered map[string]int // ref -> how many briefs delivered it
	errors    []error
	briefs    int
	elapsed   time.Duration
}

// duplicates lists the refs more than one brief delivered.
func (o raceOutcome) duplicates() []string {
	var out []string
	for ref, n := range o.delivered {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", ref, n))
		}
	}
	slices.Sort(out)
	return out
}

// race starts every brief of every session behind one barrier, so that all
// of them are in flight together, and collects what each delivered.
func race(t *testing.T, fx *raceFixture, brief briefFunc) raceOutcome {
	t.Helper()
	var (
		mu          sync.Mutex
		out         = raceOutcome{delivered: map[string]int{}}
		ready, done sync.WaitGroup
		start       = make(chan struct{})
	)
	ctx := t.Context()
	for _, s := range fx.sessions {
		for range briefsPerSession {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-start
				refs, err := brief(ctx, s.agent, s.id)
				mu.Lock()
				defer mu.Unlock()
				out.briefs++
				if err != nil {
					out.errors = append(out.errors, err)
					return
				}
				for _, r := range refs {
					out.delivered[r]++
				}
			}()
		}
	}
	ready.Wait()
	began := time.Now()
	close(start)
	done.Wait()
	out.elapsed = time.Since(began)
	return out
}

// countBy runs a "key, count" query and returns the counts by key.
func countBy(t *testing.T, k *testkit.Kit, query string) map[string]int {
	t.Helper()
	rows, err := k.SQL().QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			t.Fatal(err)
		}
		out[key] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkExactlyOnce fails unless the race ran without an error and every
// resolution and remediation was delivered exactly once: once in the
// briefs, once in the stamps, once in the timeline.
func checkExactlyOnce(t *testing.T, fx *raceFixture, out raceOutcome) {
	t.Helper()
	if want := len(fx.sessions) * briefsPerSession; out.briefs != want {
		t.Fatalf("%d briefs ran, want %d", out.briefs, want)
	}
	for i, err := range out.errors {
		if msg := strings.ToLower(err.Error()); strings.Contains(msg, "locked") || strings.Contains(msg, "busy") {
			t.Errorf("brief %d hit SQLite contention: %v", i, err)
		} else {
			t.Errorf("brief %d failed: %v", i, err)
		}
		if i == 9 {
			t.Fatalf("and %d more errors", len(out.errors)-10)
		}
	}
	if len(out.errors) > 0 {
		t.FailNow()
	}
	if d := out.duplicates(); len(d) > 0 {
		t.Fatalf("delivered more than once: %q", d)
	}
	want := map[string]bool{}
	for _, s := range fx.sessions {
		want[s.ref] = true
		if out.delivered[s.ref] != 1 {
			t.Errorf("%s (session %s) was delivered %d times, want exactly once", s.ref, s.id, out.delivered[s.ref])
		}
	}
	for ref := range out.delivered {
		if !want[ref] {
			t.Errorf("a brief delivered %s, which no session was waiting for", ref)
		}
	}
	k := fx.kit
	if n := countBy(t, k, `SELECT 'undelivered', COUNT(*) FROM decisions WHERE delivered_at IS NULL`)["undelivered"]; n != 0 {
		t.Errorf("%d resolutions were never stamped", n)
	}
	if n := countBy(t, k, `SELECT 'undelivered', COUNT(*) FROM remediations WHERE delivered_at IS NULL`)["undelivered"]; n != 0 {
		t.Errorf("%d remediations were never stamped", n)
	}
	lines := countBy(t, k, `SELECT kind || ' ' || ref, COUNT(*) FROM events WHERE kind LIKE '%.delivered' GROUP BY kind, ref`)
	for _, s := range fx.sessions {
		for _, line := range []string{"resolution.delivered " + s.ref, fmt.Sprintf("remediation.delivered %d", s.remediation)} {
			if lines[line] != 1 {
				t.Errorf("the timeline of %s has %q %d times, want once", s.id, line, lines[line])
			}
		}
	}
	if want := 2 * len(fx.sessions); len(lines) != want {
		t.Errorf("the timelines hold %d distinct deliveries, want %d", len(lines), want)
	}
}

// realBrief is governance.Brief. It also checks that every remediation a
// brief carries is stamped: an agent never sees a request the database
// does not know it has seen.
func realBrief(k *testkit.Kit) briefFunc {
	return func(ctx context.Context, actor auth.Actor, session string) ([]string, error) {
		b, err := k.Gov.Briefs.Brief(ctx, actor, governance.BriefRequest{Session: session})
		if err != nil {
			return nil, err
		}
		for _, m := range b.Remediations {
			if m.DeliveredAt == nil {
				return nil, fmt.Errorf("the brief of %s carries remediation %d without delivered_at", session, m.ID)
			}
		}
		refs := make([]string, len(b.Resolutions))
		for i, r := range b.Resolutions {
			refs[i] = r.Ref
		}
		return refs, nil
	}
}

// readThenStamp is the delivery the design forbids: it reads what is
// undelivered on the read pool, then stamps in a separate write, and
// reports what it read. Two briefs that both read before either stamps
// both deliver the same resolution.
func readThenStamp(k *testkit.Kit) briefFunc {
	return func(ctx context.Context, _ auth.Actor, session string) ([]string, error) {
		var rows []db.ListUndeliveredResolutionsRow
		err := k.Store.Read(ctx, func(q db.Querier) error {
			var err error
			rows, err = q.ListUndeliveredResolutions(ctx, db.ListUndeliveredResolutionsParams{SessionID: session,
				Cutoff: db.NullTime(k.Clock.Now().Add(-governance.DefaultDeliveryLease))})
			return err
		})
		if err != nil {
			return nil, err
		}
		runtime.Gosched() // widen the window between the read and the stamp
		at, cutoff := db.NullTime(k.Clock.Now()), db.NullTime(k.Clock.Now().Add(-governance.DefaultDeliveryLease))
		brief := sql.NullString{String: "brf_read_then_stamp", Valid: true}
		err = k.Store.Write(ctx, func(q db.Querier) error {
			if _, err := q.DeliverResolutions(ctx, db.DeliverResolutionsParams{Now: at, BriefID: brief, SessionID: session,
				Cutoff: cutoff}); err != nil {
				return err
			}
			_, err := q.DeliverRemediations(ctx, db.DeliverRemediationsParams{Now: at, BriefID: brief, SessionID: session,
				Cutoff: cutoff})
			return err
		})
		if err != nil {
			return nil, err
		}
		refs := make([]string, len(rows))
		for i, r := range rows {
			refs[i] = r.Ref
		}
		return refs, nil
	}
}

func TestBriefDeliversExactlyOnceUnderRace(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sharedKey bool
	}{
		{"400 racing briefs deliver everything once when every session has its own key", false},
		{"400 racing briefs deliver everything once when every session shares one key", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := newRaceFixture(t, tt.sharedKey)
			out := race(t, fx, realBrief(fx.kit))
			t.Logf("%d concurrent briefs of %d sessions took %s", out.briefs, len(fx.sessions), out.elapsed)
			checkExactlyOnce(t, fx, out)
		})
	}
}

// TestReadThenStampDeliversTwice shows that the race above can fail: the
// same harness catches a delivery that reads and stamps in two steps.
func TestReadThenStampDeliversTwice(t *testing.T) {
	t.Run("the harness finds a resolution delivered twice by read-then-stamp", func(t *testing.T) {
		const attempts = 5
		for i := 1; i <= attempts; i++ {
			fx := newRaceFixture(t, false)
			out := race(t, fx, readThenStamp(fx.kit))
			if d := out.duplicates(); len(d) > 0 {
				t.Logf("attempt %d: %d of %d resolutions delivered more than once, e.g. %s (%s)", i, len(d), len(fx.sessions), d[0], out.elapsed)
				return
			}
			t.Logf("attempt %d: no duplicate delivery (%s)", i, out.elapsed)
		}
		t.Fatalf("in %d races the harness never caught read-then-stamp delivering twice", attempts)
	})
	t.Run("the real brief under the same harness delivers nothing twice", func(t *testing.T) {
		fx := newRaceFixture(t, false)
		out := race(t, fx, realBrief(fx.kit))
		if d := out.duplicates(); len(d) > 0 {
			t.Fatalf("the real brief delivered more than once: %q", d)
		}
		checkExactlyOnce(t, fx, out)
	})
}

// TestWritesRacingBriefsAreDeliveredOnce races the writes themselves with
// the briefs: while every session's agent briefs in a loop, a lead resolves
// its gate and requests a remediation. Whatever a brief sees between its
// first look at the session and its read, each resolution is still handed
// over once, and no brief shows a remediation it has not stamped.
func TestWritesRacingBriefsAreDeliveredOnce(t *testing.T) {
	const (
		sessions = 40
		loopers  = 4  // agents briefing each session at once
		rounds   = 20 // briefs each looper takes
	)
	w := newWorld(t)
	ctx := t.Context()
	type target struct{ session, ref string }
	var targets []target
	for range sessions {
		s := w.Session(w.agent, w.mission)
		d := must(w.Gov.Decisions.Open(ctx, w.agent, s, gate("Go?")))(t)
		targets = append(targets, target{s, d.Ref})
	}
	brief := realBrief(w.Kit)
	var (
		mu          sync.Mutex
		delivered   = map[string]int{}
		failures    []error
		ready, done sync.WaitGroup
		start       = make(chan struct{})
	)
	record := func(refs []string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures = append(failures, err)
		}
		for _, r := range refs {
			delivered[r]++
		}
	}
	for _, tg := range targets {
		for range loopers {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-start
				for range rounds {
					record(brief(ctx, w.agent, tg.session))
				}
			}()
		}
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			_, err := w.Gov.Decisions.Resolve(ctx, w.lead, tg.ref, "Yes.", "Go ahead.")
			record(nil, err)
			_, err = w.Gov.Remediations.Request(ctx, w.lead, tg.session, governance.RemediationInput{Severity: "required", Instruction: "Fix."})
			record(nil, err)
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	done.Wait()
	t.Logf("%d briefs racing %d resolves and %d requests took %s", sessions*loopers*rounds, sessions, sessions, time.Since(began))
	for _, tg := range targets { // a last brief hands over whatever the loops left
		record(brief(ctx, w.agent, tg.session))
	}
	for _, err := range failures {
		t.Error(err)
	}
	for _, tg := range targets {
		if n := delivered[tg.ref]; n != 1 {
			t.Errorf("%s was delivered by %d briefs, want exactly one", tg.ref, n)
		}
	}
	if n := countBy(t, w.Kit, `SELECT 'n', COUNT(*) FROM decisions WHERE delivered_at IS NULL`)["n"]; n != 0 {
		t.Errorf("%d resolutions were never stamped", n)
	}
	if n := countBy(t, w.Kit, `SELECT 'n', COUNT(*) FROM remediations WHERE delivered_at IS NULL`)["n"]; n != 0 {
		t.Errorf("%d remediations were never stamped", n)
	}
	for line, n := range countBy(t, w.Kit, `SELECT kind || ' ' || ref, COUNT(*) FROM events WHERE kind LIKE '%.delivered' GROUP BY kind, ref`) {
		if n != 1 {
			t.Errorf("the timeline has %q %d times, want once", line, n)
		}
	}
}
