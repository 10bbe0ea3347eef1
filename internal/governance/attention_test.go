package governance_test

import (
	"slices"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// openGate opens a gate on session and moves the clock on, so that gates
// have an order.
func openGate(t *testing.T, w *world, agent auth.Actor, session, title string) string {
	t.Helper()
	d := must(w.Gov.Decisions.Open(t.Context(), agent, session, governance.DecisionInput{Title: title, Question: title + "?",
		BlockedScope: []string{"db/"}}))(t)
	w.Clock.Advance(time.Second)
	return d.Ref
}

func refsOf(items []governance.AttentionItem) []string {
	var refs []string
	for _, it := range items {
		refs = append(refs, it.Kind+":"+it.Ref)
	}
	return refs
}

func TestAttentionPagesGroupBySessionMostSevereFirst(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	quiet := w.session
	loud := must(w.Gov.Sessions.Create(ctx, w.other, governance.SessionInput{Mission: w.risky, Title: "loud"}))(t).ID
	g1 := openGate(t, w, w.agent, quiet, "first")
	g2 := openGate(t, w, w.other, loud, "second")
	g3 := openGate(t, w, w.agent, quiet, "third")
	must(w.Gov.Sessions.Pause(ctx, w.lead, loud, "hold"))(t)

	all := must(w.Gov.Attention.Page(ctx, governance.AttentionFilter{}, 0, 50))(t)
	// loud holds the most severe item (BLOCKED): its group comes first,
	// the pause before its gate; then quiet's gates, oldest first.
	want := []string{"paused:" + loud, "decision:" + g2, "decision:" + g1, "decision:" + g3}
	if got := refsOf(all.Items); !slices.Equal(got, want) {
		t.Fatalf("page = %v, want %v", got, want)
	}
	if all.Total != 4 || all.More() || all.Counts.Total() != 4 || all.Counts.ByKind[governance.ItemDecision] != 3 || all.Counts.ByKind[governance.ItemPaused] != 1 {
		t.Errorf("total %d, more %t, counts %+v", all.Total, all.More(), all.Counts)
	}

	t.Run("a page is a window of the same order, and says which session it continues", func(t *testing.T) {
		p := must(w.Gov.Attention.Page(ctx, governance.AttentionFilter{}, 1, 2))(t)
		if got := refsOf(p.Items); !slices.Equal(got, want[1:3]) || p.From != 1 || !p.More() || p.After != loud {
			t.Errorf("page = %v from %d after %q (more %t), want %v after %s", got, p.From, p.After, p.More(), want[1:3], loud)
		}
		if p := must(w.Gov.Attention.Page(ctx, governance.AttentionFilter{}, 9, 2))(t); len(p.Items) != 0 || p.More() {
			t.Errorf("past the end: %v", refsOf(p.Items))
		}
	})
	t.Run("filters narrow the items; the counts ignore the kind filter", func(t *testing.T) {
		for _, c := range []struct {
			f    governance.AttentionFilter
			want []string
		}{
			{governance.AttentionFilter{Kind: governance.ItemPaused}, want[:1]},
			{governance.AttentionFilter{Session: quiet}, want[2:]},
			{governance.AttentionFilter{Mission: w.risky}, want[:2]},
			{governance.AttentionFilter{Agent: w.other.KeyName}, want[:2]},
			{governance.AttentionFilter{Agent: w.other.KeyName, Kind: governance.ItemDecision}, want[1:2]},
			{governance.AttentionFilter{Agent: "nobody"}, nil},
		} {
			p := must(w.Gov.Attention.Page(ctx, c.f, 0, 50))(t)
			if got := refsOf(p.Items); !slices.Equal(got, c.want) || p.Total != len(c.want) {
				t.Errorf("%+v: %v (total %d), want %v", c.f, got, p.Total, c.want)
			}
			f := c.f
			f.Kind = ""
			if n := len(refsOf(must(w.Gov.Attention.Page(ctx, f, 0, 50))(t).Items)); p.Counts.Total() != n {
				t.Errorf("%+v: counts say %d, the unkinded list has %d", c.f, p.Counts.Total(), n)
			}
		}
	})
	t.Run("a kind that does not exist is refused", func(t *testing.T) {
		_, err := w.Gov.Attention.Page(ctx, governance.AttentionFilter{Kind: "gate"}, 0, 50)
		wantErr(t, err, errs.Invalid, "unknown_kind")
	})
	t.Run("one item, and one no longer waiting", func(t *testing.T) {
		it := must(w.Gov.Attention.Get(ctx, governance.ItemDecision, "", g2))(t)
		if it.Session != loud || it.Question != "second?" {
			t.Errorf("got %+v", it)
		}
		must(w.Gov.Decisions.Resolve(ctx, w.lead, g2, "Yes.", "Go."))(t)
		_, err := w.Gov.Attention.Get(ctx, governance.ItemDecision, loud, g2)
		wantErr(t, err, errs.NotFound, "attention_item_not_found")
		_, err = w.Gov.Attention.Get(ctx, "nonsense", loud, g2)
		wantErr(t, err, errs.NotFound, "attention_item_not_found")
	})
	t.Run("List and Count agree", func(t *testing.T) {
		items := must(w.Gov.Attention.List(ctx))(t)
		if n := must(w.Gov.Attention.Count(ctx))(t); n != len(items) || n != 3 {
			t.Errorf("count %d, list %d, want 3", n, len(items))
		}
	})
}

// The fingerprint changes when an item joins or leaves the queue, and a
// watcher hears of every committed write.
func TestAttentionWatchAndFingerprint(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	changes, stop := w.Gov.Attention.Watch()
	defer stop()
	before := must(w.Gov.Attention.Counts(ctx, governance.AttentionFilter{}))(t).Fingerprint()
	ref := openGate(t, w, w.agent, w.session, "watched")
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no word of the write")
	}
	opened := must(w.Gov.Attention.Counts(ctx, governance.AttentionFilter{}))(t).Fingerprint()
	if opened == before {
		t.Errorf("the fingerprint %q did not change when a gate opened", opened)
	}
	must(w.Gov.Decisions.Resolve(ctx, w.lead, ref, "Yes.", "Go."))(t)
	if after := must(w.Gov.Attention.Counts(ctx, governance.AttentionFilter{}))(t).Fingerprint(); after == opened {
		t.Errorf("the fingerprint %q did not change when the gate was resolved", after)
	}
	// One value stands for many writes: a slow reader never blocks a writer.
	openGate(t, w, w.agent, w.session, "again")
	openGate(t, w, w.agent, w.session, "and again")
	if n := len(changes); n != 1 {
		t.Errorf("%d values wait, want 1", n)
	}
}
