package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/cliflag"
)

// command is one sub-command: its name as typed ("serve", "user add"),
// one line saying what it does, and its runner.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, c stdio, args []string) error
}

// stdio is what a command runs with besides its arguments: the environment,
// stdin, stdout, and stderr for warnings (nil: warnings are dropped).
type stdio struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// warn writes one warning line on stderr.
func (c stdio) warn(format string, args ...any) {
	if c.stderr != nil {
		fmt.Fprintf(c.stderr, "madebook: warning: "+format+"\n", args...)
	}
}

// usageError is a mistake in the command line; main prints it with the
// usage of the command it was made in and exits 2.
type usageError = cliflag.UsageError

// exitError is a failure with its own exit code (main prints it, then
// exits with the code).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

func (e exitError) Unwrap() error { return e.err }

// topUsage is what `madebook --help` prints: every command, one a line.
func topUsage(cmds []command) string {
	var b strings.Builder
	b.WriteString("Usage:\n  madebook COMMAND [FLAGS]\n\nCommands:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	fmt.Fprintf(tw, "  %s\t%s\n", "help [COMMAND]", "print this help, or a command's")
	tw.Flush()
	b.WriteString("\nEvery command answers --help with its own flags (`madebook serve --help`).\n" +
		"The database is --db PATH (a SQLite file, which migrate, serve and the commands that add create)\n" +
		"or --db postgres://… (PostgreSQL), or MADEBOOK_DB, or ./madebook.db. Either way the schema is\n" +
		"migrated at start.\n" +
		"Exit status: 0 done; 1 failed, with one line on stderr saying why (audit: a report found rows);\n" +
		"2 a mistake on the command line, with the command's usage (audit: corrupt stored data, one line);\n" +
		"agent brief, and agent with --exit-on-state, exits 3 to 6 by the answer's next_action.\n")
	return b.String()
}

// find picks the command of cmds that args name and returns it with the
// arguments that follow its name (cliflag.Find). A group word followed by
// a request for help gives a command that prints the group's usage.
func find(cmds []command, prog, top string, args []string) (command, []string, error) {
	table := make([]cliflag.Command, len(cmds))
	for i, c := range cmds {
		table[i] = cliflag.Command{Name: c.name, Summary: c.summary}
	}
	i, rest, err := cliflag.Find(table, prog, top, args)
	switch {
	case err != nil:
		return command{}, nil, err
	case i < 0:
		usage := cliflag.GroupUsage(table, prog, args[0])
		return command{run: func(_ context.Context, c stdio, _ []string) error {
			_, err := io.WriteString(c.stdout, usage)
			return err
		}}, nil, nil
	}
	return cmds[i], rest, nil
}

// flags is a command's flag set and its help (cliflag.Flags), with --db
// when the command opens the database.
type flags struct {
	*cliflag.Flags
	// db and dbPasswordFile are --db and --db-password-file (dbFlag),
	// resolved into one database address after parsing.
	db, dbPasswordFile *string
}

func newFlags(name, synopsis, about string) *flags {
	return &flags{Flags: cliflag.New("madebook "+name, synopsis, about)}
}

// defaultDB is --db's default.
const defaultDB = "./madebook.db"

// dbFlag adds --db, read from MADEBOOK_DB too, and --db-password-file
// (MADEBOOK_DB_PASSWORD_FILE), whose password parse puts in a postgres://
// URL; parse also warns when the command line's --db holds a password,
// which anyone on the machine can read in the process list.
func (f *flags) dbFlag() *string {
	f.db = f.String("db", defaultDB, "`PATH` of the SQLite database, or a postgres:// URL of a PostgreSQL one (its password not here: in MADEBOOK_DB, --db-password-file or ~/.pgpass)")
	f.Env["db"] = "MADEBOOK_DB"
	f.dbPasswordFile = f.String("db-password-file", "", "read the PostgreSQL password from the first line of `FILE` (the --db URL names the user, without a password)")
	f.Env["db-password-file"] = "MADEBOOK_DB_PASSWORD_FILE"
	return f.db
}

// resolveDB finishes --db after parsing: it warns when the command line
// gave a URL with a password, and puts --db-password-file's password in
// the URL.
func (f *flags) resolveDB(c stdio) error {
	if f.db == nil {
		return nil
	}
	if f.IsSet("db") && db.HasPassword(*f.db) {
		c.warn("the --db URL holds a password, which other users of this machine can read in the process list (ps): " +
			"give the URL in MADEBOOK_DB, or the password in --db-password-file, PGPASSFILE or ~/.pgpass")
	}
	if *f.dbPasswordFile == "" {
		return nil
	}
	password, err := readPasswordFile(*f.dbPasswordFile)
	if err != nil {
		return err
	}
	dsn, err := db.WithPassword(*f.db, password)
	if err != nil {
		return f.Fail("--db-password-file: %v", err)
	}
	*f.db = dsn
	return nil
}

// existingDB refuses a --db that names no database, before it is opened:
// opening a SQLite path that holds nothing creates an empty database, on
// which a command that reads (audit, the lists) would report nothing and
// one that revokes would find nothing. migrate, serve and the commands
// that add (user add, key create, token create) create it instead.
func existingDB(path string) error {
	if db.IsPostgres(path) {
		return nil // a PostgreSQL database is never created on opening
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no database at %s: give its path with --db (or MADEBOOK_DB); `madebook migrate --db PATH` creates one", path)
	} else if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	return nil
}

// readPasswordFile returns the first line of the file at path, without
// its line ending: a password kept in a file (a container's secret, a file
// only its owner reads).
func readPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the database password: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("read the database password: the first line of %s is empty", path)
	}
	return line, nil
}

// parse reads the flags of args, then the environment for those left out,
// and refuses any argument that is not a flag. --help prints the usage on
// stdout and returns flag.ErrHelp (run returns nil for it).
func (f *flags) parse(c stdio, args []string) error {
	rest, err := f.parseArgs(c, args)
	if err == nil && len(rest) > 0 {
		err = f.Fail("unexpected argument %q", rest[0])
	}
	return err
}

// parseArgs is parse for a command that takes arguments too, before,
// between or after its flags; it returns them in order.
func (f *flags) parseArgs(c stdio, args []string) ([]string, error) {
	rest, err := f.ParseArgs(args, c.getenv, c.stdout)
	if err != nil {
		return nil, err
	}
	return rest, f.resolveDB(c)
}
