package governance_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
)

// world is a workspace with one person of each role, two agents, an
// ordinary and a high-risk mission, and one session of the first agent on
// the ordinary mission.
type world struct {
	*testkit.Kit
	lead, admin, viewer auth.Actor
	agent, other        auth.Actor
	mission, risky      string
	session             string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	k := testkit.New(t)
	w := &world{Kit: k}
	w.lead = person(t, k, auth.Lead)
	w.admin = person(t, k, auth.Admin)
	w.viewer = person(t, k, auth.Viewer)
	w.agent, _ = k.Agent()
	w.other, _ = k.Agent()
	w.mission = k.Mission(w.lead, false)
	w.risky = k.Mission(w.lead, true)
	w.session = k.Session(w.agent, w.mission)
	return w
}

var people atomic.Int64

// person adds a user row with the role and returns its actor. It writes
// the row through the store rather than through auth.AddUser: these tests
// never sign in, and bcrypt under the race detector costs a second a user.
func person(t *testing.T, k *testkit.Kit, role auth.Role) auth.Actor {
	t.Helper()
	email := fmt.Sprintf("%s%d@example.com", role, people.Add(1))
	var u db.User
	err := k.Store.Write(t.Context(), func(q db.Querier) error {
		var err error
		u, err = q.CreateUser(t.Context(), db.CreateUserParams{Email: email, PasswordHash: "-", Role: string(role),
			CreatedAt: db.FormatTime(k.Clock.Now())})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return auth.Actor{UserID: u.ID, Email: u.Email, Role: auth.Role(u.Role)}
}

var kindNames = map[errs.Kind]string{
	errs.Internal: "Internal", errs.Malformed: "Malformed", errs.Unauthorized: "Unauthorized",
	errs.Forbidden: "Forbidden", errs.NotFound: "NotFound", errs.Conflict: "Conflict",
	errs.TooLarge: "TooLarge", errs.Invalid: "Invalid", errs.Unavailable: "Unavailable",
}

// wantErr fails unless err is a domain error of the kind and code.
func wantErr(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s %s", kindNames[kind], code)
	}
	if errs.KindOf(err) != kind || errs.CodeOf(err) != code {
		t.Fatalf("got %s %s (%v), want %s %s", kindNames[errs.KindOf(err)], errs.CodeOf(err), err, kindNames[kind], code)
	}
}

// must(f())(t) fails the test if f returned an error, and returns f's value.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// refused runs call, checks that it fails with the kind and code, and that
// it left the database exactly as it found it: no half-written row, no
// timeline line, no decision touched.
func refused(t *testing.T, k *testkit.Kit, kind errs.Kind, code string, call func() error) {
	t.Helper()
	before := k.Dump()
	wantErr(t, call(), kind, code)
	after := k.Dump()
	for table, rows := range before {
		if !slices.Equal(rows, after[table]) {
			t.Fatalf("a refused call changed table %s:\nbefore %q\nafter  %q", table, rows, after[table])
		}
	}
	if len(after) != len(before) {
		t.Fatalf("a refused call changed the tables: %d before, %d after", len(before), len(after))
	}
}

// timeline returns the session's timeline as "actor kind ref" lines, as a
// lead sees it.
func timeline(t *testing.T, w *world, session string) []string {
	t.Helper()
	d := must(w.Gov.Sessions.Get(t.Context(), w.lead, session))(t)
	out := make([]string, len(d.Timeline))
	for i, e := range d.Timeline {
		out[i] = strings.TrimSpace(e.Actor + " " + e.Kind + " " + e.Ref)
	}
	return out
}

// countLines counts the timeline lines equal to line.
func countLines(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// codes returns the reason codes of a brief's reasons, then "|", then its
// also list.
func codes(b governance.Brief) string {
	var s []string
	for _, r := range b.Reasons {
		s = append(s, string(r.Code))
	}
	s = append(s, "|")
	for _, r := range b.Also {
		s = append(s, string(r.Code))
	}
	return strings.Join(s, " ")
}

func agentLabel(a auth.Actor) string  { return "agent:" + a.KeyName }
func personLabel(a auth.Actor) string { return "person:" + a.Email }
