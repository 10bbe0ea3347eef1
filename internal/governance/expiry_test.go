package governance_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/protocol"
)

// ttlMission creates a mission whose gates expire after ttl ("4h") and
// returns its slug.
func ttlMission(t *testing.T, w *world, ttl string) string {
	t.Helper()
	slug := fmt.Sprintf("ttl-%d", people.Add(1))
	must(w.Gov.Missions.Create(t.Context(), w.lead, governance.MissionInput{Slug: slug, Title: "Expiring gates", GateTTL: ttl}))(t)
	return slug
}

func TestMissionGateTTL(t *testing.T) {
	w := newWorld(t)

	t.Run("a mission's gate_ttl is read as a Go duration and shown without zero units", func(t *testing.T) {
		for in, want := range map[string]string{"4h": "4h", "90m": "1h30m", "2h30m": "2h30m", " 45m ": "45m",
			"1m": "1m", "720h": "720h", "4h0m0s": "4h", "": "", "   ": ""} {
			slug := ttlMission(t, w, in)
			m := must(w.Gov.Missions.Get(t.Context(), slug))(t)
			if m.GateTTL.String() != want {
				t.Errorf("gate_ttl %q is shown %q, want %q", in, m.GateTTL, want)
			}
			body := must(json.Marshal(m))(t)
			if !strings.Contains(string(body), fmt.Sprintf(`"gate_ttl":%q`, want)) {
				t.Errorf("gate_ttl %q in JSON: %s", in, body)
			}
		}
	})

	t.Run("a gate_ttl under a minute, over 30 days, not whole seconds or not a duration is refused and writes nothing", func(t *testing.T) {
		for _, bad := range []string{"30s", "59s", "0", "0s", "-4h", "720h1s", "31d", "4 hours", "abc", "90.5s", "1e3h", strings.Repeat("9", 200)} {
			t.Run(bad, func(t *testing.T) {
				refused(t, w.Kit, errs.Invalid, "invalid_gate_ttl", func() error {
					_, err := w.Gov.Missions.Create(t.Context(), w.lead, governance.MissionInput{Slug: "bad-ttl", Title: "Bad", GateTTL: bad})
					if errs.FieldOf(err) != "gate_ttl" {
						t.Errorf("the error names the field %q, want gate_ttl", errs.FieldOf(err))
					}
					return err
				})
				refused(t, w.Kit, errs.Invalid, "invalid_gate_ttl", func() error {
					_, err := w.Gov.Missions.Patch(t.Context(), w.lead, w.mission, governance.MissionPatch{GateTTL: &bad})
					return err
				})
			})
		}
	})

	t.Run("a patch sets, changes and lifts the gate_ttl, and each session hears it", func(t *testing.T) {
		for _, step := range []struct{ set, want, detail string }{
			{"2h", "2h", "gate TTL: never → 2h"},
			{"150m", "2h30m", "gate TTL: 2h → 2h30m"},
			{"", "", "gate TTL: 2h30m → never"},
		} {
			set := step.set
			// An admin's: raising and lifting it lower a protection.
			m := must(w.Gov.Missions.Patch(t.Context(), w.admin, w.mission, governance.MissionPatch{GateTTL: &set}))(t)
			if m.GateTTL.String() != step.want {
				t.Fatalf("after setting %q the gate_ttl is %q, want %q", set, m.GateTTL, step.want)
			}
			d := must(w.Gov.Sessions.Get(t.Context(), w.lead, w.session))(t)
			last := d.Timeline[len(d.Timeline)-1]
			if last.Kind != "mission.updated" || last.Detail != step.detail {
				t.Fatalf("the session's last line is %s %q, want mission.updated %q", last.Kind, last.Detail, step.detail)
			}
		}
	})

	t.Run("an update that leaves gate_ttl out keeps no expiry, one that names it sets it", func(t *testing.T) {
		slug := ttlMission(t, w, "4h")
		m := must(w.Gov.Missions.Update(t.Context(), w.lead, slug, governance.MissionInput{Title: "Expiring gates", GateTTL: "1h"}))(t)
		if m.GateTTL.String() != "1h" {
			t.Fatalf("gate_ttl %q after the update, want 1h", m.GateTTL)
		}
		title := "Renamed"
		m = must(w.Gov.Missions.Patch(t.Context(), w.lead, slug, governance.MissionPatch{Title: &title}))(t)
		if m.GateTTL.String() != "1h" {
			t.Fatalf("a patch that does not name gate_ttl changed it to %q", m.GateTTL)
		}
	})
}

