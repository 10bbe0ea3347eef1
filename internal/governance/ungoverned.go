package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// The kinds of breach (scope_breaches.kind): a call that wrote into a
// blocked scope, and a side-effecting call that ran with no check.
const (
	BreachScope      = "scope"
	BreachUngoverned = "ungoverned"
)

// UngovernedPolicy is what an ungoverned call's violation names where a
// policy's violation names its policy.
const UngovernedPolicy = "Ungoverned tool call"

// UngovernedEvent is the kind of the timeline event an ungoverned call
// records, its ref the run, its detail the call.
const UngovernedEvent = "tool_call.ungoverned"

// The limits of a transcript report.
const (
	MaxTranscriptCalls = 1000 // the calls one report names
)

// TranscriptCall is one tool call an executor's transcript holds, as its
// hook reports it: never its input, only the executor's id of it, the
// tool as the agent knows it, when it ran, the paths it named, and the
// subagent that made it.
type TranscriptCall struct {
	ToolUseID string    `json:"tool_use_id"`
	Tool      string    `json:"tool"`
	At        time.Time `json:"at"`
	Paths     []string  `json:"paths,omitempty"`
	AgentID   string    `json:"agent_id,omitempty"`
	AgentType string    `json:"agent_type,omitempty"`
}

// TranscriptInput is the body of POST /api/v1/runs/{id}/transcript.
type TranscriptInput struct {
	Calls []TranscriptCall `json:"calls"`
}

// TranscriptReport is what Madebook made of a transcript: how many calls
// it read, and those found ungoverned now (a call reported again is not
// found again).
type TranscriptReport struct {
	Reported   int              `json:"reported"`
	Ungoverned []TranscriptCall `json:"ungoverned"`
}

// Validate returns the input with each call's texts trimmed and its paths
// cut to the ledger's limits and redacted (policy.RedactSecrets). Errors
// name the call's field: calls_required, too_many_calls,
// tool_use_id_required, tool_use_id_too_long, tool_required,
// tool_too_long, at_required, agent_id_too_long, agent_type_too_long,
// invalid_characters.
func (in TranscriptInput) Validate() (TranscriptInput, error) {
	if len(in.Calls) == 0 {
		return in, errs.E(errs.Invalid, "calls_required", "Name the tool calls the transcript holds: \"calls\": [{\"tool_use_id\", \"tool\", \"at\"}].").In("calls")
	}
	if len(in.Calls) > MaxTranscriptCalls {
		return in, errs.E(errs.Invalid, "too_many_calls", "A report names at most %d calls; send the rest in another.", MaxTranscriptCalls).In("calls")
	}
	out := make([]TranscriptCall, len(in.Calls))
	for i, c := range in.Calls {
		if err := c.validate(); err != nil {
			// Which call, in the message and the field.
			if e, ok := errs.As(err); ok {
				e2 := *e
				e2.Message = fmt.Sprintf("Call %d: %s", i+1, e.Message)
				e2.Field = fmt.Sprintf("calls[%d].%s", i, e.Field)
				return in, &e2
			}
			return in, err
		}
		var paths []string
		for _, p := range c.Paths {
			if len(paths) == MaxBreachFiles {
				break
			}
			if p = strings.TrimSpace(p); p != "" && len(p) <= MaxBreachFile {
				paths = append(paths, policy.RedactSecrets(p))
			}
		}
		c.Paths, c.At = paths, c.At.UTC()
		out[i] = c
	}
	in.Calls = out
	return in, nil
}

// validate trims the call's texts in place and checks them, its errors
// naming the call's own field.
func (c *TranscriptCall) validate() error {
	var err error
	if c.ToolUseID, err = input.Required("tool_use_id", c.ToolUseID, MaxToolUseID); err != nil {
		return err
	}
	if c.Tool, err = input.Required("tool", c.Tool, MaxBreachTool); err != nil {
		return err
	}
	if c.AgentID, err = input.Optional("agent_id", c.AgentID, MaxToolUseID); err != nil {
		return err
	}
	if c.AgentType, err = input.Optional("agent_type", c.AgentType, MaxToolUseID); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"tool_use_id", c.ToolUseID}, {"tool", c.Tool}, {"agent_id", c.AgentID}, {"agent_type", c.AgentType}} {
		if _, err = input.CleanLine(f.name, f.v); err != nil {
			return err
		}
	}
	if c.At.IsZero() {
		return errs.E(errs.Invalid, "at_required", "Say when the call ran: \"at\", an RFC 3339 time.").In("at")
	}
	return nil
}

