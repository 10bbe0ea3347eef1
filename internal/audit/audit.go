// Package audit is Madebook's built-in audit reports (seed 001): named
// queries over the run ledger and the gates that check its two invariants
// (every side effect in a run starts after the approval that governs it; a
// run holding a question is never terminal) and that no decision is lost or
// forgotten. Passing is zero rows. The same reports are served as JSON, as
// console pages with a CSV download, and by `madebook audit`.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/protocol"
)

// The report names, as the API, the console and the CLI spell them.
const (
	UnanswerableAsks       = "unanswerable-asks"
	PrematureSideEffects   = "premature-side-effects"
	UndeliveredResolutions = "undelivered-resolutions"
	StaleGates             = "stale-gates"
	BlockedChanges         = "blocked-changes"
	// UnacknowledgedDeliveries lists what briefs handed over that the
	// agent has not acknowledged within the delivery lease.
	UnacknowledgedDeliveries = "unacknowledged-deliveries"
	// UngovernedToolCalls lists side-effecting calls an executor's
	// transcript holds that no hook checked before they ran.
	UngovernedToolCalls = "ungoverned-tool-calls"
)

// DefaultOlderThan is how long a gate stays open before stale-gates lists
// it, unless Options say otherwise.
const DefaultOlderThan = 24 * time.Hour

// DefaultMinAge is how long ago a gate must have been resolved for
// undelivered-resolutions to list it, unless Options say otherwise: a
// resolution younger than that is in flight (its agent briefs every few
// minutes at most), not lost.
const DefaultMinAge = 5 * time.Minute

// DefaultLease is the delivery lease unacknowledged-deliveries uses unless
// the service or Options say otherwise: the server's default (serve
// --delivery-lease), two minutes.
const DefaultLease = 2 * time.Minute

// Report describes one built-in report.
type Report struct {
	// Name is the report's name in URLs and on the command line.
	Name string `json:"name"`
	// Title is the report's name for people.
	Title string `json:"title"`
	// Finds says what a row is.
	Finds string `json:"finds"`
	// Passing says what zero rows means.
	Passing string `json:"passing"`
	// Columns are the display columns, in order; they are the keys of the
	// report's JSON rows too.
	Columns []string `json:"columns"`
}

var reports = []Report{
	{Name: UnanswerableAsks, Title: "Unanswerable asks",
		Finds:   "Unanswered asks whose run has ended: a person is shown a question the system will refuse to accept an answer to.",
		Passing: "Every run holding a question is still running or parked.",
		Columns: []string{"run_id", "run_status", "session_id", "ask_id", "prompt", "asked_at"}},
	{Name: PrematureSideEffects, Title: "Premature side effects",
		Finds: "Side-effecting tool calls that started before an ask of their run was answered, or while it is unanswered; " +
			"and breaches of a blocked scope, files a coding agent's hook saw a call change inside a decision gate's blocked scope while the gate was open.",
		Passing: "Every side effect started after the approval that governs it.",
		Columns: []string{"run_id", "session_id", "tool_call_id", "server", "tool", "started_at", "ask_id", "answered_at",
			"kind", "breach_id", "files", "scope", "decisions", "detected_at"}},
	{Name: UndeliveredResolutions, Title: "Undelivered resolutions",
		Finds:   "Gates a person resolved longer ago than the configured age (5m unless told otherwise) that no brief has delivered to the agent yet.",
		Passing: "Every resolution reached its agent.",
		Columns: []string{"ref", "session_id", "resolved_at", "resolved_by", "age"}},
	{Name: StaleGates, Title: "Stale gates",
		Finds:   "Gates open for longer than the configured age (24h unless told otherwise).",
		Passing: "No agent has waited on a gate for longer than that.",
		Columns: []string{"ref", "session_id", "title", "opened_at", "age"}},
	{Name: BlockedChanges, Title: "Blocked changes",
		Finds:   "Change reports refused because the session was BLOCKED (the brake, a plan not yet approved, a plan being revised): an agent that changed code its brief forbade.",
		Passing: "No agent reported a code change while it was told to stop.",
		Columns: []string{"id", "session_id", "agent", "attempted_at", "code", "reason", "files"}},
	{Name: UnacknowledgedDeliveries, Title: "Unacknowledged deliveries",
		Finds:   "Resolutions, plan answers, permission answers and open remediations a brief handed over that the agent has not acknowledged, whose last delivery is older than the delivery lease (the server's, 2m unless told otherwise): sent, and not known to be read.",
		Passing: "Every delivery was acknowledged, or is still within its lease.",
		Columns: []string{"kind", "ref", "session_id", "delivered_at", "last_delivered_at", "unacknowledged_for", "brief_id"}},
	{Name: UngovernedToolCalls, Title: "Ungoverned tool calls",
		Finds: "Side-effecting tool calls a coding agent's transcript holds (its hook reports them when the agent or a subagent stops, and when the session ends) " +
			"that no hook checked before they ran: governance that did not run (a hook missing from the settings, one that did not fire, MADEBOOK_FAIL_OPEN).",
		Passing: "Every side-effecting call the transcripts hold was checked by the executor gate before it ran.",
		Columns: []string{"breach_id", "session_id", "mission", "agent", "run_id", "tool", "tool_use_id", "agent_id", "agent_type",
			"ran_at", "detected_at", "paths", "violation_id", "cleared"}},
}