func TestAGatePastItsTTL(t *testing.T) {
	w := newWorld(t)
	slug := ttlMission(t, w, "4h")
	session := w.Session(w.agent, slug)
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	opened := d.OpenedAt
	brief := func(t *testing.T) governance.Brief {
		t.Helper()
		return must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
	}

	t.Run("before its gate_ttl runs out the gate is only open", func(t *testing.T) {
		w.Clock.Advance(4*time.Hour - time.Second)
		b := brief(t)
		if b.NextAction != protocol.DecisionRequired || codes(b) != "decision_open |" {
			t.Fatalf("brief %v %s, want DECISION_REQUIRED decision_open", b.NextAction, codes(b))
		}
		if len(b.Decisions) != 1 || b.Decisions[0].Expired || b.Decisions[0].ExpiredAt != nil {
			t.Fatalf("decisions %+v: want one gate, not expired", b.Decisions)
		}
	})

	t.Run("once it runs out the brief says it expired unanswered, still DECISION_REQUIRED, still blocking its scope", func(t *testing.T) {
		// No write since the last brief: its cached inputs must not
		// freeze the gate as it was a second ago.
		w.Clock.Advance(time.Second)
		b := brief(t)
		if b.NextAction != protocol.DecisionRequired || codes(b) != "decision_expired |" {
			t.Fatalf("brief %v %s, want DECISION_REQUIRED decision_expired", b.NextAction, codes(b))
		}
		want := d.Ref + " expired unanswered after 4h: Drop the legacy billing table? Nothing on its blocked scope proceeds; a lead can still resolve it."
		if b.Reason != want || b.Reasons[0].Ref != d.Ref {
			t.Fatalf("reason %q (ref %s), want %q", b.Reason, b.Reasons[0].Ref, want)
		}
		if strings.Join(b.BlockedScope, ",") != "db/migrations" || strings.Join(b.AllowedScope, ",") != "web/,views/" {
			t.Fatalf("scopes %q / %q, want the gate's own", b.BlockedScope, b.AllowedScope)
		}
		g := b.Decisions[0]
		if !g.Expired || g.ExpiredAt == nil || !g.ExpiredAt.Equal(opened.Add(4*time.Hour)) || g.Status != governance.DecisionOpen {
			t.Fatalf("decision %+v: want open, expired at %v", g, opened.Add(4*time.Hour))
		}
		b.Protocol = "" // the protocol's own text says an expired gate is not rejected
		body := string(must(json.Marshal(b))(t))
		if strings.Contains(body, "rejected") {
			t.Fatalf("an expired gate is never shown as rejected: %s", body)
		}
	})

	t.Run("the session page shows it expired too", func(t *testing.T) {
		s := must(w.Gov.Sessions.Get(t.Context(), w.lead, session))(t)
		if len(s.Decisions) != 1 || !s.Decisions[0].Expired || s.Decisions[0].Status != governance.DecisionOpen {
			t.Fatalf("session decisions %+v, want one open expired gate", s.Decisions)
		}
		if codes(s.Brief) != "decision_expired |" {
			t.Fatalf("preview %s, want decision_expired", codes(s.Brief))
		}
	})

	t.Run("a lead still resolves it, and the agent gets the resolution like any other", func(t *testing.T) {
		r := must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Keep the table", "Leave billing alone."))(t)
		if r.Status != governance.DecisionResolved || r.Expired {
			t.Fatalf("resolved %+v: want resolved, no longer expired", r)
		}
		b := brief(t)
		if b.NextAction != protocol.Continue || len(b.Decisions) != 0 {
			t.Fatalf("brief %v with %d gates, want CONTINUE and none", b.NextAction, len(b.Decisions))
		}
		if len(b.Resolutions) != 1 || b.Resolutions[0].Ref != d.Ref || b.Resolutions[0].Instruction != "Leave billing alone." {
			t.Fatalf("resolutions %+v, want %s delivered", b.Resolutions, d.Ref)
		}
		if lines := timeline(t, w, session); countLines(lines, "agent:"+w.agent.KeyName+" resolution.delivered "+d.Ref) != 1 {
			t.Fatalf("timeline %q: want the resolution delivered once", lines)
		}
	})

	t.Run("a gate on a mission without gate_ttl never expires", func(t *testing.T) {
		g := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Keep the old API?")))(t)
		w.Clock.Advance(365 * 24 * time.Hour)
		b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: w.session}))(t)
		if codes(b) != "decision_open |" || b.Decisions[0].Expired {
			t.Fatalf("brief %s, decisions %+v: want %s open, not expired", codes(b), b.Decisions, g.Ref)
		}
		if n := must(w.Gov.Decisions.ExpireDue(t.Context()))(t); n != 0 {
			t.Fatalf("the sweep recorded %d gates expired, want none", n)
		}
	})
}

