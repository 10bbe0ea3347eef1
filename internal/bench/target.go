package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	neturl "net/url"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for --db

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/web"
)

// target is the Madebook the bench measures: a migrated database, the
// services over it and the HTTP surface, as `madebook serve` builds them
// with its defaults (rate limits, delivery lease, gate cap).
type target struct {
	*app.App
	handler http.Handler
}

// openTarget opens and migrates the database at dsn and builds the
// services and the handler over it, as `madebook serve` does.
func openTarget(ctx context.Context, dsn string) (*target, error) {
	a, err := app.Open(ctx, dsn, app.Options{})
	if err != nil {
		return nil, err
	}
	return &target{App: a, handler: a.Handler(web.Deps{})}, nil
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
