package cliflag

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Command is a row of a table of sub-commands as its help and its lookup
// see it: its name as typed ("user add") and what it does, in one line.
type Command struct{ Name, Summary string }

// Find picks the command of cmds that args name ("serve", or "user"
// "add") and returns its index with the arguments after its name. A
// command may also lead others ("audit" and "audit export"): the longer
// name wins. prog is what the names follow on a command line ("madebook",
// "madebook agent"), usage the help of the whole table. A word that only
// leads commands, followed by a request for help, gives -1 and no error:
// the caller prints GroupUsage(cmds, prog, args[0]).
func Find(cmds []Command, prog, usage string, args []string) (int, []string, error) {
	if len(args) > 1 {
		if i := index(cmds, args[0]+" "+args[1]); i >= 0 {
			return i, args[2:], nil
		}
	}
	if i := index(cmds, args[0]); i >= 0 {
		return i, args[1:], nil
	}
	group := GroupUsage(cmds, prog, args[0])
	switch {
	case group == "":
		return 0, nil, UsageError{Cmd: prog, Msg: fmt.Sprintf("unknown command %q", args[0]), Usage: usage}
	case len(args) < 2:
		return 0, nil, UsageError{Cmd: prog, Msg: fmt.Sprintf("%s needs a sub-command", args[0]), Usage: group}
	case IsHelp(args[1]):
		return -1, nil, nil
	}
	return 0, nil, UsageError{Cmd: prog, Msg: fmt.Sprintf("unknown %s sub-command %q", args[0], args[1]), Usage: group}
}

// index is the index of the command named name, -1 for none.
func index(cmds []Command, name string) int {
	for i, c := range cmds {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// GroupUsage is the help of a word that only leads sub-commands ("user",
// or "run" under prog "madebook agent"): its sub-commands, one a line; ""
// for a word that leads none.
func GroupUsage(cmds []Command, prog, group string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range cmds {
		if strings.HasPrefix(c.Name, group+" ") {
			fmt.Fprintf(tw, "  %s %s\t%s\n", prog, c.Name, c.Summary)
		}
	}
	tw.Flush()
	if b.Len() == 0 {
		return ""
	}
	return "Usage:\n" + b.String() + fmt.Sprintf("\nRun `%s %s SUBCOMMAND --help` for its flags.\n", prog, group)
}
