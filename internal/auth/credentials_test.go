package auth_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testkit"
)

// credentialTables is every row of the tables a credential's create or
// revoke writes, to check that a refused one wrote nothing.
func credentialTables(t *testing.T, k *testkit.Kit) string {
	t.Helper()
	return strings.Join(rows(t, k, "agent_keys"), "\n") + "\n" + strings.Join(rows(t, k, "api_tokens"), "\n") + "\n" +
		strings.Join(rows(t, k, "admin_activity"), "\n")
}

// secondService is another Madebook process on the kit's database: its
// own store and credentials service (on SQLite, a second connection to
// the same file, as a second `serve` or the command line has).
func secondService(t *testing.T, k *testkit.Kit) *auth.Service {
	t.Helper()
	store, err := db.Open(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return auth.NewService(store, k.Clock.Now)
}

func TestCredentialsExpire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := testkit.New(t)
	lead, _ := k.Lead()
	start := k.Clock.Now()
	key, err := k.Auth.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "short-lived", Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	token, err := k.Auth.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Name: "laptop", Lifetime: 90 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if key.ExpiresAt == nil || !key.ExpiresAt.Equal(start.Add(time.Hour)) || token.ExpiresAt == nil || !token.ExpiresAt.Equal(start.Add(90*time.Minute)) {
		t.Fatalf("expiries %v and %v, want an hour and 90 minutes from %v", key.ExpiresAt, token.ExpiresAt, start)
	}
	forever, err := k.Auth.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "forever"})
	if err != nil || forever.ExpiresAt != nil {
		t.Fatalf("a key without a lifetime: %+v, %v; want no expiry", forever, err)
	}

	t.Run("before its expiry a credential works, to the last nanosecond", func(t *testing.T) {
		k.Clock.Advance(time.Hour - time.Nanosecond)
		if a, err := k.Auth.Authenticate(ctx, key.Secret); err != nil || a.KeyName != "short-lived" {
			t.Fatalf("key: %+v, %v", a, err)
		}
		if a, err := k.Auth.Authenticate(ctx, token.Secret); err != nil || a.UserID != lead.UserID {
			t.Fatalf("token: %+v, %v", a, err)
		}
	})
	t.Run("at its expiry it is refused at once, saying it expired", func(t *testing.T) {
		k.Clock.Advance(time.Nanosecond)
		_, err := k.Auth.Authenticate(ctx, key.Secret)
		wantErr(t, err, errs.Unauthorized, "credential_expired")
		if !strings.Contains(err.Error(), "agent key expired at 2026-11-29T13:00:00Z") {
			t.Errorf("message %q does not say what expired when", err)
		}
		if _, err := k.Auth.Authenticate(ctx, token.Secret); err != nil {
			t.Fatalf("the token, 30 minutes from its expiry, is refused: %v", err)
		}
		k.Clock.Advance(30 * time.Minute)
		_, err = k.Auth.Authenticate(ctx, token.Secret)
		wantErr(t, err, errs.Unauthorized, "credential_expired")
		if _, err := k.Auth.Authenticate(ctx, forever.Secret); err != nil {
			t.Errorf("the key without an expiry is refused: %v", err)
		}
	})
	t.Run("the lists say expired, with the expiry", func(t *testing.T) {
		keys, err := k.Auth.ListKeys(ctx, testkit.Operator)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range keys {
			want := auth.StateActive
			if got.Name == "short-lived" {
				want = auth.StateExpired
				if got.ExpiresAt == nil || !got.ExpiresAt.Equal(start.Add(time.Hour)) {
					t.Errorf("listed expiry %v", got.ExpiresAt)
				}
			}
			if got.State != want {
				t.Errorf("key %s is %s, want %s", got.Name, got.State, want)
			}
		}
		tokens, err := k.Auth.ListTokens(ctx, lead)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range tokens {
			if got.Name == "laptop" && got.State != auth.StateExpired {
				t.Errorf("token %s is %s, want expired", got.Name, got.State)
			}
		}
	})
	t.Run("an expired credential is refused by another process too", func(t *testing.T) {
		_, err := secondService(t, k).Authenticate(ctx, key.Secret)
		wantErr(t, err, errs.Unauthorized, "credential_expired")
	})
}

func TestTheMaximumAgeRefusesLongerCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const day = 24 * time.Hour
	k := testkit.New(t)
	lead, _ := k.Lead()
	limited := auth.NewService(k.Store, k.Clock.Now).WithMaxAge(90 * day)
	if limited.MaxAge() != 90*day {
		t.Fatalf("MaxAge = %v", limited.MaxAge())
	}
	for _, tt := range []struct {
		name     string
		lifetime time.Duration
		code     string
		says     string
	}{
		{"a key with no expiry is refused, not given the maximum", 0, "over_max_age", "at most 90d (MADEBOOK_TOKEN_MAX_AGE)"},
		{"a key a day longer than the maximum is refused", 91 * day, "over_max_age", "91d is longer than this server allows"},
		{"a key under a minute is refused", 30 * time.Second, "invalid_expiry", "at least 1m"},
		{"a key over a hundred years is refused", auth.MaxLifetime + day, "invalid_expiry", "at most 36500d"},
	} {
		t.Run(tt.name+", writing nothing", func(t *testing.T) {
			before := credentialTables(t, k)
			_, err := limited.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "too-long", Lifetime: tt.lifetime})
			wantErr(t, err, errs.Invalid, tt.code)
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("message %q does not say %q", err, tt.says)
			}
			_, err = limited.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Lifetime: tt.lifetime})
			wantErr(t, err, errs.Invalid, tt.code)
			if after := credentialTables(t, k); after != before {
				t.Errorf("a refused create wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	t.Run("the maximum itself and anything shorter are given", func(t *testing.T) {
		for _, d := range []time.Duration{90 * day, time.Minute} {
			k1, err := limited.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "ok-" + auth.FormatLifetime(d), Lifetime: d})
			if err != nil || k1.ExpiresAt == nil || !k1.ExpiresAt.Equal(k.Clock.Now().Add(d)) {
				t.Fatalf("key for %v: %+v, %v", d, k1, err)
			}
			t1, err := limited.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Lifetime: d})
			if err != nil || t1.ExpiresAt == nil {
				t.Fatalf("token for %v: %+v, %v", d, t1, err)
			}
		}
	})
	t.Run("without a maximum a credential may have no expiry", func(t *testing.T) {
		if _, err := k.Auth.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "unlimited"}); err != nil {
			t.Fatal(err)
		}
	})
}

// Revocation holds on the very next request of every process on the
// database: a credential is cached only while nothing at all was
// committed since it was read (see cache_test.go).
func TestARevocationHoldsAtOnceInEveryProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := testkit.New(t)
	other := secondService(t, k)
	admin, _ := k.Person(auth.Admin)
	lead, leadToken := k.Lead()
	agent, key := k.Agent()
	_, spare := k.Agent()
	// Both processes have authenticated both credentials before.
	for _, svc := range []*auth.Service{k.Auth, other} {
		for _, secret := range []string{key, leadToken, spare} {
			if _, err := svc.Authenticate(ctx, secret); err != nil {
				t.Fatal(err)
			}
		}
	}
	tokens, err := k.Auth.ListTokens(ctx, lead)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("the lead's tokens: %+v, %v", tokens, err)
	}

	t.Run("a key revoked in one process is refused by the other on its next call", func(t *testing.T) {
		if _, err := k.Auth.RevokeKey(ctx, admin, agent.KeyID); err != nil {
			t.Fatal(err)
		}
		_, err := other.Authenticate(ctx, key)
		wantErr(t, err, errs.Unauthorized, "credential_revoked")
		if _, err := other.Authenticate(ctx, spare); err != nil {
			t.Errorf("the other process refuses a key nobody revoked: %v", err)
		}
	})
	t.Run("a token revoked in one process is refused by the other on its next call", func(t *testing.T) {
		if _, err := other.RevokeToken(ctx, lead, tokens[0].ID); err != nil {
			t.Fatal(err)
		}
		for _, svc := range []*auth.Service{k.Auth, other} {
			_, err := svc.Authenticate(ctx, leadToken)
			wantErr(t, err, errs.Unauthorized, "credential_revoked")
		}
	})
	t.Run("a role changed in one process holds in the other on its next call", func(t *testing.T) {
		viewer, viewerToken := k.Person(auth.Viewer)
		if a, err := other.Authenticate(ctx, viewerToken); err != nil || a.Role != auth.Viewer {
			t.Fatalf("before: %+v, %v", a, err)
		}
		if _, err := k.Auth.SetRole(ctx, admin, viewer.UserID, auth.Lead); err != nil {
			t.Fatal(err)
		}
		if a, err := other.Authenticate(ctx, viewerToken); err != nil || a.Role != auth.Lead {
			t.Errorf("after: %+v, %v; want a lead at once", a, err)
		}
	})
}

func TestPersonalTokensAreListedAndRevokedOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := testkit.New(t)
	admin, _ := k.Person(auth.Admin)
	lead, firstToken := k.Lead()
	viewer, viewerToken := k.Person(auth.Viewer)
	agent, _ := k.Agent()
	laptop, err := k.Auth.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Name: "laptop", Lifetime: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a person sees their own tokens, named, with a prefix and never the secret", func(t *testing.T) {
		tokens, err := k.Auth.ListTokens(ctx, lead)
		if err != nil {
			t.Fatal(err)
		}
		if len(tokens) != 2 || tokens[0].Name != "token 2026-11-29" || tokens[1].Name != "laptop" || tokens[1].ID != laptop.ID {
			t.Fatalf("tokens = %+v, want the default-named one, then laptop", tokens)
		}
		for i, tok := range tokens {
			if tok.Owner != lead.Email || tok.State != auth.StateActive || len(tok.Prefix) != 10 || !strings.HasPrefix(tok.Prefix, "mbt_") {
				t.Errorf("token %d = %+v", i, tok)
			}
		}
		if !strings.HasPrefix(firstToken, tokens[0].Prefix) || !strings.HasPrefix(laptop.Secret, tokens[1].Prefix) || laptop.Prefix != tokens[1].Prefix {
			t.Errorf("the prefixes %q, %q are not the secrets' first characters", tokens[0].Prefix, tokens[1].Prefix)
		}
		b, err := json.Marshal(tokens)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{firstToken, laptop.Secret, strings.TrimPrefix(laptop.Secret, "mbt_")} {
			if strings.Contains(string(b), secret) {
				t.Errorf("the list holds a secret: %s", b)
			}
		}
	})
	t.Run("an admin and the command line see everyone's; an agent sees none", func(t *testing.T) {
		for _, by := range []auth.Actor{admin, testkit.Operator} {
			tokens, err := k.Auth.ListTokens(ctx, by)
			if err != nil || len(tokens) != 4 {
				t.Errorf("%s sees %d tokens (%v), want all 4", by.Who(), len(tokens), err)
			}
		}
		_, err := k.Auth.ListTokens(ctx, agent)
		wantErr(t, err, errs.Forbidden, "forbidden")
	})
	for _, tt := range []struct {
		name string
		by   auth.Actor
		id   func() int64
		kind errs.Kind
		code string
	}{
		{"a person cannot revoke another's token", viewer, func() int64 { return laptop.ID }, errs.Forbidden, "forbidden"},
		{"an agent cannot revoke a token", agent, func() int64 { return laptop.ID }, errs.Forbidden, "forbidden"},
		{"an unknown token is not found", admin, func() int64 { return 9999 }, errs.NotFound, "token_not_found"},
	} {
		t.Run(tt.name+", writing nothing", func(t *testing.T) {
			before := credentialTables(t, k)
			_, err := k.Auth.RevokeToken(ctx, tt.by, tt.id())
			wantErr(t, err, tt.kind, tt.code)
			if after := credentialTables(t, k); after != before {
				t.Errorf("a refused revoke wrote:\nbefore %s\nafter  %s", before, after)
			}
			if _, err := k.Auth.Authenticate(ctx, laptop.Secret); err != nil {
				t.Errorf("the token stopped working: %v", err)
			}
		})
	}
	t.Run("a person revokes their own token: it alone stops, and the activity records it without a secret", func(t *testing.T) {
		k.Clock.Advance(time.Hour)
		got, err := k.Auth.RevokeToken(ctx, lead, laptop.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != laptop.ID || got.State != auth.StateRevoked || got.RevokedAt == nil || !got.RevokedAt.Equal(k.Clock.Now()) {
			t.Errorf("revoked = %+v", got)
		}
		_, err = k.Auth.Authenticate(ctx, laptop.Secret)
		wantErr(t, err, errs.Unauthorized, "credential_revoked")
		if _, err := k.Auth.Authenticate(ctx, firstToken); err != nil {
			t.Errorf("the lead's other token stopped too: %v", err)
		}
		var action, target, before, after string
		if err := k.SQL().QueryRowContext(ctx, `SELECT action, target, before_json, after_json FROM admin_activity ORDER BY id DESC LIMIT 1`).
			Scan(&action, &target, &before, &after); err != nil {
			t.Fatal(err)
		}
		if action != "token.revoke" || target != "user "+lead.Email || !strings.Contains(before, `"revoked":false`) ||
			!strings.Contains(after, `"revoked":true`) || !strings.Contains(after, `"name":"laptop"`) || !strings.Contains(after, laptop.Prefix) {
			t.Errorf("recorded %s %s %s → %s", action, target, before, after)
		}
		if strings.Contains(before+after, strings.TrimPrefix(laptop.Secret, laptop.Prefix)) {
			t.Errorf("the record holds the secret: %s", after)
		}
	})
	t.Run("a revoked token cannot be revoked again", func(t *testing.T) {
		before := credentialTables(t, k)
		_, err := k.Auth.RevokeToken(ctx, admin, laptop.ID)
		wantErr(t, err, errs.Conflict, "already_revoked")
		if after := credentialTables(t, k); after != before {
			t.Errorf("a refused revoke wrote:\nbefore %s\nafter  %s", before, after)
		}
	})
	t.Run("an admin revokes anyone's token", func(t *testing.T) {
		tokens, _ := k.Auth.ListTokens(ctx, viewer)
		if _, err := k.Auth.RevokeToken(ctx, admin, tokens[0].ID); err != nil {
			t.Fatal(err)
		}
		_, err := k.Auth.Authenticate(ctx, viewerToken)
		wantErr(t, err, errs.Unauthorized, "credential_revoked")
	})
	t.Run("a token's name is one line of at most 100 characters", func(t *testing.T) {
		_, err := k.Auth.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Name: "two\nlines"})
		wantErr(t, err, errs.Invalid, "invalid_characters")
		_, err = k.Auth.IssueToken(ctx, testkit.Operator, auth.TokenRequest{Email: lead.Email, Name: strings.Repeat("n", 101)})
		wantErr(t, err, errs.Invalid, "name_too_long")
		_, err = k.Auth.IssueToken(ctx, lead, auth.TokenRequest{Email: lead.Email})
		wantErr(t, err, errs.Forbidden, "forbidden")
	})
}

