package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
)

// The limits of a page of the ledger (?limit=).
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 500
)

// Page is a page of the ledger as a request's query names it: Limit
// (?limit=) the most entries, a whole number from 1 to MaxPageLimit,
// DefaultPageLimit when empty; After (?after=) the next_after of the page
// before, empty for the first page.
type Page struct {
	Limit string
	After string
}

// ErrLimit refuses a page's limit out of bounds.
var ErrLimit = errs.E(errs.Invalid, "invalid_limit", "The limit must be a whole number from 1 to %d.", MaxPageLimit).In("limit")

// limit reads the page's limit. Errors: invalid_limit.
func (p Page) limit() (int, error) {
	if p.Limit == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(p.Limit)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, ErrLimit
	}
	return n, nil
}

// RunCounts are how many tool calls a run made and questions it asked.
type RunCounts struct {
	ToolCalls int64 `json:"tool_calls"`
	Asks      int64 `json:"asks"`
}

// RunSummary is a run with its counts: an entry of a session's runs.
type RunSummary struct {
	Run
	Counts RunCounts `json:"counts"`
}

// RunList is a page of a session's runs, oldest first.
type RunList struct {
	Items []RunSummary `json:"items"`
	// NextAfter is the cursor of the next page (its ?after=, the last
	// run's id); nil on the last page.
	NextAfter *string `json:"next_after"`
}

// AnsweredAsk is a question a run asked, with who answered it.
type AnsweredAsk struct {
	Ask
	// AnsweredBy is the email of the person who answered; "" while the
	// ask waits.
	AnsweredBy string `json:"answered_by,omitempty"`
}

// RunLedger is one run as the ledger holds it: its counts, every question
// it asked with its answer, and a page of its tool calls in the order
// they were recorded. Each tool call's Tool is the name the agent calls
// it by (gate.AgentName: Bash, write_file, mcp__github__create_pr).
type RunLedger struct {
	RunSummary
	Asks      []AnsweredAsk `json:"asks"`
	ToolCalls []ToolCall    `json:"tool_calls"`
	// NextAfter is the cursor of the next page of tool calls (its
	// ?after=, the last call's id); nil on the last page.
	NextAfter *int64 `json:"next_after"`
}

// mayRead lets any person read a session's ledger, and an agent only its
// own sessions', as SessionService.Get does. Errors: forbidden.
func mayRead(actor auth.Actor, keyID int64) error {
	if actor.IsPerson() || (actor.IsAgent() && actor.KeyID == keyID) {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
}

// ListRuns returns a page of a session's runs, oldest first, each with
// how many tool calls it made and questions it asked, read in one
// snapshot. Any person may read any session's; an agent only its own.
// Errors: session_not_found, forbidden, invalid_limit, invalid_after (not
// a run of the session).
func (s *Service) ListRuns(ctx context.Context, actor auth.Actor, session string, p Page) (RunList, error) {
	var out RunList
	err := s.store.Read(ctx, func(q db.Querier) error {
		sess, err := q.GetSession(ctx, session)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
		} else if err != nil {
			return err
		}
		if err := mayRead(actor, sess.AgentKeyID); err != nil {
			return err
		}
		limit, err := p.limit()
		if err != nil {
			return err
		}
		arg := db.ListSessionRunsAfterParams{SessionID: session, Lim: int64(limit) + 1}
		if p.After != "" {
			r, err := q.GetRun(ctx, p.After)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && r.SessionID != session) {
				return errs.E(errs.Invalid, "invalid_after",
					"after must be the id of one of the session's runs, as a page's next_after gives it.").In("after")
			} else if err != nil {
				return err
			}
			arg.AfterStartedAt, arg.AfterID = r.StartedAt, r.ID
		}
		rows, err := q.ListSessionRunsAfter(ctx, arg)
		if err != nil {
			return err
		}
		out.Items = make([]RunSummary, 0, min(len(rows), limit))
		for i, row := range rows {
			if i == limit {
				next := out.Items[i-1].ID
				out.NextAfter = &next
				break
			}
			r, err := runFrom(row.Run)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, RunSummary{Run: r, Counts: RunCounts{ToolCalls: row.ToolCalls, Asks: row.Asks}})
		}
		return nil
	})
	if err != nil {
		return RunList{}, fmt.Errorf("runs of session %s: %w", session, err)
	}
	return out, nil
}

// ReadRun returns a run with its counts, its questions and their
// answers, and a page of its tool calls in the order they were recorded,
// read in one snapshot. Any person may read any run; an agent only those
// of its own sessions. Errors: run_not_found, forbidden, invalid_limit,
// invalid_after (not a tool call id).
func (s *Service) ReadRun(ctx context.Context, actor auth.Actor, id string, p Page) (RunLedger, error) {
	var out RunLedger
	err := s.store.Read(ctx, func(q db.Querier) error {
		r, err := q.GetRun(ctx, id)
		if err != nil {
			return runNotFound(err, id)
		}
		if err := mayRead(actor, r.AgentKeyID); err != nil {
			return err
		}
		limit, err := p.limit()
		if err != nil {
			return err
		}
		var after int64
		if p.After != "" {
			if after, err = strconv.ParseInt(p.After, 10, 64); err != nil || after < 1 {
				return errs.E(errs.Invalid, "invalid_after",
					"after must be the id of a tool call, as a page's next_after gives it.").In("after")
			}
		}
		if out.Run, err = runFrom(db.Run{ID: r.ID, SessionID: r.SessionID, ParentID: r.ParentID, Name: r.Name, Status: r.Status,
			StartedAt: r.StartedAt, EndedAt: r.EndedAt, PlanID: r.PlanID, ExternalID: r.ExternalID}); err != nil {
			return err
		}
		counts, err := q.CountRunLedger(ctx, id)
		if err != nil {
			return err
		}
		out.Counts = RunCounts{ToolCalls: counts.ToolCalls, Asks: counts.Asks}
		asks, err := q.ListRunAsks(ctx, id)
		if err != nil {
			return err
		}
		out.Asks = make([]AnsweredAsk, len(asks))
		for i, a := range asks {
			if out.Asks[i].Ask, err = askFrom(a.Ask, r.Status); err != nil {
				return err
			}
			out.Asks[i].AnsweredBy = a.AnsweredByEmail
		}
		calls, err := q.ListRunToolCallsAfter(ctx, db.ListRunToolCallsAfterParams{RunID: id, AfterID: after, Lim: int64(limit) + 1})
		if err != nil {
			return err
		}
		out.ToolCalls = make([]ToolCall, 0, min(len(calls), limit))
		for i, row := range calls {
			if i == limit {
				next := out.ToolCalls[i-1].ID
				out.NextAfter = &next
				break
			}
			c, err := toolCallFrom(row)
			if err != nil {
				return err
			}
			c.Tool = gate.AgentName(c.Server, c.Tool)
			out.ToolCalls = append(out.ToolCalls, c)
		}
		return nil
	})
	if err != nil {
		return RunLedger{}, fmt.Errorf("ledger of run %s: %w", id, err)
	}
	return out, nil
}
