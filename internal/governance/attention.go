package governance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/protocol"
)

// The kinds of Attention item.
const (
	ItemDecision = "decision" // an open gate: DECISION_REQUIRED
	ItemPlan     = "plan"     // a plan waiting on a high-risk mission: BLOCKED
	ItemPaused   = "paused"   // a session a person paused: BLOCKED
	ItemAsk      = "ask"      // a run parked on a question: a person picks an option
	// ItemViolation is an open critical violation: HARD_STOP until a
	// person clears it. Its ref is the violation's id.
	ItemViolation = "violation"
	// ItemRemediation is an open required remediation: REMEDIATE until it
	// is closed. Its ref is the remediation's id.
	ItemRemediation = "remediation"
	// ItemPermission is a permission prompt waiting on a person: a person
	// picks an option. Its ref is the prompt's id.
	ItemPermission = "permission"
	// ItemTask is a task its agent reported blocked, until the task
	// progresses, completes or fails. Its ref is the agent's task id.
	ItemTask = "task"
)

// AttentionKinds are the kinds of item, in the order the console shows
// their counts: most severe first.
var AttentionKinds = []string{ItemViolation, ItemPaused, ItemPlan, ItemDecision, ItemAsk, ItemPermission, ItemRemediation, ItemTask}

// AttentionService lists what people must act on: all of it (List, for
// the JSON API), a page of it under filters (Page, for the console), one
// item (Get), and how many of each kind (Counts, Count).
type AttentionService struct{ core *core }

// AskOption is one numbered answer to a parked run's question.
type AskOption struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// AttentionItem is one thing a person must act on.
type AttentionItem struct {
	Kind  string         `json:"kind"`
	State protocol.State `json:"state"`
	// Ref is the gate's reference for a decision; the id of the ask,
	// violation, remediation or permission prompt; the agent's task id for
	// a blocked task; the session's id otherwise.
	Ref          string    `json:"ref"`
	Session      string    `json:"session"`
	SessionTitle string    `json:"session_title"`
	Agent        string    `json:"agent"`
	Mission      string    `json:"mission"`
	MissionTitle string    `json:"mission_title"`
	Title        string    `json:"title"`
	Question     string    `json:"question,omitempty"`
	Proposal     string    `json:"proposal,omitempty"`
	Detail       string    `json:"detail,omitempty"`
	BlockedScope []string  `json:"blocked_scope"`
	AllowedScope []string  `json:"allowed_scope"`
	OpenedAt     time.Time `json:"opened_at"`
	// Plan is the plan waiting for approval, for plan items.
	Plan *plan.Plan `json:"plan,omitempty"`
	// By is who paused the session, for paused items.
	By string `json:"by,omitempty"`
	// Run and Options are the parked run and the answers to its question,
	// for ask items; Options are a permission prompt's too.
	Run     string      `json:"run,omitempty"`
	Options []AskOption `json:"options,omitempty"`
	// Files are the files a violation was found in, a remediation or a
	// permission prompt names.
	Files []string `json:"files,omitempty"`
	// Severity is a violation's (critical) or a remediation's (required),
	// for violation and remediation items.
	Severity string `json:"severity,omitempty"`
	// Approvals are those waiting for a second, different lead on a
	// two-person mission ("1 of 2"), for decision, plan and violation
	// items.
	Approvals []Approval `json:"approvals,omitempty"`
	// VoidApprovals are approvals that stand but no longer count: their
	// people can no longer approve (each says why).
	VoidApprovals []Approval `json:"void_approvals,omitempty"`
	// Expired says a gate is open past its mission's gate_ttl (by the
	// clock when the queue was read): it comes first in the queue, before
	// everything else, still blocking and still to be resolved. Expired is
	// not rejected. ExpiredAt is when it expired.
	Expired   bool       `json:"expired,omitempty"`
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
	// ClaimedBy is the person on it ("I'm on it", Claim), as the console
	// names people (their email), and ClaimedAt since when; "" and nil
	// when no one claimed the item now waiting.
	ClaimedBy string     `json:"claimed_by,omitempty"`
	ClaimedAt *time.Time `json:"claimed_at,omitempty"`
	// Snoozes are the people who snoozed the item now waiting and until
	// when (Snooze), soonest first; the item is hidden from their own
	// queue until then, and still blocks the agent.
	Snoozes []Snoozed `json:"snoozes"`
	// AcknowledgedBy and AcknowledgedAt say a lead has seen a blocked task
	// (Acknowledge); the item stays until the task moves.
	AcknowledgedBy string     `json:"acknowledged_by,omitempty"`
	AcknowledgedAt *time.Time `json:"acknowledged_at,omitempty"`

	// gateTTL and stamped are what says whether a gate is expired: its
	// mission's gate_ttl and the sweep's stamp.
	gateTTL GateTTL
	stamped time.Time
	// claimer is the user id of ClaimedBy (0: no one), snoozers the user
	// ids of Snoozes: what the filter's claimed=me and snoozed read.
	claimer  int64
	snoozers []int64
}

