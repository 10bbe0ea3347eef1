package demo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// simulatedAgent briefs every session and now and then opens a gate on
// one of its working sessions, at its pace.
type simulatedAgent struct {
	api      *client
	pace     Pace
	sessions []session
	logger   *slog.Logger
	last     map[string]string // session → its last next_action
	acks     map[string]string // session → its last brief's id, acknowledged on the next
	opened   int
}

func (s *simulatedAgent) run(ctx context.Context) {
	briefs, gates := time.NewTicker(s.pace.BriefEvery), time.NewTicker(s.pace.GateEvery)
	defer briefs.Stop()
	defer gates.Stop()
	s.briefAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-briefs.C:
			s.briefAll(ctx)
		case <-gates.C:
			s.openGate(ctx)
		}
	}
}

// briefAll briefs each session and logs what changed: a new next action,
// and every resolution or remediation a brief delivers.
func (s *simulatedAgent) briefAll(ctx context.Context) {
	for _, ses := range s.sessions {
		var b struct {
			BriefID     string `json:"brief_id"`
			NextAction  string `json:"next_action"`
			Reason      string `json:"reason"`
			Resolutions []struct {
				Ref         string `json:"ref"`
				Resolution  string `json:"resolution"`
				Instruction string `json:"instruction"`
			} `json:"resolutions"`
		}
		req := map[string]string{"session": ses.id}
		if ack := s.acks[ses.id]; ack != "" {
			req["ack"] = ack
		}
		err := s.api.call(ctx, s.api.agent, http.MethodPost, "/brief", req, http.StatusOK, &b)
		if err != nil {
			s.failed(ctx, err)
			return
		}
		s.acks[ses.id] = b.BriefID
		for _, r := range b.Resolutions {
			s.logger.Info("demo agent received a resolution", "session", ses.title, "ref", r.Ref,
				"resolution", r.Resolution, "instruction", r.Instruction)
		}
		if prev, ok := s.last[ses.id]; ok && prev != b.NextAction {
			s.logger.Info("demo agent's next action changed", "session", ses.title, "from", prev, "to", b.NextAction, "reason", b.Reason)
		}
		s.last[ses.id] = b.NextAction
	}
}

// openGate opens the next gate topic on the next working session that is
// not stopped or blocked.
func (s *simulatedAgent) openGate(ctx context.Context) {
	if s.opened >= s.pace.MaxGates {
		return
	}
	for i := range s.sessions {
		ses := s.sessions[(s.opened+i)%len(s.sessions)]
		if next := s.last[ses.id]; !ses.working || next == "HARD_STOP" || next == "BLOCKED" {
			continue
		}
		g := gateTopics[(s.opened+2)%len(gateTopics)] // the seeding asked the first two
		ref, err := s.api.gate(ctx, ses.id, g)
		if err != nil {
			s.failed(ctx, err)
			return
		}
		s.opened++
		s.logger.Info("demo agent opened a gate", "ref", ref, "session", ses.title, "title", g.Title,
			"opened", s.opened, "max", s.pace.MaxGates)
		return
	}
}

// failed logs a failed call, unless the demo is stopping.
func (s *simulatedAgent) failed(ctx context.Context, err error) {
	if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		s.logger.Warn("demo agent", "error", err)
	}
}
