package auth_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testkit"
)

var kindNames = map[errs.Kind]string{
	errs.Internal: "Internal", errs.Malformed: "Malformed", errs.Unauthorized: "Unauthorized",
	errs.Forbidden: "Forbidden", errs.NotFound: "NotFound", errs.Conflict: "Conflict",
	errs.TooLarge: "TooLarge", errs.Invalid: "Invalid",
}

func wantErr(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s %s", kindNames[kind], code)
	}
	if errs.KindOf(err) != kind || errs.CodeOf(err) != code {
		t.Fatalf("got %s %s (%v), want %s %s", kindNames[errs.KindOf(err)], errs.CodeOf(err), err, kindNames[kind], code)
	}
}

// rows returns every row of the table as text, to check that a refused
// call wrote nothing.
func rows(t *testing.T, k *testkit.Kit, table string) []string {
	t.Helper()
	return k.Rows(fmt.Sprintf(`SELECT * FROM %q ORDER BY id`, table))
}

// refused checks that call fails with the kind and code and leaves the
// credential tables as they were.
func refused(t *testing.T, k *testkit.Kit, kind errs.Kind, code string, call func() error) {
	t.Helper()
	tables := []string{"users", "api_tokens", "agent_keys"}
	before := make([][]string, len(tables))
	for i, table := range tables {
		before[i] = rows(t, k, table)
	}
	wantErr(t, call(), kind, code)
	for i, table := range tables {
		if after := rows(t, k, table); !slices.Equal(before[i], after) {
			t.Fatalf("a refused call changed %s:\nbefore %q\nafter  %q", table, before[i], after)
		}
	}
}

// exec runs a statement the services never run (revoking, disabling).
func exec(t *testing.T, k *testkit.Kit, query string, args ...any) {
	t.Helper()
	k.Exec(query, args...)
}

func TestAddUser(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	tests := []struct {
		name      string
		email     string
		password  string
		role      auth.Role
		wantEmail string
	}{
		{"an email is stored trimmed and lower-cased", "  Ada.Lovelace@Example.COM ", "analytical-engine", auth.Lead, "ada.lovelace@example.com"},
		{"an admin can be added", "root@example.com", "12345678", auth.Admin, "root@example.com"},
		{"a viewer with a 72-byte password can be added", "viewer@example.com", strings.Repeat("p", 72), auth.Viewer, "viewer@example.com"},
		{"a password of 8 characters in more bytes is enough", "umlaut@example.com", "äöüßäöüß", auth.Viewer, "umlaut@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := k.Auth.AddUser(t.Context(), testkit.Operator, tt.email, tt.password, tt.role)
			if err != nil {
				t.Fatal(err)
			}
			if u.ID == 0 || u.Email != tt.wantEmail || u.Role != tt.role || u.Disabled {
				t.Fatalf("added %+v, want %s as %s", u, tt.wantEmail, tt.role)
			}
			got, err := k.Auth.CheckPassword(t.Context(), tt.email, tt.password)
			if err != nil {
				t.Fatalf("the new user cannot sign in: %v", err)
			}
			if got != u {
				t.Fatalf("CheckPassword returns %+v, AddUser returned %+v", got, u)
			}
		})
	}
}

