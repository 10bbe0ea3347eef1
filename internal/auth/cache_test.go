package auth_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testdb"
	"github.com/madebook/madebook/internal/testkit"
)

// countingStore is a store that counts Authenticate's reads of a
// credential (each one a Reader call): a call that makes none was
// answered from the cache. afterRead, if set, runs after each read of an
// agent key, before Authenticate sees what it read.
type countingStore struct {
	*db.Store
	reads     atomic.Int64
	afterRead func()
}

func (s *countingStore) Reader() db.Querier {
	s.reads.Add(1)
	return hookedReader{s.Store.Reader(), s}
}

type hookedReader struct {
	db.Querier
	s *countingStore
}

func (q hookedReader) GetAgentKeyByHash(ctx context.Context, hash string) (db.GetAgentKeyByHashRow, error) {
	k, err := q.Querier.GetAgentKeyByHash(ctx, hash)
	if q.s.afterRead != nil {
		q.s.afterRead()
	}
	return k, err
}

// counted returns a kit and a credentials service over its database whose
// reads are counted, and a function that returns the reads since it was
// last called.
func counted(t testing.TB) (*testkit.Kit, *auth.Service, *countingStore, func() int64) {
	t.Helper()
	k := testkit.New(t)
	store := &countingStore{Store: k.Store}
	var seen int64
	return k, auth.NewService(store, k.Clock.Now), store, func() int64 {
		n := store.reads.Load()
		defer func() { seen = n }()
		return n - seen
	}
}

// wantReads checks that the calls since the last check read the database
// n times on SQLite, and once each on PostgreSQL, which has no cheap data
// version and so caches nothing.
func wantReads(t *testing.T, reads func() int64, n, calls int64, what string) {
	t.Helper()
	if testdb.Postgres() {
		n = calls
	}
	if got := reads(); got != n {
		t.Errorf("%s: %d reads of the database, want %d", what, got, n)
	}
}

// shellDB is a plain connection to the kit's database, as an operator's
// sqlite3 (or psql) shell has: no Madebook settings, no Madebook code.
func shellDB(t *testing.T, k *testkit.Kit) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+k.Path
	if testdb.Postgres() {
		driver, dsn = "pgx", k.Path
	}
	c, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestACachedCredentialIsReadAgainAfterAnyCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k, svc, _, reads := counted(t)
	other, err := db.Open(k.Path) // a second process on the database
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	shell := shellDB(t, k)

	agent, key := k.Agent()
	lead, leadToken := k.Lead()
	viewer, viewerToken := k.Person(auth.Viewer)
	_, spare := k.Agent()
	secrets := []string{key, leadToken, viewerToken, spare}
	for _, secret := range secrets {
		if _, err := svc.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	wantReads(t, reads, 4, 4, "the first calls")
	for _, secret := range secrets {
		if _, err := svc.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	wantReads(t, reads, 0, 4, "the same calls again, nothing written between")

	at := db.FormatTime(k.Clock.Now())
	for _, tt := range []struct {
		name   string
		by     *sql.DB
		query  string
		args   []any
		secret string
		want   func(auth.Actor, error) error
		// gone is true when the credential is no more: an unknown
		// secret is not cached, so every call reads.
		gone bool
	}{
		{"a key renamed by another process", other.Writer(),
			`UPDATE agent_keys SET name = 'renamed' WHERE id = ?`, []any{agent.KeyID}, key,
			actorIs(auth.Actor{KeyID: agent.KeyID, KeyName: "renamed"}), false},
		{"a role changed from a shell", shell,
			`UPDATE users SET role = 'admin' WHERE id = ?`, []any{lead.UserID}, leadToken,
			actorIs(auth.Actor{UserID: lead.UserID, Email: lead.Email, Role: auth.Admin}), false},
		{"a person disabled by another process", other.Writer(),
			`UPDATE users SET disabled_at = ? WHERE id = ?`, []any{at, lead.UserID}, leadToken,
			refusedWith("unauthorized"), false},
		{"a token revoked from a shell", shell,
			`UPDATE api_tokens SET revoked_at = ? WHERE user_id = ?`, []any{at, viewer.UserID}, viewerToken,
			refusedWith("credential_revoked"), false},
		{"a key's expiry brought forward by another process", other.Writer(),
			`UPDATE agent_keys SET expires_at = ? WHERE id = ?`, []any{at, agent.KeyID}, key,
			refusedWith("credential_expired"), false},
		{"a key deleted from a shell", shell,
			`DELETE FROM agent_keys WHERE id = ?`, []any{agent.KeyID}, key,
			refusedWith("unauthorized"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc.Authenticate(ctx, tt.secret) //nolint:errcheck // held in the cache, whatever it answers
			reads()
			if _, err := tt.by.ExecContext(ctx, testdb.Rebind(tt.query), tt.args...); err != nil {
				t.Fatal(err)
			}
			for i, what := range []string{"the next call", "the call after"} {
				if err := tt.want(svc.Authenticate(ctx, tt.secret)); err != nil {
					t.Errorf("%s: %v", what, err)
				}
				want := int64(1 - i)
				if tt.gone {
					want = 1
				}
				wantReads(t, reads, want, 1, what)
			}
		})
	}
	if _, err := svc.Authenticate(ctx, spare); err != nil {
		t.Errorf("a key nobody changed: %v", err)
	}
}

func actorIs(want auth.Actor) func(auth.Actor, error) error {
	return func(a auth.Actor, err error) error {
		if err != nil || a != want {
			return fmt.Errorf("authenticated as %+v, %v; want %+v", a, err, want)
		}
		return nil
	}
}

func refusedWith(code string) func(auth.Actor, error) error {
	return func(a auth.Actor, err error) error {
		if errs.KindOf(err) != errs.Unauthorized || errs.CodeOf(err) != code || a != (auth.Actor{}) {
			return fmt.Errorf("got %+v, %v; want refused with %s", a, err, code)
		}
		return nil
	}
}

// A cached credential is judged at each call: it expires at its expiry
// with nothing written, and without reading the database again.
func TestACachedCredentialExpiresAtItsExpiry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k, svc, _, reads := counted(t)
	key, err := k.Auth.IssueKey(ctx, testkit.Operator, auth.KeyRequest{Name: "short-lived", Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, key.Secret); err != nil {
		t.Fatal(err)
	}
	reads()
	k.Clock.Advance(time.Hour - time.Nanosecond)
	if _, err := svc.Authenticate(ctx, key.Secret); err != nil {
		t.Fatalf("a nanosecond before its expiry: %v", err)
	}
	k.Clock.Advance(time.Nanosecond)
	_, err = svc.Authenticate(ctx, key.Secret)
	wantErr(t, err, errs.Unauthorized, "credential_expired")
	wantReads(t, reads, 0, 2, "the calls either side of the expiry")
}

// The data version is taken before the read: a commit landing between
// the two is never held as current.
func TestACommitDuringTheReadIsNotCachedAsCurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k, svc, store, _ := counted(t)
	agent, key := k.Agent()
	revoke := func() {
		store.afterRead = nil
		k.Exec(`UPDATE agent_keys SET revoked_at = ? WHERE id = ?`, db.FormatTime(k.Clock.Now()), agent.KeyID)
	}
	store.afterRead = revoke
	if _, err := svc.Authenticate(ctx, key); err != nil {
		t.Fatalf("the call the revocation races: %v; want it to pass, as read", err)
	}
	_, err := svc.Authenticate(ctx, key)
	wantErr(t, err, errs.Unauthorized, "credential_revoked")
}