func TestExpireDue(t *testing.T) {
	w := newWorld(t)
	four, one := ttlMission(t, w, "4h"), ttlMission(t, w, "1h")
	s4, s1 := w.Session(w.agent, four), w.Session(w.other, one)
	g4 := must(w.Gov.Decisions.Open(t.Context(), w.agent, s4, gate("Drop the legacy billing table?")))(t)
	g1 := must(w.Gov.Decisions.Open(t.Context(), w.other, s1, gate("Rename the column?")))(t)
	resolved := must(w.Gov.Decisions.Open(t.Context(), w.other, s1, gate("Answered in time?")))(t)
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, resolved.Ref, "Yes", "Go on."))(t)
	expiredLine := func(ref string) string { return "system:gate-expiry decision.expired " + ref }
	sweep := func(t *testing.T) int {
		t.Helper()
		return must(w.Gov.Decisions.ExpireDue(t.Context()))(t)
	}

	t.Run("before any gate_ttl runs out the sweep records nothing", func(t *testing.T) {
		w.Clock.Advance(time.Hour - time.Microsecond)
		if n := sweep(t); n != 0 {
			t.Fatalf("recorded %d, want 0", n)
		}
	})

	t.Run("a gate whose gate_ttl ran out is recorded once, with its question, by the system", func(t *testing.T) {
		w.Clock.Advance(time.Microsecond)
		if n := sweep(t); n != 1 {
			t.Fatalf("recorded %d, want 1 (%s)", n, g1.Ref)
		}
		d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s1))(t)
		last := d.Timeline[len(d.Timeline)-1]
		if last.Kind != "decision.expired" || last.Ref != g1.Ref || last.Detail != "Rename the column?" ||
			last.Actor != "system:gate-expiry" || !last.At.Equal(w.Clock.Now()) {
			t.Fatalf("last line %+v, want decision.expired %s by system:gate-expiry", last, g1.Ref)
		}
		if got := w.Rows("SELECT ref, CAST(expired_at IS NOT NULL AS INTEGER) AS stamped FROM decisions ORDER BY ref"); strings.Join(got, ";") !=
			fmt.Sprintf("ref=%s | stamped=0;ref=%s | stamped=1;ref=%s | stamped=0", g4.Ref, g1.Ref, resolved.Ref) {
			t.Fatalf("stamps %q: only %s is stamped", got, g1.Ref)
		}
	})

	t.Run("a second sweep records nothing more", func(t *testing.T) {
		w.Clock.Advance(time.Minute)
		if n := sweep(t); n != 0 {
			t.Fatalf("recorded %d, want 0", n)
		}
		if n := countLines(timeline(t, w, s1), expiredLine(g1.Ref)); n != 1 {
			t.Fatalf("%d expiry lines for %s, want 1", n, g1.Ref)
		}
	})

	t.Run("sweeps racing, and a second process on the same database, record each gate once", func(t *testing.T) {
		w.Clock.Advance(3 * time.Hour)
		replica := governance.New(w.Store, w.Clock.Now, governance.Options{})
		var wg sync.WaitGroup
		counts := make([]int, 8)
		errors := make([]error, 8)
		for i := range counts {
			svc := w.Gov.Decisions
			if i%2 == 1 {
				svc = replica.Decisions
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i], errors[i] = svc.ExpireDue(t.Context())
			}()
		}
		wg.Wait()
		total := 0
		for i, n := range counts {
			if errors[i] != nil {
				t.Fatal(errors[i])
			}
			total += n
		}
		if total != 1 {
			t.Fatalf("the racing sweeps recorded %d gates, want 1 (%s)", total, g4.Ref)
		}
		if n := countLines(timeline(t, w, s4), expiredLine(g4.Ref)); n != 1 {
			t.Fatalf("%d expiry lines for %s, want 1", n, g4.Ref)
		}
		if n := countLines(timeline(t, w, s1), expiredLine(resolved.Ref)); n != 0 {
			t.Fatalf("a gate resolved in time was recorded expired")
		}
	})

	t.Run("a recorded gate stays expired when its mission's gate_ttl is lifted, and resolves normally", func(t *testing.T) {
		none := ""
		must(w.Gov.Missions.Patch(t.Context(), w.admin, one, governance.MissionPatch{GateTTL: &none}))(t)
		b := must(w.Gov.Briefs.Brief(t.Context(), w.other, governance.BriefRequest{Session: s1}))(t)
		if codes(b) != "decision_expired |" || !strings.HasPrefix(b.Reason, g1.Ref+" expired unanswered after 1h: ") {
			t.Fatalf("brief %s %q, want %s still expired", codes(b), b.Reason, g1.Ref)
		}
		must(w.Gov.Decisions.Resolve(t.Context(), w.lead, g1.Ref, "Rename it", "Use snake_case."))(t)
		b = must(w.Gov.Briefs.Brief(t.Context(), w.other, governance.BriefRequest{Session: s1}))(t)
		if b.NextAction != protocol.Continue || len(b.Resolutions) != 1 || b.Resolutions[0].Ref != g1.Ref {
			t.Fatalf("brief %v with resolutions %+v, want CONTINUE delivering %s", b.NextAction, b.Resolutions, g1.Ref)
		}
		s := must(w.Gov.Sessions.Get(t.Context(), w.lead, s1))(t)
		for _, d := range s.Decisions {
			if d.Ref == g1.Ref && (d.Expired || d.ExpiredAt == nil || d.Status == "rejected") {
				t.Fatalf("resolved %+v: want not expired now, its expiry kept as history", d)
			}
		}
	})

	t.Run("the sweep needs no person and no agent", func(t *testing.T) {
		if governance.SweepActor.IsPerson() || governance.SweepActor.IsAgent() || governance.SweepActor.CanLead() {
			t.Fatalf("the sweep's actor %+v may act as someone", governance.SweepActor)
		}
		if err := governance.SweepActor.RequireLead("resolve"); errs.CodeOf(err) != "forbidden" {
			t.Fatalf("the sweep's actor passes RequireLead: %v", err)
		}
		if got := auth.System("x").Label(); got != "system:x" {
			t.Fatalf("label %q", got)
		}
	})
}

