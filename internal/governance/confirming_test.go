package governance_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// toConfirming walks a fresh session on the high-risk mission to
// CONFIRMING and returns it with the plan waiting.
func toConfirming(t *testing.T, w *world) (string, governance.Plan) {
	t.Helper()
	s := w.Session(w.agent, w.risky)
	r := report(t, w, w.agent, s, append(toTask, ev("architecture.impact.completed", `{"level":"architecture"}`),
		ev("architecture.plan.updated", planPayload))...)
	if r.Lifecycle != "CONFIRMING" || r.Plan == nil {
		t.Fatalf("report %+v, want CONFIRMING with the plan", r)
	}
	return s, *r.Plan
}

// delivered takes a brief and returns what it delivered, as "ref
// resolution: instruction" lines.
func delivered(t *testing.T, w *world, session string) []string {
	t.Helper()
	b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
	out := []string{}
	for _, r := range b.Resolutions {
		out = append(out, r.Ref+" "+r.Resolution+": "+r.Instruction)
	}
	return out
}

func TestALeadAnswersCONFIRMINGAndTheAnswerIsDeliveredOnce(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		name   string
		answer func(session, note string) (governance.Plan, error)
		note   string
		status string
		state  string
		next   protocol.State // the brief after the answer is delivered
		brief  string         // its codes
	}{
		{"confirm", func(s, n string) (governance.Plan, error) { return w.Gov.Plans.Approve(t.Context(), w.lead, s, n) },
			"Go ahead.", governance.PlanApproved, "EXECUTING", protocol.Continue, "|"},
		{"modify", func(s, n string) (governance.Plan, error) { return w.Gov.Plans.Modify(t.Context(), w.lead, s, n) },
			"Gate the migration behind a stopping point.", governance.PlanChangesRequested, "ARCHITECTURE_REVISING",
			protocol.Blocked, "plan_not_approved plan_revising |"},
		{"reject", func(s, n string) (governance.Plan, error) { return w.Gov.Plans.Reject(t.Context(), w.lead, s, n) },
			"Not this quarter.", governance.PlanRejected, "IDLE", protocol.Blocked, "plan_not_approved |"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, p := toConfirming(t, w)
			got := must(c.answer(s, "  "+c.note+" "))(t)
			if got.Status != c.status || got.Note != c.note || got.ID != p.ID {
				t.Fatalf("plan after %s is %+v", c.name, got)
			}
			if st, _ := lifecycleOf(t, w, s); st != c.state {
				t.Fatalf("after %s the session is %s, want %s", c.name, st, c.state)
			}
			preview := must(w.Gov.Sessions.Get(t.Context(), w.lead, s))(t).Brief
			want := fmt.Sprintf("PLAN-%d %s: %s", p.ID, c.status, c.note)
			if len(preview.Resolutions) != 1 || preview.Resolutions[0].Ref != fmt.Sprintf("PLAN-%d", p.ID) {
				t.Fatalf("the preview shows %+v, want %s", preview.Resolutions, want)
			}
			if got := delivered(t, w, s); len(got) != 1 || got[0] != want {
				t.Fatalf("the first brief delivers %q, want [%q]", got, want)
			}
			if got := delivered(t, w, s); len(got) != 0 {
				t.Fatalf("the second brief delivers %q again", got)
			}
			briefIs(t, w, w.agent, s, c.next, c.brief)
			tl := timeline(t, w, s)
			if countLines(tl, agentLabel(w.agent)+" plan.answer.delivered "+fmt.Sprintf("PLAN-%d", p.ID)) != 1 {
				t.Fatalf("the delivery is not in the timeline once: %q", tl)
			}
		})
	}

	t.Run("asking for changes needs an instruction, and writes nothing without one", func(t *testing.T) {
		s, _ := toConfirming(t, w)
		before := timeline(t, w, s)
		refused(t, w.Kit, errs.Invalid, "instruction_required", func() error {
			_, err := w.Gov.Plans.Modify(t.Context(), w.lead, s, "  ")
			return err
		})
		refused(t, w.Kit, errs.Invalid, "instruction_too_long", func() error {
			_, err := w.Gov.Plans.Modify(t.Context(), w.lead, s, strings.Repeat("x", governance.MaxNote+1))
			return err
		})
		refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Plans.Modify(t.Context(), w.viewer, s, "smaller")
			return err
		})
		if st, _ := lifecycleOf(t, w, s); st != "CONFIRMING" || len(timeline(t, w, s)) != len(before) {
			t.Fatalf("a refused request moved the session to %s", st)
		}
	})

	t.Run("a revised plan goes back to CONFIRMING and can be confirmed", func(t *testing.T) {
		s, _ := toConfirming(t, w)
		must(w.Gov.Plans.Modify(t.Context(), w.lead, s, "Split it"))(t)
		delivered(t, w, s)
		r := report(t, w, w.agent, s, ev("architecture.plan.updated", planPayload))
		if r.Lifecycle != "CONFIRMING" || r.Plan.Status != governance.PlanProposed {
			t.Fatalf("after revising: %+v", r)
		}
		fresh := w.Session(w.agent, w.risky)
		refused(t, w.Kit, errs.Conflict, "no_plan_proposed", func() error {
			_, err := w.Gov.Plans.Modify(t.Context(), w.lead, fresh, "x")
			return err
		})
		must(w.Gov.Plans.Approve(t.Context(), w.lead, s, ""))(t)
		if st, _ := lifecycleOf(t, w, s); st != "EXECUTING" {
			t.Fatalf("after the second answer: %s", st)
		}
	})

	t.Run("on an untracked session changes are asked for without moving it", func(t *testing.T) {
		s := w.Session(w.agent, w.risky)
		p := must(w.Gov.Plans.Propose(t.Context(), w.agent, s, governance.PlanInput{Summary: "x"}))(t)
		must(w.Gov.Plans.Modify(t.Context(), w.lead, s, "Smaller steps"))(t)
		if st, tracked := lifecycleOf(t, w, s); st != "IDLE" || tracked {
			t.Fatalf("%s tracked=%v", st, tracked)
		}
		b := briefIs(t, w, w.agent, s, protocol.Blocked, "plan_not_approved |")
		if !strings.Contains(b.Reason, `asked for changes to its execution plan: "Smaller steps"`) ||
			len(b.Resolutions) != 1 || b.Resolutions[0].Ref != fmt.Sprintf("PLAN-%d", p.ID) {
			t.Fatalf("brief %q delivers %+v", b.Reason, b.Resolutions)
		}
	})
}

func TestRacingBriefsDeliverAPlanAnswerOnce(t *testing.T) {
	w := newWorld(t)
	s, _ := toConfirming(t, w)
	must(w.Gov.Plans.Modify(t.Context(), w.lead, s, "Gate it"))(t)
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b, err := w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: s})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			n += len(b.Resolutions)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("8 racing briefs delivered the answer %d times, want once", n)
	}
}
