package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for --db

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web"
)

// target is the Madebook the bench measures: a migrated database, the
// services over it, and the HTTP surface serve builds from them, with
// serve's defaults (rate limits, delivery lease, gate cap).
type target struct {
	store   *db.Store
	auth    *auth.Service
	gov     *governance.Services
	ledger  *ledger.Service
	handler http.Handler
}

// openTarget opens and migrates the database at dsn and builds the
// services and the handler over it, as `madebook serve` does.
func openTarget(ctx context.Context, dsn string) (*target, error) {
	store, err := db.Open(dsn)
	if err != nil {
		return nil, err
	}
	if _, err := store.Migrate(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	t := &target{store: store, auth: auth.NewService(store, time.Now), gov: governance.New(store, time.Now, governance.Options{})}
	if err := t.gov.Policies.InstallDefaults(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	t.ledger = ledger.NewService(t.gov.Transactor(), time.Now, t.gov.Briefs)
	t.handler = web.NewServer(web.Deps{Logger: slog.New(slog.DiscardHandler), Auth: t.auth, Gov: t.gov, Ledger: t.ledger,
		Audit: audit.NewService(store, time.Now), Health: store.Ping})
	return t, nil
}

// Close closes the database, once the background reads of sessions'
// brief inputs under way are done.
func (t *target) Close() error {
	t.gov.WaitRefreshes()
	return t.store.Close()
}

// throwawayDatabase creates a throwaway database on the PostgreSQL server of
// url and returns its URL and a function that drops it.
func throwawayDatabase(ctx context.Context, url string) (string, func() error, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return "", nil, fmt.Errorf("--db: %w", err)
	}
	server, err := sql.Open("pgx", url)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("madebook_bench_%d", time.Now().UnixNano())
	if _, err := server.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		server.Close()
		return "", nil, fmt.Errorf("create the bench's database on %s: %w", db.Describe(url), err)
	}
	u.Path = "/" + name
	return u.String(), func() error {
		defer server.Close()
		if _, err := server.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop the bench's database %s: %w", name, err)
		}
		return nil
	}, nil
}
