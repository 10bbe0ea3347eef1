package governance_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	gatepkg "github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// BriefJSON answers what Brief does, encoded, at every moment: before a
// gate's gate_ttl runs out and after (the cached encoding does not
// outlive the instant the brief changes), after a write that changes the
// facts, and while something is handed over.
func TestBriefJSONIsTheBriefEncoded(t *testing.T) {
	w := newWorld(t)
	session := w.Session(w.agent, ttlMission(t, w, "1h"))
	same := func(t *testing.T, when string) map[string]any {
		t.Helper()
		enc := must(w.Gov.Briefs.BriefJSON(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t).Bytes()
		var got map[string]any
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", when, err, enc)
		}
		b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
		var want map[string]any
		if err := json.Unmarshal(must(b.MarshalJSON())(t), &want); err != nil {
			t.Fatal(err)
		}
		if got["brief_id"] == want["brief_id"] || got["brief_id"] == "" {
			t.Errorf("%s: brief ids %v and %v: want two fresh ones", when, got["brief_id"], want["brief_id"])
		}
		delete(got, "brief_id")
		delete(want, "brief_id")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: BriefJSON gives\n%v\nBrief gives\n%v", when, got, want)
		}
		if got["generated_at"] != w.Clock.Now().UTC().Format(time.RFC3339Nano) {
			t.Errorf("%s: generated_at %v, want the clock's %v", when, got["generated_at"], w.Clock.Now())
		}
		return got
	}
	if got := same(t, "a quiet session"); got["next_action"] != protocol.Continue.String() {
		t.Errorf("a quiet session is told %v", got["next_action"])
	}
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	same(t, "a gate just opened")
	w.Clock.Advance(59 * time.Minute)
	same(t, "a minute before it expires")
	w.Clock.Advance(time.Minute)
	got := same(t, "the instant it expires")
	if rs, _ := got["reasons"].([]any); len(rs) != 1 || rs[0].(map[string]any)["code"] != string(protocol.CodeDecisionExpired) {
		t.Errorf("the expired gate's reasons: %v", got["reasons"])
	}
	w.Clock.Advance(time.Hour)
	same(t, "an hour later")
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Keep it", "Archive it instead."))(t)
	enc := must(w.Gov.Briefs.BriefJSON(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t).Bytes()
	var delivered governance.Brief
	if err := json.Unmarshal(enc, &delivered); err != nil || len(delivered.Resolutions) != 1 || delivered.Resolutions[0].Ref != d.Ref {
		t.Fatalf("the resolution was not delivered by BriefJSON: %s (%v)", enc, err)
	}
	same(t, "after the delivery")
}

// GateView tells the executor gate what Brief says at every moment,
// though it remembers its decision: before a gate's gate_ttl runs out and
// at the instant it does, after a write that changes the facts, and after
// a delivery.
func TestGateSessionIsTheBriefsDecision(t *testing.T) {
	w := newWorld(t)
	session := w.Session(w.agent, ttlMission(t, w, "1h"))
	same := func(t *testing.T, when string) {
		t.Helper()
		for range 2 { // the decision, then the remembered one
			g := must(gateView(t.Context(), w, session))(t)
			b := must(w.Gov.Briefs.Brief(t.Context(), w.agent, governance.BriefRequest{Session: session}))(t)
			if g.NextAction != b.NextAction || g.Reason != b.Reason || !reflect.DeepEqual(g.BlockedScope, b.BlockedScope) {
				t.Errorf("%s: the gate reads %v %q %v; the brief says %v %q %v", when, g.NextAction, g.Reason, g.BlockedScope,
					b.NextAction, b.Reason, b.BlockedScope)
			}
		}
	}
	same(t, "a quiet session")
	d := must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	same(t, "a gate just opened")
	w.Clock.Advance(59 * time.Minute)
	same(t, "a minute before it expires")
	w.Clock.Advance(time.Minute)
	same(t, "the instant it expires")
	if g := must(gateView(t.Context(), w, session))(t); g.NextAction != protocol.DecisionRequired {
		t.Errorf("the expired gate leaves the session %v", g.NextAction)
	}
	w.Clock.Advance(time.Hour)
	same(t, "an hour later")
	must(w.Gov.Decisions.Resolve(t.Context(), w.lead, d.Ref, "Keep it", "Archive it instead."))(t)
	same(t, "after the resolution")
}

// Checks racing each other and a write that changes the session share the
// remembered decision safely (run with -race), and each reads the session
// as it was before the write or after it.
func TestGateSessionUnderConcurrentChecks(t *testing.T) {
	w := newWorld(t)
	session := w.Session(w.agent, ttlMission(t, w, "1h"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				g, err := gateView(context.Background(), w, session)
				if err != nil {
					t.Error(err)
					return
				}
				if g.NextAction != protocol.Continue && g.NextAction != protocol.DecisionRequired {
					t.Errorf("the gate reads %v", g.NextAction)
					return
				}
			}
		}()
	}
	must(w.Gov.Decisions.Open(t.Context(), w.agent, session, gate("Drop the legacy billing table?")))(t)
	wg.Wait()
	if g := must(gateView(t.Context(), w, session))(t); g.NextAction != protocol.DecisionRequired {
		t.Errorf("after the gate opened, the gate reads %v", g.NextAction)
	}
}

// gateView is the gate's session from GateView, naming no run.
func gateView(ctx context.Context, w *world, session string) (gatepkg.Session, error) {
	s, _, err := w.Gov.Briefs.GateView(ctx, session, "")
	return s, err
}
