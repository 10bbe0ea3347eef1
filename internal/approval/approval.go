// Package approval holds the rule by which people's approvals of one thing
// (a gate's resolution, a plan, the clearing of a critical violation) add
// up: how many different people it needs, who may not approve, and when
// approvals that approve different things replace each other. It is pure:
// no I/O, no clock.
package approval

import (
	"fmt"
	"slices"
)

// Vote is one person's standing approval of a target: who, and what they
// approved (the content: a resolution and instruction, a clear kind; the
// same for every vote on a plan).
type Vote struct {
	By      int64
	Content string
	// Void, when not "", is why the vote no longer counts (Void's reasons):
	// its person can no longer approve.
	Void string
}

// Why a standing vote no longer counts.
const (
	Disabled = "disabled" // the person was disabled since
	Demoted  = "demoted"  // the person's role is below lead now
	Deleted  = "deleted"  // the person is gone
)

// VoidReason is why the standing approval of a person no longer counts,
// or "" when it does: only an enabled lead or admin approves, at the
// time the approvals take effect, not only when they voted.
func VoidReason(exists bool, role string, disabled bool) string {
	switch {
	case !exists:
		return Deleted
	case disabled:
		return Disabled
	case role != "lead" && role != "admin":
		return Demoted
	}
	return ""
}

// Policy is what a target's approvals need.
type Policy struct {
	// TwoPerson says the mission requires two different people.
	TwoPerson bool
	// KeyCreator is the person who created the session's agent key (0 if
	// nobody, or not known): they never approve that key's work.
	KeyCreator int64
	// KeyName names the key, for the error.
	KeyName string
}

// Required is how many different people must approve.
func (p Policy) Required() int {
	if p.TwoPerson {
		return 2
	}
	return 1
}

// Outcome is what one more approval does.
type Outcome struct {
	// Done says the approvals now take effect.
	Done bool
	// Supersede says the standing votes approved something else and no
	// longer count: this vote starts the count again.
	Supersede bool
	// Count is how many people stand behind the content after this vote,
	// of Required.
	Count, Required int
}

// Refusal is why a person's approval cannot count.
type Refusal struct {
	// Code is same_approver or key_creator.
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Add counts person by's approval of content against the standing votes.
// The same person twice is refused (same_approver), whatever they approve
// the second time; so is the creator of the session's agent key
// (key_creator). Votes that approved other content are superseded: the
// count starts again from this vote. Void votes count for nothing and
// supersede nothing.
func Add(p Policy, standing []Vote, by int64, content string) (Outcome, error) {
	if p.KeyCreator != 0 && by == p.KeyCreator {
		return Outcome{}, &Refusal{Code: "key_creator", Message: fmt.Sprintf(
			"You created the agent key %q this session runs under, so your approval does not count: another lead must approve its work.", p.KeyName)}
	}
	out := Outcome{Required: p.Required()}
	standing = slices.DeleteFunc(slices.Clone(standing), func(v Vote) bool { return v.Void != "" })
	for _, v := range standing {
		if v.By == by {
			return Outcome{}, &Refusal{Code: "same_approver", Message: "You already approved this: a second, different lead must approve it."}
		}
	}
	for _, v := range standing {
		out.Supersede = out.Supersede || v.Content != content
	}
	out.Count = 1
	if !out.Supersede {
		out.Count += len(standing)
	}
	out.Done = out.Count >= out.Required
	return out, nil
}
