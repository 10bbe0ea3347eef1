package governance_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/governance"
)

// storedLastBrief reads last_brief_at straight from the database.
func storedLastBrief(t *testing.T, w *world, session string) sql.NullString {
	t.Helper()
	var v sql.NullString
	if err := w.SQL().QueryRowContext(t.Context(), `SELECT last_brief_at FROM sessions WHERE id = ?`, session).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// lastBrief returns what Sessions.Get shows as last_brief_at, or the zero time.
func lastBrief(t *testing.T, w *world, svc *governance.Services, session string) time.Time {
	t.Helper()
	d := must(svc.Sessions.Get(t.Context(), w.lead, session))(t)
	if d.LastBriefAt == nil {
		return time.Time{}
	}
	return *d.LastBriefAt
}

func TestFlushBriefTimes(t *testing.T) {
	w := newWorld(t)
	quiet := w.Session(w.agent, w.mission)
	ctx := t.Context()

	t.Run("a session never briefed has no last brief time", func(t *testing.T) {
		if got := lastBrief(t, w, w.Gov, w.session); !got.IsZero() {
			t.Fatalf("last_brief_at is %s", got)
		}
		if err := w.Gov.Briefs.FlushTimes(ctx); err != nil { // nothing pending
			t.Fatal(err)
		}
	})

	w.Clock.Advance(time.Minute)
	first := w.Clock.Now()
	must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)
	w.Clock.Advance(time.Minute)
	second := w.Clock.Now()
	must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)

	t.Run("after briefs GetSession shows the latest brief at once, from memory", func(t *testing.T) {
		if got := lastBrief(t, w, w.Gov, w.session); !got.Equal(second) {
			t.Fatalf("last_brief_at is %s, want %s", got, second)
		}
		if v := storedLastBrief(t, w, w.session); v.Valid {
			t.Fatalf("the database already holds %s before a flush", v.String)
		}
		if got := lastBrief(t, w, governance.New(w.Store, w.Clock.Now, governance.Options{}), w.session); !got.IsZero() {
			t.Fatalf("a second service sees %s before a flush", got)
		}
	})

	t.Run("after FlushBriefTimes a second service on the same store sees it", func(t *testing.T) {
		if err := w.Gov.Briefs.FlushTimes(ctx); err != nil {
			t.Fatal(err)
		}
		if v := storedLastBrief(t, w, w.session); !v.Valid || v.String != db.FormatTime(second) {
			t.Fatalf("the database holds %+v, want %s", v, db.FormatTime(second))
		}
		fresh := governance.New(w.Store, w.Clock.Now, governance.Options{})
		if got := lastBrief(t, w, fresh, w.session); !got.Equal(second) {
			t.Fatalf("a second service sees %s, want %s", got, second)
		}
		if got := lastBrief(t, w, w.Gov, w.session); !got.Equal(second) {
			t.Fatalf("the first service now sees %s, want %s", got, second)
		}
		if got := lastBrief(t, w, fresh, quiet); !got.IsZero() {
			t.Fatalf("a session never briefed shows %s", got)
		}
	})

	t.Run("a flush never moves a session's last brief back in time", func(t *testing.T) {
		stale := governance.New(w.Store, func() time.Time { return first.Add(-time.Hour) }, governance.Options{})
		must(stale.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)
		if err := stale.Briefs.FlushTimes(ctx); err != nil {
			t.Fatal(err)
		}
		if v := storedLastBrief(t, w, w.session); v.String != db.FormatTime(second) {
			t.Fatalf("the database holds %s, want it left at %s", v.String, db.FormatTime(second))
		}
	})

	t.Run("a later brief is flushed in its turn", func(t *testing.T) {
		w.Clock.Advance(time.Hour)
		must(w.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session}))(t)
		if err := w.Gov.Briefs.FlushTimes(ctx); err != nil {
			t.Fatal(err)
		}
		if got := lastBrief(t, w, governance.New(w.Store, w.Clock.Now, governance.Options{}), w.session); !got.Equal(w.Clock.Now()) {
			t.Fatalf("a second service sees %s, want %s", got, w.Clock.Now())
		}
	})
}
