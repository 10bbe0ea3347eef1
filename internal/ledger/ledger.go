// Package ledger is Madebook's one authoritative record of agent runs, the
// questions they wait on, and the tool calls they make. It
// enforces, not just records, that every side effect in a run starts after
// the approval that governs it, and that a run holding a question is never
// terminal.
package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/gatefacts"
	"github.com/madebook/madebook/internal/ids"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
	"github.com/madebook/madebook/internal/policy"
)

// The run outcomes. Parked means the steps are done and the work is not: a
// question waits on a person.
const (
	Running   = "running"
	Parked    = "parked"
	Complete  = "complete"
	Partial   = "partial"
	Blocked   = "blocked"
	Failed    = "failed"
	Cancelled = "cancelled"
)

// Terminal reports whether a run with this status has ended.
func Terminal(status string) bool { return status != Running && status != Parked }

// The limits of what agents and operators send the ledger, in characters
// (runes) or entries.
const (
	MaxRunName     = input.Name // a run's name
	MaxPrompt      = 2000       // the question an ask puts to a person
	MaxOptions     = 9          // the most options an ask may offer
	MaxOptionLabel = input.Name // the label of one of them
	MaxServer      = input.Name // the server a tool is on
	MaxTool        = input.Name // the tool's name
)

// Service runs the ledger's use cases.
type Service struct {
	store  db.Transactor
	now    func() time.Time
	briefs Gate
	// tools is the registry as the check reads it (registry.go).
	tools *registry
}

// Gate tells the executor gate what a session's brief says now and what
// it knows of a run, from governance's read model: governance's
// BriefService is the one Madebook runs with.
type Gate interface {
	// GateView decides from the session's cached view and writes
	// nothing: the check's fast path. The run is nil unless run names one
	// of the session's live runs. Errors: session_not_found.
	GateView(ctx context.Context, session, run string) (gate.Session, *gate.Run, error)
	// GateViewIn decides from what q's transaction reads: the exact
	// path. The run is nil when run is nil. Errors: session_not_found.
	GateViewIn(ctx context.Context, q db.Querier, session string, run *db.GetRunRow) (gate.Session, *gate.Run, error)
	// SetRoot records the session's project root when it has none.
	SetRoot(ctx context.Context, actor auth.Actor, session, root string) error
}

// NewService returns the ledger service. store must be governance's write
// path (Services.Transactor): the events the ledger records on sessions'
// timelines then invalidate the read model and reach the outbox. briefs
// is what its executor gate asks about sessions.
func NewService(store db.Transactor, now func() time.Time, briefs Gate) *Service {
	tools := &registry{}
	store.OnChange(func(n db.Notice) {
		if n.Topic == "" || n.Topic == db.TopicTools { // another replica classified or removed a tool, or anything may have changed
			tools.invalidate()
		}
	})
	return &Service{store: store, now: func() time.Time { return now().UTC() }, briefs: briefs, tools: tools}
}

// Run is one run of an agent's work.
type Run struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Parent  string `json:"parent,omitempty"`
	Name    string `json:"name"`
	// Plan is the id of the approved plan the run executes; 0: none.
	Plan int64 `json:"plan,omitempty"`
	// ExternalID is the id the agent's client gave the run (the Claude
	// Code hook gives Claude's session_id), "" when it gave none.
	ExternalID string     `json:"external_id,omitempty"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at,omitempty"`
}

