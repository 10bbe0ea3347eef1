package ledger_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ledger"
)

// TestEveryInputOwnsItsLimits proves, for every text field an agent or an
// operator sends the ledger, that its limit counts characters, not bytes
// ("é" is two bytes), that one character more is <field>_too_long naming
// the field, and that a required field left empty or blank is
// <field>_required (or, for an option's label, invalid_options).
func TestEveryInputOwnsItsLimits(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	no := false
	ask := func(in ledger.AskInput) error {
		_, err := w.Ledger.RecordAsk(ctx, w.agent, w.start(t, "asks", "").ID, in)
		return err
	}
	call := func(server, tool string) error {
		_, err := w.Ledger.RecordToolCall(ctx, w.agent, w.start(t, "calls", "").ID,
			ledger.ToolCallInput{Server: server, Tool: tool, SideEffecting: &no})
		return err
	}
	classify := func(server, tool string) error {
		_, err := w.Ledger.SetTool(ctx, w.admin, server, tool, ledger.ToolInput{SideEffecting: true})
		return err
	}
	limits := []struct {
		input, field string
		max          int
		empty        string // the code for an empty or blank value
		send         func(v string) error
	}{
		{"run", "name", ledger.MaxRunName, "name_required", func(v string) error {
			_, err := w.Ledger.StartRun(ctx, w.agent, w.session, v, "")
			return err
		}},
		{"ask", "prompt", ledger.MaxPrompt, "prompt_required", func(v string) error {
			return ask(ledger.AskInput{Prompt: v, Options: yesNo})
		}},
		{"ask", "options", ledger.MaxOptionLabel, "invalid_options", func(v string) error {
			return ask(ledger.AskInput{Prompt: "save?", Options: map[string]string{"1": "Yes", "2": v}})
		}},
		{"tool call", "server", ledger.MaxServer, "server_required", func(v string) error { return call(v, "read_file") }},
		{"tool call", "tool", ledger.MaxTool, "tool_required", func(v string) error { return call("fs", v) }},
		{"tool registry", "server", ledger.MaxServer, "server_required", func(v string) error { return classify(v, "touch") }},
		{"tool registry", "tool", ledger.MaxTool, "tool_required", func(v string) error { return classify("fs", v) }},
	}
	for _, l := range limits {
		t.Run(l.input+" "+l.field+" fits "+strconv.Itoa(l.max)+" characters, however many bytes", func(t *testing.T) {
			if err := l.send(strings.Repeat("é", l.max)); err != nil {
				t.Fatalf("%d characters: %v", l.max, err)
			}
		})
		t.Run(l.input+" "+l.field+" over "+strconv.Itoa(l.max)+" characters is "+l.field+"_too_long", func(t *testing.T) {
			err := l.send(strings.Repeat("é", l.max+1))
			if errs.CodeOf(err) != l.field+"_too_long" || errs.KindOf(err) != errs.Invalid || errs.FieldOf(err) != l.field {
				t.Fatalf("%d characters: %v (%s about %q), want %s_too_long about it", l.max+1, err, errs.CodeOf(err), errs.FieldOf(err), l.field)
			}
		})
		t.Run(l.input+" "+l.field+" empty or blank is "+l.empty, func(t *testing.T) {
			for _, v := range []string{"", " \t\n"} {
				if err := l.send(v); errs.CodeOf(err) != l.empty || errs.FieldOf(err) != l.field {
					t.Fatalf("%q: %v (%s about %q), want %s about %s", v, err, errs.CodeOf(err), errs.FieldOf(err), l.empty, l.field)
				}
			}
		})
	}
}