func TestAttentionPutsExpiredGatesFirst(t *testing.T) {
	w := newWorld(t)
	slug := ttlMission(t, w, "2h")
	// A paused session (BLOCKED, more severe than a gate) and a gate
	// that will expire, on another session, opened after the pause.
	must(w.Gov.Sessions.Pause(t.Context(), w.lead, w.session, "Wait"))(t)
	w.Clock.Advance(time.Minute)
	expiring := w.Session(w.other, slug)
	g := must(w.Gov.Decisions.Open(t.Context(), w.other, expiring, gate("Drop the legacy billing table?")))(t)
	young := must(w.Gov.Decisions.Open(t.Context(), w.agent, w.session, gate("Keep the old API?")))(t)

	order := func(items []governance.AttentionItem) string {
		var out []string
		for _, it := range items {
			s := it.Kind + ":" + it.Ref
			if it.Expired {
				s += "(expired)"
			}
			out = append(out, s)
		}
		return strings.Join(out, " ")
	}

	t.Run("before it expires the gate waits behind the paused session", func(t *testing.T) {
		w.Clock.Advance(2*time.Hour - time.Second)
		items := must(w.Gov.Attention.List(t.Context()))(t)
		if got, want := order(items), "paused:"+w.session+" decision:"+g.Ref+" decision:"+young.Ref; got != want {
			t.Fatalf("queue %s, want %s", got, want)
		}
	})

	fp := must(w.Gov.Attention.Counts(t.Context(), governance.AttentionFilter{}))(t).Fingerprint()

	t.Run("once expired it is first, marked expired with when, in the list and in every page", func(t *testing.T) {
		w.Clock.Advance(time.Second)
		items := must(w.Gov.Attention.List(t.Context()))(t)
		if got, want := order(items), "decision:"+g.Ref+"(expired) paused:"+w.session+" decision:"+young.Ref; got != want {
			t.Fatalf("queue %s, want %s", got, want)
		}
		if at := items[0].ExpiredAt; at == nil || !at.Equal(g.OpenedAt.Add(2*time.Hour)) {
			t.Fatalf("expired_at %v, want %v", at, g.OpenedAt.Add(2*time.Hour))
		}
		body := string(must(json.Marshal(items[0]))(t))
		if !strings.Contains(body, `"expired":true`) || !strings.Contains(body, `"expired_at":"`) {
			t.Fatalf("JSON item %s: want expired and expired_at", body)
		}
		if body := string(must(json.Marshal(items[1]))(t)); strings.Contains(body, "expired") {
			t.Fatalf("a paused session says expired: %s", body)
		}
		p := must(w.Gov.Attention.Page(t.Context(), governance.AttentionFilter{}, 0, 1))(t)
		if order(p.Items) != "decision:"+g.Ref+"(expired)" || p.Total != 3 || !p.More() {
			t.Fatalf("first page %s of %d, want the expired gate of 3", order(p.Items), p.Total)
		}
		p2 := must(w.Gov.Attention.Page(t.Context(), governance.AttentionFilter{}, 1, 5))(t)
		if order(p2.Items) != "paused:"+w.session+" decision:"+young.Ref || p2.After != expiring || p2.More() {
			t.Fatalf("second page %s after %q, want the rest after %s", order(p2.Items), p2.After, expiring)
		}
		if p.Counts.ByKind[governance.ItemDecision] != 2 || p.Counts.ByKind[governance.ItemPaused] != 1 || p.Counts.Total() != 3 {
			t.Fatalf("counts %v: an expired gate is still counted as a gate", p.Counts.ByKind)
		}
		one := must(w.Gov.Attention.Page(t.Context(), governance.AttentionFilter{Kind: governance.ItemDecision}, 0, 5))(t)
		if order(one.Items) != "decision:"+g.Ref+"(expired) decision:"+young.Ref {
			t.Fatalf("gates only: %s", order(one.Items))
		}
		it := must(w.Gov.Attention.Get(t.Context(), governance.ItemDecision, expiring, g.Ref))(t)
		if !it.Expired {
			t.Fatalf("the item alone is not marked expired")
		}
	})

	t.Run("the sweep's record changes the queue's fingerprint, so open pages refresh", func(t *testing.T) {
		if n := must(w.Gov.Decisions.ExpireDue(t.Context()))(t); n != 1 {
			t.Fatalf("recorded %d, want 1", n)
		}
		if got := must(w.Gov.Attention.Counts(t.Context(), governance.AttentionFilter{}))(t).Fingerprint(); got == fp {
			t.Fatalf("the fingerprint did not change when the gate was recorded expired")
		}
	})

	t.Run("resolved, the gate leaves the queue", func(t *testing.T) {
		must(w.Gov.Decisions.Resolve(t.Context(), w.lead, g.Ref, "Keep it", "Leave billing alone."))(t)
		items := must(w.Gov.Attention.List(t.Context()))(t)
		if got, want := order(items), "paused:"+w.session+" decision:"+young.Ref; got != want {
			t.Fatalf("queue %s, want %s", got, want)
		}
	})
}

