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
// agent would be told next, computed by the same engine, delivering nothing.
type SessionSummary struct {
	Session
	NextAction protocol.State `json:"next_action"`
	Reason     string         `json:"reason"`
}

// ListSessions lists the newest sessions (at most MaxListedSessions) with
// their next action, from one snapshot, in three queries whatever their
// number.
func (s *Service) ListSessions(ctx context.Context) ([]SessionSummary, error) {
	var out []SessionSummary
	now := s.now()
	err := s.store.Read(ctx, func(q db.Querier) error {
		rows, err := q.ListSessionStates(ctx, MaxListedSessions)
		if err != nil {
			return err
		}
		decs, err := q.ListAllOpenDecisions(ctx)
		if err != nil {
			return err
		}
		rems, err := q.ListAllOpenRemediations(ctx)
		if err != nil {
			return err
		}
		bySessionD := map[string][]db.Decision{}
		for _, d := range decs {
			bySessionD[d.SessionID] = append(bySessionD[d.SessionID], d)
		}
		bySessionR := map[string][]db.Remediation{}
		for _, r := range rems {
			bySessionR[r.SessionID] = append(bySessionR[r.SessionID], r)
		}
		out = make([]SessionSummary, len(rows))
		for i, r := range rows {
			b := assemble(sessionState{ID: r.ID, PausedAt: r.PausedAt, PauseReason: r.PauseReason, HighRisk: r.HighRisk,
				PlanStatus: r.PlanStatus, PlanNote: r.PlanNote, PlanProposedAt: r.PlanProposedAt},
				bySessionD[r.ID], bySessionR[r.ID], nil, now)
			out[i] = SessionSummary{Session: s.sessionFrom(db.GetSessionRow{ID: r.ID, AgentKeyID: r.AgentKeyID, Agent: r.Agent,
				Title: r.Title, Lifecycle: r.Lifecycle, PausedAt: r.PausedAt, PauseReason: r.PauseReason,
				LastBriefAt: r.LastBriefAt, CreatedAt: r.CreatedAt, MissionSlug: r.MissionSlug, MissionHighRisk: r.HighRisk}),
				NextAction: b.NextAction, Reason: b.Reason}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}
