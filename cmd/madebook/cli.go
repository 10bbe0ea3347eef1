package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/db"
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
type usageError struct{ msg, usage string }

func (u usageError) Error() string { return u.msg + "\n\n" + u.usage }

// exitError is a failure with its own exit code (main prints it, then
// exits with the code).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

func (e exitError) Unwrap() error { return e.err }

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

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
		"The database is --db PATH (a SQLite file, created on first start) or --db postgres://… (PostgreSQL),\n" +
		"or MADEBOOK_DB, or ./madebook.db. Either way the schema is migrated at start.\n" +
		"Exit status: 0 done, 1 failed (audit: a report found rows), 2 a usage mistake or corrupt data;\n" +
		"agent also exits 3 to 6 by the answer's next_action (`madebook agent --help`).\n")
	return b.String()
}

// groupUsage is the help of a word that only leads sub-commands, such as
// "user" (or "run" under prog "madebook agent"): its sub-commands, one a
// line.
func groupUsage(cmds []command, prog, group string) string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range cmds {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(tw, "  %s %s\t%s\n", prog, c.name, c.summary)
		}
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nRun `%s %s SUBCOMMAND --help` for its flags.\n", prog, group)
	return b.String()
}

// find picks the command of cmds that args name ("serve", or "user" "add")
// and returns it with the arguments that follow its name. prog is what
// the names follow on a command line ("madebook", "madebook agent") and
// top the usage of the whole table. A group word followed by a request
// for help gives a command that prints the group's usage.
func find(cmds []command, prog, top string, args []string) (command, []string, error) {
	// A command may also lead sub-commands ("audit" and "audit export"):
	// the longer name wins.
	if len(args) > 1 {
		for _, c := range cmds {
			if c.name == args[0]+" "+args[1] {
				return c, args[2:], nil
			}
		}
	}
	var group bool
	for _, c := range cmds {
		if c.name == args[0] {
			return c, args[1:], nil
		}
		group = group || strings.HasPrefix(c.name, args[0]+" ")
	}
	if !group {
		return command{}, nil, usageError{fmt.Sprintf("unknown command %q", args[0]), top}
	}
	usage := groupUsage(cmds, prog, args[0])
	if len(args) < 2 {
		return command{}, nil, usageError{fmt.Sprintf("%s needs a sub-command", args[0]), usage}
	}
	if isHelp(args[1]) {
		return command{run: func(_ context.Context, c stdio, _ []string) error {
			_, err := io.WriteString(c.stdout, usage)
			return err
		}}, nil, nil
	}
	for _, c := range cmds {
		if c.name == args[0]+" "+args[1] {
			return c, args[2:], nil
		}
	}
	return command{}, nil, usageError{fmt.Sprintf("unknown %s sub-command %q", args[0], args[1]), usage}
}

// flags is a command's flag set and its help: a synopsis line, what the
// command does, the flags (from the set) and notes. Flags may take their
// value from the environment when the command line leaves them out.
type flags struct {
	*flag.FlagSet
	synopsis, about, notes string
	env                    map[string]string // flag name → environment variable
	given                  map[string]bool   // the flags the command line gave
	// db and dbPasswordFile are --db and --db-password-file (dbFlag),
	// resolved into one database address after parsing.
	db, dbPasswordFile *string
}

func newFlags(name, synopsis, about string) *flags {
	fs := flag.NewFlagSet("madebook "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{FlagSet: fs, synopsis: synopsis, about: about, env: map[string]string{}}
}

// defaultDB is --db's default.
const defaultDB = "./madebook.db"

// dbFlag adds --db, read from MADEBOOK_DB too, and --db-password-file
// (MADEBOOK_DB_PASSWORD_FILE), whose password parse puts in a postgres://
// URL; parse also warns when the command line's --db holds a password,
// which anyone on the machine can read in the process list.
func (f *flags) dbFlag() *string {
	f.db = f.String("db", defaultDB, "`PATH` of the SQLite database, or a postgres:// URL of a PostgreSQL one (its password not here: in MADEBOOK_DB, --db-password-file or ~/.pgpass)")
	f.env["db"] = "MADEBOOK_DB"
	f.dbPasswordFile = f.String("db-password-file", "", "read the PostgreSQL password from the first line of `FILE` (the --db URL names the user, without a password)")
	f.env["db-password-file"] = "MADEBOOK_DB_PASSWORD_FILE"
	return f.db
}

// resolveDB finishes --db after parsing: it warns when the command line
// gave a URL with a password, and puts --db-password-file's password in
// the URL.
func (f *flags) resolveDB(c stdio) error {
	if f.db == nil {
		return nil
	}
	if f.given["db"] && db.HasPassword(*f.db) {
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
		return f.fail("--db-password-file: %v", err)
	}
	*f.db = dsn
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

// usage is the command's help text.
func (f *flags) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s\n\n%s\n\nFlags:\n", f.synopsis, f.about)
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	f.VisitAll(func(fl *flag.Flag) {
		arg, text := flag.UnquoteUsage(fl)
		if arg != "" {
			arg = " " + arg
		}
		var extra []string
		if fl.DefValue != "" && fl.DefValue != "false" {
			extra = append(extra, "default "+fl.DefValue)
		}
		if v := f.env[fl.Name]; v != "" {
			extra = append(extra, "or "+v)
		}
		if len(extra) > 0 {
			text += " (" + strings.Join(extra, "; ") + ")"
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, arg, text)
	})
	fmt.Fprintf(tw, "  -h, --help\t%s\n", "print this help")
	tw.Flush()
	if f.notes != "" {
		fmt.Fprintf(&b, "\n%s\n", f.notes)
	}
	return b.String()
}

// fail is a usage error in this command.
func (f *flags) fail(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...), f.usage()}
}

// parse reads the flags of args, then the environment for those left out,
// and refuses any argument that is not a flag. --help prints the usage on
// stdout and returns flag.ErrHelp (run returns nil for it).
func (f *flags) parse(c stdio, args []string) error {
	rest, err := f.parseArgs(c, args)
	if err == nil && len(rest) > 0 {
		err = f.fail("unexpected argument %q", rest[0])
	}
	return err
}

// parseArgs is parse for a command that takes arguments too, before,
// between or after its flags; it returns them in order.
func (f *flags) parseArgs(c stdio, args []string) ([]string, error) {
	var rest []string
	for {
		if err := f.Parse(args); errors.Is(err, flag.ErrHelp) {
			if _, err := io.WriteString(c.stdout, f.usage()); err != nil {
				return nil, err
			}
			return nil, flag.ErrHelp
		} else if err != nil {
			return nil, f.fail("%v", err)
		}
		if f.NArg() == 0 {
			break
		}
		rest, args = append(rest, f.Arg(0)), f.Args()[1:]
	}
	f.given = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	for name, key := range f.env {
		if v := c.getenv(key); v != "" && !f.given[name] {
			if err := f.Set(name, v); err != nil {
				return nil, f.fail("%s=%q: %v", key, v, err)
			}
		}
	}
	if err := f.resolveDB(c); err != nil {
		return nil, err
	}
	return rest, nil
}

// isSet reports whether the command line gave the flag (after parse).
func (f *flags) isSet(name string) bool { return f.given[name] }
