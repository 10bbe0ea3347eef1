package governance_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
)

// brief takes a brief as the world's agent, acknowledging ack ("" for none).
func brief(t *testing.T, w *world, session, ack string) governance.Brief {
	t.Helper()
	return must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session, Ack: ack}))(t)
}

// handed is what a brief handed over: its resolutions and permission
// answers as "ref" or "ref (again)" lines, and its id.
func handed(b governance.Brief) []string {
	out := []string{}
	for _, r := range b.Resolutions {
		out = append(out, r.Ref+again(r.Redelivered))
	}
	for _, p := range b.Permissions {
		out = append(out, fmt.Sprintf("PRM-%d", p.ID)+again(p.Redelivered))
	}
	return out
}

func again(b bool) string {
	if b {
		return " (again)"
	}
	return ""
}

// everything makes the four kinds of delivery wait on a fresh session: a
// resolved gate, a plan a lead answered, an answered permission prompt and
// a required remediation. It returns the session and the refs a brief
// hands over.
func everything(t *testing.T, w *world) (string, []string) {
	t.Helper()
	s := w.Session(w.agent, w.risky)
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, s, governance.DecisionInput{Title: "Schema", Question: "Drop it?"}))(t)
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Keep it", "Archive instead."))(t)
	p := must(w.Gov.Plans.Propose(t.Context(), w.agent, s, governance.PlanInput{Summary: "x"}))(t)
	must(w.Gov.Plans.Approve(t.Context(), w.lead, s, "go"))(t)
	r := report(t, w, w.agent, s, ev("permission.prompt.requested", promptPayload))
	must(w.Gov.Permissions.Answer(t.Context(), w.lead, fmt.Sprint(r.Permission.ID), "1"))(t)
	must(w.Gov.Remediations.Request(t.Context(), w.lead, s, governance.RemediationInput{Severity: governance.SeverityRequired,
		Instruction: "Add a test."}))(t)
	return s, []string{d.Ref, fmt.Sprintf("PLAN-%d", p.ID), fmt.Sprintf("PRM-%d", r.Permission.ID)}
}

func TestADeliveryNotAcknowledgedIsDeliveredAgainAfterItsLease(t *testing.T) {
	w := newWorld(t)
	s, refs := everything(t, w)
	first := w.Clock.Now()
	b := brief(t, w, s, "")
	if got := strings.Join(handed(b), ", "); got != strings.Join(refs, ", ") || !strings.HasPrefix(b.BriefID, "brf_") {
		t.Fatalf("the first brief %s hands over %q, want %q", b.BriefID, got, refs)
	}

	w.Clock.Advance(governance.DefaultDeliveryLease - time.Second)
	if b := brief(t, w, s, ""); len(handed(b)) != 0 {
		t.Fatalf("within the lease a brief hands over %q again", handed(b))
	}
	w.Clock.Advance(time.Second)
	b = brief(t, w, s, "")
	want := []string{}
	for _, r := range refs {
		want = append(want, r+" (again)")
	}
	if got := handed(b); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("after the lease a brief hands over %q, want %q", got, want)
	}
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if got := d.Decisions[0]; got.DeliveredAt == nil || !got.DeliveredAt.Equal(first) || got.AckedAt != nil {
		t.Fatalf("the gate shows delivered %v acked %v; want the first delivery %s kept, not acknowledged", got.DeliveredAt, got.AckedAt, first)
	}
	tl := timeline(t, w, s)
	for _, kind := range []string{"resolution.redelivered", "plan.answer.redelivered", "permission.answer.redelivered", "remediation.redelivered"} {
		if n := countKind(tl, kind); n != 1 {
			t.Errorf("the timeline holds %d %s, want 1", n, kind)
		}
	}

	// Acknowledging the last brief stops it: the next lease passes quietly.
	w.Clock.Advance(time.Second)
	if b := brief(t, w, s, b.BriefID); len(handed(b)) != 0 {
		t.Fatalf("the acknowledging brief hands over %q", handed(b))
	}
	w.Clock.Advance(10 * governance.DefaultDeliveryLease)
	if b := brief(t, w, s, ""); len(handed(b)) != 0 {
		t.Fatalf("an acknowledged delivery came back: %q", handed(b))
	}
	d = must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if d.Decisions[0].AckedAt == nil || d.Permissions[0].AckedAt == nil || d.Remediations[0].AckedAt == nil {
		t.Fatalf("not stamped acknowledged: gate %v, prompt %v, remediation %v", d.Decisions[0].AckedAt,
			d.Permissions[0].AckedAt, d.Remediations[0].AckedAt)
	}
	if n := countKind(timeline(t, w, s), "brief.acknowledged"); n != 1 {
		t.Fatalf("%d acknowledgements in the timeline, want 1", n)
	}
}

