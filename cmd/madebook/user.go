package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/madebook/madebook/internal/app"
	"github.com/madebook/madebook/internal/auth"
)

// runUserAdd is `madebook user add`: it adds a person, the password read
// as one line from stdin.
func runUserAdd(ctx context.Context, c stdio, args []string) error {
	f := newFlags("user add", "echo 'a-long-password' | madebook user add --email E --role admin|lead|viewer [--db PATH]",
		"Add a person who signs in to the console. The password is one line on stdin, at\n"+
			"least 8 characters, so that it stays out of the shell's history and the process list.")
	email := f.String("email", "", "the person's `EMAIL`, the name they sign in with")
	role := f.String("role", "", "the person's `ROLE`: admin, lead or viewer")
	path := f.dbFlag()
	if err := f.parse(c, args); err != nil {
		return err
	}
	if *email == "" || *role == "" {
		return f.Fail("user add needs --email and --role")
	}
	r, err := auth.ParseRole(*role)
	if err != nil {
		return f.Fail("--role %q is not a role: admin, lead or viewer", *role)
	}
	password, err := readLine(c.stdin)
	if err != nil {
		return err
	}
	return withApp(ctx, *path, app.Options{}, func(a *app.App) error {
		u, err := a.Auth.AddUser(ctx, operator(c.getenv), *email, password, r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.stdout, "added %s (%s)\n", u.Email, u.Role)
		return err
	})
}

// readLine reads one line (the password) from r.
func readLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on stdin: pipe one line, e.g. `echo 'secret-pass' | madebook user add …`")
	}
	return line, nil
}
