package auth_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testkit"
)

// failures is what the table of failed sign-ins holds: its rows, and its
// longest key in bytes. Every key must be whole UTF-8.
func failures(t *testing.T, k *testkit.Kit) (rows, longest int) {
	t.Helper()
	keys, err := k.SQL().QueryContext(t.Context(), `SELECT email FROM login_failures`)
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	for keys.Next() {
		var key string
		if err := keys.Scan(&key); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(key) {
			t.Errorf("a key is cut inside a character: %q", key)
		}
	}
	if err := k.SQL().QueryRowContext(t.Context(),
		`SELECT COUNT(*), COALESCE(MAX(octet_length(email)), 0) FROM login_failures`).Scan(&rows, &longest); err != nil {
		t.Fatal(err)
	}
	return rows, longest
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return errs.CodeOf(err)
}

func TestSignInLimits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// fail makes the failures; then the right password of the account
		// is tried from the address.
		fail    func(k *testkit.Kit, email string)
		address string
		want    string // the error code of the right password, "" for none
		message string // a part of its message
	}{
		{name: "one account guessed at from many addresses is limited",
			fail: func(k *testkit.Kit, email string) {
				for i := range 5 {
					k.Auth.Login(ctx, email, "wrong-password", fmt.Sprintf("203.0.113.%d", i+1))
				}
			},
			address: "198.51.100.1", want: "too_many_attempts", message: "to this account"},
		{name: "four failures leave the account open",
			fail: func(k *testkit.Kit, email string) {
				for i := range 4 {
					k.Auth.Login(ctx, email, "wrong-password", fmt.Sprintf("203.0.113.%d", i+1))
				}
			},
			address: "198.51.100.1"},
		{name: "one address spraying many accounts is limited",
			fail: func(k *testkit.Kit, _ string) {
				for i := range 20 {
					k.Auth.Login(ctx, fmt.Sprintf("sprayed%d@example.com", i), "Winter2026!", "203.0.113.7")
				}
			},
			address: "203.0.113.7", want: "too_many_attempts", message: "from your address"},
		{name: "an IPv6 client counts as its /64",
			fail: func(k *testkit.Kit, _ string) {
				for i := range 20 {
					k.Auth.Login(ctx, fmt.Sprintf("sprayed%d@example.com", i), "Winter2026!", fmt.Sprintf("2001:db8:1:2::%x", i+1))
				}
			},
			address: "2001:db8:1:2:ffff::1", want: "too_many_attempts", message: "from your address"},
		{name: "another /64 is another client",
			fail: func(k *testkit.Kit, _ string) {
				for i := range 20 {
					k.Auth.Login(ctx, fmt.Sprintf("sprayed%d@example.com", i), "Winter2026!", fmt.Sprintf("2001:db8:1:2::%x", i+1))
				}
			},
			address: "2001:db8:1:3::1"},
		{name: "an email too long for any account is stored cut short",
			fail: func(k *testkit.Kit, email string) {
				for i := range 5 {
					k.Auth.Login(ctx, email+strings.Repeat("é", 150+i), "wrong-password", fmt.Sprintf("203.0.113.%d", i+1))
				}
			},
			address: "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := testkit.New(t)
			lead, _ := k.Lead()
			tc.fail(k, lead.Email)
			_, _, err := k.Auth.Login(ctx, lead.Email, "password-123", tc.address)
			if code := codeOf(err); code != tc.want {
				t.Fatalf("the right password: %v, want %q", err, tc.want)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("message %q does not say %q", err, tc.message)
			}
			if _, longest := failures(t, k); longest > 254 {
				t.Errorf("a key of %d characters is stored", longest)
			}
		})
	}
}

// Callers who choose ever new emails and addresses cannot grow the
// failures without bound: the newest are kept, and they still limit.
func TestSignInFailuresAreBounded(t *testing.T) {
	ctx := context.Background()
	k := testkit.New(t)
	k.Auth.SetKeepFailures(30)
	for i := range 200 {
		_, _, err := k.Auth.Login(ctx, fmt.Sprintf("user%d@example.com", i), "wrong-password", fmt.Sprintf("10.%d.%d.1", i/250, i%250))
		if errs.CodeOf(err) != "invalid_credentials" {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	if rows, _ := failures(t, k); rows != 30 {
		t.Errorf("%d failures remembered, want the newest 30", rows)
	}
	lead, _ := k.Lead()
	for i := range 5 {
		k.Auth.Login(ctx, lead.Email, "wrong-password", fmt.Sprintf("203.0.113.%d", i+1))
	}
	if _, _, err := k.Auth.Login(ctx, lead.Email, "password-123", "198.51.100.1"); errs.CodeOf(err) != "too_many_attempts" {
		t.Errorf("the newest failures do not limit: %v", err)
	}
}
