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
// Every service holds the same unexported core: the store, the clock and
// the write path. The brief's cache stays exact by a rule every use case
// keeps: a write that changes a session's facts records an event on that
// session's timeline, and once the write ends the write path tells the
// cache to invalidate every session it recorded an event for (Commit).
package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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

	core *core
	opts Options
}

// Options configure the services; New takes them once. The zero value
// is the default of each.
type Options struct {
	// DeliveryLease is how long a delivery waits for the agent's
	// acknowledgement before a brief hands it over again (serve
	// --delivery-lease); zero is DefaultDeliveryLease.
	DeliveryLease time.Duration
	// MaxOpenGates is how many gates one session may hold open at once
	// (serve --max-open-gates); zero is DefaultMaxOpenGates.
	MaxOpenGates int
	// Logger is where the services log what an operator should see: a
	// slow policy (warn, with its cost), and admins' changes to the
	// policies; nil logs nothing.
	Logger *slog.Logger
	// PublicURL is the console's public address, which notifications'
	// deep links start with (serve --public-url).
	PublicURL string
	// WebhookDestinations is where webhook endpoints may point (serve
	// --webhook-allow opens ranges of the addresses closed by default):
	// what adding an endpoint checks its URL against, and the client a
	// test notification goes through. The sender takes the same
	// (notify.NewSender).
	WebhookDestinations notify.Destinations
}

// New returns the governance services over store, configured by opts.
// now is the clock (tests pass a fixed one).
func New(store db.Transactor, now func() time.Time, opts Options) *Services {
	if opts.DeliveryLease == 0 {
		opts.DeliveryLease = DefaultDeliveryLease
	}
	if opts.MaxOpenGates == 0 {
		opts.MaxOpenGates = DefaultMaxOpenGates
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &core{store: store, now: func() time.Time { return now().UTC() }, notes: notify.NewNotifier(opts.PublicURL)}
	briefs := newBriefService(c, opts.DeliveryLease)
	c.OnCommit(func(cm Commit) { briefs.views.invalidate(cm.Sessions) })
	store.OnChange(briefs.views.onNotice)
	costs := &policyCosts{}
	plans := &PlanService{core: c}
	hooks := webhookClient{to: opts.WebhookDestinations, client: opts.WebhookDestinations.Client()}
	return &Services{Missions: &MissionService{core: c}, Sessions: &SessionService{core: c, briefs: briefs},
		Decisions: &DecisionService{core: c, maxOpenGates: opts.MaxOpenGates}, Plans: plans,
		Lifecycle: &LifecycleService{core: c, plans: plans}, Remediations: &RemediationService{core: c},
		Changes: newChangeService(c, opts.Logger, costs), Evidence: &EvidenceService{core: c},
		Policies: &PolicyService{core: c, log: opts.Logger, costs: costs}, Attention: &AttentionService{core: c},
		Briefs: briefs, Permissions: &PermissionService{core: c}, Webhooks: &WebhookService{core: c, hooks: hooks},
		Activity: &ActivityService{core: c}, Notify: c.notes, ScopeBreaches: &ScopeBreachService{core: c},
		core: c, opts: opts}
}

// DefaultMaxOpenGates is how many open gates one session may hold by
// default: far more than an agent that waits for answers opens, and a
// stop for one that opens gates in a loop.
const DefaultMaxOpenGates = 100

// Options returns the options the services run with, defaults filled in.
func (s *Services) Options() Options { return s.opts }

// OnCommit has fn told what each write transaction recorded, once it
// ends (metrics count deliveries by the events' kinds). fn runs on the
// writer's goroutine: it must be quick and must not call back into the
// services.
func (s *Services) OnCommit(fn func(Commit)) { s.core.OnCommit(fn) }

// Now is the services' clock, for views that say how long ago things were.
func (s *Services) Now() time.Time { return s.core.now() }

// core is what every service holds: the store, the clock and the write
// path, which writes a transaction's notifications to the outbox inside
// it and tells the commit listeners what it recorded once it ends.
type core struct {
	store db.Transactor
	now   func() time.Time
	// notes writes the notifications a write's events cause.
	notes *notify.Notifier
	// listeners are told each write's Commit; copied on change, so that
	// a write reads them without a lock.
	listeners atomic.Pointer[[]func(Commit)]
	listenMu  sync.Mutex
}

// A Commit is what one write transaction recorded on sessions'
// timelines, as the write path tells it to its listeners once the
// transaction ends.
type Commit struct {
	// Sessions are the sessions whose timeline the transaction wrote to,
	// told whether or not it committed: a cache invalidates them either
	// way, as a failed commit's outcome is not known for sure.
	Sessions []string
	// Kinds are the kinds of the events it recorded, in order; empty
	// unless it committed.
	Kinds []string
	// Committed reports whether the transaction committed.
	Committed bool
}

// OnCommit adds fn to the listeners every write tells its Commit.
func (c *core) OnCommit(fn func(Commit)) {
	c.listenMu.Lock()
	defer c.listenMu.Unlock()
	var list []func(Commit)
	if old := c.listeners.Load(); old != nil {
		list = slices.Clone(*old)
	}
	list = append(list, fn)
	c.listeners.Store(&list)
}

// Transactor is the store with its writes through the write path: a
// service outside this package that records events on sessions'
// timelines (the ledger) writes through it, so that its commits
// invalidate the read model and its events reach the outbox as these
// services' do.
func (s *Services) Transactor() db.Transactor { return writePath{Transactor: s.core.store, c: s.core} }

// writePath is a store whose Write is core.write.
type writePath struct {
	db.Transactor
	c *core
}

func (w writePath) Write(ctx context.Context, fn func(db.Querier) error) error {
	return w.c.write(ctx, fn)
}

// write runs fn in one write transaction and then tells the listeners
// what it recorded (Commit): the read model invalidates the sessions it
// wrote to. Before the transaction commits, the notifications its events
// cause are written to the webhook outbox in it: a cause and its
// notifications land together or not at all.
func (c *core) write(ctx context.Context, fn func(db.Querier) error) error {
	t := &eventTracker{Querier: nil}
	err := c.store.Write(ctx, func(q db.Querier) error {
		t.Querier = q
		if err := fn(t); err != nil {
			return err
		}
		return c.notes.Enqueue(ctx, q, t.events)
	})
	cm := Commit{Sessions: t.sessions, Committed: err == nil}
	if cm.Committed && len(t.events) > 0 {
		cm.Kinds = make([]string, len(t.events))
		for i, e := range t.events {
			cm.Kinds[i] = e.Kind
		}
	}
	if list := c.listeners.Load(); list != nil {
		for _, fn := range *list {
			fn(cm)
		}
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
