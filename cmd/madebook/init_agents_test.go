package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// initAgentWith runs `madebook init EXECUTOR args…` for the setup as if
// the running binary were exe, and returns its stdout.
func initAgentWith(t *testing.T, s agentSetup, exe string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := stdio{getenv: envOf(nil), stdin: strings.NewReader(""), stdout: &out}
	err := initAgent(c, args, s, func() (string, error) { return exe, nil })
	return out.String(), err
}

// readJSON reads a JSON file into a map.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(initRead(t, path)), &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// hookCommands are the commands a hooks object holds for event, in the
// matcher groups of Codex and Gemini or the flat list of Copilot and
// Cursor.
func hookCommands(hooks map[string]any, event string) []string {
	var out []string
	list, _ := hooks[event].([]any)
	for _, g := range list {
		entries := []any{g}
		if inner, ok := g.(map[string]any)["hooks"].([]any); ok {
			entries = inner
		}
		for _, h := range entries {
			if c, ok := h.(map[string]any)["command"].(string); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestInitEachAgentInAFreshProject(t *testing.T) {
	for _, c := range []struct {
		setup    agentSetup
		hooks    string   // the file holding the hooks
		events   []string // the events it must hook
		check    func(t *testing.T, dir string)
		stepWord string // what the printed steps must say
	}{
		{codexSetup, ".codex/hooks.json", []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"},
			func(t *testing.T, dir string) {
				toml := initRead(t, filepath.Join(dir, ".codex", "config.toml"))
				want := "[mcp_servers.madebook]\nurl = \"http://mb.test:8080/mcp\"\nbearer_token_env_var = \"MADEBOOK_KEY\"\n"
				if toml != want {
					t.Errorf("config.toml:\n%s\nwant\n%s", toml, want)
				}
				hooks := readJSON(t, filepath.Join(dir, ".codex", "hooks.json"))["hooks"].(map[string]any)
				pre := hooks["PreToolUse"].([]any)[0].(map[string]any)
				if pre["matcher"] != "*" || pre["hooks"].([]any)[0].(map[string]any)["timeout"] != float64(10) {
					t.Errorf("PreToolUse: %v", pre)
				}
				end := hooks["SessionEnd"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
				if end["timeout"] != float64(3) {
					t.Errorf("SessionEnd's timeout %v, want 3 (Codex's most)", end["timeout"])
				}
			}, "trust_level = \"trusted\""},
		{geminiSetup, ".gemini/settings.json", []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"},
			func(t *testing.T, dir string) {
				s := readJSON(t, filepath.Join(dir, ".gemini", "settings.json"))
				before := s["hooks"].(map[string]any)["BeforeTool"].([]any)[0].(map[string]any)
				if before["matcher"] != ".*" || before["hooks"].([]any)[0].(map[string]any)["timeout"] != float64(10000) {
					t.Errorf("BeforeTool: %v (the matcher is a regular expression, the timeout in ms)", before)
				}
				mcp := s["mcpServers"].(map[string]any)["madebook"].(map[string]any)
				if mcp["httpUrl"] != "http://mb.test:8080/mcp" || mcp["headers"].(map[string]any)["Authorization"] != "Bearer $MADEBOOK_KEY" {
					t.Errorf("mcpServers.madebook: %v", mcp)
				}
				allowed := s["security"].(map[string]any)["environmentVariableRedaction"].(map[string]any)["allowed"].([]any)
				if len(allowed) != 4 || allowed[0] != "MADEBOOK_KEY" {
					t.Errorf("redaction allows %v", allowed)
				}
			}, "TRUST_FOLDER"},
		{copilotSetup, ".github/hooks/madebook.json", []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
			"postToolUseFailure", "subagentStart", "agentStop", "subagentStop", "sessionEnd"},
			func(t *testing.T, dir string) {
				h := readJSON(t, filepath.Join(dir, ".github", "hooks", "madebook.json"))
				if h["version"] != float64(1) {
					t.Errorf("version %v", h["version"])
				}
				for _, c := range hookCommands(h["hooks"].(map[string]any), "preToolUse") {
					if !strings.Contains(c, " --event preToolUse || ") {
						t.Errorf("preToolUse's hook is not told its event: %s", c)
					}
				}
				mcp := readJSON(t, filepath.Join(dir, ".mcp.json"))["mcpServers"].(map[string]any)["madebook"].(map[string]any)
				if mcp["url"] != "http://mb.test:8080/mcp" {
					t.Errorf(".mcp.json: %v", mcp)
				}
			}, "trusted_folders"},
		{cursorSetup, ".cursor/hooks.json", []string{"sessionStart", "preToolUse", "postToolUse", "postToolUseFailure", "subagentStart",
			"stop", "subagentStop", "sessionEnd"},
			func(t *testing.T, dir string) {
				hooks := readJSON(t, filepath.Join(dir, ".cursor", "hooks.json"))["hooks"].(map[string]any)
				if pre := hooks["preToolUse"].([]any)[0].(map[string]any); pre["failClosed"] != true {
					t.Errorf("preToolUse is not failClosed: %v", pre)
				}
				if stop := hooks["stop"].([]any)[0].(map[string]any); stop["failClosed"] != nil {
					t.Errorf("stop is failClosed: %v", stop)
				}
				mcp := readJSON(t, filepath.Join(dir, ".cursor", "mcp.json"))["mcpServers"].(map[string]any)["madebook"].(map[string]any)
				if mcp["headers"].(map[string]any)["Authorization"] != "Bearer ${env:MADEBOOK_KEY}" {
					t.Errorf(".cursor/mcp.json: %v", mcp)
				}
			}, "Trust the workspace"},
	} {
		name := c.setup.executor.Name
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin dir"), "madebook")
			out, err := initAgentWith(t, c.setup, exe, "--dir", dir, "--url", "http://mb.test:8080/", "--mission", "billing")
			if err != nil {
				t.Fatal(err)
			}
			hooks := readJSON(t, filepath.Join(dir, filepath.FromSlash(c.hooks)))["hooks"].(map[string]any)
			if len(hooks) != len(c.events) {
				t.Errorf("%d events hooked, want %d: %v", len(hooks), len(c.events), hooks)
			}
			quoted := "'" + exe + "' hook " + name + " --url http://mb.test:8080 --mission billing"
			for _, ev := range c.events {
				cmds := hookCommands(hooks, ev)
				if len(cmds) != 1 || !strings.HasPrefix(cmds[0], quoted) || !strings.HasSuffix(cmds[0], "; exit 2; }") {
					t.Errorf("%s runs %q, want %s… with the exit-2 fallback", ev, cmds, quoted)
				}
			}
			c.check(t, dir)
			for _, want := range []string{"created", "export MADEBOOK_KEY", "Then:", c.stepWord, "agent " + name} {
				if !strings.Contains(out, want) {
					t.Errorf("the output does not say %q:\n%s", want, out)
				}
			}
			again, err := initAgentWith(t, c.setup, exe, "--dir", dir, "--url", "http://mb.test:8080/", "--mission", "billing")
			if err != nil || strings.Contains(again, "created") || strings.Contains(again, "updated") {
				t.Errorf("a second run changed something (%v):\n%s", err, again)
			}
		})
	}
}

func TestInitGeminiMergesIntoAProjectsOwnSettings(t *testing.T) {
	dir := t.TempDir()
	exe := fakeBinary(t, t.TempDir(), "madebook")
	own := `{
  "general": {"vimMode": true},
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]},
      {"matcher": ".*", "hooks": [{"type": "command", "command": "/old/madebook hook gemini --url http://old"}]}
    ]
  },
  "security": {"environmentVariableRedaction": {"allowed": ["MY_TOKEN", "MADEBOOK_KEY"]}}
}`
	initWrite(t, filepath.Join(dir, ".gemini", "settings.json"), own)
	if _, err := initAgentWith(t, geminiSetup, exe, "--dir", dir); err != nil {
		t.Fatal(err)
	}
	s := readJSON(t, filepath.Join(dir, ".gemini", "settings.json"))
	if s["general"].(map[string]any)["vimMode"] != true {
		t.Errorf("the project's own setting was lost: %v", s)
	}
	cmds := hookCommands(s["hooks"].(map[string]any), "BeforeTool")
	if len(cmds) != 2 || cmds[0] != "./lint.sh" || !strings.Contains(cmds[1], exe) {
		t.Errorf("BeforeTool runs %q: want the project's lint.sh, then Madebook's one hook", cmds)
	}
	allowed := s["security"].(map[string]any)["environmentVariableRedaction"].(map[string]any)["allowed"].([]any)
	if len(allowed) != 5 || allowed[0] != "MY_TOKEN" {
		t.Errorf("redaction allows %v: want the project's names kept, MADEBOOK_KEY once", allowed)
	}
}

func TestInitCodexSetsItsTableInAProjectsOwnConfig(t *testing.T) {
	exe := fakeBinary(t, t.TempDir(), "madebook")
	for _, c := range []struct{ name, own, want string }{
		{"appended after the project's tables",
			"model = \"o3\"\n\n[mcp_servers.github]\nurl = \"https://gh\"\n",
			"model = \"o3\"\n\n[mcp_servers.github]\nurl = \"https://gh\"\n\n[mcp_servers.madebook]\nurl = \"http://127.0.0.1:8080/mcp\"\nbearer_token_env_var = \"MADEBOOK_KEY\"\n"},
		{"replaced where it stands, the tables after it kept",
			"# mine\n[mcp_servers.madebook] # old\nurl = \"http://old/mcp\"\nbearer_token = \"mbk_leaked\"\n\n[tools]\nweb_search = true\n",
			"# mine\n[mcp_servers.madebook]\nurl = \"http://127.0.0.1:8080/mcp\"\nbearer_token_env_var = \"MADEBOOK_KEY\"\n\n[tools]\nweb_search = true\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			initWrite(t, filepath.Join(dir, ".codex", "config.toml"), c.own)
			if _, err := initAgentWith(t, codexSetup, exe, "--dir", dir); err != nil {
				t.Fatal(err)
			}
			if got := initRead(t, filepath.Join(dir, ".codex", "config.toml")); got != c.want {
				t.Errorf("config.toml:\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestInitRefusesAgentFilesItCannotMerge(t *testing.T) {
	exe := fakeBinary(t, t.TempDir(), "madebook")
	for _, c := range []struct {
		name      string
		setup     agentSetup
		file, own string
		says      string
	}{
		{"codex: the table as dotted keys", codexSetup, ".codex/config.toml", "[mcp_servers]\nmadebook.url = \"http://x\"\n", "another way"},
		{"codex: the table inline", codexSetup, ".codex/config.toml", "mcp_servers.madebook = { url = \"http://x\" }\n", "another way"},
		{"codex: hooks.json not JSON", codexSetup, ".codex/hooks.json", "{hooks", "not valid JSON"},
		{"gemini: hooks an array", geminiSetup, ".gemini/settings.json", `{"hooks": []}`, "not an object"},
		{"gemini: BeforeTool an object", geminiSetup, ".gemini/settings.json", `{"hooks": {"BeforeTool": {}}}`, "not an array"},
		{"copilot: hooks a string", copilotSetup, ".github/hooks/madebook.json", `{"hooks": "x"}`, "not an object"},
		{"cursor: mcp.json an array", cursorSetup, ".cursor/mcp.json", `[]`, "not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			initWrite(t, filepath.Join(dir, filepath.FromSlash(c.file)), c.own)
			before := initEntries(t, dir)
			_, err := initAgentWith(t, c.setup, exe, "--dir", dir)
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("err %v, want one saying %q and that nothing was written", err, c.says)
			}
			if got := initEntries(t, dir); strings.Join(got, ",") != strings.Join(before, ",") {
				t.Errorf("files %v, want %v", got, before)
			}
			if got := initRead(t, filepath.Join(dir, filepath.FromSlash(c.file))); got != c.own {
				t.Errorf("%s was changed to %q", c.file, got)
			}
		})
	}
}

func TestShellHookQuotesAndFallsBack(t *testing.T) {
	got := shellHook("/opt/my tools/madebook", []string{"hook", "gemini", "--mission", "it's"})
	want := `'/opt/my tools/madebook' hook gemini --mission 'it'\''s' || { echo "madebook hook failed: this tool call is blocked" >&2; exit 2; }`
	if got != want {
		t.Errorf("shellHook:\n%s\nwant\n%s", got, want)
	}
	if got := withEvent(want, "preToolUse"); !strings.Contains(got, "'it'\\''s' --event preToolUse || {") {
		t.Errorf("withEvent: %s", got)
	}
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{`'/opt/bin dir/madebook' hook cursor --event x || { echo "failed" >&2; exit 2; }`, []string{"/opt/bin dir/madebook", "hook", "cursor", "--event", "x"}},
		{`"/a b/madebook-hook" codex`, []string{"/a b/madebook-hook", "codex"}},
		{`/a\ b/madebook hook gemini --mission 'it'\''s'`, []string{"/a b/madebook", "hook", "gemini", "--mission", "it's"}},
		{`madebook hook x;ls`, []string{"madebook", "hook", "x"}},
		{`''`, []string{""}},
		{``, nil},
	} {
		if got := shellWords(c.line); strings.Join(got, "\x00") != strings.Join(c.want, "\x00") || len(got) != len(c.want) {
			t.Errorf("shellWords(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}
