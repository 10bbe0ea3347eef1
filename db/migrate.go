package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Each engine has its own migrations, numbered alike: SQLite's in
// migrations/, PostgreSQL's in postgres/migrations/, whose first file
// (00017_schema.sql) is the whole schema as SQLite has it after its
// 00017. A schema change from 00018 on is one migration per engine with
// the same number.
//
//go:embed migrations/*.sql
var migrations embed.FS

//go:embed postgres/migrations/*.sql
var pgMigrations embed.FS

// Migrations returns the migrations Migrate applies on the engine dsn
// names (see Open), one .sql file each.
func Migrations(dsn string) fs.FS {
	dir, fsys := "migrations", fs.FS(migrations)
	if IsPostgres(dsn) {
		dir, fsys = "postgres/migrations", pgMigrations
	}
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directories are embedded: they exist
	}
	return sub
}

// Migrate applies every migration the database does not have yet, returns
// how many it applied, prepares every query on the now-current schema,
// and chains the timeline's and the activity record's rows written before
// they were chained (db/trail.go), once.
// Call it once, before the store is shared. On PostgreSQL, replicas that
// start together migrate one at a time (goose's session lock).
func (s *Store) Migrate(ctx context.Context) (int, error) {
	fsys, dialect := Migrations(""), goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.pg {
		fsys, dialect = Migrations("postgres://"), goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return 0, fmt.Errorf("migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, s.w, fsys, opts...)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	if !s.prepared {
		if err := s.prepare(ctx); err != nil {
			return len(res), err
		}
		s.prepared = true
	}
	if _, err := s.chainOldRows(ctx); err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	return len(res), nil
}
