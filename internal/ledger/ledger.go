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

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ids"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/lifecycle"
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
	store db.Transactor
	now   func() time.Time
}

// NewService returns the ledger service.
func NewService(store db.Transactor, now func() time.Time) *Service {
	return &Service{store: store, now: func() time.Time { return now().UTC() }}
}

// Run is one run of an agent's work.
type Run struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Parent  string `json:"parent,omitempty"`
	Name    string `json:"name"`
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
	CreatedAt  time.Time         `json:"created_at"`
	Answer     string            `json:"answer,omitempty"`
	AnsweredAt *time.Time        `json:"answered_at,omitempty"`
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
	SourceKind string    `json:"source_kind"`
	StartedAt  time.Time `json:"started_at"`
	RecordedAt time.Time `json:"recorded_at"`
}

// The sources of a tool call.
const (
	SourceMain     = "main"
	SourceExecutor = "executor"
)

// StartRun opens a run on the agent's own session, under an optional
// parent run of the same session. Errors: as OpenRun's.
func (s *Service) StartRun(ctx context.Context, actor auth.Actor, session, name, parent string) (Run, error) {
	r, _, err := s.OpenRun(ctx, actor, session, name, parent, "")
	return r, err
}

// MaxRunExternalID is the longest id an agent's client gives a run.
const MaxRunExternalID = 200

// OpenRun opens a run on the agent's own session, under an optional
// parent run of the same session. With an external id the session already
// gave a run, it opens nothing and returns that run, whatever its status
// (re-attach), with created false. Errors: forbidden, name_required,
// name_too_long, external_id_too_long, session_not_found, parent_not_found.
func (s *Service) OpenRun(ctx context.Context, actor auth.Actor, session, name, parent, externalID string) (_ Run, created bool, err error) {
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
		row, err = q.CreateRun(ctx, db.CreateRunParams{ID: ids.New("run_"), SessionID: session, ParentID: p, Name: name,
			StartedAt: db.FormatTime(now), ExternalID: external})
		if err != nil {
			return err
		}
		return event(ctx, q, session, actor, now, "run.started", row.ID, name)
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
		return event(ctx, q, r.SessionID, actor, now, "run."+status, id, r.Name)
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
	Prompt  string            `json:"prompt"`
	Options map[string]string `json:"options"`
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
	return AskInput{Prompt: prompt, Options: in.Options}, nil
}

// RecordAsk records a question on the agent's run and parks the run, in
// one transaction; the outcome it parked from is kept on the ask. Errors:
// forbidden, those of AskInput.Validate, run_not_found, run_parked (it
// already waits on a question).
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
		if a, err = q.CreateAsk(ctx, db.CreateAskParams{ID: ids.New("ask_"), RunID: runID, Prompt: prompt, Options: string(options),
			ParkedFrom: r.Status, CreatedAt: db.FormatTime(now)}); err != nil {
			return err
		}
		if _, err := q.SetRunStatus(ctx, db.SetRunStatusParams{ID: runID, Status: Parked}); err != nil {
			return err
		}
		return event(ctx, q, r.SessionID, actor, now, "ask.opened", a.ID, prompt)
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
		return event(ctx, q, cur.SessionID, actor, now, "ask.answered", id, option+": "+label)
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

// toolName trims a tool's server and name and refuses either empty or
// over its limit. Errors: server_required, server_too_long, tool_required,
// tool_too_long.
func toolName(server, tool string) (string, string, error) {
	server, err := input.Required("server", server, MaxServer)
	if err != nil {
		return "", "", err
	}
	tool, err = input.Required("tool", tool, MaxTool)
	return server, tool, err
}

// ToolCallInput is a tool call an agent reports.
type ToolCallInput struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// SideEffecting, when unset, is taken from the tool registry; a tool
	// nobody classified is side-effecting.
	SideEffecting *bool `json:"side_effecting"`
	// StartedAt, when set, is recorded as reported, even if earlier (that
	// is what the audit is for); unset, it is now.
	StartedAt *time.Time `json:"started_at"`
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

