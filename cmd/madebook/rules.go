package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/rules"
)

// runRulesInfer is `madebook rules infer`: it proposes architecture rules
// from a repository's imports and, with --apply, stores them as advisory.
func runRulesInfer(ctx context.Context, c stdio, args []string) error {
	f := newFlags("rules infer", "madebook rules infer --repo PATH [--apply] [--db PATH]",
		"Read a repository's Go and JS/TS imports and propose an architecture rule for each\n"+
			"concern of a built-in catalogue (server state, HTTP routing, logging, database access)\n"+
			"that two components or more use: the library most of them chose, and the departures.")
	repo := f.String("repo", "", "the repository to read, a directory (`PATH`)")
	apply := f.Bool("apply", false, "store the proposed rules, as advisory ones, in the database")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *repo == "" {
		return f.Fail("rules infer needs --repo")
	}
	info, err := os.Stat(*repo)
	if err != nil || !info.IsDir() {
		return fmt.Errorf("%s is not a directory", *repo)
	}
	proposed, err := rules.Infer(os.DirFS(*repo))
	if err != nil {
		return fmt.Errorf("read the repository: %w", err)
	}
	if err := printRules(c.stdout, proposed); err != nil || !*apply {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		n, err := a.Gov.Policies.ImportRules(ctx, operator(c.getenv), proposed)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.stdout, "stored %d advisory rules in %s\n", n, db.Describe(*path))
		return err
	})
}

// printRules prints proposed architecture rules, one a line.
func printRules(w io.Writer, rs []rules.Rule) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no rule to propose: no concern of the catalogue is used by two components or more")
		return err
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%s: %s, chosen in %d of %d components (%d%%); departures: %s\n", r.Concern, r.Chosen,
			r.Support, r.Total, r.Support*100/r.Total, strings.Join(r.Departures, ", ")); err != nil {
			return err
		}
	}
	return nil
}
