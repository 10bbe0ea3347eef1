package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os/user"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/demo"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/rules"
	"github.com/madebook/madebook/web"
)

// app is an open, migrated database and the services over it: what every
// command that needs a database shares, built once, here. Every call into
// internal/governance is in this file.
type app struct {
	path  string
	store *db.Store
	auth  *auth.Service
	gov   *governance.Services
}

// openApp opens the database at path (creating it if needed), migrates
// it, and installs what a fresh database ships: the "Secrets in source"
// policy set. The governance services run with opts (serve's flags).
func openApp(ctx context.Context, path string, opts governance.Options) (*app, error) {
	store, err := db.Open(path)
	if err != nil {
		return nil, err
	}
	a := &app{path: path, store: store, auth: auth.NewService(store, time.Now), gov: governance.New(store, time.Now, opts)}
	if _, err := store.Migrate(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	if err := a.gov.Policies.InstallDefaults(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return a, nil
}

// Close closes the database, once the background reads of sessions'
// brief inputs under way are done.
func (a *app) Close() error {
	a.gov.WaitRefreshes()
	return a.store.Close()
}

// withApp opens the app on the database at path, runs fn with it, and
// closes it.
func withApp(ctx context.Context, path string, fn func(*app) error) error {
	a, err := openApp(ctx, path, governance.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// audit is the audit reports' service, applying the server's delivery
// lease (serve --delivery-lease) to unacknowledged-deliveries.
func (a *app) audit() *audit.Service {
	s := audit.NewService(a.store, time.Now)
	s.SetDeliveryLease(a.gov.Options().DeliveryLease)
	return s
}

// importRules stores proposed architecture rules as advisory ones, as the
// operator at the command line, and returns how many it stored.
func (a *app) importRules(ctx context.Context, by auth.Actor, rs []rules.Rule) (int, error) {
	return a.gov.Policies.ImportRules(ctx, by, rs)
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

// handler is the whole HTTP surface over the app's services: the
// console, the API, MCP and /brief, served as d's settings say (its
// logger, cookies, proxies, limits, metrics; the services are filled in).
func (a *app) handler(d web.Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Auth, d.Gov, d.Ledger = a.auth, a.gov, ledger.NewService(a.gov.Transactor(), time.Now, a.gov.Briefs)
	d.Audit, d.Health = a.audit(), a.store.Ping
	return web.NewServer(d)
}

// runBriefTimes writes the agents' last-brief times, kept in memory, every
// interval until ctx is done, then once more.
func (a *app) runBriefTimes(ctx context.Context, interval time.Duration, report func(error)) {
	a.gov.Briefs.RunTimes(ctx, interval, report)
}

// runExpiry records the gates open past their mission's gate_ttl as
// expired, at once and then every interval until ctx is done, logging how
// many each sweep recorded (when any) and its failures.
func (a *app) runExpiry(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	a.gov.Decisions.RunExpiry(ctx, interval, func(n int, err error) {
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
func (a *app) openGateAgo(ctx context.Context, secret, session string, g demo.Gate, age time.Duration) error {
	agent, err := a.auth.Authenticate(ctx, secret)
	if err != nil {
		return err
	}
	then := time.Now().Add(-age)
	_, err = governance.New(a.store, func() time.Time { return then }, a.gov.Options()).Decisions.Open(ctx, agent, session,
		governance.DecisionInput{Title: g.Title, Question: g.Question, Proposal: g.Proposal, BlockedScope: g.Blocked, AllowedScope: g.Allowed})
	return err
}
