package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/auth"
)

// runTokenCreate is `madebook token create`: it prints a new personal API
// token, once.
func runTokenCreate(ctx context.Context, c stdio, args []string) error {
	f := newFlags("token create", "madebook token create --email E [--name NAME] [--expires D] [--db PATH]",
		"Create a personal API token for a person and print it (mbt_…) on stdout. It is shown\n"+
			"this once: Madebook keeps only its hash and its first characters. It has the rights\n"+
			"of the person's role, until it expires or is revoked (`madebook token revoke ID`).")
	f.Notes = lifetimeNotes
	email := f.String("email", "", "the `EMAIL` of the person the token acts as")
	name := f.String("name", "", "the token's `NAME`, to tell the person's tokens apart (default \"token\" and today's date)")
	var expires, maxAge lifetimeFlag
	f.Var(&expires, "expires", "the token stops working `D` after it is made (e.g. 90d, 12h, 30m); default never")
	maxAgeFlag(f, &maxAge)
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *email == "" {
		return f.Fail("token create needs --email")
	}
	return withApp(ctx, *path, app.Options{TokenMaxAge: maxAge.duration()}, func(a *app.App) error {
		t, err := a.Auth.IssueToken(ctx, operator(c.getenv),
			auth.TokenRequest{Email: *email, Name: *name, Lifetime: expires.duration()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(c.stdout, t.Secret)
		return err
	})
}

// runTokenList is `madebook token list`: every personal token, never a
// secret.
func runTokenList(ctx context.Context, c stdio, args []string) error {
	f := newFlags("token list", "madebook token list [--email E] [--format table|json] [--db PATH]",
		"List the personal API tokens, oldest first: id, name, owner, prefix, when each was\n"+
			"made, last used (to the minute) and expires, and whether it is active, expired or\n"+
			"revoked. Secrets are never shown: Madebook does not keep them.")
	email := f.String("email", "", "only the tokens of the person with this `EMAIL`")
	format := f.String("format", "table", "`FORMAT`: table or json")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return f.Fail("--format is table or json, not %q", *format)
	}
	if err := existingDB(*path); err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		tokens, err := a.Auth.ListTokens(ctx, operator(c.getenv))
		if err != nil {
			return err
		}
		if *email != "" {
			want := strings.ToLower(strings.TrimSpace(*email))
			kept := tokens[:0]
			for _, t := range tokens {
				if t.Owner == want {
					kept = append(kept, t)
				}
			}
			tokens = kept
		}
		if *format == "json" {
			return printJSON(c.stdout, map[string]any{"tokens": tokens})
		}
		rows := make([][]string, 0, len(tokens))
		for _, t := range tokens {
			rows = append(rows, []string{strconv.FormatInt(t.ID, 10), t.Name, t.Owner, shownPrefix(t.Prefix), when(&t.CreatedAt),
				when(t.LastUsedAt), when(t.ExpiresAt), t.State})
		}
		return printCredentials(c.stdout, []string{"ID", "NAME", "OWNER", "TOKEN", "CREATED", "LAST USED", "EXPIRES", "STATE"}, rows)
	})
}

// runTokenRevoke is `madebook token revoke ID`: the token is refused from
// its next request on.
func runTokenRevoke(ctx context.Context, c stdio, args []string) error {
	f := newFlags("token revoke", "madebook token revoke ID [--db PATH]",
		"Revoke the personal API token with this id (`madebook token list` shows it): every\n"+
			"server on the database refuses it (401 credential_revoked) from its next request on.\n"+
			"It cannot be undone; the admin activity records it.")
	path := f.dbFlag()
	rest, err := f.parseArgs(c, args)
	if err != nil {
		return err
	}
	id, err := credentialID(f, "token revoke", rest)
	if err != nil {
		return err
	}
	if err := existingDB(*path); err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		t, err := a.Auth.RevokeToken(ctx, operator(c.getenv), id)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.stdout, "revoked token %d (%s) of %s\n", t.ID, t.Name, t.Owner)
		return err
	})
}