func TestTheCredentialCacheIsBounded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k, svc, _, reads := counted(t)
	svc.SetCacheBound(3)
	var agents []auth.Actor
	var keys []string
	for range 5 {
		a, key := k.Agent()
		agents, keys = append(agents, a), append(keys, key)
	}
	for round := range 2 {
		for i, key := range keys {
			a, err := svc.Authenticate(ctx, key)
			if err != nil || a != agents[i] {
				t.Fatalf("round %d, key %d: %+v, %v; want %+v", round, i, a, err, agents[i])
			}
			if n := svc.CachedCredentials(); n > 3 || n == 0 && !testdb.Postgres() {
				t.Fatalf("round %d, key %d: %d credentials cached, want 1 to 3", round, i, n)
			}
		}
	}
	reads()
	for range 10 {
		if _, err := svc.Authenticate(ctx, keys[4]); err != nil {
			t.Fatal(err)
		}
	}
	wantReads(t, reads, 0, 10, "a key just cached, again")
	before := svc.CachedCredentials()
	for i := range 10 {
		_, err := svc.Authenticate(ctx, fmt.Sprintf("mbk_unknown-%d", i))
		wantErr(t, err, errs.Unauthorized, "unauthorized")
	}
	if n := svc.CachedCredentials(); n != before {
		t.Errorf("unknown secrets changed the cache from %d to %d credentials: only credentials that exist are held", before, n)
	}
	if testdb.Postgres() && before != 0 {
		t.Errorf("PostgreSQL: %d credentials cached, want none", before)
	}
}

// noDataVersion is a store without a data version, as on PostgreSQL:
// every call reads.
type noDataVersion struct{ db.Transactor }

func (noDataVersion) DataVersion(context.Context) (uint64, bool, error) { return 0, false, nil }

// BenchmarkAuthenticate is a call answered from the cache against one
// that reads the credential.
func BenchmarkAuthenticate(b *testing.B) {
	k := testkit.New(b)
	_, key := k.Agent()
	for _, bb := range []struct {
		name string
		svc  *auth.Service
	}{
		{"cached", auth.NewService(k.Store, k.Clock.Now)},
		{"read", auth.NewService(noDataVersion{k.Store}, k.Clock.Now)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.svc.Authenticate(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
