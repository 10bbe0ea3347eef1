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
)

// The report names, as the API, the console and the CLI spell them.
const (
	UnanswerableAsks       = "unanswerable-asks"
	PrematureSideEffects   = "premature-side-effects"
	UndeliveredResolutions = "undelivered-resolutions"
	StaleGates             = "stale-gates"
)

// DefaultOlderThan is how long a gate stays open before stale-gates lists
// it, unless Options say otherwise.
const DefaultOlderThan = 24 * time.Hour

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
		Finds:   "Side-effecting tool calls that started before an ask of their run was answered, or while it is unanswered.",
		Passing: "Every side effect started after the approval that governs it.",
		Columns: []string{"run_id", "session_id", "tool_call_id", "server", "tool", "started_at", "ask_id", "answered_at"}},
	{Name: UndeliveredResolutions, Title: "Undelivered resolutions",
		Finds:   "Gates a person resolved that no brief has delivered to the agent yet.",
		Passing: "Every resolution reached its agent.",
		Columns: []string{"ref", "session_id", "resolved_at", "resolved_by", "age"}},
	{Name: StaleGates, Title: "Stale gates",
		Finds:   "Gates open for longer than the configured age (24h unless told otherwise).",
		Passing: "No agent has waited on a gate for longer than that.",
		Columns: []string{"ref", "session_id", "title", "opened_at", "age"}},
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
}

// ParseOlderThan reads an age as the API (?older_than=) and the CLI
// (--older-than) take it: a Go duration ("36h", "90m") or whole days
// ("7d"). The empty string is DefaultOlderThan. Errors: invalid_older_than.
func ParseOlderThan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultOlderThan, nil
	}
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int64
		n, err = strconv.ParseInt(days, 10, 64)
		if err == nil && (n <= 0 || n > int64(maxOlderThan/(24*time.Hour))) {
			err = fmt.Errorf("out of range")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 || d > maxOlderThan {
		return 0, invalidOlderThan(s)
	}
	return d, nil
}

// maxOlderThan is the longest age accepted: about a hundred years.
const maxOlderThan = 100 * 365 * 24 * time.Hour

func invalidOlderThan(s string) error {
	return errs.E(errs.Invalid, "invalid_older_than", "older_than %q is not an age: give a positive duration such as 36h, 90m or 7d.", s)
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
	// []UndeliveredResolution or []StaleGate, never nil.
	Records any
	// Now is the time the report was run at.
	Now time.Time
	// OlderThan is the age stale-gates used (zero for the others).
	OlderThan time.Duration
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
// side-effecting call and the ask it ran ahead of.
type PrematureSideEffect struct {
	RunID      string    `json:"run_id"`
	SessionID  string    `json:"session_id"`
	ToolCallID int64     `json:"tool_call_id"`
	Server     string    `json:"server"`
	Tool       string    `json:"tool"`
	StartedAt  time.Time `json:"started_at"`
	AskID      string    `json:"ask_id"`
	// AnsweredAt is null while the ask is unanswered.
	AnsweredAt *time.Time `json:"answered_at"`
}

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

// Service runs the reports. It only reads.
type Service struct {
	store db.Transactor
	now   func() time.Time
}

// NewService returns the audit service.
func NewService(store db.Transactor, now func() time.Time) *Service {
	return &Service{store: store, now: func() time.Time { return now().UTC() }}
}

// Run runs one report. Errors: unknown_report, invalid_older_than (a
// negative OlderThan).
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
// snapshot of the database. Errors: unknown_report, invalid_older_than.
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
	return opts, nil
}

// run runs one report on q and converts its rows.
func run(ctx context.Context, q db.Querier, rep Report, opts Options) (Result, error) {
	res := Result{Report: rep, Columns: rep.Columns, Rows: [][]string{}, Now: opts.Now}
	switch rep.Name {
	case UnanswerableAsks:
		rows, err := q.AuditUnanswerableAsks(ctx)
		if err != nil {
			return res, err
		}
		recs := make([]UnanswerableAsk, len(rows))
		for i, r := range rows {
			recs[i] = UnanswerableAsk{RunID: r.RunID, RunStatus: r.RunStatus, SessionID: r.SessionID, AskID: r.AskID,
				Prompt: r.Prompt, AskedAt: db.MustTime(r.AskedAt)}
			res.Rows = append(res.Rows, []string{r.RunID, r.RunStatus, r.SessionID, r.AskID, r.Prompt, stamp(recs[i].AskedAt)})
		}
		res.Records = recs
	case PrematureSideEffects:
		rows, err := q.AuditPrematureSideEffects(ctx)
		if err != nil {
			return res, err
		}
		recs := make([]PrematureSideEffect, len(rows))
		for i, r := range rows {
			rec := PrematureSideEffect{RunID: r.RunID, SessionID: r.SessionID, ToolCallID: r.ToolCallID, Server: r.Server,
				Tool: r.Tool, StartedAt: db.MustTime(r.StartedAt), AskID: r.AskID}
			answered := ""
			if r.AnsweredAt.Valid {
				t := db.MustTime(r.AnsweredAt.String)
				rec.AnsweredAt, answered = &t, stamp(t)
			}
			recs[i] = rec
			res.Rows = append(res.Rows, []string{r.RunID, r.SessionID, strconv.FormatInt(r.ToolCallID, 10), r.Server, r.Tool,
				stamp(rec.StartedAt), r.AskID, answered})
		}
		res.Records = recs
	case UndeliveredResolutions:
		rows, err := q.AuditUndeliveredResolutions(ctx)
		if err != nil {
			return res, err
		}
		recs := make([]UndeliveredResolution, len(rows))
		for i, r := range rows {
			at := db.MustNullTime(r.ResolvedAt)
			age := ageAt(opts.Now, at)
			recs[i] = UndeliveredResolution{Ref: r.Ref, SessionID: r.SessionID, ResolvedAt: at, ResolvedBy: r.ResolvedBy,
				Age: age.String(), AgeSeconds: int64(age / time.Second)}
			res.Rows = append(res.Rows, []string{r.Ref, r.SessionID, stamp(at), r.ResolvedBy, age.String()})
		}
		res.Records = recs
	case StaleGates:
		res.OlderThan = opts.OlderThan
		rows, err := q.AuditStaleGates(ctx, db.FormatTime(opts.Now.Add(-opts.OlderThan)))
		if err != nil {
			return res, err
		}
		recs := make([]StaleGate, len(rows))
		for i, r := range rows {
			at := db.MustTime(r.OpenedAt)
			age := ageAt(opts.Now, at)
			recs[i] = StaleGate{Ref: r.Ref, SessionID: r.SessionID, Title: r.Title, OpenedAt: at,
				Age: age.String(), AgeSeconds: int64(age / time.Second)}
			res.Rows = append(res.Rows, []string{r.Ref, r.SessionID, r.Title, stamp(at), age.String()})
		}
		res.Records = recs
	default:
		return res, fmt.Errorf("report %q has no query", rep.Name)
	}
	return res, nil
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
