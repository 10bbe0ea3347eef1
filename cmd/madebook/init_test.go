package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeBinary makes an executable file name in dir (made when missing) and
// returns its path.
func fakeBinary(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// initWith runs `madebook init claude-code args…` as if the running
// binary were exe, with the environment env, and returns its stdout.
func initWith(t *testing.T, env map[string]string, exe string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := stdio{getenv: envOf(env), stdin: strings.NewReader(""), stdout: &out}
	err := initClaudeCode(c, args, func() (string, error) { return exe, nil })
	return out.String(), err
}

// mustInit is initWith that must succeed.
func mustInit(t *testing.T, env map[string]string, exe string, args ...string) string {
	t.Helper()
	out, err := initWith(t, env, exe, args...)
	if err != nil {
		t.Fatalf("init claude-code %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func initRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func initWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// initEntries lists a directory's names, recursively ("" when it is missing).
func initEntries(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	return names
}

// freshSettings is the .claude/settings.json init writes in an empty
// project for the binary EXE and no mission.
const freshSettings = `{
  "enabledMcpjsonServers": [
    "madebook"
  ],
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "PermissionRequest": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "SubagentStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 10,
            "onFailure": "block"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 30
          }
        ]
      }
    ],
    "SubagentStop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 30
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "EXE",
            "args": [
              "hook",
              "claude-code",
              "--url",
              "http://127.0.0.1:8080"
            ],
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`

// freshMCP is the .mcp.json init writes in an empty project.
const freshMCP = `{
  "mcpServers": {
    "madebook": {
      "type": "http",
      "url": "http://127.0.0.1:8080/mcp",
      "headers": {
        "Authorization": "Bearer ${MADEBOOK_KEY}"
      }
    }
  }
}
`

func TestInitClaudeCodeInAFreshProject(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	dir := t.TempDir()
	out := mustInit(t, map[string]string{"MADEBOOK_KEY": "mbk_secret_never_written"}, exe, "--dir", dir)

	t.Run("settings.json holds the hook on every event, failing closed but on Stop, SubagentStop and SessionEnd", func(t *testing.T) {
		if got, want := initRead(t, filepath.Join(dir, ".claude", "settings.json")), strings.ReplaceAll(freshSettings, "EXE", exe); got != want {
			t.Errorf("settings.json:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run(".mcp.json holds the MCP server, its key read from the environment", func(t *testing.T) {
		if got := initRead(t, filepath.Join(dir, ".mcp.json")); got != freshMCP {
			t.Errorf(".mcp.json:\n%s\nwant:\n%s", got, freshMCP)
		}
	})
	t.Run("no key is written and nothing else is left behind", func(t *testing.T) {
		for _, name := range []string{".claude/settings.json", ".mcp.json"} {
			if strings.Contains(initRead(t, filepath.Join(dir, name)), "mbk_") {
				t.Errorf("%s holds a key", name)
			}
		}
		if got, want := initEntries(t, dir), []string{".claude", ".claude/settings.json", ".mcp.json"}; !reflect.DeepEqual(got, want) {
			t.Errorf("the project holds %q, want %q", got, want)
		}
	})
	t.Run("the output says what was written and what to export", func(t *testing.T) {
		for _, want := range []string{
			"created  " + filepath.Join(dir, ".claude", "settings.json"),
			"created  " + filepath.Join(dir, ".mcp.json"),
			"export MADEBOOK_KEY=mbk_…", "madebook key create --name claude",
			"export MADEBOOK_MISSION=SLUG",
			"a hook that cannot run", "blocks\nthe tool call", "MADEBOOK_FAIL_OPEN=1 is the only way to fail open",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("the JSON is what a standard decoder reads", func(t *testing.T) {
		var s struct {
			Enabled []string `json:"enabledMcpjsonServers"`
			Hooks   map[string][]struct {
				Matcher string `json:"matcher"`
				Hooks   []map[string]any
			} `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(initRead(t, filepath.Join(dir, ".claude", "settings.json"))), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Hooks) != len(initClaudeEvents) || s.Hooks["PreToolUse"][0].Hooks[0]["command"] != exe {
			t.Errorf("settings decode to %+v", s)
		}
	})
}

func TestInitClaudeCodeBakesInTheMissionAndTheURL(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	for _, c := range []struct {
		name     string
		env      map[string]string
		args     []string
		wantArgs []string
	}{
		{"--mission and --url are the hook's arguments, the URL's trailing slashes trimmed", nil,
			[]string{"--mission", "billing", "--url", "https://madebook.example.com/mb//"},
			[]string{"hook", "claude-code", "--url", "https://madebook.example.com/mb", "--mission", "billing"}},
		{"MADEBOOK_MISSION and MADEBOOK_URL stand in for the flags",
			map[string]string{"MADEBOOK_MISSION": "billing", "MADEBOOK_URL": "http://10.0.0.5:9000/"}, nil,
			[]string{"hook", "claude-code", "--url", "http://10.0.0.5:9000", "--mission", "billing"}},
		{"the flags win over the environment",
			map[string]string{"MADEBOOK_MISSION": "billing", "MADEBOOK_URL": "http://10.0.0.5:9000"},
			[]string{"--mission", "search", "--url", "http://127.0.0.1:7000"},
			[]string{"hook", "claude-code", "--url", "http://127.0.0.1:7000", "--mission", "search"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := mustInit(t, c.env, exe, append(c.args, "--dir", dir)...)
			settings := decodeSettings(t, filepath.Join(dir, ".claude", "settings.json"))
			for event, groups := range settings.Hooks {
				if got := groups[len(groups)-1].Hooks[0].Args; !reflect.DeepEqual(got, c.wantArgs) {
					t.Errorf("%s: args %q, want %q", event, got, c.wantArgs)
				}
			}
			var mcp struct {
				MCPServers map[string]struct{ URL string } `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(initRead(t, filepath.Join(dir, ".mcp.json"))), &mcp); err != nil {
				t.Fatal(err)
			}
			if got, want := mcp.MCPServers["madebook"].URL, c.wantArgs[3]+"/mcp"; got != want {
				t.Errorf("MCP URL %q, want %q", got, want)
			}
			if strings.Contains(out, "export MADEBOOK_MISSION") {
				t.Errorf("the output asks for MADEBOOK_MISSION, which the hooks have:\n%s", out)
			}
		})
	}
}

// claudeSettings is the part of a Claude Code settings file the tests read.
type claudeSettings struct {
	Enabled []string `json:"enabledMcpjsonServers"`
	Hooks   map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type      string   `json:"type"`
			Command   string   `json:"command"`
			Args      []string `json:"args"`
			Timeout   int      `json:"timeout"`
			OnFailure string   `json:"onFailure"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func decodeSettings(t *testing.T, path string) claudeSettings {
	t.Helper()
	var s claudeSettings
	if err := json.Unmarshal([]byte(initRead(t, path)), &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// userSettings is a project's own settings.json, indented by four spaces,
// with Madebook's hand-written hooks of old beside the user's own.
const userSettings = `{
    "model": "opus",
    "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh", "timeout": 5}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "madebook hook claude-code", "timeout": 10}]},
            {"matcher": "Edit|Write", "hooks": [
                {"type": "command", "command": "/usr/local/bin/madebook", "args": ["hook", "claude-code"]},
                {"type": "command", "command": "prettier --check"}
            ]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/mb/madebook-hook", "args": ["claude-code"]}]}]
    },
    "enabledMcpjsonServers": ["github"],
    "disabledMcpjsonServers": ["madebook", "slack"],
    "env": {"GOFLAGS": "-mod=mod", "HTML": "<b>&</b>"},
    "cleanupPeriodDays": 30.50
}
`

// userMCP is a project's own .mcp.json: another server, and Madebook's at
// an old address.
const userMCP = `{"mcpServers": {
  "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
  "madebook": {"type": "http", "url": "http://old-host:8080/mcp"},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}, "other": true}`

func TestInitClaudeCodeMergesIntoAProjectsOwnSettings(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	dir := t.TempDir()
	settingsPath, mcpPath := filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".mcp.json")
	initWrite(t, settingsPath, userSettings)
	initWrite(t, mcpPath, userMCP)
	out := mustInit(t, nil, exe, "--dir", dir, "--mission", "billing")
	for _, want := range []string{"updated  " + settingsPath, "updated  " + mcpPath} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	settings := initRead(t, settingsPath)

	t.Run("every other setting is kept, in its order", func(t *testing.T) {
		doc, err := parseJSON([]byte(settings))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := keysOf(doc.(*jsonObject)), []string{"model", "permissions", "hooks", "enabledMcpjsonServers", "disabledMcpjsonServers", "env", "cleanupPeriodDays"}; !reflect.DeepEqual(got, want) {
			t.Errorf("keys %q, want %q", got, want)
		}
		hooks, _ := doc.(*jsonObject).get("hooks")
		want := []string{"PreToolUse", "Notification", "SessionStart", "UserPromptSubmit", "PermissionRequest", "PostToolUse",
			"PostToolUseFailure", "SubagentStart", "Stop", "SubagentStop", "SessionEnd"}
		if got := keysOf(hooks.(*jsonObject)); !reflect.DeepEqual(got, want) {
			t.Errorf("hooks' keys %q, want %q", got, want)
		}
		for _, want := range []string{
			`"model": "opus"`, `"Bash(go test:*)"`, `"GOFLAGS": "-mod=mod"`, `"HTML": "<b>&</b>"`, `"cleanupPeriodDays": 30.50`,
			`"command": "notify-send claude"`,
		} {
			if !strings.Contains(settings, want) {
				t.Errorf("settings.json lacks %s:\n%s", want, settings)
			}
		}
		if !strings.HasPrefix(settings, "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n") || !strings.HasSuffix(settings, "\n}\n") {
			t.Errorf("settings.json is not indented by two spaces with a trailing newline:\n%s", settings)
		}
	})
	t.Run("the user's hooks stay and Madebook's old ones are replaced by one, last", func(t *testing.T) {
		s := decodeSettings(t, settingsPath)
		pre := s.Hooks["PreToolUse"]
		if len(pre) != 3 || pre[0].Matcher != "Bash" || pre[0].Hooks[0].Command != "./scripts/check-bash.sh" ||
			pre[1].Matcher != "Edit|Write" || len(pre[1].Hooks) != 1 || pre[1].Hooks[0].Command != "prettier --check" ||
			pre[2].Matcher != "*" || pre[2].Hooks[0].Command != exe {
			t.Errorf("PreToolUse is %+v", pre)
		}
		if start := s.Hooks["SessionStart"]; len(start) != 1 || start[0].Hooks[0].Command != exe {
			t.Errorf("SessionStart is %+v: the old madebook-hook entry stays", start)
		}
		if n := len(s.Hooks["Notification"]); n != 1 {
			t.Errorf("Notification has %d groups, want the user's one", n)
		}
		if got, want := s.Enabled, []string{"github", "madebook"}; !reflect.DeepEqual(got, want) {
			t.Errorf("enabledMcpjsonServers %q, want %q", got, want)
		}
		if !strings.Contains(settings, "\"disabledMcpjsonServers\": [\n    \"slack\"\n  ]") {
			t.Errorf("disabledMcpjsonServers still holds madebook:\n%s", settings)
		}
	})
	t.Run("the other MCP servers stay, Madebook's is replaced where it stood", func(t *testing.T) {
		want := `{
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    },
    "madebook": {
      "type": "http",
      "url": "http://127.0.0.1:8080/mcp",
      "headers": {
        "Authorization": "Bearer ${MADEBOOK_KEY}"
      }
    },
    "memory": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-memory"
      ]
    }
  },
  "other": true
}
`
		if got := initRead(t, mcpPath); got != want {
			t.Errorf(".mcp.json:\n%s\nwant:\n%s", got, want)
		}
	})
}

func keysOf(o *jsonObject) []string {
	var keys []string
	for _, m := range o.members {
		keys = append(keys, m.key)
	}
	return keys
}

func TestInitClaudeCodeTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	for name, files := range map[string]map[string]string{
		"in a fresh project":   nil,
		"in a project's files": {".claude/settings.json": userSettings, ".mcp.json": userMCP},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range files {
				initWrite(t, filepath.Join(dir, p), content)
			}
			mustInit(t, nil, exe, "--dir", dir, "--mission", "billing")
			first := map[string]string{}
			stats := map[string]os.FileInfo{}
			for _, p := range []string{".claude/settings.json", ".mcp.json"} {
				first[p] = initRead(t, filepath.Join(dir, p))
				st, err := os.Stat(filepath.Join(dir, p))
				if err != nil {
					t.Fatal(err)
				}
				stats[p] = st
			}
			out := mustInit(t, nil, exe, "--dir", dir, "--mission", "billing")
			for p, want := range first {
				if got := initRead(t, filepath.Join(dir, p)); got != want {
					t.Errorf("%s changed on the second run:\n%s\nwas:\n%s", p, got, want)
				}
				st, err := os.Stat(filepath.Join(dir, p))
				if err != nil {
					t.Fatal(err)
				}
				if !os.SameFile(st, stats[p]) {
					t.Errorf("%s was rewritten (a new file) though nothing changed", p)
				}
				if !strings.Contains(out, "unchanged  "+filepath.Join(dir, p)) {
					t.Errorf("the output does not say %s is unchanged:\n%s", p, out)
				}
			}
		})
	}
	t.Run("a file already holding the settings in another layout is left as it is", func(t *testing.T) {
		dir := t.TempDir()
		compact := `{"mcpServers":{"madebook":{"type":"http","url":"http://127.0.0.1:8080/mcp","headers":{"Authorization":"Bearer ${MADEBOOK_KEY}"}}}}`
		initWrite(t, filepath.Join(dir, ".mcp.json"), compact)
		out := mustInit(t, nil, exe, "--dir", dir)
		if got := initRead(t, filepath.Join(dir, ".mcp.json")); got != compact {
			t.Errorf(".mcp.json was rewritten:\n%s", got)
		}
		if !strings.Contains(out, "unchanged  "+filepath.Join(dir, ".mcp.json")) {
			t.Errorf("the output does not say .mcp.json is unchanged:\n%s", out)
		}
	})
}

func TestInitClaudeCodeRefusesFilesItCannotMerge(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	for _, c := range []struct {
		name     string
		settings string // "" for none
		mcp      string
		want     string
	}{
		{"settings.json is not JSON", `{"model": "opus",}`, "", "settings.json is not valid JSON: line 1, column 18"},
		{"settings.json is cut short", "{\n  \"hooks\": {\n", "", "settings.json is not valid JSON: it ends in the middle of a value"},
		{"settings.json has more after its object", `{} {}`, "", "settings.json is not valid JSON: more data after the JSON value"},
		{".mcp.json is not JSON, settings.json fine", `{"model": "opus"}`, "{\n\"mcpServers\": {'x': 1}}", ".mcp.json is not valid JSON: line 2, column 16"},
		{"settings.json is an array", `[]`, "", "settings.json holds an array, not a JSON object"},
		{"hooks is not an object", `{"hooks": []}`, "", `settings.json: "hooks" is an array, not an object`},
		{"an event's hooks are not an array", `{"hooks": {"PreToolUse": {"matcher": "*"}}}`, "", `settings.json: "hooks"."PreToolUse" is an object, not an array`},
		{"enabledMcpjsonServers is not an array", `{"enabledMcpjsonServers": "madebook"}`, "", `"enabledMcpjsonServers" is a string, not an array`},
		{"mcpServers is not an object", `{}`, `{"mcpServers": ["madebook"]}`, `.mcp.json: "mcpServers" is an array, not an object`},
	} {
		t.Run(c.name+": an error naming the file, and nothing written", func(t *testing.T) {
			dir := t.TempDir()
			if c.settings != "" {
				initWrite(t, filepath.Join(dir, ".claude", "settings.json"), c.settings)
			}
			if c.mcp != "" {
				initWrite(t, filepath.Join(dir, ".mcp.json"), c.mcp)
			}
			before := initEntries(t, dir)
			_, err := initWith(t, nil, exe, "--dir", dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("error %v, want one holding %q and saying nothing was written", err, c.want)
			}
			if code, _ := outcome(err); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if got := initEntries(t, dir); !reflect.DeepEqual(got, before) {
				t.Errorf("the project holds %q, was %q", got, before)
			}
			if c.settings != "" && initRead(t, filepath.Join(dir, ".claude", "settings.json")) != c.settings {
				t.Error("settings.json changed")
			}
			if c.mcp != "" && initRead(t, filepath.Join(dir, ".mcp.json")) != c.mcp {
				t.Error(".mcp.json changed")
			}
		})
	}
	t.Run("an empty file is taken as no settings yet", func(t *testing.T) {
		dir := t.TempDir()
		initWrite(t, filepath.Join(dir, ".mcp.json"), "\n")
		out := mustInit(t, nil, exe, "--dir", dir)
		if got := initRead(t, filepath.Join(dir, ".mcp.json")); got != freshMCP {
			t.Errorf(".mcp.json:\n%s", got)
		}
		if !strings.Contains(out, "updated  "+filepath.Join(dir, ".mcp.json")) {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("a missing project directory is an error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nowhere")
		if _, err := initWith(t, nil, exe, "--dir", dir); err == nil || !strings.Contains(err.Error(), "is not a directory") {
			t.Errorf("error %v", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the directory was made (%v)", err)
		}
	})
}

func TestInitClaudeCodeRefusesAGoRunBuild(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for _, c := range []struct {
		name, exe, gocache string
	}{
		{"a temporary go-build directory", filepath.Join(tmp, "go-build3974319805", "b001", "exe", "madebook"), ""},
		{"the build cache", filepath.Join(tmp, ".cache", "go-build", "be", "be1977e5-d", "madebook"), ""},
		{"a build cache GOCACHE names", filepath.Join(tmp, "gocache", "be", "be1977e5-d", "madebook"), filepath.Join(tmp, "gocache")},
	} {
		t.Run("a binary in "+c.name+" is refused and nothing is written", func(t *testing.T) {
			exe := fakeBinary(t, filepath.Dir(c.exe), filepath.Base(c.exe))
			fakeBinary(t, filepath.Dir(c.exe), "madebook-hook")
			dir := t.TempDir()
			_, err := initWith(t, map[string]string{"GOCACHE": c.gocache}, exe, "--dir", dir)
			if err == nil || !strings.Contains(err.Error(), "go run") || !strings.Contains(err.Error(), "go build -o bin/ ./cmd/...") ||
				!strings.Contains(err.Error(), "bin/madebook init claude-code") {
				t.Fatalf("error %v, want the go run refusal", err)
			}
			if got := initEntries(t, dir); len(got) > 0 {
				t.Errorf("the project holds %q", got)
			}
		})
	}
	t.Run("go-builder in a path is not the build cache", func(t *testing.T) {
		if goRunBuild(filepath.Join(tmp, "go-builder", "bin", "madebook"), "") {
			t.Error("refused")
		}
	})
	t.Run("run refuses this test binary, which go test built", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil || !goRunBuild(exe, os.Getenv("GOCACHE")) {
			t.Skipf("the test binary %s is not in a go-build directory", exe)
		}
		dir := t.TempDir()
		if _, err := cli(t, noEnv, "", "init", "claude-code", "--dir", dir); err == nil || !strings.Contains(err.Error(), "go build -o bin/") {
			t.Errorf("error %v, want the go run refusal", err)
		}
		if got := initEntries(t, dir); len(got) > 0 {
			t.Errorf("the project holds %q", got)
		}
	})
}

func TestInitClaudeCodePrefersMadebookHook(t *testing.T) {
	t.Parallel()
	t.Run("an executable madebook-hook beside the binary is the hook", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "bin")
		exe := fakeBinary(t, bin, "madebook")
		lean := fakeBinary(t, bin, "madebook-hook")
		dir := t.TempDir()
		out := mustInit(t, nil, exe, "--dir", dir, "--mission", "billing")
		s := decodeSettings(t, filepath.Join(dir, ".claude", "settings.json"))
		for event, groups := range s.Hooks {
			h := groups[0].Hooks[0]
			if want := []string{"claude-code", "--url", "http://127.0.0.1:8080", "--mission", "billing"}; h.Command != lean || !reflect.DeepEqual(h.Args, want) {
				t.Errorf("%s runs %s %q, want %s %q", event, h.Command, h.Args, lean, want)
			}
		}
		if !strings.Contains(out, "hooks: "+lean+" claude-code --url") {
			t.Errorf("the output does not name madebook-hook:\n%s", out)
		}
	})
	t.Run("a madebook-hook that is not executable is passed over", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "bin")
		exe := fakeBinary(t, bin, "madebook")
		initWrite(t, filepath.Join(bin, "madebook-hook"), "not a program")
		dir := t.TempDir()
		mustInit(t, nil, exe, "--dir", dir)
		if h := decodeSettings(t, filepath.Join(dir, ".claude", "settings.json")).Hooks["PreToolUse"][0].Hooks[0]; h.Command != exe || h.Args[0] != "hook" {
			t.Errorf("PreToolUse runs %s %q, want %s hook claude-code", h.Command, h.Args, exe)
		}
	})
	t.Run("a symlink to the binary is resolved, and madebook-hook looked for beside its target", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "bin")
		fakeBinary(t, bin, "madebook")
		lean := fakeBinary(t, bin, "madebook-hook")
		link := filepath.Join(t.TempDir(), "madebook")
		if err := os.Symlink(filepath.Join(bin, "madebook"), link); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		mustInit(t, nil, link, "--dir", dir)
		if h := decodeSettings(t, filepath.Join(dir, ".claude", "settings.json")).Hooks["Stop"][0].Hooks[0]; h.Command != lean {
			t.Errorf("Stop runs %s, want %s", h.Command, lean)
		}
	})
}

func TestInitClaudeCodeRefusesBadFlags(t *testing.T) {
	t.Parallel()
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"a URL of another scheme", nil, []string{"--url", "ftp://127.0.0.1:8080"}, `--url (or MADEBOOK_URL) "ftp://127.0.0.1:8080" is not an http:// or https:// URL`},
		{"a URL with no host", nil, []string{"--url", "http://"}, "is not an http:// or https:// URL with a host"},
		{"a URL with no scheme", nil, []string{"--url", "127.0.0.1:8080"}, "is not an http:// or https:// URL"},
		{"a URL with a query", nil, []string{"--url", "http://127.0.0.1:8080/?x=1"}, "is not an http:// or https:// URL"},
		{"a bad MADEBOOK_URL", map[string]string{"MADEBOOK_URL": "localhost"}, nil, `"localhost" is not an http://`},
		{"a slug with capitals and spaces", nil, []string{"--mission", "Billing Q3"}, `--mission (or MADEBOOK_MISSION): The slug "Billing Q3" must be`},
		{"a slug starting with a dash", map[string]string{"MADEBOOK_MISSION": "-billing"}, nil, `The slug "-billing" must be`},
		{"an unknown flag", nil, []string{"--key", "mbk_x"}, "flag provided but not defined: -key"},
		{"an argument", nil, []string{"codex"}, `unexpected argument "codex"`},
	} {
		t.Run(c.name+" is a usage mistake (exit 2) and writes nothing", func(t *testing.T) {
			dir := t.TempDir()
			_, err := initWith(t, c.env, exe, append(c.args, "--dir", dir)...)
			var u usageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "madebook init claude-code [--mission SLUG]") {
				t.Fatalf("error %v, want a usage error holding %q", err, c.want)
			}
			if code, _ := outcome(err); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if got := initEntries(t, dir); len(got) > 0 {
				t.Errorf("the project holds %q", got)
			}
		})
	}
}

