package governance_test

import (
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// A session's cached view is read again in the background once it is 45
// seconds old, while briefs go on being answered from it, and is read at
// once past a minute. The writes here come from outside this process's
// services (another governance on the same database, as an operator's
// shell or a replica not heard would write), so nothing invalidates the
// view but its age.
func TestTheBriefCacheIsRefreshedBehindTheBriefs(t *testing.T) {
	w := newWorld(t)
	outside := governance.New(w.Store, w.Clock.Now, governance.Options{})
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")

	must(outside.Sessions.Pause(t.Context(), w.lead, w.session, "From outside"))(t)
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
	w.Clock.Advance(44 * time.Second)
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
	w.Gov.WaitRefreshes()
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|") // not yet 45 seconds: no read

	w.Clock.Advance(2 * time.Second)
	// Past 45 seconds: this brief is answered from the cache, and has
	// the session read again behind it.
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
	w.Gov.WaitRefreshes()
	briefIs(t, w, w.agent, w.session, protocol.Blocked, "paused |")

	// A session nobody briefed for a minute is read before its brief.
	must(outside.Sessions.Resume(t.Context(), w.lead, w.session))(t)
	w.Clock.Advance(time.Minute + time.Second)
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
}

// The executor's check refreshes ahead as a brief does: past 45 s it is
// answered from the cache and has the view read again behind it.
func TestTheGateRefreshesAheadAsTheBriefDoes(t *testing.T) {
	w := newWorld(t)
	outside := governance.New(w.Store, w.Clock.Now, governance.Options{})
	gateSays := func(step string, want protocol.State) {
		t.Helper()
		s, _, err := w.Gov.Briefs.GateView(t.Context(), w.session, "")
		if err != nil {
			t.Fatal(err)
		}
		w.Gov.WaitRefreshes()
		if s.NextAction != want {
			t.Fatalf("%s: the gate says %s, want %s", step, s.NextAction, want)
		}
	}
	gateSays("read", protocol.Continue)
	must(outside.Sessions.Pause(t.Context(), w.lead, w.session, "From outside"))(t)
	w.Clock.Advance(44 * time.Second)
	gateSays("not yet 45 s: answered from the cache", protocol.Continue)
	gateSays("and nothing was read behind it", protocol.Continue)
	w.Clock.Advance(2 * time.Second)
	gateSays("past 45 s: answered from the cache, read again behind", protocol.Continue)
	gateSays("refreshed", protocol.Blocked)
}