// Reports lists the built-in reports, in the order they are shown.
func Reports() []Report {
	out := make([]Report, len(reports))
	for i, r := range reports {
		r.Columns = slices.Clone(r.Columns)
		out[i] = r
	}
	return out
}

// Lookup returns the report with the name. Errors: unknown_report.
func Lookup(name string) (Report, error) {
	for _, r := range Reports() {
		if r.Name == name {
			return r, nil
		}
	}
	return Report{}, errs.E(errs.NotFound, "unknown_report", "No audit report is called %q: choose one of %s.", name, strings.Join(Names(), ", "))
}

// Names lists the report names, in order.
func Names() []string {
	out := make([]string, len(reports))
	for i, r := range reports {
		out[i] = r.Name
	}
	return out
}

// Options tune a run of the reports.
type Options struct {
	// Now is the time the reports are run at; zero is the service's clock.
	Now time.Time
	// OlderThan is the age past which an open gate is stale; zero is
	// DefaultOlderThan.
	OlderThan time.Duration
	// MinAge is how long ago a gate must have been resolved for
	// undelivered-resolutions to list it; zero is DefaultMinAge.
	MinAge time.Duration
	// Lease is the delivery lease unacknowledged-deliveries applies: a
	// delivery is listed once its last hand-over is older than that
	// without an acknowledgement. Zero is the service's lease.
	Lease time.Duration
}

// ParseOlderThan reads an age as the API (?older_than=) and the CLI
// (--older-than) take it: a Go duration ("36h", "90m") or whole days
// ("7d"). The empty string is DefaultOlderThan. Errors: invalid_older_than.
func ParseOlderThan(s string) (time.Duration, error) {
	return parseAge(s, DefaultOlderThan, invalidOlderThan)
}

// ParseMinAge reads the minimum age of an undelivered resolution as the
// API (?min_age=) and the CLI (--min-age) take it, in the same forms as
// ParseOlderThan ("10m", "2h", "1d"). The empty string is DefaultMinAge.
// Errors: invalid_min_age.
func ParseMinAge(s string) (time.Duration, error) {
	return parseAge(s, DefaultMinAge, invalidMinAge)
}

// ParseOptions reads both ages as the API and the console take them
// (?older_than=, ?min_age=). Errors: invalid_older_than, invalid_min_age.
func ParseOptions(olderThan, minAge string) (Options, error) {
	var o Options
	var err error
	if o.OlderThan, err = ParseOlderThan(olderThan); err != nil {
		return Options{}, err
	}
	if o.MinAge, err = ParseMinAge(minAge); err != nil {
		return Options{}, err
	}
	return o, nil
}

