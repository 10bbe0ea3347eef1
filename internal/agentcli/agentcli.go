// Package agentcli is `madebook agent`: the agent operations of the table
// (agentops.Ops) that name a sub-command, called from a shell over
// internal/apiclient. Each prints Madebook's JSON answer on stdout and
// exits with a status its next_action gives, so `madebook agent brief ||
// handle` works. cmd/madebook hands `madebook agent …` to Run.
package agentcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/internal/agentops"
)

// IO is what a sub-command runs with besides its arguments: the
// environment, stdin and stdout.
type IO struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
}

// UsageError is a mistake in the command line: the program prints Msg
// and the Usage of the command it was made in, and exits 2.
type UsageError struct{ Msg, Usage string }

func (u UsageError) Error() string { return u.Msg + "\n\n" + u.Usage }

// Exit ends `madebook agent` with an exit status of its own: 3 to 6 for
// the next_action an answer names (the answer is on stdout, Msg is the
// state and its reason), or 1 for an error (the error's JSON is on
// stdout; Msg says why: the API's error code and message, why Madebook
// did not answer, or what the environment lacks). The program prints Msg
// after "madebook agent: ".
type Exit struct {
	Code int
	Msg  string
}

func (e Exit) Error() string { return e.Msg }

// DefaultURL is where `madebook agent` finds Madebook when neither --url
// nor MADEBOOK_URL says.
const DefaultURL = "http://127.0.0.1:8080"

// command is one sub-command: the operation it calls (whose CLI name and
// Summary it has) and its runner, which reads the body from the flags.
type command struct {
	op  agentops.Op
	run func(ctx context.Context, c IO, op agentops.Op, args []string) error
}

// sub is the sub-command of the operation named name.
func sub(name string, run func(context.Context, IO, agentops.Op, []string) error) command {
	op, ok := agentops.ByName(name)
	if !ok || op.CLI == "" {
		panic("agentcli: no agent operation " + name + " with a sub-command")
	}
	return command{op, run}
}

// Names are the sub-commands' names, in the order --help lists them.
func Names() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.op.CLI
	}
	return names
}

// Run is `madebook agent args…`: it runs the sub-command args name.
// Help asked for is printed on stdout and returns nil.
func Run(ctx context.Context, c IO, args []string) error {
	usage := Usage()
	if len(args) == 0 {
		return UsageError{"agent needs a sub-command", usage}
	}
	if isHelp(args[0]) {
		if args[0] != "help" || len(args) == 1 {
			_, err := io.WriteString(c.Stdout, usage)
			return err
		}
		args = append(args[1:], "--help") // agent help SUB is agent SUB --help
	}
	cmd, rest, err := find(args, usage)
	if err != nil {
		return err
	}
	if cmd.run == nil { // a group's help
		_, err := io.WriteString(c.Stdout, groupUsage(args[0]))
		return err
	}
	if err := cmd.run(ctx, c, cmd.op, rest); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// byName is the sub-command named name.
func byName(name string) (command, bool) {
	for _, c := range commands {
		if c.op.CLI == name {
			return c, true
		}
	}
	return command{}, false
}

// find picks the sub-command args name ("brief", or "run" "start") and
// returns it with the arguments after its name; a group word ("run")
// followed by a request for help gives a command without a runner.
func find(args []string, usage string) (command, []string, error) {
	if len(args) > 1 {
		if c, ok := byName(args[0] + " " + args[1]); ok {
			return c, args[2:], nil
		}
	}
	if c, ok := byName(args[0]); ok {
		return c, args[1:], nil
	}
	group := groupUsage(args[0])
	switch {
	case group == "":
		return command{}, nil, UsageError{fmt.Sprintf("unknown command %q", args[0]), usage}
	case len(args) < 2:
		return command{}, nil, UsageError{fmt.Sprintf("%s needs a sub-command", args[0]), group}
	case isHelp(args[1]):
		return command{}, nil, nil
	}
	return command{}, nil, UsageError{fmt.Sprintf("unknown %s sub-command %q", args[0], args[1]), group}
}

// groupUsage is the help of a word that leads sub-commands ("run"), ""
// for a word that leads none.
func groupUsage(group string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		if strings.HasPrefix(c.op.CLI, group+" ") {
			fmt.Fprintf(tw, "  madebook agent %s\t%s\n", c.op.CLI, c.op.Summary)
		}
	}
	tw.Flush()
	if b.Len() == 0 {
		return ""
	}
	return "Usage:\n" + b.String() + fmt.Sprintf("\nRun `madebook agent %s SUBCOMMAND --help` for its flags.\n", group)
}