// Snoozed is one person's snooze of an item: who, and until when.
type Snoozed struct {
	By    string    `json:"by"`
	Until time.Time `json:"until"`
}

// settle decides whether a gate item is expired at now
// (protocol.GateExpiry's rule).
func (it *AttentionItem) settle(now time.Time) {
	if it.Kind != ItemDecision {
		return
	}
	at, expired := protocol.GateExpiry(it.OpenedAt, time.Duration(it.gateTTL), it.stamped, now)
	it.Expired, it.ExpiredAt = expired, nil
	if expired {
		it.ExpiredAt = &at
	}
}

// AttentionFilter narrows the queue. An empty field matches everything.
type AttentionFilter struct {
	Kind    string // one of AttentionKinds
	Mission string // the mission's slug
	Agent   string // the agent's name
	Session string // the session's id
	// State keeps the items of one protocol state, by its wire name
	// ("DECISION_REQUIRED"; protocol.States).
	State string
	// Claimed keeps the items someone claimed (ClaimedYes), no one did
	// (ClaimedNo), or the viewer did (ClaimedMe).
	Claimed string
	// Snoozed says what becomes of the items the viewer snoozed: hidden
	// ("", the default), shown with the rest (SnoozedInclude), or the only
	// ones shown (SnoozedOnly). Other people's snoozes hide nothing.
	Snoozed string
	// Viewer is the person reading: whose snoozes hide items and who "me"
	// is. The zero Actor is no one: nothing is hidden and claimed=me
	// matches nothing.
	Viewer auth.Actor
}

// The values of AttentionFilter.Claimed and AttentionFilter.Snoozed.
const (
	ClaimedYes     = "yes"
	ClaimedNo      = "no"
	ClaimedMe      = "me"
	SnoozedInclude = "include"
	SnoozedOnly    = "only"
)

// maxFilter is the longest value a filter takes: longer matches nothing
// that exists, so it is refused instead.
const maxFilter = 200

// Validate refuses a kind or a state that does not exist, a claimed or
// snoozed that is none of their values, and a value too long to name
// anything. Errors: unknown_kind, unknown_state, invalid_claimed,
// invalid_snoozed, filter_too_long.
func (f AttentionFilter) Validate() error {
	if f.Kind != "" && !slices.Contains(AttentionKinds, f.Kind) {
		return errs.E(errs.Invalid, "unknown_kind", "There is no kind of item called %q: choose one of %s.", f.Kind, strings.Join(AttentionKinds, ", ")).In("kind")
	}
	if _, ok := protocol.ParseState(f.State); f.State != "" && !ok {
		return errs.E(errs.Invalid, "unknown_state", "There is no state called %q: choose one of %s.", short(f.State), stateNames()).In("state")
	}
	if f.Claimed != "" && f.Claimed != ClaimedYes && f.Claimed != ClaimedNo && f.Claimed != ClaimedMe {
		return errs.E(errs.Invalid, "invalid_claimed", "claimed is %q: use yes (someone is on it), no (no one is) or me (you are).", short(f.Claimed)).In("claimed")
	}
	if f.Snoozed != "" && f.Snoozed != SnoozedInclude && f.Snoozed != SnoozedOnly {
		return errs.E(errs.Invalid, "invalid_snoozed", "snoozed is %q: use include (your snoozed items too) or only (only them); left out, your snoozed items are hidden.", short(f.Snoozed)).In("snoozed")
	}
	for name, v := range map[string]string{"mission": f.Mission, "agent": f.Agent, "session": f.Session} {
		if utf8.RuneCountInString(v) > maxFilter {
			return errs.E(errs.Invalid, "filter_too_long", "The %s filter is %d characters long; at most %d are allowed.", name, utf8.RuneCountInString(v), maxFilter).In(name)
		}
	}
	return nil
}

