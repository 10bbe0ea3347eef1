// Package cliflag is the command-line handling madebook's commands share
// (cmd/madebook and `madebook agent`, internal/agentcli): a flag set with
// its help text, flags and operands in any order, and flags read from the
// environment when the command line leaves them out.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// UsageError is a mistake in the command line: an unknown flag, a
// required flag or operand left out, a flag's value it cannot take, an
// argument too many. The program prints "Cmd: Msg" and Usage, the help
// of the command it was made in, and exits 2. Every other failure is
// one line and exit 1 (cmd/madebook's outcome).
type UsageError struct {
	// Cmd is the command line it was made in ("madebook audit",
	// "madebook agent brief"); "" for the program's own.
	Cmd        string
	Msg, Usage string
}

func (u UsageError) Error() string { return u.Msg + "\n\n" + u.Usage }

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// Flags is a command's flag set and its help: a synopsis line, what the
// command does, the flags (from the set) and notes.
type Flags struct {
	*flag.FlagSet
	Synopsis, About, Notes string
	// Env is the environment variable each flag is read from when the
	// command line leaves it out, by flag name.
	Env   map[string]string
	given map[string]bool // the flags the command line gave
}

// New starts the flags of the command name ("madebook serve").
func New(name, synopsis, about string) *Flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &Flags{FlagSet: fs, Synopsis: synopsis, About: about, Env: map[string]string{}}
}

// Usage is the command's help text: each flag with its default and the
// environment variable it is read from.
func (f *Flags) Usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s\n\n%s\n\nFlags:\n", f.Synopsis, f.About)
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
		if v := f.Env[fl.Name]; v != "" {
			extra = append(extra, "or "+v)
		}
		if len(extra) > 0 {
			text += " (" + strings.Join(extra, "; ") + ")"
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, arg, text)
	})
	fmt.Fprintf(tw, "  -h, --help\t%s\n", "print this help")
	tw.Flush()
	if f.Notes != "" {
		fmt.Fprintf(&b, "\n%s\n", f.Notes)
	}
	return b.String()
}

// Fail is a usage error in this command.
func (f *Flags) Fail(format string, args ...any) error {
	return UsageError{Cmd: f.Name(), Msg: fmt.Sprintf(format, args...), Usage: f.Usage()}
}

// ParseArgs reads the flags of args, before, between or after its
// operands, then the environment (getenv) for the flags of Env the
// command line left out, and returns the operands in order. --help
// prints the usage on stdout and returns flag.ErrHelp.
func (f *Flags) ParseArgs(args []string, getenv func(string) string, stdout io.Writer) ([]string, error) {
	var rest []string
	for {
		if err := f.Parse(args); errors.Is(err, flag.ErrHelp) {
			if _, err := io.WriteString(stdout, f.Usage()); err != nil {
				return nil, err
			}
			return nil, flag.ErrHelp
		} else if err != nil {
			return nil, f.Fail("%v", err)
		}
		if f.NArg() == 0 {
			break
		}
		rest, args = append(rest, f.Arg(0)), f.Args()[1:]
	}
	f.given = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	for name, key := range f.Env {
		if v := getenv(key); v != "" && !f.given[name] {
			if err := f.Set(name, v); err != nil {
				return nil, f.Fail("%s=%q: %v", key, v, err)
			}
		}
	}
	return rest, nil
}

// IsSet reports whether the command line gave the flag (after ParseArgs).
func (f *Flags) IsSet(name string) bool { return f.given[name] }
