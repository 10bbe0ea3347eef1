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
		{"two person: a second lead, same content", two, []Vote{{1, "a"}}, 2, "a", Outcome{Done: true, Count: 2, Required: 2}, ""},
		{"two person: a second lead, other content starts again", two, []Vote{{1, "a"}}, 2, "b", Outcome{Supersede: true, Count: 1, Required: 2}, ""},
		{"two person: the same lead twice", two, []Vote{{1, "a"}}, 1, "a", Outcome{}, "same_approver"},
		{"two person: the same lead twice, other content", two, []Vote{{1, "a"}}, 1, "b", Outcome{}, "same_approver"},
		{"the key's creator, one lead", Policy{KeyCreator: 7, KeyName: "k"}, nil, 7, "a", Outcome{}, "key_creator"},
		{"the key's creator, two person, second", Policy{TwoPerson: true, KeyCreator: 7}, []Vote{{1, "a"}}, 7, "a", Outcome{}, "key_creator"},
		{"another lead on a created key", Policy{KeyCreator: 7}, nil, 8, "a", Outcome{Done: true, Count: 1, Required: 1}, ""},
		{"a standing vote of a superseded count is not counted twice", two, []Vote{{3, "b"}}, 4, "a", Outcome{Supersede: true, Count: 1, Required: 2}, ""},
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
