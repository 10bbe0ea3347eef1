package protocol_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/protocol"
)

func TestProtocolText(t *testing.T) {
	t.Run("the text names all six states, most severe first, each with what it tells the agent", func(t *testing.T) {
		last := -1
		for _, s := range protocol.States {
			i := strings.Index(protocol.Text, "\n"+s.String()+": ")
			if i < 0 {
				t.Errorf("the text has no line for %v", s)
				continue
			}
			if i < last {
				t.Errorf("%v is listed out of the precedence order", s)
			}
			last = i
		}
	})
	instructions := []string{
		"Plan before you implement",
		"Fix what you can; ask about what you cannot",
		"Do not poll",
		"Do not declare the mission complete",
	}
	for i, in := range instructions {
		t.Run("the text instructs: "+in, func(t *testing.T) {
			want := string(rune('1'+i)) + ". " + in + "."
			if !strings.Contains(protocol.Text, want) {
				t.Errorf("the text does not contain %q", want)
			}
		})
	}
	t.Run("the text states the rules the engine applies", func(t *testing.T) {
		for _, s := range []string{
			"severity critical",
			"70% confidence or more",
			"blocked_scope is all work in this session",
			"blocked_scope is any code change; allowed_scope is reading the repository and revising the plan",
			"block_merge",
			"while the plan is being revised because a lead asked for a modification or a requirement changed (the same scopes)",
			"a permission prompt waiting on a person (blocked_scope is the tool it names, as tool:NAME, and the paths it names)",
			`"also"`,
		} {
			if !strings.Contains(protocol.Text, s) {
				t.Errorf("the text does not say %q", s)
			}
		}
	})
}