// params are the filter as the queries take it.
func (f AttentionFilter) params() db.CountAttentionParams {
	return db.CountAttentionParams{Mission: f.Mission, Agent: f.Agent, Session: f.Session}
}

// AttentionCounts are how many items of each kind wait under a filter's
// mission, agent and session (whatever its kind), read in one query.
type AttentionCounts struct {
	ByKind map[string]int
	// Latest is when the newest item was opened, as stored: with the
	// counts, a fingerprint of the queue, which changes whenever an item
	// is added or removed.
	Latest string
	// expired and latestExpired count the gates the sweep recorded
	// expired: their rise to the top changes the fingerprint too.
	expired       int
	latestExpired string
	// marks and latestMark count the claims, snoozes and
	// acknowledgements on items: a mark changes the fingerprint too.
	marks      int
	latestMark string
}

// Total is how many items there are of every kind.
func (c AttentionCounts) Total() int {
	n := 0
	for _, v := range c.ByKind {
		n += v
	}
	return n
}

// Fingerprint is a short text that changes whenever an item joins or
// leaves the counted queue, or a person marks one (a claim, a snooze, an
// acknowledgement, or their end): a hash, so that it shows nothing
// stored.
func (c AttentionCounts) Fingerprint() string {
	h := sha256.New()
	for _, k := range AttentionKinds {
		fmt.Fprintf(h, "%d.", c.ByKind[k])
	}
	h.Write([]byte(c.Latest))
	fmt.Fprintf(h, ".%d.%s.%d.%s", c.expired, c.latestExpired, c.marks, c.latestMark)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// AttentionPage is one page of the queue under a filter.
type AttentionPage struct {
	// Items are the page's items, grouped by session: the session with an
	// expired gate first (the one that expired earliest), then the session
	// with the most severe item (then the one waiting longest), and in each
	// session its expired gates first, then most severe, then oldest.
	Items []AttentionItem
	// Counts are the counts by kind under the filter's mission, agent and
	// session, from the same snapshot as Items.
	Counts AttentionCounts
	// Total is how many items match the whole filter.
	Total int
	// From is the position of the page's first item in the whole list.
	From int
	// After is the session of the item just before this page ("" on the
	// first page), so that a page continuing a session's group says so.
	After string
}

// More reports whether items follow this page.
func (p AttentionPage) More() bool { return p.From+len(p.Items) < p.Total }

// List lists everything a person must act on: expired gates first (the
// earliest expired first), then most severe first, then oldest first.
// Anyone signed in may read it.
func (s *AttentionService) List(ctx context.Context) ([]AttentionItem, error) {
	var items []AttentionItem
	now := s.core.now()
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		var err error
		items, err = collect(ctx, q, AttentionFilter{}, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("attention: %w", err)
	}
	slices.SortStableFunc(items, bySeverity)
	return items, nil
}

// Page returns up to limit items of the queue under the filter, from the
// from-th on (counting from 0), grouped by session, with the counts by
// kind. Errors: unknown_kind, filter_too_long.
func (s *AttentionService) Page(ctx context.Context, f AttentionFilter, from, limit int) (AttentionPage, error) {
	if err := f.Validate(); err != nil {
		return AttentionPage{}, err
	}
	from, limit = max(from, 0), max(limit, 1)
	var items []AttentionItem
	var counts db.CountAttentionRow
	now := s.core.now()
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		var err error
		if counts, err = q.CountAttention(ctx, f.params()); err != nil {
			return err
		}
		items, err = collect(ctx, q, f, now)
		return err
	})
	if err != nil {
		return AttentionPage{}, fmt.Errorf("attention page: %w", err)
	}
	groupBySession(items)
	p := AttentionPage{Counts: countsOf(counts), Total: len(items), From: min(from, len(items))}
	p.Items = items[p.From:min(p.From+limit, len(items))]
	if p.From > 0 {
		p.After = items[p.From-1].Session
	}
	return p, nil
}

