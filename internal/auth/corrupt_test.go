package auth_test

import (
	"fmt"
	"testing"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/testkit"
)

// TestCorruptAuthRowsAreErrors stores, with raw SQL, a time Madebook never
// writes in a users, agent_keys or web_sessions row, and checks that the
// call reading it returns a server fault naming the table, the row and the
// column — never a panic.
func TestCorruptAuthRowsAreErrors(t *testing.T) {
	testkit.CorruptRows(t, func(t *testing.T) *testkit.Kit { return testkit.New(t) }, []testkit.CorruptRow[*testkit.Kit]{
		{Name: "a user disabled at a malformed time fails the users list", Corrupt: func(t *testing.T, kit *testkit.Kit) (string, func() error) {
			u, _ := kit.Person(auth.Viewer)
			kit.Corrupt(`UPDATE users SET disabled_at = 'Monday' WHERE id = ?`, u.UserID)
			return fmt.Sprintf(`users row %d, column disabled_at: stored time "Monday"`, u.UserID), func() error {
				_, err := kit.Auth.ListUsers(t.Context())
				return err
			}
		}},
		{Name: "an agent key created at a malformed time fails the keys list", Corrupt: func(t *testing.T, kit *testkit.Kit) (string, func() error) {
			a, _ := kit.Agent()
			kit.Corrupt(`UPDATE agent_keys SET created_at = 'once' WHERE id = ?`, a.KeyID)
			return fmt.Sprintf(`agent_keys row %d, column created_at: stored time "once"`, a.KeyID), func() error {
				_, err := kit.Auth.ListKeys(t.Context(), testkit.Operator)
				return err
			}
		}},
		{Name: "an agent key created at a malformed time fails to be revoked", Corrupt: func(t *testing.T, kit *testkit.Kit) (string, func() error) {
			admin, _ := kit.Person(auth.Admin)
			a, _ := kit.Agent()
			kit.Corrupt(`UPDATE agent_keys SET created_at = 'once' WHERE id = ?`, a.KeyID)
			return fmt.Sprintf(`agent_keys row %d, column created_at: stored time "once"`, a.KeyID), func() error {
				_, err := kit.Auth.RevokeKey(t.Context(), admin, a.KeyID)
				return err
			}
		}},
		{Name: "a console session last seen at a malformed time fails to resume", Corrupt: func(t *testing.T, kit *testkit.Kit) (string, func() error) {
			u, _ := kit.Person(auth.Lead)
			token, _, err := kit.Auth.Login(t.Context(), u.Email, "password-123", "192.0.2.1")
			if err != nil {
				t.Fatal(err)
			}
			kit.Corrupt(`UPDATE web_sessions SET last_seen_at = 'just now' WHERE user_id = ?`, u.UserID)
			return fmt.Sprintf(`web_sessions row of user %d, column last_seen_at: stored time "just now"`, u.UserID), func() error {
				_, err := kit.Auth.WebSession(t.Context(), token)
				return err
			}
		}},
	})
}
