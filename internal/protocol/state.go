package protocol

import "fmt"

// State is one of the six things Madebook can tell an agent to do. States
// are ordered: a greater State is more severe, and the most severe state
// that fires is the one the agent is told.
type State int

// The six states, least severe first.
const (
	Continue State = iota
	ContinueWithWarning
	Remediate
	DecisionRequired
	Blocked
	HardStop
)

// States lists every state, most severe first: the precedence.
var States = []State{HardStop, Blocked, DecisionRequired, Remediate, ContinueWithWarning, Continue}

var stateNames = [...]string{
	Continue:            "CONTINUE",
	ContinueWithWarning: "CONTINUE_WITH_WARNING",
	Remediate:           "REMEDIATE",
	DecisionRequired:    "DECISION_REQUIRED",
	Blocked:             "BLOCKED",
	HardStop:            "HARD_STOP",
}

// String returns the state's wire name, e.g. "DECISION_REQUIRED".
func (s State) String() string {
	if s < Continue || s > HardStop {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// ParseState returns the state with the given wire name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return Continue, false
}

// MarshalText encodes the state as its wire name.
func (s State) MarshalText() ([]byte, error) {
	if s < Continue || s > HardStop {
		return nil, fmt.Errorf("protocol: invalid state %d", int(s))
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText decodes a wire name.
func (s *State) UnmarshalText(b []byte) error {
	v, ok := ParseState(string(b))
	if !ok {
		return fmt.Errorf("protocol: unknown state %q", b)
	}
	*s = v
	return nil
}