// Ask is a question a run waits on, with numbered options.
type Ask struct {
	ID         string            `json:"id"`
	Run        string            `json:"run"`
	Prompt     string            `json:"prompt"`
	Options    map[string]string `json:"options"`
	ParkedFrom string            `json:"parked_from"`
	// StoppingPoint is the plan's stopping point this ask is; 0: none.
	StoppingPoint int        `json:"stopping_point,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	Answer        string     `json:"answer,omitempty"`
	AnsweredAt    *time.Time `json:"answered_at,omitempty"`
	// RunStatus is the run's status after this call.
	RunStatus string `json:"run_status"`
}

// ToolCall is one call a run made.
type ToolCall struct {
	ID            int64  `json:"id"`
	Run           string `json:"run"`
	Server        string `json:"server"`
	Tool          string `json:"tool"`
	SideEffecting bool   `json:"side_effecting"`
	// SourceKind is who ran it: "main" (the main agent, in DIRECT_MODE)
	// or "executor" (every other call).
	SourceKind string `json:"source_kind"`
	// Step is the plan step the call ran; "" when it named none.
	Step string `json:"step,omitempty"`
	// Paths are the paths the call named.
	Paths      []string  `json:"paths"`
	StartedAt  time.Time `json:"started_at"`
	RecordedAt time.Time `json:"recorded_at"`
	// ToolUseID is the executor's id of the call (Claude Code's
	// tool_use_id); "" when it gave none.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// AgentID and AgentType name the subagent that made the call (Claude
	// Code's agent_id and agent_type); "" for the main agent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// Error is how a failed call failed ("Exit code 3"); "" for one that
	// succeeded.
	Error string `json:"error,omitempty"`
}

// The sources of a tool call.
const (
	SourceMain     = "main"
	SourceExecutor = "executor"
)

// StartRun opens a run on the agent's own session, under an optional
// parent run of the same session. Errors: as OpenRun's.
func (s *Service) StartRun(ctx context.Context, actor auth.Actor, session, name, parent string) (Run, error) {
	r, _, err := s.openRun(ctx, actor, session, name, parent, "", false)
	return r, err
}

// StartPlanRun opens a run, as StartRun does, that executes the session's
// approved plan: each side-effecting call on it names its step, and each
// ask may be one of the plan's stopping points. Errors: those of StartRun,
// no_approved_plan (the session's latest plan is not approved, with its
// plan_status).
func (s *Service) StartPlanRun(ctx context.Context, actor auth.Actor, session, name, parent string) (Run, error) {
	r, _, err := s.openRun(ctx, actor, session, name, parent, "", true)
	return r, err
}

// RunInput is the body of POST /api/v1/sessions/{id}/runs and the
// arguments of the MCP tool start_run: a name, an optional parent run, an
// optional external id (re-attach) and whether the run executes the
// session's approved plan.
type RunInput struct {
	Name       string `json:"name" jsonschema:"The run's name."`
	Parent     string `json:"parent,omitzero" jsonschema:"The id of the run this one runs under (run_…), if any."`
	ExternalID string `json:"external_id,omitzero" jsonschema:"Your client's own id for this run (e.g. a subagent's id), at most 200 characters: starting again with the same id answers the run it started (re-attach). Not with plan: a run that executes the plan is always new."`
	Plan       bool   `json:"plan,omitzero" jsonschema:"Execute the session's approved plan: each tool call then names its step, and a step behind a stopping point runs only after that stopping point's ask is answered with its option."`
}

// Start opens the run in describes on the agent's own session: a run
// that executes the plan (StartPlanRun), or one an external id may name
// already (OpenRun; created false when it re-attaches). Errors: those of
// StartPlanRun and OpenRun, plan_with_external_id (a run that executes
// the plan is always a new run).
func (s *Service) Start(ctx context.Context, actor auth.Actor, session string, in RunInput) (_ Run, created bool, err error) {
	if in.Plan && in.ExternalID != "" {
		return Run{}, false, errs.E(errs.Invalid, "plan_with_external_id",
			"A run that executes the plan is always a new run: send plan or external_id, not both.").In("external_id")
	}
	if in.Plan {
		r, err := s.StartPlanRun(ctx, actor, session, in.Name, in.Parent)
		return r, err == nil, err
	}
	return s.OpenRun(ctx, actor, session, in.Name, in.Parent, in.ExternalID)
}

// MaxRunExternalID is the longest id an agent's client gives a run.
const MaxRunExternalID = 200

// OpenRun opens a run on the agent's own session, under an optional
// parent run of the same session. With an external id the session already
// gave a run, it opens nothing and returns that run, whatever its status
// (re-attach), with created false. Errors: forbidden, name_required,
// name_too_long, external_id_too_long, session_not_found, parent_not_found.
func (s *Service) OpenRun(ctx context.Context, actor auth.Actor, session, name, parent, externalID string) (_ Run, created bool, err error) {
	return s.openRun(ctx, actor, session, name, parent, externalID, false)
}

// Reattach finds, in one read, the session this agent key opened with the
// external id and the session's run with the same external id: the
// hook's re-attach at every event after the first (its run is named by
// the executor's session id, as its session is). ok is false, with
// nothing read for the caller, unless both exist, the session is on the
// mission, and it has a root when root is not "" (one to record): the
// caller then opens them as the session and run routes do, which also
// say what is wrong.
func (s *Service) Reattach(ctx context.Context, actor auth.Actor, mission, externalID, root string) (session, run string, ok bool, err error) {
	if err := actor.RequireAgent("re-attach to a session"); err != nil {
		return "", "", false, err
	}
	if externalID == "" {
		return "", "", false, nil
	}
	row, err := s.store.Reader().GetHookRun(ctx, db.GetHookRunParams{AgentKeyID: actor.KeyID,
		ExternalID: sql.NullString{String: externalID, Valid: true}})
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	} else if err != nil {
		return "", "", false, fmt.Errorf("re-attach %q: %w", externalID, err)
	}
	if row.MissionSlug != mission || root != "" && row.Root == "" {
		return "", "", false, nil
	}
	return row.SessionID, row.RunID, true, nil
}

func (s *Service) openRun(ctx context.Context, actor auth.Actor, session, name, parent, externalID string, withPlan bool) (_ Run, created bool, err error) {
	if err := actor.RequireAgent("start a run"); err != nil {
		return Run{}, false, err
	}
	if name, err = input.Required("name", name, MaxRunName); err != nil {
		return Run{}, false, err
	}
	if externalID, err = input.Optional("external_id", externalID, MaxRunExternalID); err != nil {
		return Run{}, false, err
	}
	external := sql.NullString{String: externalID, Valid: externalID != ""}
	now := s.now()
	var row db.Run
	if external.Valid {
		// A re-attach (the hook's every event) is a read; a run to create
		// is the write's.
		found := false
		err = s.store.Read(ctx, func(q db.Querier) error {
			sess, err := q.GetSession(ctx, session)
			if err != nil || sess.AgentKeyID != actor.KeyID {
				return nil // the write says why
			}
			row, err = q.GetRunByExternalID(ctx, db.GetRunByExternalIDParams{SessionID: session, ExternalID: external})
			found = err == nil
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		})
		if err != nil {
			return Run{}, false, fmt.Errorf("start run on %s: %w", session, err)
		}
		if found {
			r, err := runFrom(row)
			if err != nil {
				return Run{}, false, fmt.Errorf("start run on %s: %w", session, err)
			}
			return r, false, nil
		}
	}
	err = s.store.Write(ctx, func(q db.Querier) error {
		sess, err := q.GetSession(ctx, session)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
		} else if err != nil {
			return err
		}
		if sess.AgentKeyID != actor.KeyID {
			return errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
		}
		if external.Valid {
			row, err = q.GetRunByExternalID(ctx, db.GetRunByExternalIDParams{SessionID: session, ExternalID: external})
			if err == nil {
				return nil
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		created = true
		var p sql.NullString
		if parent != "" {
			pr, err := q.GetRun(ctx, parent)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && pr.SessionID != session) {
				return errs.E(errs.Invalid, "parent_not_found", "No run %q in this session to be the parent.", parent)
			} else if err != nil {
				return err
			}
			p = sql.NullString{String: parent, Valid: true}
		}
		var planID sql.NullInt64
		if withPlan {
			pl, err := q.GetLatestPlan(ctx, session)
			if errors.Is(err, sql.ErrNoRows) {
				return errs.E(errs.Conflict, "no_approved_plan",
					"Session %s has no plan: propose one (POST /api/v1/sessions/%s/plan) and run it once it is approved.", session, session).
					With("plan_status", "none")
			} else if err != nil {
				return err
			}
			if pl.Status != "approved" {
				return errs.E(errs.Conflict, "no_approved_plan",
					"The latest plan of session %s is %s, not approved: a run executes only an approved plan. Take a brief and follow it.",
					session, pl.Status).With("plan_status", pl.Status)
			}
			planID = sql.NullInt64{Int64: pl.ID, Valid: true}
		}
		row, err = q.CreateRun(ctx, db.CreateRunParams{ID: ids.New("run_"), SessionID: session, ParentID: p, Name: name,
			StartedAt: db.FormatTime(now), ExternalID: external, PlanID: planID})
		if err != nil {
			return err
		}
		return s.event(ctx, q, session, actor, now, "run.started", row.ID, name)
	})
	if err != nil {
		return Run{}, false, fmt.Errorf("start run on %s: %w", session, err)
	}
	r, err := runFrom(row)
	if err != nil {
		return Run{}, false, fmt.Errorf("start run on %s: %w", session, err)
	}
	return r, created, nil
}

// FinishRun sets a run's outcome. Errors: forbidden, run_not_found,
// invalid_status, run_has_open_ask (the run is parked on a question),
// run_finished.
func (s *Service) FinishRun(ctx context.Context, actor auth.Actor, id, status string) (Run, error) {
	if err := actor.RequireAgent("finish a run"); err != nil {
		return Run{}, err
	}
	if !Terminal(status) || !slices.Contains([]string{Complete, Partial, Blocked, Failed, Cancelled}, status) {
		return Run{}, errs.E(errs.Invalid, "invalid_status", "The status %q must be complete, partial, blocked, failed or cancelled.", status)
	}
	now := s.now()
	var row db.Run
	err := s.store.Write(ctx, func(q db.Querier) error {
		r, err := ownRun(ctx, q, actor, id)
		if err != nil {
			return err
		}
		if a, err := q.GetOpenAsk(ctx, id); err == nil {
			return errs.E(errs.Conflict, "run_has_open_ask", "Run %s waits on ask %s (%q): a run holding a question cannot end. A person must answer it first.",
				id, a.ID, a.Prompt).With("ask", a.ID)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if Terminal(r.Status) {
			return errs.E(errs.Conflict, "run_finished", "Run %s already ended as %s.", id, r.Status)
		}
		if row, err = q.SetRunStatus(ctx, db.SetRunStatusParams{ID: id, Status: status, EndedAt: db.NullTime(now)}); err != nil {
			return err
		}
		return s.event(ctx, q, r.SessionID, actor, now, "run."+status, id, r.Name)
	})
	if err != nil {
		return Run{}, fmt.Errorf("finish run %s: %w", id, err)
	}
	r, err := runFrom(row)
	if err != nil {
		return Run{}, fmt.Errorf("finish run %s: %w", id, err)
	}
	return r, nil
}

// AskInput is a question and its numbered options.
type AskInput struct {
	Prompt  string            `json:"prompt" jsonschema:"The question."`
	Options map[string]string `json:"options" jsonschema:"The numbered options, keys 1 to 9, e.g. {\"1\":\"Yes\",\"2\":\"No\"}."`
	// StoppingPoint, on a run executing a plan, is the plan's stopping
	// point this ask is: answering it with option N releases the steps of
	// that stopping point's option N. Nil: the ask is no stopping point.
	StoppingPoint *int `json:"stopping_point,omitempty" jsonschema:"The stopping point of the plan this ask is: of the plan the run executes, or, on a run of no plan (e.g. one a Claude Code session starts under its hook run to ask it), of the session's approved plan. Answering option N releases that option's steps for the whole plan."`
}

// Validate returns the input with its prompt trimmed. The options are 1 to
// MaxOptions, keyed "1" to "9", each with a label of at most
// MaxOptionLabel characters. Errors: prompt_required, prompt_too_long,
// invalid_options, options_too_long.
func (in AskInput) Validate() (AskInput, error) {
	prompt, err := input.Required("prompt", in.Prompt, MaxPrompt)
	if err != nil {
		return in, err
	}
	invalid := func(format string, args ...any) error {
		return errs.E(errs.Invalid, "invalid_options", format, args...).In("options")
	}
	if len(in.Options) == 0 || len(in.Options) > MaxOptions {
		return in, invalid("An ask needs 1 to %d options, e.g. {\"1\":\"Yes\",\"2\":\"No\"}.", MaxOptions)
	}
	keys := slices.Sorted(maps.Keys(in.Options))
	labels := make([]string, len(keys))
	for i, k := range keys {
		v := in.Options[k]
		if len(k) != 1 || k[0] < '1' || k[0] > '9' || strings.TrimSpace(v) == "" {
			return in, invalid("Option %q must be numbered 1 to 9 and have a label.", k)
		}
		labels[i] = v
	}
	if _, err := input.List("options", labels, MaxOptions, MaxOptionLabel); err != nil {
		return in, err
	}
	return AskInput{Prompt: prompt, Options: in.Options, StoppingPoint: in.StoppingPoint}, nil
}

// RecordAsk records a question on the agent's run and parks the run, in
// one transaction; the outcome it parked from is kept on the ask. The run
// is parked before the ask is inserted, so an ask on an ended run (its
// steps done, a question left) lands on a parked run, which the database's
// trigger allows. An ask with a stopping point is one of the plan the run
// executes or, on a run of no plan (one a Claude Code session starts under
// its hook run to ask it), of the session's approved plan: answering it
// releases the steps of the option chosen for the whole plan. Errors: forbidden, those of
// AskInput.Validate, run_not_found, run_parked (it already waits on a
// question), unknown_stopping_point (the plan has no such stopping point,
// or the run executes none and the session has no approved plan),
// ask_on_terminal_run (the database refused the ask).
func (s *Service) RecordAsk(ctx context.Context, actor auth.Actor, runID string, in AskInput) (Ask, error) {
	if err := actor.RequireAgent("ask a question"); err != nil {
		return Ask{}, err
	}
	in, err := in.Validate()
	if err != nil {
		return Ask{}, err
	}
	prompt := in.Prompt
	options, err := json.Marshal(in.Options)
	if err != nil {
		return Ask{}, fmt.Errorf("encode options: %w", err)
	}
	now := s.now()
	var a db.Ask
	err = s.store.Write(ctx, func(q db.Querier) error {
		r, err := ownRun(ctx, q, actor, runID)
		if err != nil {
			return err
		}
		if r.Status == Parked {
			open, err := q.GetOpenAsk(ctx, runID)
			if err != nil {
				return err
			}
			return errs.E(errs.Conflict, "run_parked", "Run %s already waits on ask %s; one question at a time.", runID, open.ID).With("ask", open.ID)
		}
		var sp, planID sql.NullInt64
		if in.StoppingPoint != nil {
			if planID, err = stoppingPoint(ctx, q, r, *in.StoppingPoint); err != nil {
				return err
			}
			sp = sql.NullInt64{Int64: int64(*in.StoppingPoint), Valid: true}
		}
		if _, err := q.SetRunStatus(ctx, db.SetRunStatusParams{ID: runID, Status: Parked}); err != nil {
			return triggerError(err)
		}
		if a, err = q.CreateAsk(ctx, db.CreateAskParams{ID: ids.New("ask_"), RunID: runID, Prompt: prompt, Options: string(options),
			ParkedFrom: r.Status, CreatedAt: db.FormatTime(now), StoppingPoint: sp, PlanID: planID}); err != nil {
			return triggerError(err)
		}
		return s.event(ctx, q, r.SessionID, actor, now, "ask.opened", a.ID, prompt)
	})
	if err != nil {
		return Ask{}, fmt.Errorf("ask on run %s: %w", runID, err)
	}
	out, err := askFrom(a, Parked)
	if err != nil {
		return Ask{}, fmt.Errorf("ask on run %s: %w", runID, err)
	}
	return out, nil
}

// AnswerAsk answers a parked run's question with one of its options,
// restores the outcome the run parked from, and records who and when. An
// ask is answered once. Errors: forbidden (not a lead), ask_not_found,
// invalid_option, already_answered.
func (s *Service) AnswerAsk(ctx context.Context, actor auth.Actor, id, option string) (Ask, error) {
	if err := actor.RequireLead("answer an ask"); err != nil {
		return Ask{}, err
	}
	now := s.now()
	var a db.Ask
	err := s.store.Write(ctx, func(q db.Querier) error {
		cur, err := q.GetAsk(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "ask_not_found", "No ask has the id %q.", id)
		} else if err != nil {
			return err
		}
		if cur.AnsweredAt.Valid {
			return errs.E(errs.Conflict, "already_answered", "Ask %s was already answered at %s.", id, cur.AnsweredAt.String)
		}
		stored := db.StoredRow("asks", cur.ID)
		opts := map[string]string{}
		stored.JSON("options", cur.Options, &opts)
		if err := stored.Err(); err != nil {
			return err
		}
		label, ok := opts[option]
		if !ok {
			return errs.E(errs.Invalid, "invalid_option", "Ask %s has no option %q: choose one of %s.", id, option,
				strings.Join(slices.Sorted(maps.Keys(opts)), ", "))
		}
		if a, err = q.AnswerAsk(ctx, db.AnswerAskParams{ID: id, Answer: sql.NullString{String: option, Valid: true},
			AnsweredAt: db.NullTime(now), AnsweredBy: sql.NullInt64{Int64: actor.UserID, Valid: true}}); err != nil {
			return err
		}
		ended := sql.NullString{}
		if Terminal(cur.ParkedFrom) {
			ended = db.NullTime(now)
		}
		if _, err := q.SetRunStatus(ctx, db.SetRunStatusParams{ID: cur.RunID, Status: cur.ParkedFrom, EndedAt: ended}); err != nil {
			return err
		}
		return s.event(ctx, q, cur.SessionID, actor, now, "ask.answered", id, option+": "+label)
	})
	if err != nil {
		return Ask{}, fmt.Errorf("answer ask %s: %w", id, err)
	}
	out, err := askFrom(a, a.ParkedFrom)
	if err != nil {
		return Ask{}, fmt.Errorf("answer ask %s: %w", id, err)
	}
	return out, nil
}

// toolName trims a tool's server and name and refuses either empty, over
// its limit, or holding a control character (a newline included: a tool's
// name is one line). Errors: server_required, server_too_long,
// tool_required, tool_too_long, invalid_characters.
func toolName(server, tool string) (string, string, error) {
	server, err := input.Required("server", server, MaxServer)
	if err != nil {
		return "", "", err
	}
	if tool, err = input.Required("tool", tool, MaxTool); err != nil {
		return "", "", err
	}
	if _, err := input.CleanLine("server", server); err != nil {
		return "", "", err
	}
	_, err = input.CleanLine("tool", tool)
	return server, tool, err
}

// ToolCallInput is a tool call an agent reports.
type ToolCallInput struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// SideEffecting may only raise the classification: the tool registry
	// decides, then Claude Code's built-in list (server claude-code), and
	// a tool nobody classified is side-effecting (see gate.Classify).
	SideEffecting *bool `json:"side_effecting"`
	// StartedAt, when set, is recorded as reported, even if earlier than
	// an approval (that is what the audit is for), but not before its run
	// started nor after now (give or take ClockSkew); unset, it is now.
	StartedAt *time.Time `json:"started_at"`
	// Step is the plan step the call runs, on a run executing a plan.
	Step string `json:"step,omitempty"`
	// Site is what the call names and where it stands, read as the check
	// reads it: its paths are what the call touches, compared with the
	// brief's blocked scope and recorded.
	Site
	// Who made the call and how it ended, as the executor says: its id
	// of the call (Claude Code's tool_use_id), the subagent that made it
	// ("" for the main agent), and why it failed ("" when it did not).
	Caller
	Error string `json:"error"`
}

// Caller is who makes a call, as the executor names it: its id of the
// call (Claude Code's tool_use_id) and the subagent making it (Claude
// Code's agent_id and agent_type; "" for the main agent).
type Caller struct {
	ToolUseID string `json:"tool_use_id,omitzero" jsonschema:"The executor's id of the call (Claude Code's tool_use_id)."`
	AgentID   string `json:"agent_id,omitzero" jsonschema:"The subagent that made the call (Claude Code's agent_id); left out for the main agent."`
	AgentType string `json:"agent_type,omitzero" jsonschema:"The subagent's type (Claude Code's agent_type)."`
}

// The limits of a caller's names, each, and of a call's error, in
// characters (runes).
const (
	MaxCaller = input.Name
	MaxError  = 2000
)

// Validate returns the caller trimmed. Errors: tool_use_id_too_long,
// agent_id_too_long, agent_type_too_long, invalid_characters.
func (c Caller) Validate() (Caller, error) {
	var err error
	for _, f := range []struct {
		name string
		v    *string
	}{{"tool_use_id", &c.ToolUseID}, {"agent_id", &c.AgentID}, {"agent_type", &c.AgentType}} {
		if *f.v, err = input.Optional(f.name, *f.v, MaxCaller); err != nil {
			return c, err
		}
		if _, err = input.CleanLine(f.name, *f.v); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ClockSkew is how far an agent's clock may run ahead of Madebook's: a
// tool call's started_at may be up to this much after now, and this much
// before its run started.
const ClockSkew = 5 * time.Minute

// startedWithin refuses a reported started_at before the run started or
// after now, each give or take ClockSkew. Errors: started_at_out_of_range.
func startedWithin(r db.GetRunRow, started, now time.Time) error {
	runStart, err := db.ParseTime(r.StartedAt)
	if err != nil {
		return fmt.Errorf("run %s: started_at: %w", r.ID, err)
	}
	if started.Before(runStart.Add(-ClockSkew)) || started.After(now.Add(ClockSkew)) {
		return errs.E(errs.Invalid, "started_at_out_of_range",
			"\"started_at\" %s is outside run %s: a tool call starts after its run started (%s) and no later than now (%s), give or take %s.",
			started.Format(time.RFC3339), r.ID, runStart.Format(time.RFC3339), now.Format(time.RFC3339), ClockSkew).In("started_at")
	}
	return nil
}

// ParseStartedAt reads the time a tool call started, as an agent reports
// it: RFC 3339. Errors: invalid_started_at.
func ParseStartedAt(s string) (time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errs.E(errs.Invalid, "invalid_started_at",
			"\"started_at\" must be an RFC 3339 time, e.g. 2026-11-29T12:00:00Z.").In("started_at")
	}
	return at, nil
}

// The limits of a tool call's step and paths.
const (
	MaxStep  = input.Name // a plan step's id
	MaxPaths = 100        // the paths one call names
	MaxPath  = 1000       // one of them
)

// Validate returns the input with its server, tool, step and site
// trimmed. Errors: server_required, server_too_long, tool_required,
// tool_too_long, step_too_long, and those of Site.Validate.
func (in ToolCallInput) Validate() (ToolCallInput, error) {
	var err error
	if in.Server, in.Tool, err = toolName(in.Server, in.Tool); err != nil {
		return in, err
	}
	if in.Step, err = input.Optional("step", in.Step, MaxStep); err != nil {
		return in, err
	}
	if in.Caller, err = in.Caller.Validate(); err != nil {
		return in, err
	}
	if in.Error, err = input.Optional("error", in.Error, MaxError); err != nil {
		return in, err
	}
	in.Error = policy.RedactSecrets(in.Error)
	in.Site, err = in.Site.Validate()
	return in, err
}

// RecordToolCall records a tool call on the agent's run, after the
// executor gate (gate.Decide, the rules the check answers by) lets it: a
// side-effecting call is refused while the session's brief is HARD_STOP
// or BLOCKED, or DECISION_REQUIRED and the call names a blocked path or
// tool (session_blocked, with the brief's next_action and reason); in a
// lifecycle state that executes nothing, once the session is tracked
// (not_executing, naming the state); on a parked run (run_parked, naming
// the ask), unless it started before the question was asked; and, on a
// run executing a plan, without a step (step_required) or on a step
// behind a stopping point not yet answered with its option
// (step_not_released). A call recorded in DIRECT_MODE has source_kind
// main, any other executor. Errors: forbidden, those of
// ToolCallInput.Validate, run_not_found, started_at_out_of_range (before
// the run started or after now), session_blocked, not_executing,
// run_parked, step_required, step_not_released, unknown_step.
func (s *Service) RecordToolCall(ctx context.Context, actor auth.Actor, runID string, in ToolCallInput) (ToolCall, error) {
	if err := actor.RequireAgent("record a tool call"); err != nil {
		return ToolCall{}, err
	}
	in, err := in.Validate()
	if err != nil {
		return ToolCall{}, err
	}
	server, tool := in.Server, in.Tool
	now := s.now()
	started := now
	if in.StartedAt != nil {
		started = in.StartedAt.UTC()
	}
	var (
		row     db.ToolCall
		session string        // the run's session, once read
		refusal *gate.Verdict // the gate's refusal, recorded below
	)
	call := gate.Call{Tool: gate.ToolName(server, tool), Step: in.Step}
	err = s.store.Write(ctx, func(q db.Querier) error {
		r, err := ownRun(ctx, q, actor, runID)
		if err != nil {
			return err
		}
		session = r.SessionID
		if in.StartedAt != nil {
			if err := startedWithin(r, started, now); err != nil {
				return err
			}
		}
		reg, err := registered(ctx, q, server, tool)
		if err != nil {
			return err
		}
		call.SideEffecting = writes(server, tool, reg, in.SideEffecting)
		sess, run, err := s.briefs.GateViewIn(ctx, q, r.SessionID, &r)
		if err != nil {
			return err
		}
		// What the call touches is read as the check reads it, and recorded
		// as project-relative paths.
		call.Touches = in.Site.touches(call.Tool, sess.Root, reg, call.SideEffecting)
		if in.StartedAt != nil {
			call.StartedAt = &started
		}
		v := gate.Decide(sess, run, call)
		if !v.Allow {
			refusal = &v
			return v.Err()
		}
		source := SourceExecutor
		if sess.Tracked && sess.Lifecycle == lifecycle.DirectMode {
			source = SourceMain
		}
		names := call.Touches.Names()
		for i, p := range names {
			names[i] = policy.RedactSecrets(p)
		}
		paths, err := json.Marshal(names)
		if err != nil {
			return fmt.Errorf("encode paths: %w", err)
		}
		row, err = q.CreateToolCall(ctx, db.CreateToolCallParams{RunID: runID, Server: server, Tool: tool,
			IsSideEffecting: call.SideEffecting, StartedAt: db.FormatTime(started), RecordedAt: db.FormatTime(now), SourceKind: source,
			Step: v.Step, Paths: string(paths), ToolUseID: in.ToolUseID, AgentID: in.AgentID, AgentType: in.AgentType, Error: in.Error})
		return err
	})
	if refusal != nil && refusal.Kind == errs.Conflict {
		// The refused call wrote nothing; the attempt is kept, in its own
		// transaction, as a line of the session's timeline.
		if rerr := s.refused(ctx, actor, session, runID, call, *refusal, now); rerr != nil {
			return ToolCall{}, fmt.Errorf("tool call on run %s: %w (and keeping the refusal failed: %v)", runID, err, rerr)
		}
	}
	if err != nil {
		return ToolCall{}, fmt.Errorf("tool call on run %s: %w", runID, err)
	}
	out, err := toolCallFrom(row)
	if err != nil {
		return ToolCall{}, fmt.Errorf("tool call on run %s: %w", runID, err)
	}
	return out, nil
}

// RefusedEvent is the kind of the timeline event that keeps a tool call
// the executor gate refused (409) when it was recorded.
const RefusedEvent = "tool_call.refused"

// refused keeps a tool call the gate refused: a tool_call.refused event in
// the session's timeline, its ref the run, its detail the tool, the step,
// the paths, the code and the reason the agent was told.
func (s *Service) refused(ctx context.Context, actor auth.Actor, session, runID string, c gate.Call, v gate.Verdict, now time.Time) error {
	var d strings.Builder
	d.WriteString(c.Tool)
	step := c.Step
	if st, ok := v.Details["step"].(string); ok && step == "" {
		step = st
	}
	if step != "" {
		fmt.Fprintf(&d, " (step %s)", step)
	}
	if names := c.Touches.Names(); len(names) > 0 {
		fmt.Fprintf(&d, " on %s", strings.Join(names, ", "))
	}
	fmt.Fprintf(&d, ": %s: %s", v.Code, v.Reason)
	return s.store.Write(ctx, func(q db.Querier) error {
		return s.event(ctx, q, session, actor, now, RefusedEvent, runID, d.String())
	})
}

// Site is what a tool call names beyond its tool, and where it stands,
// as the check and the record read it alike (gate.TouchesOf): the tool's
// input (its paths in the fields Claude Code's tools or the registry
// name, else every string of a side-effecting call's input; Bash's in its
// command, parsed), the agent's working directory and the project root
// (else the session's), and what only the agent's machine knows, when its
// hook sends it: the agent's home directory (which expands ~ in a
// command), more paths the call touches (as that machine resolved them,
// symlinks followed; a recorded call's paths as the agent reports them),
// and the shell scripts a command runs.
type Site struct {
	Input   input.Object      `json:"input,omitzero" jsonschema:"The call's input, as the executor sends it: the paths it names are read from it."`
	Cwd     string            `json:"cwd,omitzero" jsonschema:"The agent's working directory."`
	Root    string            `json:"root,omitzero" jsonschema:"The project root, an absolute path; the session's when left out."`
	Home    string            `json:"home,omitzero" jsonschema:"The agent's home directory, which expands ~ in a command."`
	Paths   []string          `json:"paths,omitzero" jsonschema:"The paths the call touches, relative to the repository: compared with the blocked scope."`
	Scripts map[string]string `json:"scripts,omitzero" jsonschema:"The shell scripts a command runs: their text, by path."`
}

// The limits of a site.
const (
	MaxCwd        = MaxPath // the working directory, the root and the home directory
	MaxScripts    = 8       // the scripts a call names
	MaxScriptSize = 64 << 10
)

// Validate returns the site trimmed. Errors: cwd_too_long, root_too_long,
// home_too_long, invalid_root (not absolute), paths_too_long,
// invalid_paths, scripts_too_long.
func (c Site) Validate() (Site, error) {
	var err error
	for _, f := range []struct {
		name string
		v    *string
	}{{"cwd", &c.Cwd}, {"root", &c.Root}, {"home", &c.Home}} {
		if *f.v, err = input.Optional(f.name, *f.v, MaxCwd); err != nil {
			return c, err
		}
	}
	if c.Root != "" && !gate.IsAbs(c.Root) {
		return c, errs.E(errs.Invalid, "invalid_root", "\"root\" (%q) is not an absolute path: send the project root as the agent's machine names it (/home/ada/app, C:\\work\\app).", c.Root).In("root")
	}
	if c.Paths, err = input.List("paths", c.Paths, MaxPaths, MaxPath); err != nil {
		return c, err
	}
	if len(c.Scripts) > MaxScripts {
		return c, errs.E(errs.Invalid, "scripts_too_long", "\"scripts\" holds %d scripts; at most %d.", len(c.Scripts), MaxScripts).In("scripts")
	}
	for p, text := range c.Scripts {
		if len(p) > MaxPath || len(text) > MaxScriptSize {
			return c, errs.E(errs.Invalid, "scripts_too_long",
				"A script in \"scripts\" is over %d bytes, or its path over %d: leave it out, and the command that runs it is taken as undecidable.", MaxScriptSize, MaxPath).In("scripts")
		}
	}
	return c, nil
}

// touches is what the call of tool touches, read from the site: the
// site's root, else the session's (root), else its cwd; the registry's
// path fields (reg); every string of the input guessed at when the call
// writes.
func (c Site) touches(tool, root string, reg *Tool, writes bool) gate.Touches {
	if c.Root != "" {
		root = c.Root
	}
	r := gate.Reading{Where: gate.Where{Root: root, Cwd: c.Cwd}, Home: c.Home, PathFields: pathFields(reg), Guess: writes, Resolved: c.Paths}
	if len(c.Scripts) > 0 {
		r.Script = func(p string) (string, bool) {
			text, ok := c.Scripts[p]
			return text, ok
		}
	}
	return gate.TouchesOf(tool, c.Input, r)
}

// CheckInput is the question a coding agent's hook asks before a tool
// call: the tool as the agent names it (Edit, Bash, mcp__server__tool),
// what it names and where it stands (Site), and optionally the run it is
// part of and the plan step it runs.
type CheckInput struct {
	Tool string `json:"tool"`
	Site
	Run  string `json:"run,omitzero"`
	Step string `json:"step,omitzero"`
	// ToolUseID, when set, is the executor's id of the call: Madebook
	// keeps that it checked it (the ungoverned-tool-calls audit looks for
	// calls no check names). AgentID is the subagent making it.
	ToolUseID string `json:"tool_use_id,omitzero"`
	AgentID   string `json:"agent_id,omitzero"`
}

// CheckResult is the gate's answer: whether the call may run now, how it
// was classified, and, when it may not, why and what to do instead.
type CheckResult struct {
	Allow         bool   `json:"allow"`
	SideEffecting bool   `json:"side_effecting"`
	Code          string `json:"code,omitempty"`
	// Reason says, when refused, why and what to do instead; when
	// allowed, it is the brief's reason.
	Reason string `json:"reason"`
	// NextAction is the session's brief's next action.
	NextAction string `json:"next_action"`
	// Watch are the blocked scope's paths, when a side-effecting call is
	// allowed while the session blocks some: the hook notes their state on
	// disk before the call and compares after it, and a change in them is
	// a breach (POST /api/v1/runs/{id}/breaches).
	Watch []string `json:"watch,omitempty"`
}

// Check answers whether the call may run now on the agent's own session,
// by the rules RecordToolCall refuses by (gate.Decide), and writes
// nothing. The tool is classified by the registry first (server and tool
// from SplitTool: claude-code for built-ins), then Claude Code's built-in
// list, else side-effecting. The brief comes from its cached inputs, so a
// check reads only the registry and, when a run is named, the run.
// Errors: forbidden, tool_required, tool_too_long, step_too_long,
// those of Site.Validate, session_not_found, run_not_found,
// run_not_in_session.
func (s *Service) Check(ctx context.Context, actor auth.Actor, session string, in CheckInput) (CheckResult, error) {
	if err := actor.RequireAgent("check a tool call"); err != nil {
		return CheckResult{}, err
	}
	name, err := input.Required("tool", in.Tool, MaxTool)
	if err != nil {
		return CheckResult{}, err
	}
	if _, err := input.CleanLine("tool", name); err != nil {
		return CheckResult{}, err
	}
	step, err := input.Optional("step", in.Step, MaxStep)
	if err != nil {
		return CheckResult{}, err
	}
	if in.Site, err = in.Site.Validate(); err != nil {
		return CheckResult{}, err
	}
	caller, err := Caller{ToolUseID: in.ToolUseID, AgentID: in.AgentID}.Validate()
	if err != nil {
		return CheckResult{}, err
	}
	sess, run, err := s.briefs.GateView(ctx, session, in.Run)
	if err != nil {
		return CheckResult{}, fmt.Errorf("check on %s: %w", session, err)
	}
	if sess.AgentKeyID != actor.KeyID {
		return CheckResult{}, errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
	}
	if in.Run != "" && run == nil {
		// Not one of the session's live runs: read exactly, and refused
		// when it is not the agent's or not of this session.
		if sess, run, err = s.gateRun(ctx, actor, session, in.Run); err != nil {
			return CheckResult{}, fmt.Errorf("check on %s: %w", session, err)
		}
	}
	server, tool := gate.SplitTool(name)
	now := s.now()
	reg, err := s.tools.lookup(ctx, s.store.Reader(), server, tool, now)
	if err != nil {
		return CheckResult{}, fmt.Errorf("check on %s: %w", session, err)
	}
	writes := writes(server, tool, reg, nil)
	if sess.Root == "" && in.Root == "" && in.Cwd != "" && gate.IsAbs(in.Cwd) {
		// A session with no recorded root takes the first cwd it is sent
		// as its root: an agent that later runs `cd db` is still in it.
		sess.Root = in.Cwd
		if err := s.briefs.SetRoot(ctx, actor, session, sess.Root); err != nil {
			return CheckResult{}, fmt.Errorf("check on %s: %w", session, err)
		}
	}
	call := gate.Call{Tool: name, SideEffecting: writes, Step: step}
	if writes && sess.BlocksPaths() {
		call.Touches = in.Site.touches(name, sess.Root, reg, writes)
	}
	v := gate.Decide(sess, run, call)
	reason := v.Reason
	if v.Allow {
		reason = sess.Reason
	}
	out := CheckResult{Allow: v.Allow, SideEffecting: writes, Code: v.Code, Reason: reason, NextAction: sess.NextAction.String()}
	if v.Allow && writes && sess.BlocksPaths() {
		out.Watch = sess.BlockedPaths()
	}
	if caller.ToolUseID != "" {
		// The proof that the call was checked before it ran.
		err := s.store.Write(ctx, func(q db.Querier) error {
			return q.CreateToolCheck(ctx, db.CreateToolCheckParams{SessionID: session, ToolUseID: caller.ToolUseID, Tool: name,
				AgentID: caller.AgentID, Allowed: v.Allow, CheckedAt: db.FormatTime(now)})
		})
		if err != nil {
			return CheckResult{}, fmt.Errorf("check on %s: keep the check: %w", session, err)
		}
	}
	return out, nil
}

// gateRun is GateViewIn for the session and the run id, in one read
// transaction. Errors: run_not_found, forbidden, run_not_in_session.
func (s *Service) gateRun(ctx context.Context, actor auth.Actor, session, id string) (sess gate.Session, run *gate.Run, err error) {
	err = s.store.Read(ctx, func(q db.Querier) error {
		r, err := ownRun(ctx, q, actor, id)
		if err != nil {
			return err
		}
		if r.SessionID != session {
			return notInSession(id, session)
		}
		sess, run, err = s.briefs.GateViewIn(ctx, q, session, &r)
		return err
	})
	return sess, run, err
}

// notInSession refuses a run of another session: run_not_in_session.
func notInSession(run, session string) error {
	return errs.E(errs.Invalid, "run_not_in_session", "Run %s belongs to another session, not %s.", run, session).In("run")
}

// writes is gate.Classify over a registry entry (nil: none).
func writes(server, tool string, reg *Tool, said *bool) bool {
	var word *bool
	if reg != nil {
		word = &reg.SideEffecting
	}
	return gate.Classify(server, tool, word, said)
}

// pathFields are the path fields a registry entry names (nil: none).
func pathFields(reg *Tool) []string {
	if reg == nil {
		return nil
	}
	return reg.PathFields
}

// registered is the registry's entry for a tool: nil when it is not in it.
func registered(ctx context.Context, q db.Querier, server, tool string) (*Tool, error) {
	t, err := q.GetTool(ctx, db.GetToolParams{Server: server, Tool: tool})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	out, err := toolFrom(t)
	return &out, err
}

// stoppingPoint checks that the plan the ask would be a stopping point of
// has the stopping point, and returns that plan's id: the plan the run
// executes or, for a run of no plan, the session's approved plan. Errors:
// unknown_stopping_point.
func stoppingPoint(ctx context.Context, q db.Querier, r db.GetRunRow, id int) (sql.NullInt64, error) {
	planID := r.PlanID
	if !planID.Valid {
		pl, err := q.GetLatestPlan(ctx, r.SessionID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return planID, err
		}
		if err != nil || pl.Status != "approved" {
			return planID, errs.E(errs.Invalid, "unknown_stopping_point",
				"Run %s executes no plan and session %s has no approved plan, so there is no stopping point %d: leave \"stopping_point\" out, or ask it once the plan is approved.",
				r.ID, r.SessionID, id).In("stopping_point")
		}
		planID = sql.NullInt64{Int64: pl.ID, Valid: true}
	}
	p, err := gatefacts.Plan(ctx, q, planID.Int64)
	if err != nil {
		return planID, err
	}
	var have []string
	for _, sp := range p.StoppingPoints {
		if sp.ID == id {
			return planID, nil
		}
		have = append(have, fmt.Sprint(sp.ID))
	}
	return planID, errs.E(errs.Invalid, "unknown_stopping_point", "Plan %d has no stopping point %d (it has: %s).",
		planID.Int64, id, strings.Join(have, ", ")).In("stopping_point")
}

// triggerError turns the ledger triggers' refusals into the errors the API
// answers (409); any other error is returned as is.
func triggerError(err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "ask_on_terminal_run"):
		return errs.E(errs.Conflict, "ask_on_terminal_run",
			"The database refused an unanswered ask on a run that has ended: ask on a running run, or start a new one.")
	case strings.Contains(err.Error(), "run_has_open_ask"):
		return errs.E(errs.Conflict, "run_has_open_ask", "The database refused to end a run that holds an unanswered ask: a person must answer it first.")
	}
	return err
}

// ownRun loads a run of the agent's own session. Errors: run_not_found,
// forbidden.
func ownRun(ctx context.Context, q db.Querier, actor auth.Actor, id string) (db.GetRunRow, error) {
	r, err := q.GetRun(ctx, id)
	if err != nil {
		return r, runNotFound(err, id)
	}
	return r, runOwner(actor, r.AgentKeyID)
}

// runNotFound is GetRun's error err, as run_not_found when no run has id.
func runNotFound(err error, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return errs.E(errs.NotFound, "run_not_found", "No run has the id %q.", id)
	}
	return err
}

// runOwner refuses a run of an agent key other than the actor's: forbidden.
func runOwner(actor auth.Actor, key int64) error {
	if key != actor.KeyID {
		return errs.E(errs.Forbidden, "forbidden", "This run belongs to another agent key.")
	}
	return nil
}

// event records one line of a session's timeline, chained
// (db.AppendEvent); a person's (an ask answered) goes in the activity
// record too. The write path (governance's Services.Transactor) writes
// the notifications it causes in the same transaction and invalidates the
// session's view once it commits.
func (s *Service) event(ctx context.Context, q db.Querier, session string, actor auth.Actor, at time.Time, kind, ref, detail string) error {
	arg := db.NewEvent{SessionID: session, At: db.FormatTime(at), Actor: actor.Label(), Kind: kind, Ref: ref, Detail: detail}
	if err := db.AppendEvent(ctx, q, arg); err != nil {
		return fmt.Errorf("record %s: %w", kind, err)
	}
	if actor.IsPerson() {
		return activity.Answered(ctx, q, at, actor.Who(), session, kind, ref, detail)
	}
	return nil
}

// runFrom converts a runs row; an error names the row.
func runFrom(r db.Run) (Run, error) {
	c := db.StoredRow("runs", r.ID)
	out := Run{ID: r.ID, Session: r.SessionID, Parent: r.ParentID.String, Plan: r.PlanID.Int64, Name: r.Name, ExternalID: r.ExternalID.String, Status: r.Status,
		StartedAt: c.Time("started_at", r.StartedAt), EndedAt: c.TimePtr("ended_at", r.EndedAt)}
	if err := c.Err(); err != nil {
		return Run{}, err
	}
	return out, nil
}

// askFrom converts an asks row, with the run's status after the call; an
// error names the row.
func askFrom(a db.Ask, runStatus string) (Ask, error) {
	c := db.StoredRow("asks", a.ID)
	out := Ask{ID: a.ID, Run: a.RunID, Prompt: a.Prompt, Options: map[string]string{}, ParkedFrom: a.ParkedFrom, StoppingPoint: int(a.StoppingPoint.Int64),
		CreatedAt: c.Time("created_at", a.CreatedAt), Answer: a.Answer.String, AnsweredAt: c.TimePtr("answered_at", a.AnsweredAt),
		RunStatus: runStatus}
	c.JSON("options", a.Options, &out.Options)
	if err := c.Err(); err != nil {
		return Ask{}, err
	}
	return out, nil
}

// toolCallFrom converts a tool_calls row; an error names the row.
func toolCallFrom(t db.ToolCall) (ToolCall, error) {
	c := db.StoredRow("tool_calls", t.ID)
	out := ToolCall{ID: t.ID, Run: t.RunID, Server: t.Server, Tool: t.Tool, SideEffecting: t.IsSideEffecting,
		SourceKind: t.SourceKind, Step: t.Step, Paths: c.List("paths", t.Paths), StartedAt: c.Time("started_at", t.StartedAt),
		RecordedAt: c.Time("recorded_at", t.RecordedAt), ToolUseID: t.ToolUseID, AgentID: t.AgentID, AgentType: t.AgentType,
		Error: t.Error}
	if err := c.Err(); err != nil {
		return ToolCall{}, err
	}
	return out, nil
}

// Tool is one entry of the operators' tool registry.
type Tool struct {
	Server        string `json:"server"`
	Tool          string `json:"tool"`
	SideEffecting bool   `json:"side_effecting"`
	// PathFields are the input fields the tool names its paths in
	// ("destination", "files[]", "edits[].file_path"); nil when the
	// registry names none, and every string of a side-effecting call's
	// input is taken for a path.
	PathFields []string  `json:"path_fields,omitempty"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// toolFrom reads a registry row.
func toolFrom(r db.Tool) (Tool, error) {
	c := db.StoredRow("tools", r.Server+"."+r.Tool)
	out := Tool{Server: r.Server, Tool: r.Tool, SideEffecting: r.SideEffecting, UpdatedAt: c.Time("updated_at", r.UpdatedAt)}
	if r.PathFields.Valid {
		out.PathFields = c.List("path_fields", r.PathFields.String)
		if out.PathFields == nil {
			out.PathFields = []string{}
		}
	}
	return out, c.Err()
}

// The limits of a tool's path fields.
const (
	MaxPathFields = 20
	MaxPathField  = 200
)

// ToolInput is how an admin classifies a tool.
type ToolInput struct {
	SideEffecting bool
	// PathFields, when not nil, are the input fields the tool names its
	// paths in: a member name, "a.b" for a member of an object member,
	// "files[]" for each element of an array ("edits[].file_path"). An
	// empty list says the tool names no paths.
	PathFields []string
}

// validPathFields refuses more than MaxPathFields fields, an empty one,
// one over MaxPathField bytes or not of the form name(.name)*, each name
// a member's (optionally ending in []). Errors: path_fields_too_long,
// invalid_path_fields.
func validPathFields(fields []string) ([]string, error) {
	if fields == nil {
		return nil, nil
	}
	if len(fields) > MaxPathFields {
		return nil, errs.E(errs.Invalid, "path_fields_too_long", "\"path_fields\" names %d fields; at most %d.", len(fields), MaxPathFields).In("path_fields")
	}
	out := make([]string, 0, len(fields))
	for i, f := range fields {
		f = strings.TrimSpace(f)
		ok := f != "" && len(f) <= MaxPathField
		for _, part := range strings.Split(f, ".") {
			name := strings.TrimSuffix(part, "[]")
			ok = ok && name != "" && !strings.ContainsAny(name, "[]") && !strings.ContainsFunc(name, unicode.IsControl)
		}
		if !ok {
			return nil, errs.E(errs.Invalid, "invalid_path_fields",
				"\"path_fields\"[%d] (%q) is not a field: name a member of the tool's input (\"destination\"), a member's member (\"options.path\"), or each element of an array (\"files[]\", \"edits[].file_path\"), at most %d bytes.",
				i, f, MaxPathField).In("path_fields")
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// ListTools lists the registry by server and tool.
func (s *Service) ListTools(ctx context.Context) ([]Tool, error) {
	rows, err := s.store.Reader().ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	out := make([]Tool, len(rows))
	for i, r := range rows {
		if out[i], err = toolFrom(r); err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
	}
	return out, nil
}

// SetTool classifies a tool (admin): whether it writes, and the fields it
// names its paths in. Errors: forbidden, server_required,
// server_too_long, tool_required, tool_too_long, path_fields_too_long,
// invalid_path_fields.
func (s *Service) SetTool(ctx context.Context, actor auth.Actor, server, tool string, in ToolInput) (Tool, error) {
	if err := actor.RequireAdmin("classify a tool"); err != nil {
		return Tool{}, err
	}
	defer s.tools.invalidate() // after the write commits
	server, tool, err := toolName(server, tool)
	if err != nil {
		return Tool{}, err
	}
	sideEffecting := in.SideEffecting
	fields, err := validPathFields(in.PathFields)
	if err != nil {
		return Tool{}, err
	}
	stored := sql.NullString{}
	if fields != nil {
		b, err := json.Marshal(fields)
		if err != nil {
			return Tool{}, fmt.Errorf("encode path fields: %w", err)
		}
		stored = sql.NullString{String: string(b), Valid: true}
	}
	now := s.now()
	err = s.store.Write(ctx, func(q db.Querier) error {
		before, err := toolState(ctx, q, server, tool)
		if err != nil {
			return err
		}
		if err := q.UpsertTool(ctx, db.UpsertToolParams{Server: server, Tool: tool, SideEffecting: sideEffecting, PathFields: stored,
			UpdatedAt: db.FormatTime(now), UpdatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}}); err != nil {
			return err
		}
		after := toolActivity(sideEffecting, fields)
		if !activity.Changed(before, after) {
			return nil
		}
		return activity.Record(ctx, q, now, actor.Who(), activity.ToolSet, toolTarget(server, tool), before, after)
	})
	if err != nil {
		return Tool{}, fmt.Errorf("classify %s.%s: %w", server, tool, err)
	}
	return Tool{Server: server, Tool: tool, SideEffecting: sideEffecting, PathFields: fields, UpdatedAt: now}, nil
}

// toolActivity is what the admin activity records of a classification.
func toolActivity(sideEffecting bool, fields []string) activity.State {
	st := activity.State{"side_effecting": sideEffecting}
	if fields != nil {
		st["path_fields"] = strings.Join(fields, ", ")
	}
	return st
}

// DeleteTool removes a tool from the registry (admin): its calls are
// side-effecting again unless they say otherwise. Errors: forbidden,
// server_required, server_too_long, tool_required, tool_too_long,
// invalid_characters, tool_not_found.
func (s *Service) DeleteTool(ctx context.Context, actor auth.Actor, server, tool string) error {
	if err := actor.RequireAdmin("remove a tool"); err != nil {
		return err
	}
	defer s.tools.invalidate() // after the write commits
	// Read as SetTool reads them: the names a tool was classified under
	// remove it, and a name no tool can have (empty, too long, a control
	// character or a byte that is not UTF-8) is refused before a query.
	server, tool, err := toolName(server, tool)
	if err != nil {
		return err
	}
	return s.store.Write(ctx, func(q db.Querier) error {
		before, err := toolState(ctx, q, server, tool)
		if err != nil {
			return err
		}
		n, err := q.DeleteTool(ctx, db.DeleteToolParams{Server: server, Tool: tool})
		if err != nil {
			return err
		}
		if n == 0 {
			return errs.E(errs.NotFound, "tool_not_found", "No tool %s.%s is in the registry.", server, tool)
		}
		return activity.Record(ctx, q, s.now(), actor.Who(), activity.ToolDelete, toolTarget(server, tool), before, nil)
	})
}

// toolTarget names a tool in the admin activity.
func toolTarget(server, tool string) string { return "tool " + server + "." + tool }

// toolState is what the admin activity records of a tool's
// classification: nil when the registry does not hold it.
func toolState(ctx context.Context, q db.Querier, server, tool string) (activity.State, error) {
	t, err := q.GetTool(ctx, db.GetToolParams{Server: server, Tool: tool})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	r, err := toolFrom(t)
	if err != nil {
		return nil, err
	}
	return toolActivity(r.SideEffecting, r.PathFields), nil
}
