package governance

import (
	"context"
	"fmt"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/protocol"
)

// MaxListedSessions bounds the sessions list.
const MaxListedSessions = 500

// SessionSummary is one line of the sessions list: the session and what its
// agent would be told next, computed by the same engine from the same
// inputs as its brief, delivering nothing.
type SessionSummary struct {
	Session
	NextAction protocol.State `json:"next_action"`
	Reason     string         `json:"reason"`
}

// ListSessions lists the newest sessions (at most MaxListedSessions) with
// their next action. Each session's brief inputs come from the same cache
// the briefs use, so a list of sessions that brief often reads little.
func (s *Service) ListSessions(ctx context.Context) ([]SessionSummary, error) {
	now := s.now()
	rows, err := s.store.Reader().ListSessionStates(ctx, MaxListedSessions)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]SessionSummary, len(rows))
	for i, r := range rows {
		in, err := s.briefInputs(ctx, r.ID, now)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %s: %w", r.ID, err)
		}
		b := assemble(in, nil, now)
		out[i] = SessionSummary{Session: s.sessionFrom(db.GetSessionRow{ID: r.ID, AgentKeyID: r.AgentKeyID, Agent: r.Agent,
			Title: r.Title, Lifecycle: r.Lifecycle, PausedAt: in.state.PausedAt, PauseReason: in.state.PauseReason,
			LastBriefAt: r.LastBriefAt, CreatedAt: r.CreatedAt, MissionSlug: r.MissionSlug, MissionHighRisk: in.state.HighRisk}),
			NextAction: b.NextAction, Reason: b.Reason}
	}
	return out, nil
}