func TestTheLastUseIsKeptToTheMinuteAndWrittenInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := testkit.New(t)
	lead, token := k.Lead()
	_, key := k.Agent() // testkit authenticates it once, at the start
	start := k.Clock.Now()
	keyUse := func(svc *auth.Service) *time.Time {
		t.Helper()
		keys, err := svc.ListKeys(ctx, testkit.Operator)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %+v, %v", keys, err)
		}
		return keys[0].LastUsedAt
	}
	tokenUse := func(svc *auth.Service) *time.Time {
		t.Helper()
		tokens, err := svc.ListTokens(ctx, lead)
		if err != nil || len(tokens) != 1 {
			t.Fatalf("tokens: %+v, %v", tokens, err)
		}
		return tokens[0].LastUsedAt
	}
	same := func(got *time.Time, want time.Time) bool { return got != nil && got.Equal(want) }

	t.Run("a credential never used says so", func(t *testing.T) {
		if got := tokenUse(k.Auth); got != nil {
			t.Errorf("an unused token was last used at %v", got)
		}
	})
	t.Run("a use is listed at once by its process, and written by the next flush", func(t *testing.T) {
		if _, err := k.Auth.Authenticate(ctx, token); err != nil {
			t.Fatal(err)
		}
		if got := tokenUse(k.Auth); !same(got, start) {
			t.Errorf("this process lists the token's last use at %v, want %v", got, start)
		}
		other := secondService(t, k)
		if got := tokenUse(other); got != nil {
			t.Errorf("before the flush the database holds %v: authenticating wrote", got)
		}
		if err := k.Auth.FlushLastUsed(ctx); err != nil {
			t.Fatal(err)
		}
		if got, key := tokenUse(other), keyUse(other); !same(got, start) || !same(key, start) {
			t.Errorf("after the flush the database holds %v and %v, want %v", got, key, start)
		}
	})
	t.Run("uses within a minute of the stored one write nothing", func(t *testing.T) {
		k.Clock.Advance(59 * time.Second)
		before := credentialTables(t, k)
		for range 3 {
			if _, err := k.Auth.Authenticate(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Auth.FlushLastUsed(ctx); err != nil {
			t.Fatal(err)
		}
		if after := credentialTables(t, k); after != before {
			t.Errorf("a use within the minute wrote:\nbefore %s\nafter  %s", before, after)
		}
		if got := keyUse(k.Auth); !same(got, start) {
			t.Errorf("the key's last use moved to %v within the minute", got)
		}
	})
	t.Run("a use a minute after the stored one moves it", func(t *testing.T) {
		k.Clock.Advance(time.Second)
		if _, err := k.Auth.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := k.Auth.FlushLastUsed(ctx); err != nil {
			t.Fatal(err)
		}
		if got := keyUse(secondService(t, k)); !same(got, start.Add(time.Minute)) {
			t.Errorf("the key's last use is %v, want %v", got, start.Add(time.Minute))
		}
	})
	t.Run("a flush never moves a last use back", func(t *testing.T) {
		// This process notes a use two minutes in; before it flushes,
		// another, a minute later, notes and writes its own.
		k.Clock.Advance(time.Minute)
		if _, err := k.Auth.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		later := auth.NewService(k.Store, func() time.Time { return start.Add(3 * time.Minute) })
		if _, err := later.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := later.FlushLastUsed(ctx); err != nil {
			t.Fatal(err)
		}
		if err := k.Auth.FlushLastUsed(ctx); err != nil {
			t.Fatal(err)
		}
		if got := keyUse(secondService(t, k)); !same(got, start.Add(3*time.Minute)) {
			t.Errorf("the key's last use is %v, want the later %v", got, start.Add(3*time.Minute))
		}
	})
}

// On PostgreSQL the schema tells other replicas (topic auth) when a
// credential changes, and says nothing when its last use is stamped:
// those stamps come every second, and each word wakes every replica's
// console streams.
func TestALastUseStampIsNotAWordToOtherReplicas(t *testing.T) {
	if !testkit.Postgres() {
		t.Skip("replicas share a PostgreSQL database (MADEBOOK_TEST_DB=postgres://…); SQLite has no notifications")
	}
	ctx := context.Background()
	k := testkit.New(t)
	admin, _ := k.Person(auth.Admin)
	agent, key := k.Agent()
	heard := make(chan db.Notice, 64)
	k.Store.OnChange(func(n db.Notice) { heard <- n })
	listenCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); k.Store.Listen(listenCtx, func(err error) { t.Logf("listen: %v", err) }) }()
	t.Cleanup(func() { stop(); <-done })
	next := func(within time.Duration) (db.Notice, bool) {
		select {
		case n := <-heard:
			return n, true
		case <-time.After(within):
			return db.Notice{}, false
		}
	}
	if n, ok := next(10 * time.Second); !ok || n.Topic != "" {
		t.Fatalf("the store never listened: %+v", n)
	}

	k.Clock.Advance(time.Hour)
	if _, err := k.Auth.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := k.Auth.FlushLastUsed(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok := next(500 * time.Millisecond); ok {
		t.Errorf("stamping a last use said %+v to the replicas", n)
	}
	if _, err := k.Auth.RevokeKey(ctx, admin, agent.KeyID); err != nil {
		t.Fatal(err)
	}
	if n, ok := next(5 * time.Second); !ok || n.Topic != db.TopicAuth {
		t.Errorf("a revocation said %+v (heard: %t), want the auth topic", n, ok)
	}
}
