package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
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
