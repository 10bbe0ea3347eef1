// Package governance holds Madebook's use cases for governing coding
// agents' sessions, one service per entity: missions; sessions and their
// pause brake; decision gates; plans; remediation requests; change reports
// and what they trip (policy violations, rule deviations, contract
// breaches, collisions between sessions); evidence; policies, architecture
// rules and risk gates; the attention queue of what people must act on;
// and the brief that tells an agent what to do next. New builds them all
// once over one store. Each use case is one transaction; rows become
// domain types at this boundary.
//
// The services share one unexported core: the store, the clock, and the
// cache of what each session's brief is built from. The cache stays exact
// by a rule every use case keeps: a write that changes a session's facts
// records an event on that session's timeline, and once the write commits
// the cached inputs of every session it recorded an event for are
// forgotten.
package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
)

// MaxNote is the most characters of the note a person leaves on what they
// decide: approving or rejecting a plan, closing a remediation, clearing a
// violation.
const MaxNote = input.Text

// validNote trims a person's note and refuses it over MaxNote characters.
// Errors: note_too_long.
func validNote(note string) (string, error) {
	return input.Optional("note", note, MaxNote)
}

// Services is every governance use case, built once over one store.
type Services struct {
	Missions     *MissionService     // Create, List, ListSummaries, Get, Update, Patch
	Sessions     *SessionService     // Create, Get, List, Pause, Resume
	Decisions    *DecisionService    // Open, Resolve, ResolveMany, ExpireDue
	Plans        *PlanService        // Propose, Approve, Modify, Reject
	Remediations *RemediationService // Request, Close
	Changes      *ChangeService      // Report, ClearViolation
	Evidence     *EvidenceService    // Report, Complete
	Policies     *PolicyService      // policies, architecture rules, risk gates
	Attention    *AttentionService   // List, Count
	Briefs       *BriefService       // Brief, FlushTimes, RunTimes
	Lifecycle    *LifecycleService   // Report
	Permissions  *PermissionService  // Answer
	Webhooks     *WebhookService     // Create, List, Remove
	Activity     *ActivityService    // List: what admins did
	// Notify writes the notifications every write's timeline events cause
	// to the webhook outbox, in the write's transaction; the ledger shares
	// it.
	Notify *notify.Notifier

	// ScopeBreaches records the breaches of a blocked scope that hooks
	// report: Report. Each is a critical violation, cleared as any
	// (Changes.ClearViolation).
	ScopeBreaches *ScopeBreachService

	now func() time.Time
}

// New returns the governance services over store, sharing one core. now
// is the clock (tests pass a fixed one).
func New(store db.Transactor, now func() time.Time) *Services {
	c := &core{store: store, now: func() time.Time { return now().UTC() }, touches: touches{pending: map[string]*time.Time{}},
		cache: newStateCache(), lease: DefaultDeliveryLease, maxOpenGates: DefaultMaxOpenGates, notes: notify.NewNotifier(""),
		log: slog.New(slog.DiscardHandler), costs: &policyCosts{}}
	c.hooks.Store(&webhookClient{client: notify.Destinations{}.Client()})
	store.OnChange(c.cache.heard)
	plans := &PlanService{c}
	return &Services{Missions: &MissionService{c}, Sessions: &SessionService{c}, Decisions: &DecisionService{c},
		Plans: plans, Lifecycle: &LifecycleService{core: c, plans: plans}, Remediations: &RemediationService{c}, Changes: newChangeService(c),
		Evidence: &EvidenceService{c}, Policies: &PolicyService{c}, Attention: &AttentionService{c},
		Briefs: &BriefService{c}, Permissions: &PermissionService{c}, Webhooks: &WebhookService{c}, Activity: &ActivityService{c}, Notify: c.notes,
		ScopeBreaches: &ScopeBreachService{c}, now: c.now}
}

// DefaultMaxOpenGates is how many open gates one session may hold by
// default: far more than an agent that waits for answers opens, and a
// stop for one that opens gates in a loop.
const DefaultMaxOpenGates = 100

// SetMaxOpenGates sets how many gates one session may hold open at once
// (serve --max-open-gates); n must be at least 1.
func (s *Services) SetMaxOpenGates(n int) { s.Briefs.maxOpenGates = n }

// SetDeliveryLease sets how long a delivery waits for the agent's
// acknowledgement before a brief hands it over again (serve
// --delivery-lease). Call it before serving; d must be positive.
func (s *Services) SetDeliveryLease(d time.Duration) { s.Briefs.lease = d }

// Observe has fn told, after each write commits, the kinds of the
// timeline events it recorded (metrics count deliveries by them). fn runs
// on the writer's goroutine: it must be quick and must not call back into
// the services.
func (s *Services) Observe(fn func(kinds []string)) { s.Briefs.observer.Store(&fn) }

// SetLogger sets where the services log what an operator should see: a
// slow policy (warn, with its cost), and admins' changes to the policies.
// Call it before serving; without it they log nothing.
func (s *Services) SetLogger(l *slog.Logger) { s.Changes.log = l }

// DeliveryLease is how long a delivery waits for its acknowledgement.
func (s *Services) DeliveryLease() time.Duration { return s.Briefs.lease }

// SetPublicURL sets the console's public address, which notifications'
// deep links start with (serve --public-url). Call it before serving.
func (s *Services) SetPublicURL(u string) { s.Notify.SetPublicURL(u) }

// SetWebhookDestinations sets where webhook endpoints may point (serve
// --webhook-allow opens ranges of the addresses closed by default): what
// adding an endpoint checks its URL against, and the client a test
// notification goes through. The sender takes the same (notify.NewSender).
func (s *Services) SetWebhookDestinations(to notify.Destinations) {
	s.Webhooks.hooks.Store(&webhookClient{to: to, client: to.Client()})
}