// Get returns one waiting item: its kind, its session and its ref (for a
// plan or a paused session, the session's id again), with its marks.
// Errors: attention_item_not_found (it never waited, or no longer does).
func (s *AttentionService) Get(ctx context.Context, kind, session, ref string) (AttentionItem, error) {
	var it AttentionItem
	now := s.core.now()
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		var err error
		it, err = item(ctx, q, ItemKey{Kind: kind, Session: session, Ref: ref}, now)
		return err
	})
	if err != nil {
		return AttentionItem{}, fmt.Errorf("attention item %s %s: %w", kind, ref, err)
	}
	return it, nil
}

// Counts returns how many items of each kind wait under the filter's
// mission, agent and session, in one query. Errors: filter_too_long.
func (s *AttentionService) Counts(ctx context.Context, f AttentionFilter) (AttentionCounts, error) {
	f.Kind = ""
	if err := f.Validate(); err != nil {
		return AttentionCounts{}, err
	}
	row, err := s.core.store.Reader().CountAttention(ctx, f.params())
	if err != nil {
		return AttentionCounts{}, fmt.Errorf("attention counts: %w", err)
	}
	return countsOf(row), nil
}

// Count is how many items List lists, counted in one query.
func (s *AttentionService) Count(ctx context.Context) (int, error) {
	c, err := s.Counts(ctx, AttentionFilter{})
	if err != nil {
		return 0, err
	}
	return c.Total(), nil
}

// Watch returns a channel that receives a value after writes commit (one
// value for any number of writes the reader has not yet seen) and a
// function that stops watching. A write may change the queue or not:
// compare the Counts' Fingerprint to know.
func (s *AttentionService) Watch() (<-chan struct{}, func()) {
	return s.core.store.Subscribe()
}

func countsOf(r db.CountAttentionRow) AttentionCounts {
	return AttentionCounts{Latest: r.Latest, expired: int(r.Expired), latestExpired: r.LatestExpired,
		marks: int(r.Marks), latestMark: r.LatestMark, ByKind: map[string]int{
			ItemDecision: int(r.Decisions), ItemPlan: int(r.Plans), ItemPaused: int(r.Paused), ItemAsk: int(r.Asks),
			ItemViolation: int(r.Violations), ItemRemediation: int(r.Remediations), ItemPermission: int(r.Permissions),
			ItemTask: int(r.Tasks)}}
}

// bySeverity orders items expired gates first (the earliest expired
// first), then most severe first, then oldest, then by ref.
func bySeverity(a, b AttentionItem) int {
	if c := byExpiry(a, b); c != 0 {
		return c
	}
	if a.State != b.State {
		return int(b.State) - int(a.State)
	}
	if c := a.OpenedAt.Compare(b.OpenedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Ref, b.Ref)
}

// byExpiry puts an expired gate before anything that is not, and of two
// expired gates the one that expired first; it says nothing of the rest.
func byExpiry(a, b AttentionItem) int {
	switch {
	case a.Expired && b.Expired:
		return a.ExpiredAt.Compare(*b.ExpiredAt)
	case a.Expired:
		return -1
	case b.Expired:
		return 1
	}
	return 0
}

