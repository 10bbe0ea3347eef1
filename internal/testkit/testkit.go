// Package testkit builds a real Madebook for tests: a temporary SQLite file
// (or, with MADEBOOK_TEST_DB set to a postgres:// URL, a temporary
// PostgreSQL database: see package testdb) with the real migrations, the
// real services, and helpers that create the people, keys, missions and
// sessions a test needs.
package testkit

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/testdb"
)

// Kit is a migrated temporary database and the services on it.
type Kit struct {
	TB testing.TB
	// Path is the database: a SQLite file, or a PostgreSQL URL.
	Path  string
	Store *db.Store
	Auth  *auth.Service
	// Gov is every governance service.
	Gov *governance.Services
	// Ledger is the run ledger.
	Ledger *ledger.Service
	// Audit runs the audit reports.
	Audit *audit.Service
	Clock *Clock

	n atomic.Int64

	fpOnce   sync.Once
	fpTables []fingerprintTable
}

// MustOpenDB opens a fresh, migrated database (testdb.DSN: a file in a
// temporary directory, or a new PostgreSQL database), closed when the test
// ends, and returns it and where it is.
func MustOpenDB(tb testing.TB) (*db.Store, string) {
	tb.Helper()
	path := testdb.DSN(tb)
	store, err := db.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	if _, err := store.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return store, path
}

