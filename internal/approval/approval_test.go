package approval

import (
	"errors"
	"testing"
)

func TestAdd(t *testing.T) {
	one := Policy{}
	two := Policy{TwoPerson: true}
	cases := []struct {
		name     string
		policy   Policy
		standing []Vote
		by       int64
		content  string
		want     Outcome
		refusal  string
	}{
		{"one lead suffices", one, nil, 1, "a", Outcome{Done: true, Count: 1, Required: 1}, ""},
		{"two person: the first is 1 of 2", two, nil, 1, "a", Outcome{Count: 1, Required: 2}, ""},
		{"two person: a second lead, same content", two, []Vote{{1, "a", ""}}, 2, "a", Outcome{Done: true, Count: 2, Required: 2}, ""},
		{"two person: a second lead, other content starts again", two, []Vote{{1, "a", ""}}, 2, "b", Outcome{Supersede: true, Count: 1, Required: 2}, ""},
		{"two person: the same lead twice", two, []Vote{{1, "a", ""}}, 1, "a", Outcome{}, "same_approver"},
		{"two person: the same lead twice, other content", two, []Vote{{1, "a", ""}}, 1, "b", Outcome{}, "same_approver"},
		{"the key's creator, one lead", Policy{KeyCreator: 7, KeyName: "k"}, nil, 7, "a", Outcome{}, "key_creator"},
		{"the key's creator, two person, second", Policy{TwoPerson: true, KeyCreator: 7}, []Vote{{1, "a", ""}}, 7, "a", Outcome{}, "key_creator"},
		{"another lead on a created key", Policy{KeyCreator: 7}, nil, 8, "a", Outcome{Done: true, Count: 1, Required: 1}, ""},
		{"two person: a void first vote leaves the second as 1 of 2", two, []Vote{{1, "a", Disabled}}, 2, "a", Outcome{Count: 1, Required: 2}, ""},
		{"two person: a void vote of other content supersedes nothing", two, []Vote{{1, "b", Demoted}}, 2, "a", Outcome{Count: 1, Required: 2}, ""},
		{"two person: a void vote beside one that counts", two, []Vote{{1, "a", Deleted}, {3, "a", ""}}, 2, "a", Outcome{Done: true, Count: 2, Required: 2}, ""},
		{"a standing vote of a superseded count is not counted twice", two, []Vote{{3, "b", ""}}, 4, "a", Outcome{Supersede: true, Count: 1, Required: 2}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Add(c.policy, c.standing, c.by, c.content)
			var r *Refusal
			switch {
			case c.refusal != "":
				if !errors.As(err, &r) || r.Code != c.refusal || r.Message == "" {
					t.Fatalf("err = %v, want refusal %s", err, c.refusal)
				}
			case err != nil:
				t.Fatal(err)
			case got != c.want:
				t.Fatalf("Add = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestVoidReason(t *testing.T) {
	for _, c := range []struct {
		name     string
		exists   bool
		role     string
		disabled bool
		want     string
	}{
		{"an enabled lead counts", true, "lead", false, ""},
		{"an enabled admin counts", true, "admin", false, ""},
		{"a disabled lead does not", true, "lead", true, Disabled},
		{"a lead made a viewer does not", true, "viewer", false, Demoted},
		{"a disabled viewer is disabled first", true, "viewer", true, Disabled},
		{"a person deleted does not", false, "", false, Deleted},
	} {
		if got := VoidReason(c.exists, c.role, c.disabled); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