// On a two-person mission the first lead's approval of an expired gate
// leaves it open and still expired ("1 of 2"); the second lead's resolves
// it, and it is delivered as any resolution.
func TestAnExpiredGateOnATwoPersonMission(t *testing.T) {
	w := newWorld(t)
	second := person(t, w.Kit, auth.Lead)
	must(w.Gov.Missions.Create(t.Context(), w.lead, governance.MissionInput{Slug: "both", Title: "Two people",
		TwoPerson: true, GateTTL: "1h"}))(t)
	session := w.Session(w.agent, "both")
	g := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	w.Clock.Advance(time.Hour)

	one := must(w.Gov.Decisions.Resolve(t.Context(), w.lead, g.Ref, "Keep it", "Archive instead."))(t)
	if one.Status != governance.DecisionOpen || len(one.Approvals) != 1 || !one.Expired || one.ExpiredAt == nil {
		t.Fatalf("after one lead: %+v, want open, 1 of 2, still expired", one)
	}
	b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
	if codes(b) != "decision_expired |" {
		t.Fatalf("brief after one lead: %s, want decision_expired", codes(b))
	}
	two := must(w.Gov.Decisions.Resolve(t.Context(), second, g.Ref, "Keep it", "Archive instead."))(t)
	if two.Status != governance.DecisionResolved || two.Expired {
		t.Fatalf("after the second lead: %+v, want resolved", two)
	}
	b = must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
	if b.NextAction != protocol.Continue || len(b.Resolutions) != 1 || b.Resolutions[0].Ref != g.Ref {
		t.Fatalf("brief %v with %+v, want CONTINUE delivering %s", b.NextAction, b.Resolutions, g.Ref)
	}
}

