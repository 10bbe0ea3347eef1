package auth_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testkit"
)

// adminWantErr fails unless err is a domain error of the kind and code.
func adminWantErr(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if errs.KindOf(err) != kind || errs.CodeOf(err) != code {
		t.Fatalf("got kind %d code %s (%v), want kind %d code %s", errs.KindOf(err), errs.CodeOf(err), err, kind, code)
	}
}

// adminTables is every row of the tables an admin action may change, to
// check that a refused action wrote nothing.
func adminTables(t *testing.T, k *testkit.Kit) string {
	t.Helper()
	out := ""
	for _, q := range []string{
		`SELECT id, email, role, COALESCE(disabled_at, '') FROM users ORDER BY id`,
		`SELECT id, name, COALESCE(revoked_at, '') FROM agent_keys ORDER BY id`,
		`SELECT id_hash, user_id FROM web_sessions ORDER BY id_hash`,
	} {
		rows, err := k.SQL().QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintln(vals...)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// signedIn starts a console session for the person and returns its token.
func signedIn(t *testing.T, k *testkit.Kit, email string) string {
	t.Helper()
	token, _, err := k.Auth.Login(context.Background(), email, "password-123", "192.0.2.1")
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	return token
}

func TestListUsers(t *testing.T) {
	k := testkit.New(t)
	ctx := context.Background()
	admin, _ := k.Person(auth.Admin)
	lead, _ := k.Lead()
	k.Clock.Advance(time.Hour)
	if _, err := k.Auth.SetDisabled(ctx, admin, lead.UserID, true); err != nil {
		t.Fatal(err)
	}
	users, err := k.Auth.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Email != admin.Email || users[1].Email != lead.Email {
		t.Fatalf("users = %+v, want the admin then the lead, by email", users)
	}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if u := users[0]; u.Role != auth.Admin || u.Disabled || !u.CreatedAt.Equal(start) || !u.DisabledAt.IsZero() {
		t.Errorf("admin = %+v", u)
	}
	if u := users[1]; u.Role != auth.Lead || !u.Disabled || !u.DisabledAt.Equal(start.Add(time.Hour)) {
		t.Errorf("disabled lead = %+v", u)
	}
}

func TestCountUsers(t *testing.T) {
	k := testkit.New(t)
	ctx := context.Background()
	count := func() int64 {
		t.Helper()
		n, err := k.Auth.CountUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("a fresh database counts %d users, want 0", n)
	}
	admin, _ := k.Person(auth.Admin)
	lead, _ := k.Lead()
	if _, err := k.Auth.SetDisabled(ctx, admin, lead.UserID, true); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("an admin and a disabled lead count %d users, want 2", n)
	}
}

func TestSetRole(t *testing.T) {
	ctx := context.Background()

	t.Run("an admin makes a lead a viewer: their sessions end and their token is a viewer's at once", func(t *testing.T) {
		k := testkit.New(t)
		admin, _ := k.Person(auth.Admin)
		lead, token := k.Lead()
		web := signedIn(t, k, lead.Email)
		if a, err := k.Auth.Authenticate(ctx, token); err != nil || a.Role != auth.Lead {
			t.Fatalf("before: %+v %v", a, err)
		}
		u, err := k.Auth.SetRole(ctx, admin, lead.UserID, auth.Viewer)
		if err != nil {
			t.Fatal(err)
		}
		if u.Role != auth.Viewer || u.Email != lead.Email {
			t.Errorf("user = %+v", u)
		}
		if _, err := k.Auth.WebSession(ctx, web); errs.CodeOf(err) != "signed_out" {
			t.Errorf("the lead's console session survived: %v", err)
		}
		if a, err := k.Auth.Authenticate(ctx, token); err != nil || a.Role != auth.Viewer {
			t.Errorf("token after: %+v %v, want a viewer", a, err)
		}
	})

	t.Run("the same role again changes nothing and ends no session", func(t *testing.T) {
		k := testkit.New(t)
		admin, _ := k.Person(auth.Admin)
		lead, _ := k.Lead()
		web := signedIn(t, k, lead.Email)
		if _, err := k.Auth.SetRole(ctx, admin, lead.UserID, auth.Lead); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Auth.WebSession(ctx, web); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})

	t.Run("an admin may make another person an admin", func(t *testing.T) {
		k := testkit.New(t)
		admin, _ := k.Person(auth.Admin)
		viewer, _ := k.Person(auth.Viewer)
		if u, err := k.Auth.SetRole(ctx, admin, viewer.UserID, auth.Admin); err != nil || u.Role != auth.Admin {
			t.Fatalf("%+v %v", u, err)
		}
	})

	for _, tc := range []struct {
		name string
		kind errs.Kind
		code string
		call func(k *testkit.Kit, admin, lead auth.Actor) error
	}{
		{"a lead cannot change a role", errs.Forbidden, "forbidden", func(k *testkit.Kit, _, lead auth.Actor) error {
			_, err := k.Auth.SetRole(ctx, lead, lead.UserID, auth.Admin)
			return err
		}},
		{"an unknown role is refused", errs.Invalid, "invalid_role", func(k *testkit.Kit, admin, lead auth.Actor) error {
			_, err := k.Auth.SetRole(ctx, admin, lead.UserID, "owner")
			return err
		}},
		{"an unknown user is not found", errs.NotFound, "user_not_found", func(k *testkit.Kit, admin, _ auth.Actor) error {
			_, err := k.Auth.SetRole(ctx, admin, 9999, auth.Lead)
			return err
		}},
		{"an admin cannot demote themselves", errs.Conflict, "cannot_change_self", func(k *testkit.Kit, admin, _ auth.Actor) error {
			_, err := k.Auth.SetRole(ctx, admin, admin.UserID, auth.Viewer)
			return err
		}},
	} {
		t.Run(tc.name+", writing nothing", func(t *testing.T) {
			k := testkit.New(t)
			admin, _ := k.Person(auth.Admin)
			lead, _ := k.Lead()
			signedIn(t, k, lead.Email)
			signedIn(t, k, admin.Email)
			before := adminTables(t, k)
			adminWantErr(t, tc.call(k, admin, lead), tc.kind, tc.code)
			if after := adminTables(t, k); after != before {
				t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestSetDisabled(t *testing.T) {
	ctx := context.Background()

	t.Run("a disabled person is signed out, refused at sign-in, and their token stops at once; re-enabled, they sign in again", func(t *testing.T) {
		k := testkit.New(t)
		admin, _ := k.Person(auth.Admin)
		lead, token := k.Lead()
		web := signedIn(t, k, lead.Email)
		if _, err := k.Auth.Authenticate(ctx, token); err != nil {
			t.Fatal(err)
		}
		u, err := k.Auth.SetDisabled(ctx, admin, lead.UserID, true)
		if err != nil || !u.Disabled {
			t.Fatalf("disable: %+v %v", u, err)
		}
		if _, err := k.Auth.WebSession(ctx, web); errs.CodeOf(err) != "signed_out" {
			t.Errorf("the console session survived: %v", err)
		}
		adminWantErr(t, func() error { _, err := k.Auth.Authenticate(ctx, token); return err }(), errs.Unauthorized, "unauthorized")
		_, _, err = k.Auth.Login(ctx, lead.Email, "password-123", "192.0.2.1")
		adminWantErr(t, err, errs.Unauthorized, "invalid_credentials")

		if _, err := k.Auth.SetDisabled(ctx, admin, lead.UserID, true); err != nil {
			t.Errorf("disabling twice: %v", err)
		}
		if u, err := k.Auth.SetDisabled(ctx, admin, lead.UserID, false); err != nil || u.Disabled {
			t.Fatalf("enable: %+v %v", u, err)
		}
		signedIn(t, k, lead.Email)
		if a, err := k.Auth.Authenticate(ctx, token); err != nil || a.UserID != lead.UserID {
			t.Errorf("token after re-enabling: %+v %v", a, err)
		}
	})

	for _, tc := range []struct {
		name string
		kind errs.Kind
		code string
		call func(k *testkit.Kit, admin, lead auth.Actor) error
	}{
		{"a lead cannot disable anyone", errs.Forbidden, "forbidden", func(k *testkit.Kit, admin, lead auth.Actor) error {
			_, err := k.Auth.SetDisabled(ctx, lead, admin.UserID, true)
			return err
		}},
		{"an unknown user is not found", errs.NotFound, "user_not_found", func(k *testkit.Kit, admin, _ auth.Actor) error {
			_, err := k.Auth.SetDisabled(ctx, admin, 9999, true)
			return err
		}},
		{"an admin cannot disable themselves", errs.Conflict, "cannot_change_self", func(k *testkit.Kit, admin, _ auth.Actor) error {
			_, err := k.Auth.SetDisabled(ctx, admin, admin.UserID, true)
			return err
		}},
	} {
		t.Run(tc.name+", writing nothing", func(t *testing.T) {
			k := testkit.New(t)
			admin, _ := k.Person(auth.Admin)
			lead, _ := k.Lead()
			signedIn(t, k, lead.Email)
			signedIn(t, k, admin.Email)
			before := adminTables(t, k)
			adminWantErr(t, tc.call(k, admin, lead), tc.kind, tc.code)
			if after := adminTables(t, k); after != before {
				t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestListAndRevokeKeys(t *testing.T) {
	ctx := context.Background()

	t.Run("a revoked key stops authenticating at once and is listed as revoked", func(t *testing.T) {
		k := testkit.New(t)
		admin, _ := k.Person(auth.Admin)
		agent, secret := k.Agent() // authenticated once: nothing may remember it
		other, _ := k.Agent()
		k.Clock.Advance(time.Minute)
		key, err := k.Auth.RevokeKey(ctx, admin, agent.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		if key.Name != agent.KeyName || !key.Revoked() || key.State != auth.StateRevoked {
			t.Errorf("key = %+v", key)
		}
		adminWantErr(t, func() error { _, err := k.Auth.Authenticate(ctx, secret); return err }(), errs.Unauthorized, "credential_revoked")
		keys, err := k.Auth.ListKeys(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].Name != agent.KeyName || keys[1].Name != other.KeyName {
			t.Fatalf("keys = %+v, want both, oldest first", keys)
		}
		start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		if !keys[0].Revoked() || !keys[0].RevokedAt.Equal(start.Add(time.Minute)) || !keys[0].CreatedAt.Equal(start) ||
			keys[0].State != auth.StateRevoked {
			t.Errorf("revoked key = %+v", keys[0])
		}
		if keys[1].Revoked() || keys[1].State != auth.StateActive {
			t.Errorf("the other key is revoked: %+v", keys[1])
		}
	})

	t.Run("no keys is an empty list", func(t *testing.T) {
		k := testkit.New(t)
		keys, err := k.Auth.ListKeys(ctx, testkit.Operator)
		if err != nil || keys == nil || len(keys) != 0 {
			t.Fatalf("keys = %#v, %v", keys, err)
		}
	})

	for _, tc := range []struct {
		name string
		kind errs.Kind
		code string
		call func(k *testkit.Kit, admin, lead, agent auth.Actor) error
	}{
		{"a lead cannot revoke a key", errs.Forbidden, "forbidden", func(k *testkit.Kit, _, lead, agent auth.Actor) error {
			_, err := k.Auth.RevokeKey(ctx, lead, agent.KeyID)
			return err
		}},
		{"an agent cannot revoke a key", errs.Forbidden, "forbidden", func(k *testkit.Kit, _, _, agent auth.Actor) error {
			_, err := k.Auth.RevokeKey(ctx, agent, agent.KeyID)
			return err
		}},
		{"an unknown key is not found", errs.NotFound, "key_not_found", func(k *testkit.Kit, admin, _, _ auth.Actor) error {
			_, err := k.Auth.RevokeKey(ctx, admin, 9999)
			return err
		}},
		{"a revoked key cannot be revoked again", errs.Conflict, "already_revoked", func(k *testkit.Kit, admin, _, agent auth.Actor) error {
			_, err := k.Auth.RevokeKey(ctx, admin, agent.KeyID)
			return err
		}},
	} {
		t.Run(tc.name+", writing nothing", func(t *testing.T) {
			k := testkit.New(t)
			admin, _ := k.Person(auth.Admin)
			lead, _ := k.Lead()
			agent, _ := k.Agent()
			if tc.code == "already_revoked" {
				if _, err := k.Auth.RevokeKey(ctx, admin, agent.KeyID); err != nil {
					t.Fatal(err)
				}
			}
			before := adminTables(t, k)
			adminWantErr(t, tc.call(k, admin, lead, agent), tc.kind, tc.code)
			if after := adminTables(t, k); after != before {
				t.Errorf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