// parseAge reads a positive age: a Go duration or whole days. The empty
// string is def; anything else that is not an age is invalid(s).
func parseAge(s string, def time.Duration, invalid func(string) error) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return def, nil
	}
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int64
		n, err = strconv.ParseInt(days, 10, 64)
		if err == nil && (n <= 0 || n > int64(maxAge/(24*time.Hour))) {
			err = fmt.Errorf("out of range")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 || d > maxAge {
		return 0, invalid(s)
	}
	return d, nil
}

// maxAge is the longest age accepted: about a hundred years.
const maxAge = 100 * 365 * 24 * time.Hour

func invalidOlderThan(s string) error {
	return errs.E(errs.Invalid, "invalid_older_than", "older_than %q is not an age: give a positive duration such as 36h, 90m or 7d.", s)
}

func invalidLease(s string) error {
	return errs.E(errs.Invalid, "invalid_lease", "The delivery lease %q is not a duration: give a positive one such as 2m or 30s.", s)
}

// ParseLease reads a delivery lease as the CLI takes it (--delivery-lease,
// MADEBOOK_DELIVERY_LEASE): a Go duration ("2m", "30s") or whole days. The
// empty string is zero: the service's lease. Errors: invalid_lease.
func ParseLease(s string) (time.Duration, error) {
	return parseAge(s, 0, invalidLease)
}

func invalidMinAge(s string) error {
	return errs.E(errs.Invalid, "invalid_min_age", "min_age %q is not an age: give a positive duration such as 10m, 2h or 1d.", s)
}

// Result is one report as run: display rows for tables and CSV, and typed
// rows for JSON.
type Result struct {
	Report Report
	// Columns are the display columns (Report.Columns).
	Columns []string
	// Rows are the rows as displayed: times in RFC 3339 UTC, ages as Go
	// durations, NULL as "".
	Rows [][]string
	// Records are the typed rows: []UnanswerableAsk, []PrematureSideEffect,
	// []UndeliveredResolution, []StaleGate, []BlockedChange or
	// []UnacknowledgedDelivery, never nil.
	Records any
	// Now is the time the report was run at.
	Now time.Time
	// OlderThan is the age stale-gates used (zero for the others).
	OlderThan time.Duration
	// MinAge is the age undelivered-resolutions used (zero for the
	// others).
	MinAge time.Duration
	// Lease is the delivery lease unacknowledged-deliveries used (zero for
	// the others).
	Lease time.Duration
}

// Passing reports whether the report found nothing.
func (r Result) Passing() bool { return len(r.Rows) == 0 }

// MarshalJSON renders the result as the API answers it:
// {"report":"name","rows":[{…}]}.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Report string `json:"report"`
		Rows   any    `json:"rows"`
	}{r.Report.Name, r.Records})
}

// UnanswerableAsk is a row of unanswerable-asks.
type UnanswerableAsk struct {
	RunID     string    `json:"run_id"`
	RunStatus string    `json:"run_status"`
	SessionID string    `json:"session_id"`
	AskID     string    `json:"ask_id"`
	Prompt    string    `json:"prompt"`
	AskedAt   time.Time `json:"asked_at"`
}