// The sweep's record is what escalates an expired gate: one
// decision.expired notification per subscribed endpoint, in the sweep's
// transaction, linking to the gate; a second sweep, or a racing one,
// sends nothing more.
func TestTheSweepEscalatesAnExpiredGateOnce(t *testing.T) {
	w := newWorld(t)
	slug := ttlMission(t, w, "1h")
	session := w.Session(w.agent, slug)
	subscribed := hook(t, w, notify.DecisionExpired)
	hook(t, w, notify.HardStop)
	g := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	before := len(outbox(t, w.Kit))
	w.Clock.Advance(time.Hour)
	replica := governance.New(w.Store, w.Clock.Now, governance.Options{})
	var wg sync.WaitGroup
	for _, svc := range []*governance.DecisionService{w.Gov.Decisions, replica.Decisions, w.Gov.Decisions} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := svc.ExpireDue(t.Context()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	must(w.Gov.Decisions.ExpireDue(t.Context()))(t)
	rows := outbox(t, w.Kit)[before:]
	var expiries []outboxRow
	for _, r := range rows {
		if r.event == notify.DecisionExpired {
			expiries = append(expiries, r)
		}
	}
	if len(expiries) != 1 || expiries[0].webhook != subscribed {
		t.Fatalf("notifications %+v, want one decision.expired to endpoint %d", rows, subscribed)
	}
	if m := expiries[0].payload.Madebook; m.Ref != g.Ref || m.Session != session {
		t.Errorf("the notification links to %+v, want %s on %s", m, g.Ref, session)
	}
}