// groupBySession orders items by session: a session with an expired gate
// first (of two, the one whose gate expired first), then the session
// whose most severe item is the most severe (of two, the one whose item
// of that severity has waited longer), and within a session as
// bySeverity.
func groupBySession(items []AttentionItem) {
	type rank struct {
		expired   bool
		expiredAt time.Time
		state     protocol.State
		since     time.Time
	}
	ranks := map[string]rank{}
	for _, it := range items {
		r, ok := ranks[it.Session]
		if it.Expired && (!r.expired || it.ExpiredAt.Before(r.expiredAt)) {
			r.expired, r.expiredAt = true, *it.ExpiredAt
		}
		if !ok || it.State > r.state || (it.State == r.state && it.OpenedAt.Before(r.since)) {
			r.state, r.since = it.State, it.OpenedAt
		}
		ranks[it.Session] = r
	}
	slices.SortStableFunc(items, func(a, b AttentionItem) int {
		if a.Session != b.Session {
			ra, rb := ranks[a.Session], ranks[b.Session]
			if ra.expired != rb.expired {
				if ra.expired {
					return -1
				}
				return 1
			}
			if ra.expired {
				if c := ra.expiredAt.Compare(rb.expiredAt); c != 0 {
					return c
				}
			}
			if ra.state != rb.state {
				return int(rb.state) - int(ra.state)
			}
			if c := ra.since.Compare(rb.since); c != 0 {
				return c
			}
			return strings.Compare(a.Session, b.Session)
		}
		return bySeverity(a, b)
	})
}

// collect reads the items the filter selects, in one snapshot (q), one
// query per kind and one per kind of mark (claims, snoozes,
// acknowledgements), with the gates that are expired at now marked so.
func collect(ctx context.Context, q db.Querier, f AttentionFilter, now time.Time) ([]AttentionItem, error) {
	items := []AttentionItem{}
	state, byState := protocol.ParseState(f.State)
	for _, kind := range AttentionKinds {
		if f.Kind != "" && f.Kind != kind {
			continue
		}
		more, err := sources[kind](ctx, q, f.params())
		if err != nil {
			return nil, fmt.Errorf("%s items: %w", kind, err)
		}
		if byState {
			more = slices.DeleteFunc(more, func(it AttentionItem) bool { return it.State != state })
		}
		items = append(items, more...)
	}
	for i := range items {
		items[i].settle(now)
	}
	if err := withMarks(ctx, q, items, f.Session, now); err != nil {
		return nil, err
	}
	items = slices.DeleteFunc(items, func(it AttentionItem) bool { return !f.keeps(it) })
	return items, withApprovals(ctx, q, items)
}

// keeps says whether an item with its marks passes the filter's claimed
// and snoozed.
func (f AttentionFilter) keeps(it AttentionItem) bool {
	me := f.Viewer.UserID
	switch f.Claimed {
	case ClaimedYes:
		if it.claimer == 0 {
			return false
		}
	case ClaimedNo:
		if it.claimer != 0 {
			return false
		}
	case ClaimedMe:
		if me == 0 || it.claimer != me {
			return false
		}
	}
	mine := me != 0 && slices.Contains(it.snoozers, me)
	switch f.Snoozed {
	case SnoozedInclude:
		return true
	case SnoozedOnly:
		return mine
	}
	return !mine
}

