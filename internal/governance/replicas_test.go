package governance_test

import (
	"context"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// replica is a second Madebook process on the kit's database: its own
// store, services and caches, listening for the others' changes.
type replica struct {
	store  *db.Store
	gov    *governance.Services
	auth   *auth.Service
	ledger *ledger.Service
}

// listening runs store.Listen until the test ends and returns once it
// listens (its first notice, forget everything, arrived).
func listening(t *testing.T, store *db.Store) {
	t.Helper()
	heard := make(chan struct{}, 1)
	store.OnChange(func(n db.Notice) {
		if n.Topic == "" {
			select {
			case heard <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		store.Listen(ctx, func(err error) { t.Logf("listen: %v", err) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("the store never listened")
	}
}

func newReplica(t *testing.T, k *testkit.Kit) replica {
	t.Helper()
	store, err := db.Open(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	gov := governance.New(store, k.Clock.Now, governance.Options{})
	r := replica{store: store, gov: gov, auth: auth.NewService(store, k.Clock.Now),
		ledger: ledger.NewService(gov.Transactor(), k.Clock.Now, gov.Briefs)}
	listening(t, store)
	return r
}

// eventually polls cond every 20ms for up to 5s: a replica hears another's
// commit within milliseconds; the caches' own expiry is a minute, so
// passing here is the notification's doing.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two replicas on one PostgreSQL database: what one writes, the other's
// caches forget at once — a session's brief inputs, the tool registry —
// a revoked key is refused on the next call, and a resolution is
// delivered once between them.
func TestReplicasHearEachOthersWrites(t *testing.T) {
	if !testkit.Postgres() {
		t.Skip("replicas share a PostgreSQL database (MADEBOOK_TEST_DB=postgres://…); on SQLite one process serves the file")
	}
	k := testkit.New(t)
	listening(t, k.Store)
	b := newReplica(t, k)
	ctx := t.Context()
	lead, _ := k.Lead()
	admin, _ := k.Person(auth.Admin)
	agent, key := k.Agent()
	session := k.Session(agent, k.Mission(lead, false))

	t.Run("a resolution made on one replica is delivered once by the other", func(t *testing.T) {
		d := must(k.Gov.Decisions.Open(ctx, agent, session, gate("Drop the table?")))(t)
		// B remembers the open gate.
		if br := must(b.gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: session}))(t); br.NextAction.String() != "DECISION_REQUIRED" {
			t.Fatalf("B's brief: %s", br.NextAction)
		}
		must(k.Gov.Decisions.Resolve(ctx, lead, d.Ref, "Keep it.", "Archive instead."))(t)
		delivered := 0
		eventually(t, "B's brief never delivered the resolution made on A", func() bool {
			br := must(b.gov.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: session}))(t)
			delivered += len(br.Resolutions)
			return delivered > 0
		})
		for _, svc := range []*governance.Services{k.Gov, b.gov, k.Gov} {
			br := must(svc.Briefs.Brief(ctx, agent, governance.BriefRequest{Session: session}))(t)
			delivered += len(br.Resolutions)
		}
		if delivered != 1 {
			t.Fatalf("delivered %d times between the replicas, want once", delivered)
		}
	})

	t.Run("a key revoked on one replica is refused by the other on its very next call", func(t *testing.T) {
		other, secret := k.Agent()
		if _, err := b.auth.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		must(k.Auth.RevokeKey(ctx, admin, other.KeyID))(t)
		// No waiting for the notification: nothing remembers a credential.
		if _, err := b.auth.Authenticate(ctx, secret); errs.CodeOf(err) != "credential_revoked" {
			t.Fatalf("B's next call with the key revoked on A: %v, want credential_revoked", err)
		}
		if _, err := b.auth.Authenticate(ctx, key); err != nil {
			t.Fatalf("B refuses a key nobody revoked: %v", err)
		}
	})

	t.Run("a tool classified on one replica is classified so by the other's check", func(t *testing.T) {
		in := ledger.CheckInput{Tool: "mcp__notes__lookup"}
		if c := must(b.ledger.Check(ctx, agent, session, in))(t); !c.SideEffecting {
			t.Fatalf("an unknown tool is side-effecting: %+v", c) // B remembers the registry's silence
		}
		must(k.Ledger.SetTool(ctx, admin, "notes", "lookup", ledger.ToolInput{SideEffecting: false}))(t)
		eventually(t, "B's check still takes the tool classified read-only on A as side-effecting", func() bool {
			return !must(b.ledger.Check(ctx, agent, session, in))(t).SideEffecting
		})
	})

	t.Run("a run parked on one replica is refused by the other's check", func(t *testing.T) {
		run := must(k.Ledger.StartRun(ctx, agent, session, "replicated", ""))(t)
		in := ledger.CheckInput{Tool: "mcp__fs__write", Run: run.ID}
		if c := must(b.ledger.Check(ctx, agent, session, in))(t); !c.Allow {
			t.Fatalf("B refuses a call on a running run: %+v", c) // B remembers the run
		}
		must(k.Ledger.RecordAsk(ctx, agent, run.ID, ledger.AskInput{Prompt: "Go on?", Options: map[string]string{"1": "Yes"}}))(t)
		eventually(t, "B's check still lets a call run on the run parked on A", func() bool {
			return must(b.ledger.Check(ctx, agent, session, in))(t).Code == "run_parked"
		})
	})
}