func TestAddUserRefuses(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	if _, err := k.Auth.AddUser(t.Context(), testkit.Operator, "taken@example.com", "password-123", auth.Lead); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		email    string
		password string
		role     auth.Role
		kind     errs.Kind
		code     string
	}{
		{"an email already taken is a conflict", "taken@example.com", "password-456", auth.Viewer, errs.Conflict, "email_taken"},
		{"an email taken in another case is a conflict", "  TAKEN@Example.com", "password-456", auth.Viewer, errs.Conflict, "email_taken"},
		{"a password of 7 characters is too short", "new@example.com", "1234567", auth.Lead, errs.Invalid, "invalid_password"},
		{"an empty password is too short", "new@example.com", "", auth.Lead, errs.Invalid, "invalid_password"},
		{"a password of 7 characters is too short however many bytes they take", "new@example.com", "äöüßäöü", auth.Lead, errs.Invalid, "invalid_password"},
		{"a password over 72 bytes is refused, not cut", "new@example.com", strings.Repeat("p", 73), auth.Lead, errs.Invalid, "invalid_password"},
		{"an unknown role is refused", "new@example.com", "password-123", auth.Role("owner"), errs.Invalid, "invalid_role"},
		{"a role is spelled in lower case", "new@example.com", "password-123", auth.Role("Lead"), errs.Invalid, "invalid_role"},
		{"a user needs a role", "new@example.com", "password-123", auth.Role(""), errs.Invalid, "invalid_role"},
		{"an email needs an at sign", "not-an-email", "password-123", auth.Lead, errs.Invalid, "invalid_email"},
		{"an email is an address, not a name and an address", "Ada <ada@example.com>", "password-123", auth.Lead, errs.Invalid, "invalid_email"},
		{"an email is required", "  ", "password-123", auth.Lead, errs.Invalid, "invalid_email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, k, tt.kind, tt.code, func() error {
				_, err := k.Auth.AddUser(t.Context(), testkit.Operator, tt.email, tt.password, tt.role)
				return err
			})
		})
	}
	t.Run("the first user's password is unchanged by the refused duplicate", func(t *testing.T) {
		if _, err := k.Auth.CheckPassword(t.Context(), "taken@example.com", "password-123"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		in   string
		want auth.Role
		code string
	}{
		{"admin is a role", "admin", auth.Admin, ""},
		{"lead is a role", "lead", auth.Lead, ""},
		{"viewer is a role", "viewer", auth.Viewer, ""},
		{"agent is not a person's role", "agent", "", "invalid_role"},
		{"the empty string is no role", "", "", "invalid_role"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := auth.ParseRole(tt.in)
			if tt.code != "" {
				wantErr(t, err, errs.Invalid, tt.code)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRole(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	ctx := t.Context()
	lead, err := k.Auth.AddUser(ctx, testkit.Operator, "lead@example.com", "correct horse", auth.Lead)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Auth.AddUser(ctx, testkit.Operator, "gone@example.com", "correct horse", auth.Viewer); err != nil {
		t.Fatal(err)
	}
	exec(t, k, `UPDATE users SET disabled_at = ? WHERE email = ?`, db.FormatTime(k.Clock.Now()), "gone@example.com")

	tests := []struct {
		name     string
		email    string
		password string
		ok       bool
	}{
		{"the right email and password sign in", "lead@example.com", "correct horse", true},
		{"the email is matched whatever its case and spaces", "  LEAD@Example.com ", "correct horse", true},
		{"a wrong password is refused", "lead@example.com", "correct horsf", false},
		{"a password differing only in case is refused", "lead@example.com", "Correct horse", false},
		{"an empty password is refused", "lead@example.com", "", false},
		{"an unknown email is refused the same way", "nobody@example.com", "correct horse", false},
		{"a disabled user is refused the same way, even with the right password", "gone@example.com", "correct horse", false},
	}
	var messages []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := k.Auth.CheckPassword(ctx, tt.email, tt.password)
			if tt.ok {
				if err != nil || u != lead {
					t.Fatalf("CheckPassword = %+v, %v; want %+v", u, err, lead)
				}
				return
			}
			wantErr(t, err, errs.Unauthorized, "invalid_credentials")
			if u != (auth.User{}) {
				t.Fatalf("a refused sign-in returned the user %+v", u)
			}
			messages = append(messages, err.Error())
		})
	}
	t.Run("a refusal does not say which part was wrong", func(t *testing.T) {
		if len(messages) == 0 {
			t.Fatal("no refusals were recorded")
		}
		for _, m := range messages[1:] {
			if m != messages[0] {
				t.Fatalf("refusals differ: %q and %q", messages[0], m)
			}
		}
	})
}

func TestCreateKey(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	ctx := t.Context()
	first, err := k.Auth.CreateKey(ctx, testkit.Operator, " builder ")
	if err != nil {
		t.Fatal(err)
	}
	second, err := k.Auth.CreateKey(ctx, testkit.Operator, "reviewer")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a key is an agent secret, different every time, that authenticates as its name", func(t *testing.T) {
		if !strings.HasPrefix(first, "mbk_") || !strings.HasPrefix(second, "mbk_") || first == second || len(first) < 40 {
			t.Fatalf("keys are %q and %q", first, second)
		}
		for secret, name := range map[string]string{first: "builder", second: "reviewer"} {
			a, err := k.Auth.Authenticate(ctx, secret)
			if err != nil || a.KeyName != name || a.KeyID == 0 {
				t.Fatalf("Authenticate = %+v, %v; want the key %s", a, err, name)
			}
		}
	})
	for _, tt := range []struct {
		name     string
		key      string
		kind     errs.Kind
		code     string
		wantSame bool
	}{
		{"a name already taken is a conflict", "builder", errs.Conflict, "name_taken", false},
		{"a name already taken is a conflict with spaces around it", "  reviewer\t", errs.Conflict, "name_taken", false},
		{"a key needs a name", "   ", errs.Invalid, "name_required", false},
		{"a name is at most 100 characters, not bytes", strings.Repeat("é", 101), errs.Invalid, "name_too_long", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, k, tt.kind, tt.code, func() error {
				secret, err := k.Auth.CreateKey(ctx, testkit.Operator, tt.key)
				if err != nil && secret != "" {
					t.Errorf("a refused key still returned a secret")
				}
				return err
			})
		})
	}
	t.Run("a name of 100 characters is enough, however many bytes they take", func(t *testing.T) {
		if _, err := k.Auth.CreateKey(ctx, testkit.Operator, strings.Repeat("é", 100)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCreateToken(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	ctx := t.Context()
	u, err := k.Auth.AddUser(ctx, testkit.Operator, "viewer@example.com", "password-123", auth.Viewer)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a token is made for a known email in any case, and each token works", func(t *testing.T) {
		a, err := k.Auth.CreateToken(ctx, testkit.Operator, "viewer@example.com")
		if err != nil {
			t.Fatal(err)
		}
		b, err := k.Auth.CreateToken(ctx, testkit.Operator, " VIEWER@example.com ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a, "mbt_") || !strings.HasPrefix(b, "mbt_") || a == b {
			t.Fatalf("tokens are %q and %q", a, b)
		}
		for _, secret := range []string{a, b} {
			actor, err := k.Auth.Authenticate(ctx, secret)
			if err != nil || actor.UserID != u.ID || actor.Role != auth.Viewer {
				t.Fatalf("Authenticate = %+v, %v", actor, err)
			}
		}
	})
	t.Run("a token for an unknown email is not found", func(t *testing.T) {
		refused(t, k, errs.NotFound, "user_not_found", func() error {
			_, err := k.Auth.CreateToken(ctx, testkit.Operator, "nobody@example.com")
			return err
		})
	})
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	ctx := t.Context()
	key, err := k.Auth.CreateKey(ctx, testkit.Operator, "builder")
	if err != nil {
		t.Fatal(err)
	}
	lead, err := k.Auth.AddUser(ctx, testkit.Operator, "lead@example.com", "password-123", auth.Lead)
	if err != nil {
		t.Fatal(err)
	}
	token, err := k.Auth.CreateToken(ctx, testkit.Operator, lead.Email)
	if err != nil {
		t.Fatal(err)
	}
	// A revoked key and a disabled user's token, never authenticated
	// before they were revoked and disabled.
	revoked, err := k.Auth.CreateKey(ctx, testkit.Operator, "retired")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, k, `UPDATE agent_keys SET revoked_at = ? WHERE name = 'retired'`, db.FormatTime(k.Clock.Now()))
	if _, err := k.Auth.AddUser(ctx, testkit.Operator, "gone@example.com", "password-123", auth.Admin); err != nil {
		t.Fatal(err)
	}
	goneToken, err := k.Auth.CreateToken(ctx, testkit.Operator, "gone@example.com")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, k, `UPDATE users SET disabled_at = ? WHERE email = 'gone@example.com'`, db.FormatTime(k.Clock.Now()))
	var keyHash string
	if err := k.SQL().QueryRowContext(ctx, `SELECT key_hash FROM agent_keys WHERE name = 'builder'`).Scan(&keyHash); err != nil {
		t.Fatal(err)
	}

	t.Run("an agent key authenticates as that agent", func(t *testing.T) {
		a, err := k.Auth.Authenticate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !a.IsAgent() || a.IsPerson() || a.CanLead() || a.KeyName != "builder" || a.Label() != "agent:builder" {
			t.Fatalf("actor is %+v", a)
		}
	})
	t.Run("a personal token authenticates as that person with their role", func(t *testing.T) {
		a, err := k.Auth.Authenticate(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		want := auth.Actor{UserID: lead.ID, Email: "lead@example.com", Role: auth.Lead}
		if a != want || !a.IsPerson() || a.IsAgent() || !a.CanLead() || a.IsAdmin() || a.Label() != "person:lead@example.com" {
			t.Fatalf("actor is %+v, want %+v", a, want)
		}
	})
	for _, tt := range []struct {
		name   string
		secret string
		code   string // "" for unauthorized
	}{
		{"an empty credential is refused", "", ""},
		{"garbage is refused", "hello", ""},
		{"a key with the word Bearer still in front is refused", "Bearer " + key, ""},
		{"a key with one character changed is refused", key[:len(key)-1] + string(key[len(key)-1]^1), ""},
		{"a key cut short is refused", key[:len(key)-1], ""},
		{"a bare key prefix is refused", "mbk_", ""},
		{"a bare token prefix is refused", "mbt_", ""},
		{"a token presented as a key is refused", "mbk_" + strings.TrimPrefix(token, "mbt_"), ""},
		{"a key presented as a token is refused", "mbt_" + strings.TrimPrefix(key, "mbk_"), ""},
		{"the stored hash of a key is not a key", keyHash, ""},
		{"the stored hash of a key with the prefix is not a key", "mbk_" + keyHash, ""},
		{"a revoked key is refused", revoked, "credential_revoked"},
		{"a disabled user's token is refused", goneToken, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := k.Auth.Authenticate(ctx, tt.secret)
			wantErr(t, err, errs.Unauthorized, cmp.Or(tt.code, "unauthorized"))
			if a != (auth.Actor{}) {
				t.Fatalf("a refused credential returned the actor %+v", a)
			}
		})
	}
}