// PrematureSideEffect is a row of premature-side-effects: one
// side-effecting call and the ask it ran ahead of (kind tool_call), or a
// breach of a blocked scope, files a call changed inside a decision
// gate's blocked scope while the gate was open (kind breach).
type PrematureSideEffect struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	// ToolCallID is the recorded call's id; 0 for a breach (the hook
	// reports the breach apart from the call's record).
	ToolCallID int64  `json:"tool_call_id"`
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	// StartedAt is when the call started; for a breach, when it was
	// reported, right after the call ran.
	StartedAt time.Time `json:"started_at"`
	// AskID is the ask the call ran ahead of; "" for a breach.
	AskID string `json:"ask_id"`
	// AnsweredAt is null while the ask is unanswered, and for a breach.
	AnsweredAt *time.Time `json:"answered_at"`
	// Kind is tool_call or breach.
	Kind string `json:"kind"`
	// BreachID is the breach's id; null for a tool call.
	BreachID *int64 `json:"breach_id"`
	// Files are the files a breach changed, Scope the blocked scope
	// entries they lie in, and Decisions the gates (DEC-…) it ran ahead
	// of; empty for a tool call.
	Files     []string `json:"files"`
	Scope     []string `json:"scope"`
	Decisions []string `json:"decisions"`
	// DetectedAt is when a breach was reported; null for a tool call.
	DetectedAt *time.Time `json:"detected_at"`
}

// UngovernedToolCall is a row of ungoverned-tool-calls: a side-effecting
// call an executor's transcript holds that no check named.
type UngovernedToolCall struct {
	BreachID  int64  `json:"breach_id"`
	SessionID string `json:"session_id"`
	Mission   string `json:"mission"`
	Agent     string `json:"agent"`
	RunID     string `json:"run_id"`
	// Tool is the tool as the agent knows it (Bash, mcp__github__create_issue).
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id"`
	// AgentID and AgentType name the subagent that made the call; "" for
	// the main agent.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// RanAt is when the transcript says the call ran; DetectedAt when its
	// hook reported it.
	RanAt      time.Time `json:"ran_at"`
	DetectedAt time.Time `json:"detected_at"`
	// Paths are the paths the call's input named.
	Paths []string `json:"paths"`
	// ViolationID is the critical violation the call is; Cleared says a
	// person has cleared it.
	ViolationID int64 `json:"violation_id"`
	Cleared     bool  `json:"cleared"`
}

// The kinds of row premature-side-effects lists.
const (
	SideEffectToolCall = "tool_call" // a recorded call that ran ahead of an ask
	SideEffectBreach   = "breach"    // a breach of a blocked scope
)

// UndeliveredResolution is a row of undelivered-resolutions.
type UndeliveredResolution struct {
	Ref        string    `json:"ref"`
	SessionID  string    `json:"session_id"`
	ResolvedAt time.Time `json:"resolved_at"`
	// ResolvedBy is the email of the person who resolved the gate.
	ResolvedBy string `json:"resolved_by"`
	// Age is how long ago it was resolved, as a Go duration ("36h0m0s").
	Age        string `json:"age"`
	AgeSeconds int64  `json:"age_seconds"`
}

// StaleGate is a row of stale-gates.
type StaleGate struct {
	Ref       string    `json:"ref"`
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	OpenedAt  time.Time `json:"opened_at"`
	// Age is how long the gate has been open, as a Go duration ("36h0m0s").
	Age        string `json:"age"`
	AgeSeconds int64  `json:"age_seconds"`
}

// BlockedChange is a row of blocked-changes: a change report refused
// because its session was BLOCKED.
type BlockedChange struct {
	ID          int64     `json:"id"`
	SessionID   string    `json:"session_id"`
	Agent       string    `json:"agent"`
	AttemptedAt time.Time `json:"attempted_at"`
	// Code is the brief's BLOCKED reason code: paused, plan_not_approved
	// or plan_revising.
	Code string `json:"code"`
	// Reason is the brief's reason, as the agent was told it.
	Reason string `json:"reason"`
	// Files are the paths the refused report named.
	Files []string `json:"files"`
}

// The kinds of delivery unacknowledged-deliveries lists.
const (
	DeliveryResolution       = "resolution"        // a gate's resolution, ref DEC-…
	DeliveryPlanAnswer       = "plan answer"       // a lead's answer to a plan, ref PLAN-<id>
	DeliveryPermissionAnswer = "permission answer" // an answer to a permission prompt, ref PRM-<id>
	DeliveryRemediation      = "remediation"       // an open remediation request, ref REM-<id>
)