// sources read the items of each kind under a filter.
var sources = map[string]func(context.Context, db.Querier, db.CountAttentionParams) ([]AttentionItem, error){
	ItemPaused: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionPauses(ctx, db.ListAttentionPausesParams(f))
		var items []AttentionItem
		for _, p := range rows {
			c := db.StoredRow("sessions", p.SessionID)
			detail := "Paused"
			if p.PausedBy != "" {
				detail += " by " + p.PausedBy
			}
			if p.PauseReason != "" {
				detail += ": " + p.PauseReason
			}
			items = append(items, AttentionItem{Kind: ItemPaused, State: protocol.Blocked, Ref: p.SessionID,
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: "Session paused", Detail: detail, By: p.PausedBy,
				BlockedScope: []string{protocol.ScopeAllSessionWork}, AllowedScope: []string{},
				OpenedAt: c.NullTime("paused_at", p.PausedAt)})
			if err := c.Err(); err != nil {
				return nil, err
			}
		}
		return items, err
	},
	ItemPlan: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionPlans(ctx, db.ListAttentionPlansParams(f))
		var items []AttentionItem
		for _, p := range rows {
			c := db.StoredRow("plans", p.ID)
			var body plan.Plan
			c.JSON("body", p.Body, &body)
			items = append(items, AttentionItem{Kind: ItemPlan, State: protocol.Blocked, Ref: p.SessionID,
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: "Plan waiting for approval", Detail: p.Summary, Plan: &body,
				BlockedScope: []string{protocol.ScopeAnyCodeChange},
				AllowedScope: []string{protocol.ScopeReadRepository, protocol.ScopeRevisePlan},
				OpenedAt:     c.Time("proposed_at", p.ProposedAt)})
			if err := c.Err(); err != nil {
				return nil, err
			}
		}
		return items, err
	},
	ItemAsk: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionAsks(ctx, db.ListAttentionAsksParams(f))
		var items []AttentionItem
		for _, a := range rows {
			c := db.StoredRow("asks", a.ID)
			var opts map[string]string
			c.JSON("options", a.Options, &opts)
			item := AttentionItem{Kind: ItemAsk, State: protocol.DecisionRequired, Ref: a.ID,
				Session: a.SessionID, SessionTitle: a.SessionTitle, Agent: a.Agent, Mission: a.MissionSlug,
				MissionTitle: a.MissionTitle, Title: "Run " + a.RunName + " is parked on a question", Question: a.Prompt,
				Run: a.RunID, BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("created_at", a.CreatedAt)}
			item.Options = AskOptions(opts)
			if err := c.Err(); err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return items, err
	},
	ItemViolation: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionViolations(ctx, db.ListAttentionViolationsParams(f))
		var items []AttentionItem
		for _, v := range rows {
			c := db.StoredRow("violations", v.ID)
			where := v.File
			if v.Line > 0 {
				where = fmt.Sprintf("%s:%d", v.File, v.Line)
			}
			item := AttentionItem{Kind: ItemViolation, State: protocol.HardStop, Ref: strconv.FormatInt(v.ID, 10),
				Severity: v.Severity, Session: v.SessionID, SessionTitle: v.SessionTitle, Agent: v.Agent, Mission: v.MissionSlug,
				MissionTitle: v.MissionTitle, Title: v.Policy + " was violated by " + v.Match,
				Detail: "Found in " + where + ". The agent is stopped until a person clears it.", Files: []string{v.File},
				BlockedScope: []string{protocol.ScopeAllWork}, AllowedScope: []string{},
				OpenedAt: c.Time("detected_at", v.DetectedAt)}
			if v.BreachID.Valid {
				// A breach of a blocked scope: what the call did, and where.
				b := db.StoredRow("scope_breaches", v.BreachID.Int64)
				breach := protocol.ScopeBreach{Call: v.Match, Scope: b.List("scope", v.BreachScope), Files: b.List("files", v.BreachFiles),
					Ungoverned: v.BreachKind == BreachUngoverned}
				if err := b.Err(); err != nil {
					return nil, err
				}
				item.Title, item.Files = BreachTitle(breach), breach.Files
				item.Detail = "It changed " + strings.Join(breach.Files, ", ") +
					" while the decision was open: a side effect that ran before its approval. The agent is stopped until a person clears it."
				if breach.Ungoverned {
					item.Detail = "The executor's transcript holds this call, and no hook asked Madebook before it ran: a side effect nothing governed" +
						namedPaths(breach.Files) + ". Check the agent's hook setup; the agent is stopped until a person clears it."
				}
			}
			items = append(items, item)
			if err := c.Err(); err != nil {
				return nil, err
			}
		}
		return items, err
	},
	ItemRemediation: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionRemediations(ctx, db.ListAttentionRemediationsParams(f))
		var items []AttentionItem
		for _, r := range rows {
			c := db.StoredRow("remediations", r.ID)
			item := AttentionItem{Kind: ItemRemediation, State: protocol.Remediate, Ref: strconv.FormatInt(r.ID, 10),
				Severity: r.Severity, Session: r.SessionID, SessionTitle: r.SessionTitle, Agent: r.Agent, Mission: r.MissionSlug,
				MissionTitle: r.MissionTitle, Title: remediationTitle(r.Source), Detail: r.Instruction, By: r.RequestedBy,
				Files: c.List("files", r.Files), BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("created_at", r.CreatedAt)}
			if err := c.Err(); err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return items, err
	},
	ItemPermission: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionPermissions(ctx, db.ListAttentionPermissionsParams(f))
		var items []AttentionItem
		for _, p := range rows {
			c := db.StoredRow("permission_prompts", p.ID)
			var opts map[string]string
			c.JSON("options", p.Options, &opts)
			paths := c.List("paths", p.Paths)
			blocked := slices.Clone(paths)
			title := "Permission asked"
			if p.Tool != "" {
				blocked = append([]string{protocol.ToolScope(p.Tool)}, blocked...)
				title = "Permission asked to use " + p.Tool
			}
			item := AttentionItem{Kind: ItemPermission, State: protocol.DecisionRequired, Ref: strconv.FormatInt(p.ID, 10),
				Session: p.SessionID, SessionTitle: p.SessionTitle, Agent: p.Agent, Mission: p.MissionSlug,
				MissionTitle: p.MissionTitle, Title: title, Question: p.Prompt, Options: AskOptions(opts), Files: paths,
				BlockedScope: blocked, AllowedScope: []string{}, OpenedAt: c.Time("requested_at", p.RequestedAt)}
			if err := c.Err(); err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return items, err
	},
	ItemTask: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionBlockedTasks(ctx, db.ListAttentionBlockedTasksParams(f))
		var items []AttentionItem
		for _, t := range rows {
			c := db.StoredRow("tasks", t.SessionID+"/"+t.Task)
			items = append(items, AttentionItem{Kind: ItemTask, State: protocol.ContinueWithWarning, Ref: t.Task,
				Session: t.SessionID, SessionTitle: t.SessionTitle, Agent: t.Agent, Mission: t.MissionSlug,
				MissionTitle: t.MissionTitle, Title: "Task " + t.Task + " is blocked",
				Detail:       "The agent reported this task blocked. It stays here until the task progresses, completes or fails: acknowledge it, require a remediation, or pause the session if it needs a person.",
				BlockedScope: []string{}, AllowedScope: []string{}, OpenedAt: c.Time("updated_at", t.UpdatedAt)})
			if err := c.Err(); err != nil {
				return nil, err
			}
		}
		return items, err
	},
	ItemDecision: func(ctx context.Context, q db.Querier, f db.CountAttentionParams) ([]AttentionItem, error) {
		rows, err := q.ListAttentionDecisions(ctx, db.ListAttentionDecisionsParams(f))
		var items []AttentionItem
		for _, d := range rows {
			c := db.StoredRow("decisions", d.Ref)
			items = append(items, AttentionItem{Kind: ItemDecision, State: protocol.DecisionRequired, Ref: d.Ref,
				Session: d.SessionID, SessionTitle: d.SessionTitle, Agent: d.Agent, Mission: d.MissionSlug,
				MissionTitle: d.MissionTitle, Title: d.Title, Question: d.Question, Proposal: d.Proposal,
				BlockedScope: c.List("blocked_scope", d.BlockedScope), AllowedScope: c.List("allowed_scope", d.AllowedScope),
				OpenedAt: c.Time("opened_at", d.OpenedAt), gateTTL: gateTTLOf(d.GateTtl), stamped: c.NullTime("expired_at", d.ExpiredAt)})
			if err := c.Err(); err != nil {
				return nil, err
			}
		}
		return items, err
	},
}

// remediationTitle is a required remediation's title in the queue, naming
// what raised it when a violation or a rule did (it closes with that).
func remediationTitle(source string) string {
	switch source {
	case SourceViolation:
		return "Required remediation of a high violation"
	case SourceRule:
		return "Required remediation of a rule deviation"
	case SourceCollision:
		return "Required remediation after a collision"
	}
	return "Required remediation"
}