// Validate returns the input with its server and tool trimmed. Errors:
// server_required, server_too_long, tool_required, tool_too_long.
func (in ToolCallInput) Validate() (ToolCallInput, error) {
	var err error
	in.Server, in.Tool, err = toolName(in.Server, in.Tool)
	return in, err
}

// RecordToolCall records a tool call on the agent's run. A side-effecting
// call on a parked run is refused: it would run before the answer that
// governs it. Once the session's agent has reported a lifecycle event
// (tracked), a side-effecting call in a state that executes nothing is
// refused too (not_executing, naming the state); an untracked session is
// not gated. A call recorded in DIRECT_MODE has source_kind main, any
// other executor. Errors: forbidden, those of ToolCallInput.Validate,
// run_not_found, not_executing, run_parked.
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
	var row db.ToolCall
	err = s.store.Write(ctx, func(q db.Querier) error {
		r, err := ownRun(ctx, q, actor, runID)
		if err != nil {
			return err
		}
		writes, err := classify(ctx, q, server, tool, in.SideEffecting)
		if err != nil {
			return err
		}
		state, tracked := lifecycle.State(r.Lifecycle), r.LifecycleAt.Valid
		if writes && tracked && !lifecycle.Executes(state) {
			return errs.E(errs.Conflict, "not_executing",
				"Session %s is in %s, which executes nothing: a side-effecting call runs only in EXECUTING or DIRECT_MODE.",
				r.SessionID, state).With("lifecycle", string(state))
		}
		source := SourceExecutor
		if tracked && state == lifecycle.DirectMode {
			source = SourceMain
		}
		if writes && r.Status == Parked {
			a, err := q.GetOpenAsk(ctx, runID)
			if err != nil {
				return err
			}
			// A call reported late that started before the question was
			// asked happened before the run parked: it is recorded as
			// reported, and the audit finds it. Any other is refused.
			asked := db.StoredRow("asks", a.ID)
			askedAt := asked.Time("created_at", a.CreatedAt)
			if err := asked.Err(); err != nil {
				return err
			}
			if in.StartedAt == nil || !started.Before(askedAt) {
				return errs.E(errs.Conflict, "run_parked", "Run %s is parked on ask %s (%q): a side-effecting call must wait for a person's answer.",
					runID, a.ID, a.Prompt).With("ask", a.ID)
			}
		}
		row, err = q.CreateToolCall(ctx, db.CreateToolCallParams{RunID: runID, Server: server, Tool: tool,
			IsSideEffecting: writes, StartedAt: db.FormatTime(started), RecordedAt: db.FormatTime(now), SourceKind: source})
		return err
	})
	if err != nil {
		return ToolCall{}, fmt.Errorf("tool call on run %s: %w", runID, err)
	}
	call, err := toolCallFrom(row)
	if err != nil {
		return ToolCall{}, fmt.Errorf("tool call on run %s: %w", runID, err)
	}
	return call, nil
}

// classify says whether a call writes: as the call says, else as the
// registry says, else yes (fail safe).
func classify(ctx context.Context, q db.Querier, server, tool string, said *bool) (bool, error) {
	if said != nil {
		return *said, nil
	}
	t, err := q.GetTool(ctx, db.GetToolParams{Server: server, Tool: tool})
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return t.SideEffecting, nil
}

// ownRun loads a run of the agent's own session. Errors: run_not_found,
// forbidden.
func ownRun(ctx context.Context, q db.Querier, actor auth.Actor, id string) (db.GetRunRow, error) {
	r, err := q.GetRun(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errs.E(errs.NotFound, "run_not_found", "No run has the id %q.", id)
	} else if err != nil {
		return r, err
	}
	if r.AgentKeyID != actor.KeyID {
		return r, errs.E(errs.Forbidden, "forbidden", "This run belongs to another agent key.")
	}
	return r, nil
}

