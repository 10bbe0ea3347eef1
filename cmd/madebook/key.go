package main

import (
	"context"
	"fmt"
)

// runKeyCreate is `madebook key create`: it prints a new agent key, once.
func runKeyCreate(ctx context.Context, c stdio, args []string) error {
	f := newFlags("key create", "madebook key create --name NAME [--db PATH]",
		"Create an agent key and print its secret (mbk_…) on stdout. It is shown this once:\n"+
			"Madebook keeps only its hash. An agent sends it as `Authorization: Bearer mbk_…`.")
	name := f.String("name", "", "the key's `NAME`, unique (e.g. the agent or the machine it runs on)")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *name == "" {
		return f.fail("key create needs --name")
	}
	return printSecret(ctx, c, *path, func(a *app) (string, error) { return a.auth.CreateKey(ctx, operator(c.getenv), *name) })
}

// printSecret creates a secret on the database at path and prints it, one
// line on stdout: key create and token create.
func printSecret(ctx context.Context, c stdio, path string, create func(*app) (string, error)) error {
	return withApp(ctx, path, func(a *app) error {
		secret, err := create(a)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(c.stdout, secret)
		return err
	})
}