func TestSecretsAreStoredHashed(t *testing.T) {
	t.Parallel()
	k := testkit.New(t)
	ctx := context.Background()
	const password = "very-secret-password"
	if _, err := k.Auth.AddUser(ctx, testkit.Operator, "lead@example.com", password, auth.Lead); err != nil {
		t.Fatal(err)
	}
	token, err := k.Auth.CreateToken(ctx, testkit.Operator, "lead@example.com")
	if err != nil {
		t.Fatal(err)
	}
	key, err := k.Auth.CreateKey(ctx, testkit.Operator, "builder")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{key, token} {
		if _, err := k.Auth.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{"the agent key": key, "the personal token": token, "the password": password,
		"the agent key's random part": strings.TrimPrefix(key, "mbk_"), "the token's random part": strings.TrimPrefix(token, "mbt_")}

	t.Run("no column of any table holds a secret", func(t *testing.T) {
		cells := 0
		for table, rows := range k.Dump() {
			for _, row := range rows {
				for _, cell := range strings.Split(row, testkit.CellSeparator) {
					cells++
					for what, secret := range secrets {
						if strings.Contains(cell, secret) {
							column, _, _ := strings.Cut(cell, "=")
							t.Errorf("%s.%s holds %s", table, column, what)
						}
					}
				}
			}
		}
		if cells == 0 {
			t.Fatal("read no cells")
		}
		conn := k.SQL()
		var keyHash, tokenHash, passwordHash string
		if err := conn.QueryRowContext(ctx, `SELECT key_hash FROM agent_keys`).Scan(&keyHash); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT token_hash FROM api_tokens`).Scan(&tokenHash); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT password_hash FROM users`).Scan(&passwordHash); err != nil {
			t.Fatal(err)
		}
		if len(keyHash) < 32 || len(tokenHash) < 32 || len(passwordHash) < 32 || keyHash == tokenHash {
			t.Fatalf("hashes are %q, %q, %q", keyHash, tokenHash, passwordHash)
		}
	})

	t.Run("no byte of the database files holds a secret", func(t *testing.T) {
		testkit.SkipOnPostgres(t, "reads the SQLite database file and its WAL")
		var data []byte
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(k.Path + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			data = append(data, b...)
		}
		if !bytes.Contains(data, []byte("lead@example.com")) {
			t.Fatal("the files do not even hold the email: this check reads the wrong files")
		}
		for what, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("the database files hold %s", what)
			}
		}
	})
}
