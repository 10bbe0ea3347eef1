package main

import "context"

// runTokenCreate is `madebook token create`: it prints a new personal API
// token, once.
func runTokenCreate(ctx context.Context, c stdio, args []string) error {
	f := newFlags("token create", "madebook token create --email E [--db PATH]",
		"Create a personal API token for a person and print it (mbt_…) on stdout. It is shown\n"+
			"this once: Madebook keeps only its hash. It has the rights of the person's role.")
	email := f.String("email", "", "the `EMAIL` of the person the token acts as")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *email == "" {
		return f.fail("token create needs --email")
	}
	return printSecret(ctx, c, *path, func(a *app) (string, error) { return a.auth.CreateToken(ctx, operator(c.getenv), *email) })
}