func TestInitClaudeCodeRecognisesMadebookHooks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		command string
		args    []any
		want    bool
	}{
		{"madebook hook claude-code", nil, true},
		{"MADEBOOK_MISSION=x madebook hook claude-code", nil, true},
		{"MADEBOOK_MISSION=x /opt/bin/madebook-hook claude-code", nil, true},
		{"/usr/local/bin/madebook", []any{"hook", "claude-code"}, true},
		{"/usr/local/bin/madebook", nil, true},
		{"/Users/Ada Lovelace/go/bin/madebook", []any{"hook", "claude-code", "--url", "http://x"}, true},
		{"/opt/mb/madebook-hook", []any{"claude-code"}, true},
		{"madebook-hook claude-code --url http://x", nil, true},
		{"madebook hook codex", nil, true},
		{"madebook agent event task.completed", nil, false},
		{"/usr/local/bin/madebook", []any{"agent", "evidence", "--kind", "tests"}, false},
		{"./scripts/check-bash.sh", nil, false},
		{"madebook-lint", nil, false},
		{"echo madebook", nil, false},
	} {
		h := newObject("type", "command", "command", c.command)
		if c.args != nil {
			h.set("args", c.args)
		}
		if got := isMadebookHook(h); got != c.want {
			t.Errorf("isMadebookHook(%q %q) = %v, want %v", c.command, c.args, got, c.want)
		}
	}
	t.Run("a user's own madebook agent hook stays beside Madebook's", func(t *testing.T) {
		exe := fakeBinary(t, filepath.Join(t.TempDir(), "bin"), "madebook")
		dir := t.TempDir()
		path := filepath.Join(dir, ".claude", "settings.json")
		initWrite(t, path, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "madebook agent evidence --kind tests --passed"}]}]}}`)
		mustInit(t, nil, exe, "--dir", dir)
		stop := decodeSettings(t, path).Hooks["Stop"]
		if len(stop) != 2 || stop[0].Hooks[0].Command != "madebook agent evidence --kind tests --passed" || stop[1].Hooks[0].Command != exe {
			t.Errorf("Stop is %+v", stop)
		}
	})
}
