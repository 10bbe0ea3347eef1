package main

import (
	"context"
	"log/slog"
	"os/user"
	"time"

	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/demo"
	"github.com/madebook/madebook/internal/governance"
)

// withApp opens Madebook on the database at path with opts (internal/app:
// migrated, the services built), runs fn with it, and closes it.
func withApp(ctx context.Context, path string, opts app.Options, fn func(*app.App) error) error {
	a, err := app.Open(ctx, path, opts)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// operator is the person at the local command line, as the admin
// activity records what they do: "cli", with the operating system's user
// (getenv's USER when the system cannot say).
func operator(getenv func(string) string) auth.Actor {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return auth.CommandLine(u.Username)
	}
	return auth.CommandLine(getenv("USER"))
}

// runExpiry records the gates open past their mission's gate_ttl as
// expired, at once and then every interval until ctx is done, logging how
// many each sweep recorded (when any) and its failures.
func runExpiry(ctx context.Context, a *app.App, interval time.Duration, logger *slog.Logger) {
	a.Gov.Decisions.RunExpiry(ctx, interval, func(n int, err error) {
		if err != nil {
			logger.Error("gate expiry", "error", err)
		} else if n > 0 {
			logger.Info("gates expired", "count", n)
		}
	})
}

// openGateAgo opens a gate on the session as the agent whose key is
// secret, as if age ago (the demo's gate that nobody answered in time). It
// writes through a second set of services with a clock set back: the
// session must not have been briefed yet, so that no cached brief misses
// the gate.
func openGateAgo(a *app.App) func(ctx context.Context, secret, session string, g demo.Gate, age time.Duration) error {
	return func(ctx context.Context, secret, session string, g demo.Gate, age time.Duration) error {
		agent, err := a.Auth.Authenticate(ctx, secret)
		if err != nil {
			return err
		}
		then := time.Now().Add(-age)
		_, err = governance.New(a.Store, func() time.Time { return then }, a.Gov.Options()).Decisions.Open(ctx, agent, session,
			governance.DecisionInput{Title: g.Title, Question: g.Question, Proposal: g.Proposal, BlockedScope: g.Blocked, AllowedScope: g.Allowed})
		return err
	}
}