// ReportTranscript compares the tool calls an executor's transcript holds
// with the checks the executor gate made, on the agent's own run: a
// side-effecting call (gate.Classify, the registry deciding) that no
// check names ran ungoverned. Each such call is kept once (a breach of
// kind ungoverned) and, in the same transaction, is a critical violation
// of the session (HARD_STOP until a person clears it), a
// tool_call.ungoverned and a violation.detected event, and the
// notifications a critical violation causes. Madebook's own tools and
// read-only ones are governed by definition. Errors: forbidden (not an
// agent, or another key's run), those of TranscriptInput.Validate,
// run_not_found.
func (s *ScopeBreachService) ReportTranscript(ctx context.Context, actor auth.Actor, runID string, in TranscriptInput) (TranscriptReport, error) {
	if err := actor.RequireAgent("report a transcript's tool calls"); err != nil {
		return TranscriptReport{}, err
	}
	in, err := in.Validate()
	if err != nil {
		return TranscriptReport{}, err
	}
	now := s.core.now()
	out := TranscriptReport{Reported: len(in.Calls), Ungoverned: []TranscriptCall{}}
	err = s.core.write(ctx, func(q db.Querier) error {
		out.Ungoverned = out.Ungoverned[:0]
		r, err := q.GetRun(ctx, runID)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "run_not_found", "No run has the id %q.", runID)
		} else if err != nil {
			return err
		}
		if r.AgentKeyID != actor.KeyID {
			return errs.E(errs.Forbidden, "forbidden", "This run belongs to another agent key.")
		}
		for _, c := range in.Calls {
			found, err := s.ungoverned(ctx, q, actor, r.SessionID, runID, c, now)
			if err != nil {
				return err
			}
			if found {
				out.Ungoverned = append(out.Ungoverned, c)
			}
		}
		return nil
	})
	if err != nil {
		return TranscriptReport{}, fmt.Errorf("transcript on run %s: %w", runID, err)
	}
	return out, nil
}

// ungoverned keeps the call c when it is side-effecting, no check names
// it, and it is not kept yet, with its violation and events; it reports
// whether it did.
func (s *ScopeBreachService) ungoverned(ctx context.Context, q db.Querier, actor auth.Actor, session, runID string, c TranscriptCall, now time.Time) (bool, error) {
	server, tool := gate.SplitTool(c.Tool)
	var registered *bool
	if t, err := q.GetTool(ctx, db.GetToolParams{Server: server, Tool: tool}); err == nil {
		registered = &t.SideEffecting
	} else if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	if !gate.Classify(server, tool, registered, nil) {
		return false, nil
	}
	checked, err := q.ToolCheckExists(ctx, db.ToolCheckExistsParams{SessionID: session, ToolUseID: c.ToolUseID})
	if err != nil || checked {
		return false, err
	}
	b, err := q.CreateUngovernedCall(ctx, db.CreateUngovernedCallParams{SessionID: session, RunID: runID, Server: server, Tool: tool,
		ToolUseID: c.ToolUseID, Files: encodeList(orEmpty(c.Paths)), DetectedAt: db.FormatTime(now), AgentID: c.AgentID,
		AgentType: c.AgentType, RanAt: sql.NullString{String: db.FormatTime(c.At), Valid: true}})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // kept already
	} else if err != nil {
		return false, err
	}
	call := gate.ToolName(server, tool)
	file := ""
	if len(c.Paths) > 0 {
		file = c.Paths[0]
	}
	v, err := q.CreateBreachViolation(ctx, db.CreateBreachViolationParams{SessionID: session,
		BreachID: sql.NullInt64{Int64: b.ID, Valid: true}, Policy: UngovernedPolicy, Match: call, File: file, DetectedAt: db.FormatTime(now)})
	if err != nil {
		return false, err
	}
	who := ""
	if c.AgentID != "" {
		who = fmt.Sprintf(", by subagent %s (%s)", c.AgentID, c.AgentType)
	}
	detail := fmt.Sprintf("%s (tool use %s%s) ran at %s%s", BreachTitle(protocol.ScopeBreach{Call: call, Ungoverned: true}), c.ToolUseID, who,
		c.At.Format(time.RFC3339), namedPaths(c.Paths))
	if err := s.core.event(ctx, q, session, actor, now, UngovernedEvent, runID, detail); err != nil {
		return false, err
	}
	return true, s.core.event(ctx, q, session, actor, now, notify.KindViolationDetected, fmt.Sprint(v.ID),
		fmt.Sprintf("%s %s: %s%s", v.Severity, v.Policy, v.Match, namedPaths(c.Paths)))
}

// namedPaths is ", naming a, b" for a call's paths, "" for none.
func namedPaths(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return ", naming " + strings.Join(paths, ", ")
}

// orEmpty is list, or an empty list for nil.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
