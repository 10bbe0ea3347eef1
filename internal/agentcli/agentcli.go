// Package agentcli is `madebook agent`: the agent operations of the table
// (agentops.Ops) that name a sub-command, called from a shell over
// internal/apiclient. Each prints Madebook's JSON answer on stdout and
// exits 0 when the call succeeded, whatever its next_action says; brief,
// and any sub-command given --exit-on-state, exits with a status its
// next_action gives instead, so `madebook agent brief || handle` works.
// cmd/madebook hands `madebook agent …` to Run.
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
	"github.com/madebook/madebook/internal/cliflag"
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
type UsageError = cliflag.UsageError

// Exit ends `madebook agent` with an exit status of its own: 3 to 6 for
// the next_action an answer names, with --exit-on-state (the answer is on
// stdout, Msg is the state and its reason), or 1 for an error (the error's JSON is on
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
		return UsageError{Cmd: "madebook", Msg: "agent needs a sub-command", Usage: usage}
	}
	if cliflag.IsHelp(args[0]) {
		if args[0] != "help" || len(args) == 1 {
			_, err := io.WriteString(c.Stdout, usage)
			return err
		}
		args = append(args[1:], "--help") // agent help SUB is agent SUB --help
	}
	i, rest, err := cliflag.Find(table(), "madebook agent", usage, args)
	if err != nil {
		return err
	}
	if i < 0 { // a group's help
		_, err := io.WriteString(c.Stdout, cliflag.GroupUsage(table(), "madebook agent", args[0]))
		return err
	}
	cmd := commands[i]
	if err := cmd.run(ctx, c, cmd.op, rest); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

// table is the sub-commands as cliflag.Find and cliflag.GroupUsage see
// them.
func table() []cliflag.Command {
	t := make([]cliflag.Command, len(commands))
	for i, c := range commands {
		t[i] = cliflag.Command{Name: c.op.CLI, Summary: c.op.Summary}
	}
	return t
}

// Usage is what `madebook agent --help` prints: the sub-commands, the
// environment they read and the exit statuses.
func Usage() string {
	var b strings.Builder
	b.WriteString("Usage:\n  madebook agent SUBCOMMAND [FLAGS]\n\n" +
		"Make the agent calls from a shell: each prints Madebook's JSON answer on stdout, whose\n" +
		"next_action says what the agent does next, and exits 0 when the call succeeded. brief\n" +
		"exits by that next_action instead, so `madebook agent brief || handle` works; any other\n" +
		"subcommand does too with --exit-on-state (brief --exit-on-state=false: 0).\n\n" +
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
	fmt.Fprintf(tw, "  0\tthe call succeeded (brief, --exit-on-state: CONTINUE, CONTINUE_WITH_WARNING or no next_action)\n")
	fmt.Fprintf(tw, "  1\tan error (the API refused, no answer, MADEBOOK_KEY or the session unset): its JSON on stdout\n")
	fmt.Fprintf(tw, "  2\ta command-line mistake (a flag or operand missing or wrong), with the usage on stderr\n")
	fmt.Fprintf(tw, "  3\tREMEDIATE (brief, or with --exit-on-state; 4 to 6 too)\n")
	fmt.Fprintf(tw, "  4\tDECISION_REQUIRED\n  5\tBLOCKED\n  6\tHARD_STOP\n")
	tw.Flush()
	b.WriteString("\nRun `madebook agent SUBCOMMAND --help` for its flags.\n")
	return b.String()
}

// flags are a sub-command's flags and its help (cliflag.Flags). --url
// and --session take their value from MADEBOOK_URL and MADEBOOK_SESSION
// when the command line leaves them out.
type flags struct {
	*cliflag.Flags
	url, session *string
	exitOnState  *bool
}

// exitsOnState is the sub-command whose exit status is its answer's
// next_action unless --exit-on-state=false: the brief, which a script
// takes to learn what to do next.
const exitsOnState = "brief"

// newFlags starts the flags of the sub-command name; onSession says
// whether the call is on a session (and so takes --session).
func newFlags(name, synopsis, about string, onSession bool) *flags {
	f := &flags{Flags: cliflag.New("madebook agent "+name, synopsis, about)}
	f.Notes = "Prints Madebook's JSON answer on stdout and exits 0 when the call succeeded, whatever\n" +
		"its next_action; with --exit-on-state, 3 to 6 by that next_action (`madebook agent --help`\n" +
		"has the table). The agent key is MADEBOOK_KEY."
	byState := name == exitsOnState
	if byState {
		f.Notes = "Prints the brief on stdout and exits by its next_action: 0 CONTINUE or\n" +
			"CONTINUE_WITH_WARNING, 3 REMEDIATE, 4 DECISION_REQUIRED, 5 BLOCKED, 6 HARD_STOP\n" +
			"(--exit-on-state=false: 0 whatever the state). The agent key is MADEBOOK_KEY."
	}
	f.exitOnState = f.Bool("exit-on-state", byState, "exit by the answer's next_action: 3 REMEDIATE, 4 DECISION_REQUIRED, 5 BLOCKED, 6 HARD_STOP")
	f.url = f.String("url", DefaultURL, "the `URL` Madebook serves at")
	f.Env["url"] = "MADEBOOK_URL"
	if onSession {
		f.session = f.String("session", "", "the `ID` of the session the call is on")
		f.Env["session"] = "MADEBOOK_SESSION"
	}
	return f
}

// parseArgs reads the flags and the operands of args (cliflag.Flags.ParseArgs).
func (f *flags) parseArgs(c IO, args []string) ([]string, error) {
	return f.ParseArgs(args, c.Getenv, c.Stdout)
}
