package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web/webtest"
)

// TestWhatAgentsSendIsShownNotObeyed opens a session whose agent calls
// itself by another key's name and whose title hides its end behind a
// right-to-left override, with a gate whose question does the same: every
// page shows the key's name as the agent, the claimed name only beside it,
// and the override as a visible marker, never the character itself; a NUL
// stored before control characters were refused is shown the same way.
func TestWhatAgentsSendIsShownNotObeyed(t *testing.T) {
	kit, base := consoleServer(t, false)
	ctx := context.Background()
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	mission := kit.Mission(lead, false)
	s, err := kit.Gov.Sessions.Create(ctx, agent, governance.SessionInput{Mission: mission, Agent: "agentB", Title: "invoice\u202Efdp.exe"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Gov.Decisions.Open(ctx, agent, s.ID, governance.DecisionInput{Title: "Ship \u2066it\u2069?", Question: "Run \u202Emr -rf?"}); err != nil {
		t.Fatal(err)
	}
	legacy := kit.Session(agent, mission)
	stored, shown := "old\x00title\x1b]0;pwned\x07", "old⟨U+0000⟩title⟨U+001B⟩]0;pwned⟨U+0007⟩"
	if testkit.Postgres() {
		// PostgreSQL's text cannot hold a NUL at all.
		stored, shown = strings.ReplaceAll(stored, "\x00", ""), strings.ReplaceAll(shown, "⟨U+0000⟩", "")
	}
	kit.Corrupt("UPDATE sessions SET title = ? WHERE id = ?", stored, legacy)

	c := webtest.ConsoleAs(t, base, lead.Email)
	for _, path := range []string{"/sessions", "/sessions/" + s.ID, "/", "/sessions/" + legacy} {
		t.Run(path, func(t *testing.T) {
			body := c.Open(path).Body
			for _, r := range []rune{'\u202E', '\u2066', '\u2069', '\x00', '\x1b', '\x07'} {
				if strings.ContainsRune(body, r) {
					t.Errorf("the page holds %U raw", r)
				}
			}
			switch path {
			case "/sessions", "/sessions/" + s.ID:
				if !strings.Contains(body, "invoice⟨U+202E⟩fdp.exe") {
					t.Errorf("the title's override is not shown as a marker")
				}
				if !strings.Contains(body, agent.KeyName) || !strings.Contains(body, `data-testid="session-agent-label"`) ||
					!strings.Contains(body, "(agentB)") {
					t.Errorf("the agent is not its key %q with the label (agentB) beside it", agent.KeyName)
				}
			case "/":
				if !strings.Contains(body, "Ship ⟨U+2066⟩it⟨U+2069⟩?") || !strings.Contains(body, "agent "+agent.KeyName) ||
					strings.Contains(body, "agentB") {
					t.Errorf("Attention does not name the key as the agent, or hides the isolates:\n%s", body)
				}
			default:
				if !strings.Contains(body, shown) {
					t.Errorf("the stored NUL and ESC are not shown as markers")
				}
			}
		})
	}
}
