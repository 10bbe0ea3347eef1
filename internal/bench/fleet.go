package bench

import (
	"context"
	"fmt"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/governance"
)

// fleetKeys is how many agent keys the bench's fleet shares out its
// sessions over: each key stays within the default rate limits, which
// the server it measures enforces as serve does.
const fleetKeys = 10

// fleet is the agents bench measures: their keys' secrets, and for
// each session its id and the run its Claude Code hook holds its calls
// in (the i-th session is the i-th key's mod fleetKeys).
type fleet struct {
	keys, sessions, runs []string
}

// loadFleet makes fleetKeys agent keys and n sessions on one mission, one
// in ten with an open gate, each with the run a Claude Code hook opens.
func loadFleet(ctx context.Context, t *target, n int) (fleet, error) {
	var f fleet
	u, err := t.Auth.AddUser(ctx, auth.CommandLine("bench"), "bench@example.com", "bench-password-123", auth.Lead)
	if err != nil {
		return f, err
	}
	lead := auth.Actor{UserID: u.ID, Email: u.Email, Role: u.Role}
	if _, err := t.Gov.Missions.Create(ctx, lead, governance.MissionInput{Slug: "bench", Title: "Bench"}); err != nil {
		return f, err
	}
	f.keys = make([]string, fleetKeys)
	agents := make([]auth.Actor, fleetKeys)
	for i := range f.keys {
		if f.keys[i], err = t.Auth.CreateKey(ctx, auth.CommandLine("bench"), fmt.Sprintf("bench-agent-%d", i+1)); err != nil {
			return f, err
		}
		if agents[i], err = t.Auth.Authenticate(ctx, f.keys[i]); err != nil {
			return f, err
		}
	}
	f.sessions, f.runs = make([]string, n), make([]string, n)
	for i := range f.sessions {
		agent := agents[i%fleetKeys]
		s, err := t.Gov.Sessions.Create(ctx, agent, governance.SessionInput{Mission: "bench", Title: fmt.Sprintf("work %d", i)})
		if err != nil {
			return f, err
		}
		f.sessions[i] = s.ID
		r, _, err := t.Ledger.OpenRun(ctx, agent, s.ID, gate.ClaudeCode, "", fmt.Sprintf("claude-session-%d", i))
		if err != nil {
			return f, err
		}
		f.runs[i] = r.ID
		if i%10 == 0 {
			if _, err := t.Gov.Decisions.Open(ctx, agent, s.ID, governance.DecisionInput{Title: "Schema",
				Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}, AllowedScope: []string{"web/"}}); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// checkBody is the check a Claude Code hook sends before a Bash
// command, on the run it holds the session's calls in, with the working
// directory Claude Code reports and the project root: in a session whose
// gate blocks db/migrations (one in ten) the command is parsed and what it
// touches compared with the scope, the gate's dearest check.
func checkBody(run string) string {
	return `{"tool":"Bash","input":{"command":"cd web && go test ./... 2>&1 | tail -20","description":"Run the web tests"},` +
		`"cwd":"/home/dev/shop","root":"/home/dev/shop","home":"/home/dev","run":"` + run + `"}`
}
