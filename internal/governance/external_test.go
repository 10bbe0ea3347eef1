package governance_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// TestOpenSessionReattachesByExternalID: a client that keeps no state (the
// Claude Code hook) finds its session again by the id it knows it by.
func TestOpenSessionReattachesByExternalID(t *testing.T) {
	w := newWorld(t)
	first, created, err := w.Gov.Sessions.Open(t.Context(), w.agent, governance.SessionInput{Mission: w.mission,
		Title: "Claude Code", ExternalID: " 9f1c2d3e-claude "})
	if err != nil || !created {
		t.Fatalf("the first open: created %v, err %v; want a new session", created, err)
	}
	if first.ExternalID != "9f1c2d3e-claude" {
		t.Fatalf("external id %q, want it trimmed, 9f1c2d3e-claude", first.ExternalID)
	}
	t.Run("the same key and external id re-attach to that session, its title kept", func(t *testing.T) {
		again, created, err := w.Gov.Sessions.Open(t.Context(), w.agent, governance.SessionInput{Mission: w.mission,
			Title: "another title", ExternalID: "9f1c2d3e-claude"})
		if err != nil || created || again.ID != first.ID || again.Title != "Claude Code" {
			t.Fatalf("re-attach: %+v, created %v, err %v; want session %s, not created, title kept", again, created, err, first.ID)
		}
		if n := countLines(timeline(t, w, first.ID), agentLabel(w.agent)+" session.created"); n != 1 {
			t.Fatalf("the timeline has %d session.created lines, want 1", n)
		}
	})
	t.Run("the session shows its external id", func(t *testing.T) {
		d := must(w.Gov.Sessions.Get(t.Context(), w.agent, first.ID))(t)
		if d.ExternalID != "9f1c2d3e-claude" {
			t.Fatalf("Get shows external id %q", d.ExternalID)
		}
	})
	t.Run("another key's same external id is another session", func(t *testing.T) {
		other, created, err := w.Gov.Sessions.Open(t.Context(), w.other, governance.SessionInput{Mission: w.mission,
			ExternalID: "9f1c2d3e-claude"})
		if err != nil || !created || other.ID == first.ID {
			t.Fatalf("another key: %+v, created %v, err %v; want a session of its own", other, created, err)
		}
	})
	t.Run("without an external id every open is a new session", func(t *testing.T) {
		a := must(w.Gov.Sessions.Create(t.Context(), w.agent, governance.SessionInput{Mission: w.mission}))(t)
		b := must(w.Gov.Sessions.Create(t.Context(), w.agent, governance.SessionInput{Mission: w.mission, ExternalID: "  "}))(t)
		if a.ID == b.ID || a.ExternalID != "" || b.ExternalID != "" {
			t.Fatalf("two opens without an external id: %+v and %+v", a, b)
		}
	})
	t.Run("the external id on another mission is a conflict, and opens nothing", func(t *testing.T) {
		refused(t, w.Kit, errs.Conflict, "external_id_conflict", func() error {
			_, _, err := w.Gov.Sessions.Open(t.Context(), w.agent, governance.SessionInput{Mission: w.risky, ExternalID: "9f1c2d3e-claude"})
			return err
		})
	})
	t.Run("an external id over 200 characters is refused", func(t *testing.T) {
		refused(t, w.Kit, errs.Invalid, "external_id_too_long", func() error {
			_, _, err := w.Gov.Sessions.Open(t.Context(), w.agent, governance.SessionInput{Mission: w.mission, ExternalID: strings.Repeat("x", 201)})
			return err
		})
	})
	t.Run("an external id of 200 characters is kept", func(t *testing.T) {
		s := must(w.Gov.Sessions.Create(t.Context(), w.agent, governance.SessionInput{Mission: w.mission, ExternalID: strings.Repeat("é", 200)}))(t)
		if s.ExternalID != strings.Repeat("é", 200) {
			t.Fatalf("external id %q", s.ExternalID)
		}
	})
}
