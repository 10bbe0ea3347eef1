package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
)

// TestOpenRunReattachesByExternalID: the Claude Code hook keeps one run per
// Claude session and finds it again by Claude's session_id.
func TestOpenRunReattachesByExternalID(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	first, created, err := w.Ledger.OpenRun(ctx, w.agent, w.session, "claude-code", "", "claude-1")
	if err != nil || !created || first.ExternalID != "claude-1" || first.Status != ledger.Running {
		t.Fatalf("first open: %+v, created %v, err %v", first, created, err)
	}
	t.Run("the same session and external id re-attach to the run", func(t *testing.T) {
		again, created, err := w.Ledger.OpenRun(ctx, w.agent, w.session, "another name", "", "claude-1")
		if err != nil || created || again.ID != first.ID || again.Name != "claude-code" {
			t.Fatalf("re-attach: %+v, created %v, err %v; want run %s", again, created, err, first.ID)
		}
	})
	t.Run("a finished run is re-attached too, as it is", func(t *testing.T) {
		if _, err := w.Ledger.FinishRun(ctx, w.agent, first.ID, ledger.Complete); err != nil {
			t.Fatal(err)
		}
		again, created, err := w.Ledger.OpenRun(ctx, w.agent, w.session, "claude-code", "", "claude-1")
		if err != nil || created || again.ID != first.ID || again.Status != ledger.Complete {
			t.Fatalf("re-attach: %+v, created %v, err %v", again, created, err)
		}
	})
	t.Run("another session's same external id is another run", func(t *testing.T) {
		second := w.Session(w.agent, w.mission)
		r, created, err := w.Ledger.OpenRun(ctx, w.agent, second, "claude-code", "", "claude-1")
		if err != nil || !created || r.ID == first.ID || r.Session != second {
			t.Fatalf("another session: %+v, created %v, err %v", r, created, err)
		}
	})
	t.Run("another key cannot re-attach to the run", func(t *testing.T) {
		_, _, err := w.Ledger.OpenRun(ctx, w.other, w.session, "claude-code", "", "claude-1")
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != "forbidden" {
			t.Fatalf("another key: %v, want forbidden", err)
		}
	})
	t.Run("an external id over 200 characters is refused", func(t *testing.T) {
		_, _, err := w.Ledger.OpenRun(ctx, w.agent, w.session, "claude-code", "", strings.Repeat("x", 201))
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != "external_id_too_long" {
			t.Fatalf("a long external id: %v, want external_id_too_long", err)
		}
	})
}

// TestReattach: the hook's re-attach finds the session and its run in one
// read only when both exist as asked; anything else is left to the open,
// which decides (and says what is wrong).
func TestReattach(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const claude = "claude-7"
	if _, _, ok, err := w.Ledger.Reattach(ctx, w.agent, w.mission, claude, ""); ok || err != nil {
		t.Fatalf("no session yet: ok %v, err %v; want not found", ok, err)
	}
	s, _, err := w.Gov.Sessions.Open(ctx, w.agent, governance.SessionInput{Mission: w.mission, Agent: "claude-code", Title: "c", ExternalID: claude})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := w.Ledger.Reattach(ctx, w.agent, w.mission, claude, ""); ok || err != nil {
		t.Fatalf("a session without its run: ok %v, err %v; want not found", ok, err)
	}
	r, _, err := w.Ledger.OpenRun(ctx, w.agent, s.ID, "claude-code", "", claude)
	if err != nil {
		t.Fatal(err)
	}
	other := w.Mission(w.lead, false)
	for _, c := range []struct {
		name                    string
		actor                   auth.Actor
		mission, external, root string
		ok                      bool
	}{
		{"the session and its run", w.agent, w.mission, claude, "", true},
		{"another key's session", w.other, w.mission, claude, "", false},
		{"another mission", w.agent, other, claude, "", false},
		{"another external id", w.agent, w.mission, "claude-8", "", false},
		{"a root to record on a session without one", w.agent, w.mission, claude, "/repo", false},
		{"no external id", w.agent, w.mission, "", "", false},
	} {
		session, run, ok, err := w.Ledger.Reattach(ctx, c.actor, c.mission, c.external, c.root)
		if err != nil || ok != c.ok || ok && (session != s.ID || run != r.ID) {
			t.Errorf("%s: %s %s ok %v err %v; want ok %v (%s %s)", c.name, session, run, ok, err, c.ok, s.ID, r.ID)
		}
	}
	if _, _, err := w.Gov.Sessions.Open(ctx, w.agent, governance.SessionInput{Mission: w.mission, Agent: "claude-code", Title: "c", ExternalID: claude, Root: "/repo"}); err != nil {
		t.Fatal(err)
	}
	if session, _, ok, err := w.Ledger.Reattach(ctx, w.agent, w.mission, claude, "/elsewhere"); !ok || err != nil || session != s.ID {
		t.Fatalf("a session with a root: ok %v err %v; the root recorded stays, so it re-attaches", ok, err)
	}
	var e *errs.Error
	if _, _, _, err := w.Ledger.Reattach(ctx, w.lead, w.mission, claude, ""); !errors.As(err, &e) || e.Code != "forbidden" {
		t.Fatalf("a person: %v, want forbidden", err)
	}
}
