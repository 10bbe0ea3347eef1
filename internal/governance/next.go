package governance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// Next is what every reply to an agent carries besides its own fields: the
// session's next action and its reason, decided by the same engine from
// the same inputs as the brief.
type Next struct {
	NextAction protocol.State `json:"next_action"`
	Reason     string         `json:"reason"`
}

// Next decides the session's next action as its brief would, from the
// session's cached view (readmodel.go), and delivers nothing: no resolution or
// remediation is stamped delivered and the session's last brief time is
// not touched (only Brief does either). Errors: forbidden (another
// agent's session), session_not_found.
func (s *BriefService) Next(ctx context.Context, actor auth.Actor, session string) (Next, error) {
	now := s.core.now()
	in, err := s.ownView(ctx, actor, session, now)
	if err != nil {
		return Next{}, err
	}
	p := protocol.Decide(in.facts, now)
	return Next{NextAction: p.NextAction, Reason: p.Reason.String()}, nil
}

// NextOfRun is Next for the session the run belongs to. Errors:
// forbidden, run_not_found.
func (s *BriefService) NextOfRun(ctx context.Context, actor auth.Actor, run string) (Next, error) {
	r, err := s.core.store.Reader().GetRun(ctx, run)
	if errors.Is(err, sql.ErrNoRows) {
		return Next{}, errs.E(errs.NotFound, "run_not_found", "No run has the id %q.", run)
	} else if err != nil {
		return Next{}, fmt.Errorf("next action of run %s: %w", run, err)
	}
	return s.Next(ctx, actor, r.SessionID)
}

// ownView returns the session's view, if actor may see the session.
// Errors: session_not_found, forbidden.
func (s *BriefService) ownView(ctx context.Context, actor auth.Actor, session string, now time.Time) (*sessionView, error) {
	in, err := s.views.view(ctx, session, now)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.E(errs.NotFound, "session_not_found", "No session has the id %q.", session)
	} else if err != nil {
		return nil, fmt.Errorf("view of %s: %w", session, err)
	}
	if err := checkOwner(actor, in.state.AgentKeyID); err != nil {
		return nil, err
	}
	return in, nil
}

// Reply is an answer to an agent's call with the session's next action
// beside the answer's own fields: {…the answer…, "next_action", "reason"}.
// Answer must encode as a JSON object.
type Reply struct {
	Answer any
	Next
}

// MarshalJSON encodes the answer and adds next_action and reason to it.
func (r Reply) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(r.Answer)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("reply: the answer %T does not encode as a JSON object", r.Answer)
	}
	next, err := json.Marshal(r.Next)
	if err != nil {
		return nil, err
	}
	if len(body) == 2 { // {}
		return next, nil
	}
	out := make([]byte, 0, len(body)+len(next))
	out = append(out, body[:len(body)-1]...)
	out = append(out, ',')
	return append(out, next[1:]...), nil
}
