package governance_test

import (
	"testing"
	"time"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/protocol"
)

// A brief's remembered inputs are read again in the background once they
// are 45 seconds old, while briefs go on being answered from them, and
// are read at once past a minute. The writes here come from outside this
// process's services (another governance on the same database, as an
// operator's shell or a replica not heard would write), so nothing
// forgets what the briefs remember but its age.
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
	// Past 45 seconds: this brief is answered from memory, and has
	// the session read again behind it.
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
	w.Gov.WaitRefreshes()
	briefIs(t, w, w.agent, w.session, protocol.Blocked, "paused |")

	// A session nobody briefed for a minute is read before its brief.
	must(outside.Sessions.Resume(t.Context(), w.lead, w.session))(t)
	w.Clock.Advance(time.Minute + time.Second)
	briefIs(t, w, w.agent, w.session, protocol.Continue, "|")
}

// The executor's check leaves that read to a brief until 52 s, and then
// starts it itself.
func TestTheGateLeavesTheRefreshToTheBriefs(t *testing.T) {
	w := newWorld(t)
	outside := governance.New(w.Store, w.Clock.Now, governance.Options{})
	gateSays := func(step string, want protocol.State) {
		t.Helper()
		s := must(w.Gov.Briefs.GateSession(t.Context(), w.session))(t)
		w.Gov.WaitRefreshes()
		if s.NextAction != want {
			t.Fatalf("%s: the gate says %s, want %s", step, s.NextAction, want)
		}
	}
	gateSays("read", protocol.Continue)
	must(outside.Sessions.Pause(t.Context(), w.lead, w.session, "From outside"))(t)
	w.Clock.Advance(46 * time.Second)
	gateSays("past 45 s: answered from memory", protocol.Continue)
	gateSays("and nothing was read behind it", protocol.Continue)
	w.Clock.Advance(7 * time.Second)
	gateSays("past 52 s: answered from memory, read again behind", protocol.Continue)
	gateSays("refreshed", protocol.Blocked)
}
