package main

import (
	"context"
	"fmt"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/app"
)

// runMigrate is `madebook migrate`: it brings the database's schema up to
// date (serve does as well, at every start).
func runMigrate(ctx context.Context, c stdio, args []string) error {
	f := newFlags("migrate", "madebook migrate [--db PATH|URL]",
		"Create the database if it does not exist (a SQLite file; a PostgreSQL database must\n"+
			"exist already) and apply every migration it lacks.\n"+
			"serve does this too, at every start.")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(*app.App) error {
		_, err := fmt.Fprintf(c.stdout, "database %s is up to date\n", db.Describe(*path))
		return err
	})
}