// UnacknowledgedDelivery is a row of unacknowledged-deliveries: one thing
// a brief handed over whose lease ran out unacknowledged.
type UnacknowledgedDelivery struct {
	// Kind is resolution, plan answer, permission answer or remediation.
	Kind      string `json:"kind"`
	Ref       string `json:"ref"`
	SessionID string `json:"session_id"`
	// DeliveredAt is the first delivery; LastDeliveredAt the latest.
	DeliveredAt     time.Time `json:"delivered_at"`
	LastDeliveredAt time.Time `json:"last_delivered_at"`
	// UnacknowledgedFor is how long since the first delivery, as a Go
	// duration ("3m0s").
	UnacknowledgedFor     string `json:"unacknowledged_for"`
	UnacknowledgedSeconds int64  `json:"unacknowledged_seconds"`
	// BriefID is the brief that last handed it over: the id the agent
	// should have acknowledged.
	BriefID string `json:"brief_id"`
}

// Service runs the reports. It only reads.
type Service struct {
	store db.Transactor
	now   func() time.Time
	lease time.Duration
}

// NewService returns the audit service. lease is the delivery lease
// unacknowledged-deliveries applies when Options leave it zero: the
// server's (serve --delivery-lease); 0 is DefaultLease.
func NewService(store db.Transactor, now func() time.Time, lease time.Duration) *Service {
	if lease <= 0 {
		lease = DefaultLease
	}
	return &Service{store: store, now: func() time.Time { return now().UTC() }, lease: lease}
}

// DeliveryLease is the delivery lease the service applies by default.
func (s *Service) DeliveryLease() time.Duration { return s.lease }

// Run runs one report. Errors: unknown_report, invalid_older_than (a
// negative OlderThan), invalid_min_age (a negative MinAge). A stored row
// the report cannot read is a *db.CorruptRowError.
func (s *Service) Run(ctx context.Context, name string, opts Options) (Result, error) {
	rep, err := Lookup(name)
	if err != nil {
		return Result{}, err
	}
	if opts, err = s.defaults(opts); err != nil {
		return Result{}, err
	}
	res, err := run(ctx, s.store.Reader(), rep, opts)
	if err != nil {
		return Result{}, fmt.Errorf("audit %s: %w", name, err)
	}
	return res, nil
}

