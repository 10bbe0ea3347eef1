package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies every migration the database does not have yet, returns
// how many it applied, and prepares every query on the now-current schema.
// Call it once, before the store is shared.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.w, fsys)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	if s.rq == nil {
		if err := s.prepare(ctx); err != nil {
			return len(res), err
		}
	}
	return len(res), nil
}