// New returns a kit on a fresh database, with a clock that starts at
// 2026-11-29T12:00:00Z and moves only when the test moves it, and the
// governance services configured by opts (serve's flags, in a test).
func New(tb testing.TB, opts ...Option) *Kit {
	tb.Helper()
	store, path := MustOpenDB(tb)
	clock := &Clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	k := &Kit{TB: tb, Path: path, Store: store, Auth: auth.NewService(store, clock.Now).WithPasswordCost(bcrypt.MinCost),
		Audit: audit.NewService(store, clock.Now, 0), Clock: clock}
	var o governance.Options
	for _, set := range opts {
		set(&o)
	}
	k.build(o)
	// As on a fresh database: the "Secrets in source" policy set.
	if err := k.Gov.Policies.InstallDefaults(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return k
}

// An Option changes the governance services' options before New builds
// them.
type Option func(*governance.Options)

// build builds the governance services and the ledger over the kit's
// store with o.
func (k *Kit) build(o governance.Options) {
	k.Gov = governance.New(k.Store, k.Clock.Now, o)
	k.Ledger = ledger.NewService(k.Gov.Transactor(), k.Clock.Now, k.Gov.Briefs)
}

// Configure builds the kit's governance services and ledger again, with
// their options changed by set: a test that changes a setting halfway.
// Whatever holds the old services (a server built over the kit) keeps
// them; such a test passes the Option to New instead.
func (k *Kit) Configure(set Option) {
	o := k.Gov.Options()
	set(&o)
	k.build(o)
}

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (k *Kit) next() int64 { return k.n.Add(1) }

// Person adds a user with the role and returns the actor and a personal
// API token for it. The password is "password-123".
func (k *Kit) Person(role auth.Role) (auth.Actor, string) {
	k.TB.Helper()
	email := fmt.Sprintf("%s%d@example.com", role, k.next())
	ctx := context.Background()
	u, err := k.Auth.AddUser(ctx, Operator, email, "password-123", role)
	if err != nil {
		k.TB.Fatal(err)
	}
	token, err := k.Auth.CreateToken(ctx, Operator, email)
	if err != nil {
		k.TB.Fatal(err)
	}
	return auth.Actor{UserID: u.ID, Email: u.Email, Role: u.Role}, token
}

// Lead adds a lead.
func (k *Kit) Lead() (auth.Actor, string) { return k.Person(auth.Lead) }

// Agent creates an agent key and returns its actor and secret.
func (k *Kit) Agent() (auth.Actor, string) {
	k.TB.Helper()
	return k.AgentBy(Operator)
}

// Operator is the local command line as the kit's helpers act: they add
// people and keys as `madebook user add` and `key create` do, which the
// admin activity records as "cli:testkit".
var Operator = auth.CommandLine("testkit")

// AgentBy creates an agent key as creator (an admin, who then never
// approves its work, or Operator) and returns its actor and secret.
func (k *Kit) AgentBy(creator auth.Actor) (auth.Actor, string) {
	k.TB.Helper()
	key, err := k.Auth.CreateKey(context.Background(), creator, fmt.Sprintf("agent-%d", k.next()))
	if err != nil {
		k.TB.Fatal(err)
	}
	a, err := k.Auth.Authenticate(context.Background(), key)
	if err != nil {
		k.TB.Fatal(err)
	}
	return a, key
}

// Mission creates a mission as lead and returns its slug.
func (k *Kit) Mission(lead auth.Actor, highRisk bool) string {
	k.TB.Helper()
	slug := fmt.Sprintf("mission-%d", k.next())
	if _, err := k.Gov.Missions.Create(context.Background(), lead, governance.MissionInput{Slug: slug,
		Title: "Mission " + slug, Text: "Do the thing.", HighRisk: highRisk}); err != nil {
		k.TB.Fatal(err)
	}
	return slug
}

// Session opens a session on the mission as agent and returns its id.
func (k *Kit) Session(agent auth.Actor, mission string) string {
	k.TB.Helper()
	s, err := k.Gov.Sessions.Create(context.Background(), agent, governance.SessionInput{Mission: mission, Title: "work"})
	if err != nil {
		k.TB.Fatal(err)
	}
	return s.ID
}

// LoopbackWebhooks is where webhooks may point in a test whose receiver
// is an httptest server: the default rule with 127.0.0.1 opened, as serve
// --webhook-allow 127.0.0.1/32 opens it.
var LoopbackWebhooks = notify.Destinations{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// WithLoopbackWebhooks is the Option that opens 127.0.0.1 to the kit's
// webhook endpoints (LoopbackWebhooks): adding one there, and test
// notifications. A sender the test makes needs it too:
// notify.NewSender(…, LoopbackWebhooks).
func WithLoopbackWebhooks(o *governance.Options) { o.WebhookDestinations = LoopbackWebhooks }

// AllowLoopbackWebhooks builds the kit's services again with
// WithLoopbackWebhooks (Configure).
func (k *Kit) AllowLoopbackWebhooks() { k.Configure(WithLoopbackWebhooks) }

// Postgres reports whether the tests run on PostgreSQL (MADEBOOK_TEST_DB).
func Postgres() bool { return testdb.Postgres() }

// SkipOnPostgres skips a test that is about SQLite only, saying why.
func SkipOnPostgres(tb testing.TB, why string) {
	tb.Helper()
	testdb.SkipOnPostgres(tb, why)
}

// Exec runs one raw SQL statement on the writer, written with ?
// placeholders on either engine (testdb.Rebind), and fails the test if it
// fails.
func (k *Kit) Exec(query string, args ...any) sql.Result {
	k.TB.Helper()
	res, err := k.Store.Writer().ExecContext(context.Background(), testdb.Rebind(query), args...)
	if err != nil {
		k.TB.Fatalf("%s: %v", query, err)
	}
	return res
}

// DropAppendOnly removes the triggers that keep table (events or
// admin_activity) append-only, as someone with the database's owner
// rights can, so that a test may then change a row with Corrupt: what the
// hash chain, not the schema, must then catch.
func (k *Kit) DropAppendOnly(table string) {
	k.TB.Helper()
	stmts := []string{"DROP TRIGGER " + table + "_append_only_update", "DROP TRIGGER " + table + "_append_only_delete"}
	if testdb.Postgres() {
		stmts = []string{"DROP TRIGGER " + table + "_append_only ON " + table}
	}
	for _, q := range stmts {
		k.Exec(q)
	}
}

// Corrupt runs one raw SQL statement on the writer, bypassing the
// services, to store what Madebook never writes (a malformed time, a list
// that is not JSON), and fails unless it changed a row. The services'
// cache of brief inputs does not hear of it: take no brief of the session
// before, or move the clock past the cache's minute.
func (k *Kit) Corrupt(query string, args ...any) {
	k.TB.Helper()
	res, err := k.Store.Writer().ExecContext(context.Background(), testdb.Rebind(query), args...)
	if err != nil {
		k.TB.Fatalf("corrupt: %s: %v", query, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		k.TB.Fatalf("corrupt: %s changed no row (%v)", query, err)
	}
}

// CorruptRow is one case of a corrupt-row test on a world W (a kit and
// what the test made on it): Corrupt makes a valid row through the
// services, stores what Madebook never writes in it with Kit.Corrupt, and
// returns what the error must say and the call that reads the row.
type CorruptRow[W any] struct {
	Name    string
	Corrupt func(t *testing.T, w W) (want string, read func() error)
}

// CorruptRows runs each case on a fresh world. Each read must return,
// without panicking, a server fault (errs kind Internal) whose text
// contains what the case wants: the table, the row and what is wrong.
func CorruptRows[W any](t *testing.T, world func(*testing.T) W, cases []CorruptRow[W]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want, read := c.Corrupt(t, world(t))
			wantCorruptRow(t, want, read)
		})
	}
}

func wantCorruptRow(tb testing.TB, want string, read func() error) {
	tb.Helper()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				tb.Fatalf("read of a corrupt row panicked: %v", p)
			}
		}()
		err = read()
	}()
	switch {
	case err == nil:
		tb.Fatalf("read a corrupt row without an error; want one naming %q", want)
	case errs.KindOf(err) != errs.Internal:
		tb.Fatalf("error %q is a %s error, want a server fault", err, errs.CodeOf(err))
	case !strings.Contains(err.Error(), want):
		tb.Fatalf("error %q does not name %q", err, want)
	}
	tb.Logf("corrupt row: %v", err)
}
