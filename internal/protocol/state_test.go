package protocol_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/madebook/madebook/internal/protocol"
)

var wireNames = []struct {
	state protocol.State
	name  string
}{
	{protocol.HardStop, "HARD_STOP"},
	{protocol.Blocked, "BLOCKED"},
	{protocol.DecisionRequired, "DECISION_REQUIRED"},
	{protocol.Remediate, "REMEDIATE"},
	{protocol.ContinueWithWarning, "CONTINUE_WITH_WARNING"},
	{protocol.Continue, "CONTINUE"},
}

func TestStateWireNames(t *testing.T) {
	for _, w := range wireNames {
		t.Run(w.name+" is written and read as "+w.name, func(t *testing.T) {
			if got := w.state.String(); got != w.name {
				t.Errorf("String() = %q", got)
			}
			b, err := w.state.MarshalText()
			if err != nil || string(b) != w.name {
				t.Fatalf("MarshalText() = %q, %v", b, err)
			}
			var back protocol.State = -1
			if err := back.UnmarshalText(b); err != nil || back != w.state {
				t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, w.state)
			}
			if s, ok := protocol.ParseState(w.name); !ok || s != w.state {
				t.Errorf("ParseState(%q) = %v, %v", w.name, s, ok)
			}
		})
	}
}

func TestUnknownStateNamesFail(t *testing.T) {
	for _, name := range []string{"", "continue", "Hard_Stop", "HARD STOP", " BLOCKED", "BLOCKED ", "STOP", "State(6)", "3"} {
		t.Run(fmt.Sprintf("%q is not a state", name), func(t *testing.T) {
			s := protocol.Remediate
			if err := s.UnmarshalText([]byte(name)); err == nil {
				t.Errorf("UnmarshalText(%q) succeeded as %v", name, s)
			}
			if s != protocol.Remediate {
				t.Errorf("a failed UnmarshalText changed the state to %v", s)
			}
			if _, ok := protocol.ParseState(name); ok {
				t.Errorf("ParseState(%q) succeeded", name)
			}
		})
	}
}

func TestStateOutOfRange(t *testing.T) {
	for _, s := range []protocol.State{-1, 6, 1 << 30} {
		t.Run(fmt.Sprintf("State(%d) prints without panicking and does not marshal", int(s)), func(t *testing.T) {
			if got, want := s.String(), fmt.Sprintf("State(%d)", int(s)); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if b, err := s.MarshalText(); err == nil {
				t.Errorf("MarshalText() = %q, want an error", b)
			}
		})
	}
}

func TestStatesIsThePrecedence(t *testing.T) {
	want := []protocol.State{protocol.HardStop, protocol.Blocked, protocol.DecisionRequired,
		protocol.Remediate, protocol.ContinueWithWarning, protocol.Continue}
	if !slices.Equal(protocol.States, want) {
		t.Fatalf("States = %v, want %v", protocol.States, want)
	}
	for i := 1; i < len(protocol.States); i++ {
		if protocol.States[i] >= protocol.States[i-1] {
			t.Errorf("%v is not less severe than %v", protocol.States[i], protocol.States[i-1])
		}
	}
	if len(wireNames) != len(protocol.States) {
		t.Errorf("%d wire names for %d states", len(wireNames), len(protocol.States))
	}
}
