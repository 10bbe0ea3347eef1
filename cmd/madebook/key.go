package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/auth"
)

// runKeyCreate is `madebook key create`: it prints a new agent key, once.
func runKeyCreate(ctx context.Context, c stdio, args []string) error {
	f := newFlags("key create", "madebook key create --name NAME [--expires D] [--db PATH]",
		"Create an agent key and print its secret (mbk_…) on stdout. It is shown this once:\n"+
			"Madebook keeps only its hash and its first characters. An agent sends it as\n"+
			"`Authorization: Bearer mbk_…` until it expires or is revoked (`madebook key revoke ID`).")
	f.Notes = lifetimeNotes
	name := f.String("name", "", "the key's `NAME`, unique (e.g. the agent or the machine it runs on)")
	var expires, maxAge lifetimeFlag
	f.Var(&expires, "expires", "the key stops working `D` after it is made (e.g. 90d, 12h, 30m); default never")
	maxAgeFlag(f, &maxAge)
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *name == "" {
		return f.Fail("key create needs --name")
	}
	return withApp(ctx, *path, app.Options{TokenMaxAge: maxAge.duration()}, func(a *app.App) error {
		k, err := a.Auth.IssueKey(ctx, operator(c.getenv),
			auth.KeyRequest{Name: *name, Lifetime: expires.duration()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(c.stdout, k.Secret)
		return err
	})
}

// runKeyList is `madebook key list`: every agent key, never a secret.
func runKeyList(ctx context.Context, c stdio, args []string) error {
	f := newFlags("key list", "madebook key list [--format table|json] [--db PATH]",
		"List the agent keys, oldest first: id, name, prefix, when each was made (and by whom),\n"+
			"last used (to the minute) and expires, and whether it is active, expired or revoked.\n"+
			"Secrets are never shown: Madebook does not keep them.")
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
		keys, err := a.Auth.ListKeys(ctx, operator(c.getenv))
		if err != nil {
			return err
		}
		if *format == "json" {
			return printJSON(c.stdout, map[string]any{"keys": keys})
		}
		rows := make([][]string, 0, len(keys))
		for _, k := range keys {
			by := k.CreatedBy
			if by == "" {
				by = "cli"
			}
			rows = append(rows, []string{strconv.FormatInt(k.ID, 10), k.Name, shownPrefix(k.Prefix), when(&k.CreatedAt), by,
				when(k.LastUsedAt), when(k.ExpiresAt), k.State})
		}
		return printCredentials(c.stdout, []string{"ID", "NAME", "KEY", "CREATED", "BY", "LAST USED", "EXPIRES", "STATE"}, rows)
	})
}

// runKeyRevoke is `madebook key revoke ID`: the key is refused from its
// next request on.
func runKeyRevoke(ctx context.Context, c stdio, args []string) error {
	f := newFlags("key revoke", "madebook key revoke ID [--db PATH]",
		"Revoke the agent key with this id (`madebook key list` shows it): every server on the\n"+
			"database refuses it (401 credential_revoked) from its next request on. It cannot be\n"+
			"undone; the admin activity records it.")
	path := f.dbFlag()
	rest, err := f.parseArgs(c, args)
	if err != nil {
		return err
	}
	id, err := credentialID(f, "key revoke", rest)
	if err != nil {
		return err
	}
	if err := existingDB(*path); err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		k, err := a.Auth.RevokeKey(ctx, operator(c.getenv), id)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.stdout, "revoked key %d (%s)\n", k.ID, k.Name)
		return err
	})
}

// lifetimeNotes is the help's word on lifetimes and the server's maximum.
const lifetimeNotes = "A lifetime is a Go duration (90m, 12h) or days (90d, 1d12h), at least 1m. With\n" +
	"MADEBOOK_TOKEN_MAX_AGE (or --token-max-age) set, a create that asks for no expiry, or a\n" +
	"longer one, is refused (not shortened): ask for that age or less."

// lifetimeFlag is a credential's lifetime as a flag takes it
// (auth.ParseLifetime: 90d, 12h, 30m); zero when it is not given.
type lifetimeFlag time.Duration

func (l *lifetimeFlag) String() string {
	if *l == 0 {
		return ""
	}
	return auth.FormatLifetime(time.Duration(*l))
}

func (l *lifetimeFlag) Set(v string) error {
	d, err := auth.ParseLifetime(v)
	if err != nil {
		return err
	}
	*l = lifetimeFlag(d)
	return nil
}

func (l *lifetimeFlag) duration() time.Duration { return time.Duration(*l) }

// maxAgeFlag adds --token-max-age (MADEBOOK_TOKEN_MAX_AGE): the longest
// lifetime a new agent key or personal token may be given.
func maxAgeFlag(f *flags, to *lifetimeFlag) {
	f.Var(to, "token-max-age", "refuse a new agent key or personal token with no expiry, or one later than `D` after it is made (e.g. 90d); default no limit")
	f.Env["token-max-age"] = "MADEBOOK_TOKEN_MAX_AGE"
}

// credentialID reads the one ID argument of token revoke or key revoke.
func credentialID(f *flags, cmd string, rest []string) (int64, error) {
	if len(rest) != 1 {
		return 0, f.Fail("%s needs one ID (the list shows them)", cmd)
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, f.Fail("%s: %q is not an id: give the number the list shows", cmd, rest[0])
	}
	return id, nil
}

// shownPrefix is a secret's prefix as lists show it.
func shownPrefix(p string) string {
	if p == "" {
		return "-"
	}
	return p + "…"
}

// when is an optional time as the lists show it, to the minute, in UTC.
func when(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// printCredentials prints a list as a table.
func printCredentials(w io.Writer, head []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
