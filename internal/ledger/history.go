package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

// MaxHistoryCalls is the most tool calls History returns for a session:
// the latest.
const MaxHistoryCalls = 500

// RunHistory is one run with the questions it asked and the tool calls it
// made, oldest first.
type RunHistory struct {
	Run
	Asks      []Ask      `json:"asks"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// History returns a session's runs, oldest first, each with its asks and
// its tool calls (the latest MaxHistoryCalls of the session's), read in
// one snapshot. Anyone signed in may read any session; an agent only its
// own. Errors: session_not_found, forbidden.
func (s *Service) History(ctx context.Context, actor auth.Actor, session string) ([]RunHistory, error) {
	var out []RunHistory
	err := s.store.Read(ctx, func(q db.Querier) error {
		sess, err := q.GetSession(ctx, session)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
		} else if err != nil {
			return err
		}
		if actor.IsAgent() && sess.AgentKeyID != actor.KeyID {
			return errs.E(errs.Forbidden, "forbidden", "This session belongs to another agent key.")
		}
		runs, err := q.ListSessionRuns(ctx, session)
		if err != nil {
			return err
		}
		byID := make(map[string]int, len(runs))
		out = make([]RunHistory, len(runs))
		for i, r := range runs {
			if out[i].Run, err = runFrom(r); err != nil {
				return err
			}
			out[i].Asks, out[i].ToolCalls = []Ask{}, []ToolCall{}
			byID[r.ID] = i
		}
		asks, err := q.ListSessionAsks(ctx, session)
		if err != nil {
			return err
		}
		for _, a := range asks {
			i := byID[a.Ask.RunID]
			ask, err := askFrom(a.Ask, out[i].Status)
			if err != nil {
				return err
			}
			out[i].Asks = append(out[i].Asks, ask)
		}
		calls, err := q.ListSessionToolCalls(ctx, db.ListSessionToolCallsParams{SessionID: session, MaxCalls: MaxHistoryCalls})
		if err != nil {
			return err
		}
		slices.Reverse(calls) // oldest first
		for _, c := range calls {
			i := byID[c.ToolCall.RunID]
			call, err := toolCallFrom(c.ToolCall)
			if err != nil {
				return err
			}
			out[i].ToolCalls = append(out[i].ToolCalls, call)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", session, err)
	}
	return out, nil
}
