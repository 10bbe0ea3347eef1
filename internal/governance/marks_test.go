package governance_test

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// gateKey opens a gate on the world's session and returns its item's key.
func gateKey(t *testing.T, w *world, session string) governance.ItemKey {
	t.Helper()
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the table?")))(t)
	return governance.ItemKey{Kind: governance.ItemDecision, Session: session, Ref: d.Ref}
}

// activityActions are the actions the activity record holds, oldest
// first, that start with prefix.
func activityActions(t *testing.T, w *world, prefix string) []string {
	t.Helper()
	page := must(w.Gov.Activity.List(t.Context(), w.admin, activity.Page{Limit: activity.MaxLimit, Action: prefix}))(t)
	var out []string
	for _, e := range slices.Backward(page.Items) {
		out = append(out, e.Actor+" "+e.Action+" "+e.Target)
	}
	return out
}

func TestClaims(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	other := person(t, w.Kit, auth.Lead)
	claim := func(a auth.Actor, k governance.ItemKey, over bool) func() error {
		return func() error { _, err := w.Gov.Attention.Claim(ctx, a, k, over); return err }
	}
	unclaim := func(a auth.Actor, k governance.ItemKey) func() error {
		return func() error { _, err := w.Gov.Attention.Unclaim(ctx, a, k); return err }
	}

	t.Run("refusals", func(t *testing.T) {
		k := gateKey(t, w, w.Session(w.agent, w.mission))
		must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
		tests := []struct {
			name string
			call func() error
			kind errs.Kind
			code string
		}{
			{"a viewer may not claim", claim(w.viewer, k, false), errs.Forbidden, "forbidden"},
			{"an agent may not claim", claim(w.agent, k, false), errs.Forbidden, "forbidden"},
			{"another lead hears who has it", claim(other, k, false), errs.Conflict, "already_claimed"},
			{"an item that does not wait is not found", claim(w.lead, governance.ItemKey{Kind: governance.ItemDecision, Session: k.Session, Ref: "DEC-999"}, false),
				errs.NotFound, "attention_item_not_found"},
			{"an unknown kind is not found", claim(w.lead, governance.ItemKey{Kind: "bogus", Session: k.Session, Ref: k.Ref}, false),
				errs.NotFound, "attention_item_not_found"},
			{"another lead may not unclaim", unclaim(other, k), errs.Forbidden, "forbidden"},
			{"a viewer may not unclaim", unclaim(w.viewer, k), errs.Forbidden, "forbidden"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { refused(t, w.Kit, tt.kind, tt.code, tt.call) })
		}
		err := claim(other, k, false)()
		if e, ok := errs.As(err); !ok || !strings.Contains(e.Message, w.lead.Email) {
			t.Errorf("already_claimed does not name who: %v", err)
		}
	})

	t.Run("everyone sees the claim; a re-claim changes nothing; take over is recorded", func(t *testing.T) {
		k := gateKey(t, w, w.Session(w.agent, w.mission))
		w.Clock.Advance(time.Minute)
		it := must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
		if it.ClaimedBy != w.lead.Email || it.ClaimedAt == nil || !it.ClaimedAt.Equal(w.Clock.Now().Truncate(time.Microsecond)) {
			t.Fatalf("claimed item %q %v", it.ClaimedBy, it.ClaimedAt)
		}
		for _, viewer := range []auth.Actor{{}, w.viewer, other} {
			got := must(w.Gov.Attention.Query(ctx, governance.AttentionFilter{Session: k.Session, Viewer: or(viewer, w.viewer)}, 0, ""))(t)
			if len(got.Items) != 1 || got.Items[0].ClaimedBy != w.lead.Email {
				t.Fatalf("%s sees %+v", viewer.Email, got.Items)
			}
		}
		before := activityActions(t, w, "attention.")
		w.Clock.Advance(time.Minute)
		again := must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
		if !again.ClaimedAt.Equal(*it.ClaimedAt) || len(activityActions(t, w, "attention.")) != len(before) {
			t.Fatalf("a re-claim moved the claim or was recorded: %v", again.ClaimedAt)
		}
		taken := must(w.Gov.Attention.Claim(ctx, other, k, true))(t)
		if taken.ClaimedBy != other.Email {
			t.Fatalf("take over left %q", taken.ClaimedBy)
		}
		got := activityActions(t, w, "attention.")
		want := []string{w.lead.Email + " attention.claim session " + k.Session + " decision " + k.Ref,
			other.Email + " attention.claim session " + k.Session + " decision " + k.Ref}
		if !slices.Equal(got[len(got)-2:], want) {
			t.Fatalf("activity %q, want it to end %q", got, want)
		}
		page := must(w.Gov.Activity.List(ctx, w.admin, activity.Page{Limit: 1, Action: "attention.claim"}))(t)
		if b := string(page.Items[0].Before); !strings.Contains(b, w.lead.Email) {
			t.Errorf("the take over does not record whose it was: %s", b)
		}
	})

	t.Run("the claimer or an admin unclaims", func(t *testing.T) {
		k := gateKey(t, w, w.Session(w.agent, w.mission))
		must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
		if it := must(w.Gov.Attention.Unclaim(ctx, w.lead, k))(t); it.ClaimedBy != "" || it.ClaimedAt != nil {
			t.Fatalf("unclaimed item still claimed by %q", it.ClaimedBy)
		}
		refused(t, w.Kit, errs.Conflict, "not_claimed", unclaim(w.lead, k))
		must(w.Gov.Attention.Claim(ctx, other, k, false))(t)
		must(w.Gov.Attention.Unclaim(ctx, w.admin, k))(t)
		got := activityActions(t, w, "attention.unclaim")
		if len(got) != 2 || !strings.HasPrefix(got[1], w.admin.Email+" attention.unclaim") {
			t.Fatalf("unclaims recorded %q", got)
		}
	})

	t.Run("a claim counts only for the item opened at or before it", func(t *testing.T) {
		s := w.Session(w.agent, w.mission)
		paused := governance.ItemKey{Kind: governance.ItemPaused, Session: s, Ref: s}
		must(w.Gov.Sessions.Pause(ctx, w.lead, s, "Hold"))(t)
		must(w.Gov.Attention.Claim(ctx, w.lead, paused, false))(t)
		must(w.Gov.Sessions.Resume(ctx, w.lead, s))(t)
		w.Clock.Advance(time.Minute)
		must(w.Gov.Sessions.Pause(ctx, w.lead, s, "Hold again"))(t)
		it := must(w.Gov.Attention.Get(ctx, paused.Kind, paused.Session, paused.Ref))(t)
		if it.ClaimedBy != "" {
			t.Fatalf("the claim on the first pause shows on the second: %q", it.ClaimedBy)
		}
		// The old row is replaced by a new claim: one row per key.
		must(w.Gov.Attention.Claim(ctx, other, paused, false))(t)
		var n int
		if err := w.SQL().QueryRow("SELECT COUNT(*) FROM attention_claims WHERE session_id = ?", s).Scan(&n); err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%d claim rows for one key", n)
		}
	})

	t.Run("the answer clears the claim", func(t *testing.T) {
		k := gateKey(t, w, w.Session(w.agent, w.mission))
		must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
		must(w.Gov.Decisions.Resolve(ctx, w.lead, k.Ref, "Keep it", "Archive instead."))(t)
		refused(t, w.Kit, errs.NotFound, "attention_item_not_found", unclaim(w.lead, k))
		mine := must(w.Gov.Attention.Query(ctx, governance.AttentionFilter{Claimed: governance.ClaimedMe, Viewer: w.lead, Session: k.Session}, 0, ""))(t)
		if len(mine.Items) != 0 {
			t.Fatalf("a resolved gate is still mine: %+v", mine.Items)
		}
	})
}

