package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// command is one sub-command: its name as typed ("serve", "user add"),
// one line saying what it does, and its runner.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, c stdio, args []string) error
}

// stdio is what a command runs with besides its arguments: the environment,
// stdin and stdout.
type stdio struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
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
}

func newFlags(name, synopsis, about string) *flags {
	fs := flag.NewFlagSet("madebook "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{FlagSet: fs, synopsis: synopsis, about: about, env: map[string]string{}}
}

// defaultDB is --db's default.
const defaultDB = "./madebook.db"

// dbFlag adds --db, read from MADEBOOK_DB too.
func (f *flags) dbFlag() *string {
	p := f.String("db", defaultDB, "`PATH` of the SQLite database, or a postgres:// URL of a PostgreSQL one")
	f.env["db"] = "MADEBOOK_DB"
	return p
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
	return rest, nil
}

// isSet reports whether the command line gave the flag (after parse).
func (f *flags) isSet(name string) bool { return f.given[name] }