// Usage is what `madebook agent --help` prints: the sub-commands, the
// environment they read and the exit statuses.
func Usage() string {
	var b strings.Builder
	b.WriteString("Usage:\n  madebook agent SUBCOMMAND [FLAGS]\n\n" +
		"Make the agent calls from a shell: each prints Madebook's JSON answer on stdout and\n" +
		"exits with a status its next_action gives, so `madebook agent brief || handle` works.\n\n" +
		"Subcommands:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.op.CLI, c.op.Summary)
	}
	tw.Flush()
	b.WriteString("\nEnvironment:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  MADEBOOK_URL\twhere Madebook serves (default %s; --url overrides)\n", DefaultURL)
	fmt.Fprintf(tw, "  MADEBOOK_KEY\tthe agent key, mbk_… (required; `madebook key create` prints one)\n")
	fmt.Fprintf(tw, "  MADEBOOK_SESSION\tthe session the calls are on (--session overrides)\n")
	tw.Flush()
	b.WriteString("\nExit status:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  0\tCONTINUE or CONTINUE_WITH_WARNING, or a success whose answer names no next_action\n")
	fmt.Fprintf(tw, "  1\tan error (the API refused, no answer, MADEBOOK_KEY or the session unset): its JSON on stdout\n")
	fmt.Fprintf(tw, "  2\ta command-line mistake (a flag or operand missing or wrong), with the usage on stderr\n")
	fmt.Fprintf(tw, "  3\tREMEDIATE\n  4\tDECISION_REQUIRED\n  5\tBLOCKED\n  6\tHARD_STOP\n")
	tw.Flush()
	b.WriteString("\nRun `madebook agent SUBCOMMAND --help` for its flags.\n")
	return b.String()
}

// flags are a sub-command's flags and its help: a synopsis line, what it
// does, the flags, and the notes every sub-command shares. --url and
// --session take their value from MADEBOOK_URL and MADEBOOK_SESSION when
// the command line leaves them out.
type flags struct {
	*flag.FlagSet
	synopsis, about string
	url, session    *string
	given           map[string]bool // the flags the command line gave
}

// env are the environment variables flags read, by flag.
var env = map[string]string{"url": "MADEBOOK_URL", "session": "MADEBOOK_SESSION"}

// newFlags starts the flags of the sub-command name; onSession says
// whether the call is on a session (and so takes --session).
func newFlags(name, synopsis, about string, onSession bool) *flags {
	fs := flag.NewFlagSet("madebook agent "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &flags{FlagSet: fs, synopsis: synopsis, about: about}
	f.url = f.String("url", DefaultURL, "the `URL` Madebook serves at")
	if onSession {
		f.session = f.String("session", "", "the `ID` of the session the call is on")
	}
	return f
}

// usage is the sub-command's help text.
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
		if v := env[fl.Name]; v != "" {
			extra = append(extra, "or "+v)
		}
		if len(extra) > 0 {
			text += " (" + strings.Join(extra, "; ") + ")"
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, arg, text)
	})
	fmt.Fprintf(tw, "  -h, --help\tprint this help\n")
	tw.Flush()
	b.WriteString("\nPrints Madebook's JSON answer on stdout; the exit status is its next_action's\n" +
		"(`madebook agent --help` has the table). The agent key is MADEBOOK_KEY.\n")
	return b.String()
}

// fail is a usage error in this sub-command.
func (f *flags) fail(format string, args ...any) error {
	return UsageError{fmt.Sprintf(format, args...), f.usage()}
}

// parseArgs reads the flags of args, before, between or after its
// operands, then the environment for --url and --session left out, and
// returns the operands in order. --help prints the usage on stdout and
// returns flag.ErrHelp.
func (f *flags) parseArgs(c IO, args []string) ([]string, error) {
	var rest []string
	for {
		if err := f.Parse(args); errors.Is(err, flag.ErrHelp) {
			if _, err := io.WriteString(c.Stdout, f.usage()); err != nil {
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
	for name, key := range env {
		if v := c.Getenv(key); v != "" && !f.given[name] && f.Lookup(name) != nil {
			if err := f.Set(name, v); err != nil {
				return nil, f.fail("%s=%q: %v", key, v, err)
			}
		}
	}
	return rest, nil
}

// isSet reports whether the command line gave the flag (after parsing).
func (f *flags) isSet(name string) bool { return f.given[name] }