func event(ctx context.Context, q db.Querier, session string, actor auth.Actor, at time.Time, kind, ref, detail string) error {
	if err := q.AddEvent(ctx, db.AddEventParams{SessionID: session, At: db.FormatTime(at), Actor: actor.Label(),
		Kind: kind, Ref: ref, Detail: detail}); err != nil {
		return fmt.Errorf("record %s: %w", kind, err)
	}
	return nil
}

// runFrom converts a runs row; an error names the row.
func runFrom(r db.Run) (Run, error) {
	c := db.StoredRow("runs", r.ID)
	out := Run{ID: r.ID, Session: r.SessionID, Parent: r.ParentID.String, Name: r.Name, ExternalID: r.ExternalID.String, Status: r.Status,
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
	out := Ask{ID: a.ID, Run: a.RunID, Prompt: a.Prompt, Options: map[string]string{}, ParkedFrom: a.ParkedFrom,
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
		SourceKind: t.SourceKind, StartedAt: c.Time("started_at", t.StartedAt), RecordedAt: c.Time("recorded_at", t.RecordedAt)}
	if err := c.Err(); err != nil {
		return ToolCall{}, err
	}
	return out, nil
}

// Tool is one entry of the operators' tool registry.
type Tool struct {
	Server        string    `json:"server"`
	Tool          string    `json:"tool"`
	SideEffecting bool      `json:"side_effecting"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// ListTools lists the registry by server and tool.
func (s *Service) ListTools(ctx context.Context) ([]Tool, error) {
	rows, err := s.store.Reader().ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	out := make([]Tool, len(rows))
	for i, r := range rows {
		c := db.StoredRow("tools", r.Server+"."+r.Tool)
		out[i] = Tool{Server: r.Server, Tool: r.Tool, SideEffecting: r.SideEffecting, UpdatedAt: c.Time("updated_at", r.UpdatedAt)}
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
	}
	return out, nil
}

// SetTool classifies a tool (admin). Errors: forbidden, server_required,
// server_too_long, tool_required, tool_too_long.
func (s *Service) SetTool(ctx context.Context, actor auth.Actor, server, tool string, sideEffecting bool) (Tool, error) {
	if err := actor.RequireAdmin("classify a tool"); err != nil {
		return Tool{}, err
	}
	server, tool, err := toolName(server, tool)
	if err != nil {
		return Tool{}, err
	}
	now := s.now()
	err = s.store.Write(ctx, func(q db.Querier) error {
		return q.UpsertTool(ctx, db.UpsertToolParams{Server: server, Tool: tool, SideEffecting: sideEffecting,
			UpdatedAt: db.FormatTime(now), UpdatedBy: sql.NullInt64{Int64: actor.UserID, Valid: true}})
	})
	if err != nil {
		return Tool{}, fmt.Errorf("classify %s.%s: %w", server, tool, err)
	}
	return Tool{Server: server, Tool: tool, SideEffecting: sideEffecting, UpdatedAt: now}, nil
}

// DeleteTool removes a tool from the registry (admin): its calls are
// side-effecting again unless they say otherwise. Errors: forbidden,
// tool_not_found.
func (s *Service) DeleteTool(ctx context.Context, actor auth.Actor, server, tool string) error {
	if err := actor.RequireAdmin("remove a tool"); err != nil {
		return err
	}
	// Trimmed as SetTool and RecordToolCall trim them: the names a tool
	// was classified under remove it.
	server, tool = strings.TrimSpace(server), strings.TrimSpace(tool)
	return s.store.Write(ctx, func(q db.Querier) error {
		n, err := q.DeleteTool(ctx, db.DeleteToolParams{Server: server, Tool: tool})
		if err != nil {
			return err
		}
		if n == 0 {
			return errs.E(errs.NotFound, "tool_not_found", "No tool %s.%s is in the registry.", server, tool)
		}
		return nil
	})
}