// Now is the services' clock, for views that say how long ago things were.
func (s *Services) Now() time.Time { return s.now() }

// core is what the services share. Each service embeds it, so a use case
// reads s.store, s.now, s.write and s.event whichever service runs it.
type core struct {
	store db.Transactor
	now   func() time.Time
	// touches are the brief times not yet written: briefs record them,
	// sessions show them.
	touches touches
	// cache holds what each session's brief is built from; write keeps it
	// exact.
	cache *stateCache
	// lease is how long a delivery waits for its acknowledgement before a
	// brief hands it over again.
	lease time.Duration
	// maxOpenGates is how many gates one session may hold open at once.
	maxOpenGates int
	// observer is told the kinds of the events each write committed (for
	// metrics); nil tells nobody.
	observer atomic.Pointer[func(kinds []string)]
	// notes writes the notifications a write's events cause.
	notes *notify.Notifier
	// log is the server's log (SetLogger).
	log *slog.Logger
	// costs is what each policy cost over the changes evaluated.
	costs *policyCosts
	// hooks is where webhook endpoints may point, and the client test
	// notifications go through (SetWebhookDestinations).
	hooks atomic.Pointer[webhookClient]
	// ridersList is what reads with each session's inputs (AddRider).
	ridersMu   sync.Mutex
	ridersList []Rider
}

// write runs fn in one write transaction and then forgets the cached state
// of every session the transaction recorded an event for. Before the
// transaction commits, the notifications its events cause are written to
// the webhook outbox in it: a cause and its notifications land together
// or not at all.
func (c *core) write(ctx context.Context, fn func(db.Querier) error) error {
	t := &eventTracker{Querier: nil}
	err := c.store.Write(ctx, func(q db.Querier) error {
		t.Querier = q
		if err := fn(t); err != nil {
			return err
		}
		return c.notes.Enqueue(ctx, q, t.events)
	})
	c.cache.forget(t.sessions)
	if observe := c.observer.Load(); err == nil && observe != nil && len(t.events) > 0 {
		kinds := make([]string, len(t.events))
		for i, e := range t.events {
			kinds[i] = e.Kind
		}
		(*observe)(kinds)
	}
	return err
}

// eventTracker notes the sessions whose timeline a transaction writes to,
// and the events, for the notifications they cause.
type eventTracker struct {
	db.Querier
	sessions []string
	events   []notify.Event
}

// InsertEvent records the event (db.AppendEvent calls it with the row
// chained) and notes it and its session.
func (t *eventTracker) InsertEvent(ctx context.Context, arg db.InsertEventParams) error {
	t.sessions = append(t.sessions, arg.SessionID)
	t.events = append(t.events, notify.Event{Session: arg.SessionID, At: arg.At, Actor: arg.Actor, Kind: arg.Kind,
		Ref: arg.Ref, Detail: arg.Detail})
	return t.Querier.InsertEvent(ctx, arg)
}

// sessionFor loads a session and checks that the actor may see it: any
// person, or the agent whose key opened it. Errors: session_not_found,
// forbidden.
func sessionFor(ctx context.Context, q db.Querier, actor auth.Actor, id string) (db.GetSessionRow, error) {
	s, err := q.GetSession(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return s, errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", id)
	} else if err != nil {
		return s, fmt.Errorf("load session %s: %w", id, err)
	}
	return s, checkOwner(actor, s.AgentKeyID)
}

// checkOwner lets any person through, and an agent only to its own sessions.
func checkOwner(actor auth.Actor, keyID int64) error {
	if actor.IsPerson() || (actor.IsAgent() && actor.KeyID == keyID) {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
}

// ownSession loads a session for a call only its own agent may make.
func ownSession(ctx context.Context, q db.Querier, actor auth.Actor, id, what string) (db.GetSessionRow, error) {
	if err := actor.RequireAgent(what); err != nil {
		return db.GetSessionRow{}, err
	}
	return sessionFor(ctx, q, actor, id)
}

// event records one line of a session's timeline; a person's (a lead's
// answer, a pause, …) goes in the activity record too.
func (c *core) event(ctx context.Context, q db.Querier, session string, actor auth.Actor, at time.Time, kind, ref, detail string) error {
	if err := c.told(ctx, q, session, actor, at, kind, ref, detail); err != nil {
		return err
	}
	if actor.IsPerson() {
		return activity.Answered(ctx, q, at, actor.Who(), session, kind, ref, detail)
	}
	return nil
}

// told records one line of a session's timeline only: what the session
// hears of an action recorded once elsewhere (a mission's change, on each
// of its sessions).
func (c *core) told(ctx context.Context, q db.Querier, session string, actor auth.Actor, at time.Time, kind, ref, detail string) error {
	if err := db.AppendEvent(ctx, q, db.NewEvent{SessionID: session, At: db.FormatTime(at), Actor: actor.Label(),
		Kind: kind, Ref: ref, Detail: detail}); err != nil {
		return fmt.Errorf("record %s: %w", kind, err)
	}
	return nil
}

// did records an admin action in q, the write's transaction, so that the
// change and its record commit together (package activity).
func (c *core) did(ctx context.Context, q db.Querier, actor auth.Actor, action, target string, before, after activity.State) error {
	return activity.Record(ctx, q, c.now(), actor.Who(), action, target, before, after)
}

// encodeList stores a list as a JSON array; db.Stored.List reads it.
func encodeList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		// Not stored data: a []string always marshals, so this is a
		// broken invariant of encoding/json, not a corrupt row.
		panic(err)
	}
	return string(b)
}

// countOf is n and its noun, singular for one: "1 file", "2 files".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