// RunAll runs every report (or the named ones, in the order given) on one
// snapshot of the database. Errors: unknown_report, invalid_older_than,
// invalid_min_age; a stored row a report cannot read is a
// *db.CorruptRowError.
func (s *Service) RunAll(ctx context.Context, opts Options, names ...string) ([]Result, error) {
	if len(names) == 0 {
		names = Names()
	}
	reps := make([]Report, len(names))
	for i, n := range names {
		r, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		reps[i] = r
	}
	opts, err := s.defaults(opts)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(reps))
	err = s.store.Read(ctx, func(q db.Querier) error {
		for i, r := range reps {
			res, err := run(ctx, q, r, opts)
			if err != nil {
				return fmt.Errorf("audit %s: %w", r.Name, err)
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) defaults(opts Options) (Options, error) {
	if opts.Now.IsZero() {
		opts.Now = s.now()
	}
	opts.Now = opts.Now.UTC()
	switch {
	case opts.OlderThan == 0:
		opts.OlderThan = DefaultOlderThan
	case opts.OlderThan < 0:
		return opts, invalidOlderThan(opts.OlderThan.String())
	}
	switch {
	case opts.MinAge == 0:
		opts.MinAge = DefaultMinAge
	case opts.MinAge < 0:
		return opts, invalidMinAge(opts.MinAge.String())
	}
	switch {
	case opts.Lease == 0:
		opts.Lease = s.lease
	case opts.Lease < 0:
		return opts, invalidLease(opts.Lease.String())
	}
	return opts, nil
}

// storedTime reads a stored time of a row, or returns a
// *db.CorruptRowError naming it.
func storedTime(table, row, column, v string) (time.Time, error) {
	st := db.StoredRow(table, row)
	t := st.Time(column, v)
	return t, st.Err()
}

// run runs one report on q and converts its rows.
func run(ctx context.Context, q db.Querier, rep Report, opts Options) (Result, error) {
	res := Result{Report: rep, Columns: rep.Columns, Rows: [][]string{}, Now: opts.Now}
	var err error
	switch rep.Name {
	case UnanswerableAsks:
		res.Records, err = unanswerableAsks(ctx, q, &res)
	case PrematureSideEffects:
		res.Records, err = prematureSideEffects(ctx, q, &res)
	case UndeliveredResolutions:
		res.MinAge = opts.MinAge
		res.Records, err = undeliveredResolutions(ctx, q, &res)
	case StaleGates:
		res.OlderThan = opts.OlderThan
		res.Records, err = staleGates(ctx, q, &res)
	case BlockedChanges:
		res.Records, err = blockedChanges(ctx, q, &res)
	case UnacknowledgedDeliveries:
		res.Lease = opts.Lease
		res.Records, err = unacknowledgedDeliveries(ctx, q, &res)
	case UngovernedToolCalls:
		res.Records, err = ungovernedToolCalls(ctx, q, &res)
	default:
		err = fmt.Errorf("report %q has no query", rep.Name)
	}
	return res, err
}

func unanswerableAsks(ctx context.Context, q db.Querier, res *Result) ([]UnanswerableAsk, error) {
	rows, err := q.AuditUnanswerableAsks(ctx)
	if err != nil {
		return nil, err
	}
	recs := make([]UnanswerableAsk, len(rows))
	for i, r := range rows {
		at, err := storedTime("asks", r.AskID, "created_at", r.AskedAt)
		if err != nil {
			return nil, err
		}
		recs[i] = UnanswerableAsk{RunID: r.RunID, RunStatus: r.RunStatus, SessionID: r.SessionID, AskID: r.AskID,
			Prompt: r.Prompt, AskedAt: at}
		res.Rows = append(res.Rows, []string{r.RunID, r.RunStatus, r.SessionID, r.AskID, r.Prompt, stamp(at)})
	}
	return recs, nil
}

func prematureSideEffects(ctx context.Context, q db.Querier, res *Result) ([]PrematureSideEffect, error) {
	rows, err := q.AuditPrematureSideEffects(ctx)
	if err != nil {
		return nil, err
	}
	recs := make([]PrematureSideEffect, len(rows))
	for i, r := range rows {
		started, err := storedTime("tool_calls", strconv.FormatInt(r.ToolCallID, 10), "started_at", r.StartedAt)
		if err != nil {
			return nil, err
		}
		rec := PrematureSideEffect{RunID: r.RunID, SessionID: r.SessionID, ToolCallID: r.ToolCallID, Server: r.Server,
			Tool: r.Tool, StartedAt: started, AskID: r.AskID, Kind: SideEffectToolCall, Files: []string{}, Scope: []string{},
			Decisions: []string{}}
		answered := ""
		if r.AnsweredAt.Valid {
			t, err := storedTime("asks", r.AskID, "answered_at", r.AnsweredAt.String)
			if err != nil {
				return nil, err
			}
			rec.AnsweredAt, answered = &t, stamp(t)
		}
		recs[i] = rec
		res.Rows = append(res.Rows, []string{r.RunID, r.SessionID, strconv.FormatInt(r.ToolCallID, 10), r.Server, r.Tool,
			stamp(rec.StartedAt), r.AskID, answered, rec.Kind, "", "", "", "", ""})
	}
	breaches, err := q.AuditScopeBreaches(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range breaches {
		st := db.StoredRow("scope_breaches", b.ID)
		at := st.Time("detected_at", b.DetectedAt)
		rec := PrematureSideEffect{RunID: b.RunID, SessionID: b.SessionID, Server: b.Server, Tool: b.Tool, StartedAt: at,
			Kind: SideEffectBreach, BreachID: &b.ID, Files: st.List("files", b.Files), Scope: st.List("scope", b.Scope),
			Decisions: st.List("decisions", b.Decisions), DetectedAt: &at}
		if err := st.Err(); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		res.Rows = append(res.Rows, []string{b.RunID, b.SessionID, "", b.Server, b.Tool, stamp(at), "", "", rec.Kind,
			strconv.FormatInt(b.ID, 10), strings.Join(rec.Files, " "), strings.Join(rec.Scope, " "), strings.Join(rec.Decisions, " "),
			stamp(at)})
	}
	if len(breaches) > 0 {
		// One list in time order: the calls' own order first among equals.
		order := make([]int, len(recs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return recs[a].StartedAt.Compare(recs[b].StartedAt) })
		sorted, rows := make([]PrematureSideEffect, len(recs)), make([][]string, len(recs))
		for i, o := range order {
			sorted[i], rows[i] = recs[o], res.Rows[o]
		}
		recs, res.Rows = sorted, rows
	}
	return recs, nil
}

func ungovernedToolCalls(ctx context.Context, q db.Querier, res *Result) ([]UngovernedToolCall, error) {
	rows, err := q.AuditUngovernedCalls(ctx)
	if err != nil {
		return nil, err
	}
	recs := make([]UngovernedToolCall, len(rows))
	for i, r := range rows {
		st := db.StoredRow("scope_breaches", r.ID)
		rec := UngovernedToolCall{BreachID: r.ID, SessionID: r.SessionID, Mission: r.MissionSlug, Agent: r.Agent, RunID: r.RunID,
			Tool: gate.ToolName(r.Server, r.Tool), ToolUseID: r.ToolUseID, AgentID: r.AgentID, AgentType: r.AgentType,
			RanAt: st.Time("ran_at", r.RanAt.String), DetectedAt: st.Time("detected_at", r.DetectedAt), Paths: st.List("files", r.Files),
			ViolationID: r.ViolationID, Cleared: r.ViolationClosedAt.Valid}
		if err := st.Err(); err != nil {
			return nil, err
		}
		recs[i] = rec
		res.Rows = append(res.Rows, []string{strconv.FormatInt(rec.BreachID, 10), rec.SessionID, rec.Mission, rec.Agent, rec.RunID,
			rec.Tool, rec.ToolUseID, rec.AgentID, rec.AgentType, stamp(rec.RanAt), stamp(rec.DetectedAt), strings.Join(rec.Paths, " "),
			strconv.FormatInt(rec.ViolationID, 10), strconv.FormatBool(rec.Cleared)})
	}
	return recs, nil
}

func undeliveredResolutions(ctx context.Context, q db.Querier, res *Result) ([]UndeliveredResolution, error) {
	rows, err := q.AuditUndeliveredResolutions(ctx, db.NullTime(res.Now.Add(-res.MinAge)))
	if err != nil {
		return nil, err
	}
	recs := make([]UndeliveredResolution, len(rows))
	for i, r := range rows {
		at, err := storedTime("decisions", r.Ref, "resolved_at", r.ResolvedAt.String)
		if err != nil {
			return nil, err
		}
		age := ageAt(res.Now, at)
		recs[i] = UndeliveredResolution{Ref: r.Ref, SessionID: r.SessionID, ResolvedAt: at, ResolvedBy: r.ResolvedBy,
			Age: protocol.FormatDuration(age), AgeSeconds: int64(age / time.Second)}
		res.Rows = append(res.Rows, []string{r.Ref, r.SessionID, stamp(at), r.ResolvedBy, protocol.FormatDuration(age)})
	}
	return recs, nil
}

func staleGates(ctx context.Context, q db.Querier, res *Result) ([]StaleGate, error) {
	rows, err := q.AuditStaleGates(ctx, db.FormatTime(res.Now.Add(-res.OlderThan)))
	if err != nil {
		return nil, err
	}
	recs := make([]StaleGate, len(rows))
	for i, r := range rows {
		at, err := storedTime("decisions", r.Ref, "opened_at", r.OpenedAt)
		if err != nil {
			return nil, err
		}
		age := ageAt(res.Now, at)
		recs[i] = StaleGate{Ref: r.Ref, SessionID: r.SessionID, Title: r.Title, OpenedAt: at,
			Age: protocol.FormatDuration(age), AgeSeconds: int64(age / time.Second)}
		res.Rows = append(res.Rows, []string{r.Ref, r.SessionID, r.Title, stamp(at), protocol.FormatDuration(age)})
	}
	return recs, nil
}

func blockedChanges(ctx context.Context, q db.Querier, res *Result) ([]BlockedChange, error) {
	rows, err := q.AuditBlockedChanges(ctx)
	if err != nil {
		return nil, err
	}
	recs := make([]BlockedChange, len(rows))
	for i, r := range rows {
		st := db.StoredRow("blocked_changes", r.ID)
		rec := BlockedChange{ID: r.ID, SessionID: r.SessionID, Agent: r.Agent, AttemptedAt: st.Time("attempted_at", r.AttemptedAt),
			Code: r.Code, Reason: r.Reason, Files: st.List("files", r.Files)}
		if err := st.Err(); err != nil {
			return nil, err
		}
		recs[i] = rec
		res.Rows = append(res.Rows, []string{strconv.FormatInt(r.ID, 10), r.SessionID, r.Agent, stamp(rec.AttemptedAt), r.Code,
			r.Reason, strings.Join(rec.Files, " ")})
	}
	return recs, nil
}

func unacknowledgedDeliveries(ctx context.Context, q db.Querier, res *Result) ([]UnacknowledgedDelivery, error) {
	rows, err := q.AuditUnacknowledgedDeliveries(ctx, db.NullTime(res.Now.Add(-res.Lease)))
	if err != nil {
		return nil, err
	}
	tables := map[string]string{DeliveryResolution: "decisions", DeliveryPlanAnswer: "plans",
		DeliveryPermissionAnswer: "permission_prompts", DeliveryRemediation: "remediations"}
	recs := make([]UnacknowledgedDelivery, len(rows))
	for i, r := range rows {
		st := db.StoredRow(tables[r.Kind], r.Ref)
		rec := UnacknowledgedDelivery{Kind: r.Kind, Ref: r.Ref, SessionID: r.SessionID,
			DeliveredAt: st.NullTime("delivered_at", r.DeliveredAt), LastDeliveredAt: st.NullTime("last_delivered_at", r.LastDeliveredAt),
			BriefID: r.BriefID.String}
		if err := st.Err(); err != nil {
			return nil, err
		}
		age := ageAt(res.Now, rec.DeliveredAt)
		rec.UnacknowledgedFor, rec.UnacknowledgedSeconds = protocol.FormatDuration(age), int64(age/time.Second)
		recs[i] = rec
		res.Rows = append(res.Rows, []string{r.Kind, r.Ref, r.SessionID, stamp(rec.DeliveredAt), stamp(rec.LastDeliveredAt),
			rec.UnacknowledgedFor, rec.BriefID})
	}
	return recs, nil
}

// stamp is a time as the reports show it: RFC 3339 UTC, with as much of
// the fraction as it has (so that two calls a millisecond apart differ).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ageAt is how long before now t was, to the second, never negative.
func ageAt(now, t time.Time) time.Duration {
	d := now.Sub(t)
	if d < 0 {
		return 0
	}
	return d.Truncate(time.Second)
}
