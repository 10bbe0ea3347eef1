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
	a, err := openApp(ctx, *path)
	if err != nil {
		return err
	}
	defer a.Close()
	key, err := a.auth.CreateKey(ctx, *name)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.stdout, key)
	return err
}