// or is a unless it is the zero Actor, else b.
func or(a, b auth.Actor) auth.Actor {
	if a == (auth.Actor{}) {
		return b
	}
	return a
}

func TestSnoozeBounds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30m", 30 * time.Minute, true},
		{"1m", time.Minute, true},
		{" 2h ", 2 * time.Hour, true},
		{"1h30m", 90 * time.Minute, true},
		{"1d", 24 * time.Hour, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"168h", 168 * time.Hour, true},
		{"59s", 0, false},
		{"0m", 0, false},
		{"-1h", 0, false},
		{"7d1m", 0, false},
		{"169h", 0, false},
		{"8d", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"1 hour", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := governance.ParseSnooze(tt.in)
			if !tt.ok {
				wantErr(t, err, errs.Invalid, "invalid_snooze")
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSnooze(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestSnoozes(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	other := person(t, w.Kit, auth.Lead)
	list := func(viewer auth.Actor, f governance.AttentionFilter) []governance.AttentionItem {
		t.Helper()
		f.Viewer = viewer
		return must(w.Gov.Attention.Query(ctx, f, 0, ""))(t).Items
	}
	s := w.Session(w.agent, w.mission)
	k := gateKey(t, w, s)
	only := governance.AttentionFilter{Session: s}

	refused(t, w.Kit, errs.Invalid, "invalid_snooze", func() error {
		_, err := w.Gov.Attention.Snooze(ctx, w.lead, k, 30*time.Second)
		return err
	})
	refused(t, w.Kit, errs.Invalid, "invalid_snooze", func() error {
		_, err := w.Gov.Attention.Snooze(ctx, w.lead, k, governance.MaxSnooze+time.Second)
		return err
	})
	refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
		_, err := w.Gov.Attention.Snooze(ctx, w.agent, k, time.Hour)
		return err
	})
	refused(t, w.Kit, errs.NotFound, "attention_item_not_found", func() error {
		_, err := w.Gov.Attention.Snooze(ctx, w.lead, governance.ItemKey{Kind: governance.ItemDecision, Session: s, Ref: "DEC-999"}, time.Hour)
		return err
	})
	refused(t, w.Kit, errs.Conflict, "not_snoozed", func() error {
		_, err := w.Gov.Attention.Unsnooze(ctx, w.lead, k)
		return err
	})

	it := must(w.Gov.Attention.Snooze(ctx, w.lead, k, time.Hour))(t)
	until := w.Clock.Now().Add(time.Hour).Truncate(time.Microsecond)
	if len(it.Snoozes) != 1 || it.Snoozes[0].By != w.lead.Email || !it.Snoozes[0].Until.Equal(until) {
		t.Fatalf("snoozes %+v", it.Snoozes)
	}
	if got := list(w.lead, only); len(got) != 0 {
		t.Fatalf("the snoozer still sees %+v", got)
	}
	if got := list(w.lead, governance.AttentionFilter{Session: s, Snoozed: governance.SnoozedOnly}); len(got) != 1 {
		t.Fatalf("snoozed=only lists %d", len(got))
	}
	if got := list(w.lead, governance.AttentionFilter{Session: s, Snoozed: governance.SnoozedInclude}); len(got) != 1 {
		t.Fatalf("snoozed=include lists %d", len(got))
	}
	for _, them := range []auth.Actor{other, w.viewer} {
		got := list(them, only)
		if len(got) != 1 || len(got[0].Snoozes) != 1 || got[0].Snoozes[0].By != w.lead.Email {
			t.Fatalf("%s sees %+v", them.Email, got)
		}
		if got := list(them, governance.AttentionFilter{Session: s, Snoozed: governance.SnoozedOnly}); len(got) != 0 {
			t.Fatalf("someone else's snooze is %s's: %+v", them.Email, got)
		}
	}
	if b := briefIs(t, w, w.agent, s, protocol.DecisionRequired, "decision_open |"); b.NextAction != protocol.DecisionRequired {
		t.Fatal("a snooze released the agent")
	}
	// The console's page hides it too, for the viewer it names.
	if p := must(w.Gov.Attention.Page(ctx, governance.AttentionFilter{Session: s, Viewer: w.lead}, 0, 10))(t); len(p.Items) != 0 {
		t.Fatalf("Page shows the snoozer %d items", len(p.Items))
	}

	t.Run("it comes back when the snooze runs out", func(t *testing.T) {
		w.Clock.Advance(time.Hour)
		if got := list(w.lead, only); len(got) != 1 || len(got[0].Snoozes) != 0 {
			t.Fatalf("after the snooze %+v", got)
		}
	})
	t.Run("unsnooze ends it early", func(t *testing.T) {
		must(w.Gov.Attention.Snooze(ctx, w.lead, k, 30*time.Minute))(t)
		must(w.Gov.Attention.Snooze(ctx, w.viewer, k, 2*time.Hour))(t)
		it := must(w.Gov.Attention.Unsnooze(ctx, w.lead, k))(t)
		if len(it.Snoozes) != 1 || it.Snoozes[0].By != w.viewer.Email {
			t.Fatalf("after unsnooze %+v", it.Snoozes)
		}
		if got := list(w.lead, only); len(got) != 1 {
			t.Fatalf("an unsnoozed item is still hidden")
		}
		got := activityActions(t, w, "attention.")
		want := []string{w.lead.Email + " attention.snooze", w.lead.Email + " attention.snooze", w.viewer.Email + " attention.snooze",
			w.lead.Email + " attention.unsnooze"}
		for i := range want {
			want[i] += " session " + s + " decision " + k.Ref
		}
		if !slices.Equal(got, want) {
			t.Fatalf("activity %q\nwant %q", got, want)
		}
	})
	t.Run("a snooze counts only for the item opened at or before it, and the answer clears it", func(t *testing.T) {
		p := w.Session(w.agent, w.mission)
		paused := governance.ItemKey{Kind: governance.ItemPaused, Session: p, Ref: p}
		must(w.Gov.Sessions.Pause(ctx, w.lead, p, "Hold"))(t)
		must(w.Gov.Attention.Snooze(ctx, w.lead, paused, time.Hour))(t)
		must(w.Gov.Sessions.Resume(ctx, w.lead, p))(t)
		if got := list(w.lead, governance.AttentionFilter{Session: p, Snoozed: governance.SnoozedInclude}); len(got) != 0 {
			t.Fatalf("the resumed session still waits: %+v", got)
		}
		w.Clock.Advance(time.Minute)
		must(w.Gov.Sessions.Pause(ctx, w.lead, p, "Hold again"))(t)
		got := list(w.lead, governance.AttentionFilter{Session: p})
		if len(got) != 1 || len(got[0].Snoozes) != 0 {
			t.Fatalf("the snooze of the first pause hides the second: %+v", got)
		}
	})
}

func TestBlockedTasks(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	s := w.Session(w.agent, w.mission)
	report(t, w, w.agent, s, append(toTask, ev("architecture.impact.completed", `{"level":"implementation"}`),
		ev("task.created", `{"task":"t1"}`), ev("task.blocked", `{"task":"t1"}`))...)
	ack := func(a auth.Actor, task string) func() error {
		return func() error { _, err := w.Gov.Attention.Acknowledge(ctx, a, s, task); return err }
	}
	remedy := func(a auth.Actor, task, instruction string) func() error {
		return func() error { _, err := w.Gov.Remediations.ForTask(ctx, a, s, task, instruction); return err }
	}
	tests := []struct {
		name string
		call func() error
		kind errs.Kind
		code string
	}{
		{"a viewer may not acknowledge", ack(w.viewer, "t1"), errs.Forbidden, "forbidden"},
		{"the agent may not acknowledge", ack(w.agent, "t1"), errs.Forbidden, "forbidden"},
		{"a task that is not blocked is not found", ack(w.lead, "t9"), errs.NotFound, "attention_item_not_found"},
		{"a viewer may not ask for a remediation", remedy(w.viewer, "t1", "Fix it"), errs.Forbidden, "forbidden"},
		{"a remediation needs an instruction", remedy(w.lead, "t1", "  "), errs.Invalid, "instruction_required"},
		{"a remediation of a task that is not blocked is not found", remedy(w.lead, "t9", "Fix it"), errs.NotFound, "attention_item_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, w.Kit, tt.kind, tt.code, tt.call) })
	}

	it := must(w.Gov.Attention.Acknowledge(ctx, w.lead, s, "t1"))(t)
	if it.AcknowledgedBy != w.lead.Email || it.AcknowledgedAt == nil {
		t.Fatalf("acknowledged %+v", it)
	}
	refused(t, w.Kit, errs.Conflict, "already_acknowledged", ack(w.admin, "t1"))
	if got := must(w.Gov.Attention.Get(ctx, governance.ItemTask, s, "t1"))(t); got.AcknowledgedBy != w.lead.Email {
		t.Fatalf("the item stays, acknowledged: %+v", got)
	}
	if got := activityActions(t, w, governance.ActionAcknowledge); !slices.Equal(got, []string{w.lead.Email + " attention.acknowledge session " + s + " task t1"}) {
		t.Fatalf("activity %q", got)
	}

	r := must(w.Gov.Remediations.ForTask(ctx, w.lead, s, "t1", "Split the migration first."))(t)
	if r.Severity != governance.SeverityRequired || r.Instruction != "Task t1 is blocked: Split the migration first." {
		t.Fatalf("remediation %+v", r)
	}
	briefIs(t, w, w.agent, s, protocol.Remediate, "remediation_required |")

	// The task moves, then blocks again: a new item, not acknowledged.
	w.Clock.Advance(time.Minute)
	report(t, w, w.agent, s, ev("task.progress", `{"task":"t1"}`))
	refused(t, w.Kit, errs.NotFound, "attention_item_not_found", ack(w.lead, "t1"))
	w.Clock.Advance(time.Minute)
	report(t, w, w.agent, s, ev("task.blocked", `{"task":"t1"}`))
	if got := must(w.Gov.Attention.Get(ctx, governance.ItemTask, s, "t1"))(t); got.AcknowledgedBy != "" {
		t.Fatalf("the acknowledgement of the first block shows on the second: %+v", got)
	}
	must(w.Gov.Attention.Acknowledge(ctx, w.admin, s, "t1"))(t)
}

func TestAttentionFilters(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	paused := w.Session(w.agent, w.mission)
	must(w.Gov.Sessions.Pause(ctx, w.lead, paused, "Hold"))(t)
	k := gateKey(t, w, w.session)
	must(w.Gov.Attention.Claim(ctx, w.lead, k, false))(t)
	query := func(f governance.AttentionFilter) []string {
		t.Helper()
		f.Viewer = or(f.Viewer, w.viewer)
		var out []string
		for _, it := range must(w.Gov.Attention.Query(ctx, f, 0, ""))(t).Items {
			out = append(out, it.Kind)
		}
		return out
	}
	tests := []struct {
		name string
		f    governance.AttentionFilter
		want []string
	}{
		{"everything", governance.AttentionFilter{}, []string{"paused", "decision"}},
		{"by kind", governance.AttentionFilter{Kind: governance.ItemDecision}, []string{"decision"}},
		{"by state", governance.AttentionFilter{State: "BLOCKED"}, []string{"paused"}},
		{"by a state nothing is in", governance.AttentionFilter{State: "HARD_STOP"}, nil},
		{"claimed", governance.AttentionFilter{Claimed: governance.ClaimedYes}, []string{"decision"}},
		{"not claimed", governance.AttentionFilter{Claimed: governance.ClaimedNo}, []string{"paused"}},
		{"claimed by me", governance.AttentionFilter{Claimed: governance.ClaimedMe, Viewer: w.lead}, []string{"decision"}},
		{"claimed by me, another viewer", governance.AttentionFilter{Claimed: governance.ClaimedMe, Viewer: w.admin}, nil},
		{"by session", governance.AttentionFilter{Session: paused}, []string{"paused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := query(tt.f); !slices.Equal(got, tt.want) {
				t.Fatalf("%+v lists %q, want %q", tt.f, got, tt.want)
			}
		})
	}
	bad := []struct {
		f    governance.AttentionFilter
		code string
	}{
		{governance.AttentionFilter{State: "STUCK"}, "unknown_state"},
		{governance.AttentionFilter{State: "blocked"}, "unknown_state"},
		{governance.AttentionFilter{Claimed: "maybe"}, "invalid_claimed"},
		{governance.AttentionFilter{Snoozed: "yes"}, "invalid_snoozed"},
		{governance.AttentionFilter{Kind: "nope"}, "unknown_kind"},
	}
	for _, tt := range bad {
		t.Run(tt.code, func(t *testing.T) {
			tt.f.Viewer = w.viewer
			_, err := w.Gov.Attention.Query(ctx, tt.f, 0, "")
			wantErr(t, err, errs.Invalid, tt.code)
		})
	}
	_, err := w.Gov.Attention.Query(ctx, governance.AttentionFilter{}, 0, "")
	wantErr(t, err, errs.Forbidden, "forbidden")
	_, err = w.Gov.Attention.Query(ctx, governance.AttentionFilter{Viewer: w.viewer}, 501, "")
	wantErr(t, err, errs.Invalid, "invalid_limit")
	_, err = w.Gov.Attention.Query(ctx, governance.AttentionFilter{Viewer: w.viewer}, 0, "not-a-cursor")
	wantErr(t, err, errs.Invalid, "invalid_next")
}

func TestAttentionPagesLoseNothing(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	for i := 0; i < 7; i++ {
		s := w.Session(w.agent, w.mission)
		must(w.Gov.Decisions.Open(ctx, w.agent, s, gate("Go?")))(t)
		if i%2 == 0 {
			must(w.Gov.Sessions.Pause(ctx, w.lead, s, "Hold"))(t)
		}
	}
	all := must(w.Gov.Attention.Query(ctx, governance.AttentionFilter{Viewer: w.viewer}, 500, ""))(t)
	if len(all.Items) != 11 || all.Next != "" {
		t.Fatalf("%d items, next %q", len(all.Items), all.Next)
	}
	for _, limit := range []int{1, 2, 3, 10} {
		var got []string
		next := ""
		for range 20 {
			p := must(w.Gov.Attention.Query(ctx, governance.AttentionFilter{Viewer: w.viewer}, limit, next))(t)
			for _, it := range p.Items {
				got = append(got, it.Kind+" "+it.Session+" "+it.Ref)
			}
			if next = p.Next; next == "" {
				break
			}
		}
		var want []string
		for _, it := range all.Items {
			want = append(want, it.Kind+" "+it.Session+" "+it.Ref)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: pages list\n%q\nwant\n%q", limit, got, want)
		}
	}
}

// TestMarksChangeTheFingerprint: the console's live queue refreshes on
// the fingerprint, so every mark and its end changes it.
func TestMarksChangeTheFingerprint(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	k := gateKey(t, w, w.session)
	fp := func() string {
		return must(w.Gov.Attention.Counts(ctx, governance.AttentionFilter{}))(t).Fingerprint()
	}
	last, was := fp(), "opened"
	step := func(name string, do func() error) {
		t.Helper()
		w.Clock.Advance(time.Second)
		if err := do(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := fp(); got == last {
			t.Errorf("after %s the fingerprint is as after %s", name, was)
		}
		last, was = fp(), name
	}
	step("claim", func() error { _, err := w.Gov.Attention.Claim(ctx, w.lead, k, false); return err })
	step("take over", func() error { _, err := w.Gov.Attention.Claim(ctx, w.admin, k, true); return err })
	step("snooze", func() error { _, err := w.Gov.Attention.Snooze(ctx, w.viewer, k, time.Hour); return err })
	step("unclaim", func() error { _, err := w.Gov.Attention.Unclaim(ctx, w.admin, k); return err })
	step("unsnooze", func() error { _, err := w.Gov.Attention.Unsnooze(ctx, w.viewer, k); return err })
	if other := must(w.Gov.Attention.Counts(ctx, governance.AttentionFilter{Session: w.Session(w.agent, w.mission)}))(t); other.Total() != 0 {
		t.Fatalf("another session's counts %+v", other)
	}
}