func TestOnlyTheBriefThatDeliveredIsAcknowledged(t *testing.T) {
	w := newWorld(t)
	s, refs := everything(t, w)
	b1 := brief(t, w, s, "")
	w.Clock.Advance(governance.DefaultDeliveryLease)
	b2 := brief(t, w, s, "")
	if len(handed(b2)) != len(refs) {
		t.Fatalf("the redelivery hands over %q", handed(b2))
	}
	// The first brief's id no longer names what was last handed over: an
	// ack of it acknowledges nothing, so the lease runs on.
	brief(t, w, s, b1.BriefID)
	brief(t, w, s, "brf_nobody_sent_this")
	w.Clock.Advance(governance.DefaultDeliveryLease)
	if b := brief(t, w, s, ""); len(handed(b)) != len(refs) {
		t.Fatalf("after stale acks the lease still runs out; got %q", handed(b))
	}
	refused(t, w.Kit, errs.Invalid, "invalid_ack", func() error {
		_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: s, Ack: "DEC-001"})
		return err
	})
	refused(t, w.Kit, errs.Invalid, "invalid_ack", func() error {
		_, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: s, Ack: "brf_" + strings.Repeat("x", 61)})
		return err
	})
}

func TestRacingBriefsHandOverOncePerLease(t *testing.T) {
	w := newWorld(t)
	s, refs := everything(t, w)
	for round := range 3 {
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				b, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: s})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, h := range handed(b) {
					got[strings.TrimSuffix(h, " (again)")]++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		for _, r := range refs {
			if got[r] != 1 {
				t.Fatalf("round %d: 8 racing briefs handed %s over %d times, want once", round, r, got[r])
			}
		}
		w.Clock.Advance(governance.DefaultDeliveryLease)
	}
}

func TestTheLeaseIsASetting(t *testing.T) {
	w := newWorld(t)
	w.Configure(func(o *governance.Options) { o.DeliveryLease = 10 * time.Second })
	s, refs := everything(t, w)
	brief(t, w, s, "")
	w.Clock.Advance(10 * time.Second)
	if b := brief(t, w, s, ""); len(handed(b)) != len(refs) {
		t.Fatalf("after a 10 s lease the brief hands over %q", handed(b))
	}
}

func TestAnAgentThatNeverAcksKeepsWorking(t *testing.T) {
	w := newWorld(t)
	s, _ := everything(t, w)
	b := brief(t, w, s, "")
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"redelivered"`) || !strings.Contains(string(raw), `"brief_id":"brf_`) {
		t.Fatalf("a first delivery says redelivered, or the brief has no id: %s", raw[:200])
	}
	w.Clock.Advance(governance.DefaultDeliveryLease)
	if b = brief(t, w, s, ""); len(b.Resolutions) == 0 || !b.Resolutions[0].Redelivered {
		t.Fatalf("the redelivery is %+v", b.Resolutions)
	}
}

// countKind counts the timeline lines of one kind.
func countKind(lines []string, kind string) int {
	n := 0
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[1] == kind {
			n++
		}
	}
	return n
}

// A remediation the brief hands over again after its lease is marked
// "redelivered" there (open ones the brief only lists are not), and a
// lead's answer to a plan shows when it was delivered and acknowledged,
// as gates do.
func TestRemediationsAndPlanAnswersShowTheirDelivery(t *testing.T) {
	w := newWorld(t)
	s, _ := everything(t, w)
	redelivered := func(b governance.Brief) []bool {
		out := []bool{}
		for _, m := range b.Remediations {
			out = append(out, m.Redelivered)
		}
		return out
	}
	b1 := brief(t, w, s, "")
	if got := redelivered(b1); len(got) != 1 || got[0] {
		t.Fatalf("the first delivery of the remediation is marked redelivered: %v", got)
	}
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if d.Plan == nil || d.Plan.DeliveredAt == nil || d.Plan.AckedAt != nil {
		t.Fatalf("the plan answer shows delivered %v acked %v; want delivered, not acknowledged", d.Plan.DeliveredAt, d.Plan.AckedAt)
	}
	w.Clock.Advance(time.Second)
	if got := redelivered(brief(t, w, s, "")); len(got) != 1 || got[0] {
		t.Fatalf("a brief within the lease, which hands nothing over, marks the remediation %v", got)
	}
	w.Clock.Advance(governance.DefaultDeliveryLease)
	b3 := brief(t, w, s, "")
	if got := redelivered(b3); len(got) != 1 || !got[0] {
		t.Fatalf("the remediation handed over again after its lease is not marked redelivered: %v", got)
	}
	enc := string(must(json.Marshal(b3))(t))
	if !strings.Contains(enc, `"redelivered":true`) {
		t.Fatalf("the brief's JSON does not say redelivered: %s", enc)
	}
	w.Clock.Advance(time.Second)
	if got := redelivered(brief(t, w, s, b3.BriefID)); len(got) != 1 || got[0] {
		t.Fatalf("the acknowledging brief marks the remediation %v", got)
	}
	d = must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t)
	if d.Plan.AckedAt == nil || d.Plan.DeliveredAt == nil || !d.Plan.DeliveredAt.Equal(b1.GeneratedAt) {
		t.Fatalf("the plan answer shows delivered %v (first brief %s) acked %v; want the first delivery kept, acknowledged",
			d.Plan.DeliveredAt, b1.GeneratedAt, d.Plan.AckedAt)
	}
}
