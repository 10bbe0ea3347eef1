package cliflag

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

var table = []Command{{"audit", "run the reports"}, {"audit export", "export"}, {"user add", "add a person"}, {"user list", "list them"}}

// TestFind: the longer name wins, a group word asks for its sub-command,
// and what names no command is a usage error with the right help.
func TestFind(t *testing.T) {
	cases := []struct {
		args     []string
		want     int
		rest     []string
		err      string // the usage error's message; "" for none
		usageHas string // what its usage holds
	}{
		{[]string{"audit", "x"}, 0, []string{"x"}, "", ""},
		{[]string{"audit", "export", "--out", "f"}, 1, []string{"--out", "f"}, "", ""},
		{[]string{"user", "add", "ann"}, 2, []string{"ann"}, "", ""},
		{[]string{"user", "--help"}, -1, nil, "", ""},
		{[]string{"user"}, 0, nil, "user needs a sub-command", "madebook user add"},
		{[]string{"user", "drop"}, 0, nil, `unknown user sub-command "drop"`, "madebook user list"},
		{[]string{"serve"}, 0, nil, `unknown command "serve"`, "TOP"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			i, rest, err := Find(table, "madebook", "TOP", c.args)
			var u UsageError
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != "" && (!errors.As(err, &u) || u.Msg != c.err || !strings.Contains(u.Usage, c.usageHas)):
				t.Fatalf("error %#v, want %q with a usage holding %q", err, c.err, c.usageHas)
			case c.err == "" && (i != c.want || !slices.Equal(rest, c.rest)):
				t.Fatalf("Find = %d %q, want %d %q", i, rest, c.want, c.rest)
			}
		})
	}
	if got := GroupUsage(table, "madebook", "key"); got != "" {
		t.Errorf("the usage of a word that leads nothing: %q", got)
	}
}

// TestParseArgs: flags and operands in any order, the environment for a
// flag the command line left out but never over it, and --help.
func TestParseArgs(t *testing.T) {
	env := map[string]string{"MB_URL": "http://env", "MB_SESSION": "ses_env"}
	newSet := func() (*Flags, *string, *string) {
		f := New("madebook x", "madebook x [--url U] OPERAND", "Does x.")
		url, session := f.String("url", "http://default", "the `URL`"), f.String("session", "", "the `ID`")
		f.Env["url"], f.Env["session"] = "MB_URL", "MB_SESSION"
		return f, url, session
	}
	f, url, session := newSet()
	rest, err := f.ParseArgs([]string{"a", "--url", "http://flag", "b"}, func(k string) string { return env[k] }, nil)
	if err != nil || !slices.Equal(rest, []string{"a", "b"}) || *url != "http://flag" || *session != "ses_env" {
		t.Errorf("ParseArgs = %q, %v; url %q session %q", rest, err, *url, *session)
	}
	if !f.IsSet("url") || f.IsSet("session") {
		t.Errorf("IsSet: url %v, session %v", f.IsSet("url"), f.IsSet("session"))
	}

	f, _, _ = newSet()
	var out strings.Builder
	if _, err := f.ParseArgs([]string{"--help"}, func(string) string { return "" }, &out); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	for _, want := range []string{"Usage:\n  madebook x", "Does x.", "--url URL", "(default http://default; or MB_URL)", "-h, --help"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the help lacks %q:\n%s", want, out.String())
		}
	}

	f, _, _ = newSet()
	var u UsageError
	if _, err := f.ParseArgs([]string{"--nope"}, func(string) string { return "" }, nil); !errors.As(err, &u) || u.Cmd != "madebook x" || !strings.Contains(u.Usage, "Does x.") {
		t.Errorf("an unknown flag: %v", err)
	}
}
