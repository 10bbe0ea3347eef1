// Package app is Madebook assembled over one database: the store opened
// and migrated, every service built over it once with its options, and
// the HTTP surface. `madebook serve`, the commands that work on a
// database file and the load generator (internal/bench) all start here,
// so they run the same product.
package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web"
)

// Options configure the services (serve's flags; the zero Options are
// serve's defaults).
type Options struct {
	Governance governance.Options
	// TokenMaxAge is the longest lifetime a new agent key or personal
	// token may be given (0: no limit).
	TokenMaxAge time.Duration
}

// App is an open, migrated database and the services over it.
type App struct {
	Path   string // the database's path or URL, as given
	Store  *db.Store
	Auth   *auth.Service
	Gov    *governance.Services
	Ledger *ledger.Service
	// Audit applies the governance's delivery lease to the
	// unacknowledged-deliveries report.
	Audit *audit.Service
}

// Open opens the database at path (a SQLite file, created if needed, or
// a postgres:// URL), migrates it, installs what a fresh database ships
// (the "Secrets in source" policy set) and builds the services with opts.
func Open(ctx context.Context, path string, opts Options) (*App, error) {
	store, err := db.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := store.Migrate(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	gov := governance.New(store, time.Now, opts.Governance)
	if err := gov.Policies.InstallDefaults(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return &App{Path: path, Store: store, Auth: auth.NewService(store, time.Now).WithMaxAge(opts.TokenMaxAge), Gov: gov,
		Ledger: ledger.NewService(gov.Transactor(), time.Now, gov.Briefs),
		Audit:  audit.NewService(store, time.Now, gov.Options().DeliveryLease)}, nil
}

// Close closes the database, once the background reads of sessions'
// views under way are done.
func (a *App) Close() error {
	a.Gov.WaitRefreshes()
	return a.Store.Close()
}

// Handler is the whole HTTP surface over the services: the console, the
// API, MCP and /brief, served as d's settings say (its logger, cookies,
// proxies, limits, metrics; the services are filled in).
func (a *App) Handler(d web.Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Auth, d.Gov, d.Ledger, d.Audit, d.Health = a.Auth, a.Gov, a.Ledger, a.Audit, a.Store.Ping
	return web.NewServer(d)
}
