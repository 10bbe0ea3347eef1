package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/internal/agentcli"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/hook"
)

// agentSetup is what `madebook init EXECUTOR` writes for a coding agent
// other than Claude Code (init.go has Claude Code's): its hooks on the
// events the hook answers, each running `madebook hook EXECUTOR` through
// the shell so that a hook that cannot run exits 2 and blocks the call,
// and the MCP server "madebook".
type agentSetup struct {
	executor *hook.Executor
	// about is the command's help: what it writes.
	about string
	// files plans the files of the project dir: command is the hook's
	// shell command, base Madebook's URL.
	files func(dir, command, base string) ([]*projectFile, error)
	// steps are what the user still has to do, for the project dir.
	steps func(dir string) []string
}

// initArgs are init's command line, checked.
type initArgs struct {
	mission, base, dir string
}

// parseInit reads init's flags for the executor: --mission, --url and
// --dir, each checked.
func parseInit(c stdio, args []string, name, title, about string) (initArgs, error) {
	f := newFlags("init "+name, "madebook init "+name+" [--mission SLUG] [--url URL] [--dir PROJECT]", about)
	f.Notes = "Without a mission (--mission, MADEBOOK_MISSION) the hook reads MADEBOOK_MISSION when it runs.\n" +
		"It refuses a `go run` build, a binary Go deletes: build it first, `go build -o bin/ ./cmd/...`,\n" +
		"then `bin/madebook init " + name + "`.\n" +
		"Exit status: 0 written (or nothing to change); 1 a go run build or a file it cannot merge\n" +
		"(nothing is written); 2 a command-line mistake."
	mission := f.String("mission", "", "the `SLUG` of the mission "+title+" works on, written into the hook's arguments")
	f.Env["mission"] = "MADEBOOK_MISSION"
	base := f.String("url", agentcli.DefaultURL, "the `URL` Madebook serves at")
	f.Env["url"] = "MADEBOOK_URL"
	dir := f.String("dir", ".", "the `PROJECT` directory, the root "+title+" runs in")
	if err := f.parse(c, args); err != nil {
		return initArgs{}, err
	}
	u, err := initURL(*base)
	if err != nil {
		return initArgs{}, f.Fail("%v", err)
	}
	if *mission != "" {
		if _, err := (governance.MissionInput{Slug: *mission, Title: "init"}).Validate(); err != nil {
			return initArgs{}, f.Fail("--mission (or MADEBOOK_MISSION): %v", err)
		}
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return initArgs{}, fmt.Errorf("--dir %s is not a directory", *dir)
	}
	return initArgs{mission: *mission, base: u, dir: *dir}, nil
}

// runInitCodex is `madebook init codex`.
func runInitCodex(_ context.Context, c stdio, args []string) error {
	return initAgent(c, args, codexSetup, os.Executable)
}

// runInitGemini is `madebook init gemini`.
func runInitGemini(_ context.Context, c stdio, args []string) error {
	return initAgent(c, args, geminiSetup, os.Executable)
}

// runInitCopilot is `madebook init copilot`.
func runInitCopilot(_ context.Context, c stdio, args []string) error {
	return initAgent(c, args, copilotSetup, os.Executable)
}

// runInitCursor is `madebook init cursor`.
func runInitCursor(_ context.Context, c stdio, args []string) error {
	return initAgent(c, args, cursorSetup, os.Executable)
}

// initAgent is `madebook init EXECUTOR` for the setup s, with the running
// binary's path given by executable (tests pass their own).
func initAgent(c stdio, args []string, s agentSetup, executable func() (string, error)) error {
	e := s.executor
	a, err := parseInit(c, args, e.Name, e.Title, s.about)
	if err != nil {
		return err
	}
	exe, err := executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	program, argv, err := hookCommand(exe, e.Name, a.base, a.mission, c.getenv("GOCACHE"))
	if err != nil {
		return err
	}
	command := shellHook(program, argv)
	files, err := s.files(a.dir, command, a.base)
	if err != nil {
		return err
	}
	if err := writeFiles(files...); err != nil {
		return err
	}
	return printAgentInit(c.stdout, s, files, command, a)
}

// shellHook is the hook as a shell command line: the program and its
// arguments quoted, then a fallback that says so on stderr and exits 2
// when the hook cannot run (missing, crashed, exit 1). Codex and Gemini
// let a call run when a hook fails any other way; both block on exit 2,
// and Gemini only when the hook wrote something.
func shellHook(program string, args []string) string {
	words := []string{shellQuote(program)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ") + ` || { echo "madebook hook failed: this tool call is blocked" >&2; exit 2; }`
}

// hookEvents are the executor's events init hooks, in the order the hook
// documents them (Events), each once.
func hookEvents(e *hook.Executor) []string {
	var out []string
	for _, ours := range hook.Events {
		for native, mapped := range e.Events {
			if mapped == ours && !slices.Contains(out, native) {
				out = append(out, native)
			}
		}
	}
	return out
}

// mergeHookGroups puts the hook (command, timeout in the executor's unit)
// on each event of an executor's hooks object shaped as Claude Code's
// ({"Event": [{"matcher", "hooks": [{"type": "command", …}]}]}), in
// place of Madebook's earlier hooks; tool events match every tool
// (matcher, in the executor's syntax).
func mergeHookGroups(hooks *jsonObject, events []string, toolEvent func(string) bool, matcher, command string, timeout func(string) int) error {
	for _, ev := range events {
		var groups []any
		if v, ok := hooks.get(ev); ok {
			if groups, ok = v.([]any); !ok {
				return fmt.Errorf("\"hooks\".%q is %s, not an array", ev, jsonKind(v))
			}
		}
		groups = withoutMadebookHooks(groups)
		group := newObject()
		if toolEvent(ev) {
			group.set("matcher", matcher)
		}
		group.set("hooks", []any{newObject("type", "command", "command", command, "timeout", timeout(ev))})
		hooks.set(ev, append(groups, group))
	}
	return nil
}

// codexSetup writes .codex/hooks.json (the hooks) and .codex/config.toml
// (the MCP server "madebook", its key read from MADEBOOK_KEY).
var codexSetup = agentSetup{
	executor: mustExecutor("codex"),
	about: "Set a project up so that Madebook governs Codex CLI in it. It writes, or merges into:\n" +
		"PROJECT/.codex/hooks.json: Madebook's hook on every event Codex offers (this binary, or\n" +
		"madebook-hook beside it), run so that a hook that cannot run blocks the tool call;\n" +
		"PROJECT/.codex/config.toml: the MCP server \"madebook\" at URL/mcp, its bearer token read from\n" +
		"MADEBOOK_KEY. Every other setting and hook is kept; Madebook's own earlier hooks are replaced.\n" +
		"The key is never written. Codex loads a project's hooks only in a trusted project, and each\n" +
		"hook only once trusted: it prints the steps.",
	files: func(dir, command, base string) ([]*projectFile, error) {
		e := mustExecutor("codex")
		hooksFile, err := planFile(filepath.Join(dir, ".codex", "hooks.json"), func(doc *jsonObject) error {
			hooks, err := objectAt(doc, "hooks")
			if err != nil {
				return err
			}
			return mergeHookGroups(hooks, hookEvents(e), isToolEvent, "*", command, func(ev string) int {
				if ev == hook.SessionEnd {
					return 3 // Codex allows a SessionEnd hook no more
				}
				return 10
			})
		})
		if err != nil {
			return nil, err
		}
		config, err := planText(filepath.Join(dir, ".codex", "config.toml"), func(text string) (string, error) {
			return setTOMLTable(text, "mcp_servers.madebook", []string{
				"url = " + tomlString(base+"/mcp"),
				`bearer_token_env_var = "MADEBOOK_KEY"`,
			})
		})
		if err != nil {
			return nil, err
		}
		return []*projectFile{hooksFile, config}, nil
	},
	steps: func(dir string) []string {
		abs, _ := filepath.Abs(dir)
		return []string{
			"Trust the project (Codex loads no project hooks otherwise, and says nothing): add to ~/.codex/config.toml\n" +
				"      [projects." + tomlString(abs) + "]\n      trust_level = \"trusted\"",
			"Trust the hooks: start `codex` in the project and approve Madebook's hooks when it asks (or run\n" +
				"      `codex exec --dangerously-bypass-hook-trust …` where no one can answer). A hook not yet trusted is skipped.",
		}
	},
}

// geminiSetup writes .gemini/settings.json: the hooks and the MCP server
// "madebook".
var geminiSetup = agentSetup{
	executor: mustExecutor("gemini"),
	about: "Set a project up so that Madebook governs Gemini CLI in it. It writes, or merges into,\n" +
		"PROJECT/.gemini/settings.json: Madebook's hook on every event Gemini offers (this binary, or\n" +
		"madebook-hook beside it), run so that a hook that cannot run blocks the tool call; the MCP\n" +
		"server \"madebook\" at URL/mcp, its bearer token read from $MADEBOOK_KEY; and the MADEBOOK_\n" +
		"variables let through Gemini's environment redaction. Every other setting and hook is kept;\n" +
		"Madebook's own earlier hooks are replaced. The key is never written. Gemini loads a project's\n" +
		"hooks only in a trusted folder: it prints the step.",
	files: func(dir, command, base string) ([]*projectFile, error) {
		e := mustExecutor("gemini")
		settings, err := planFile(filepath.Join(dir, ".gemini", "settings.json"), func(doc *jsonObject) error {
			hooks, err := objectAt(doc, "hooks")
			if err != nil {
				return err
			}
			// Gemini's matcher is a regular expression, its timeout in milliseconds.
			toolEvent := func(ev string) bool { return ev == "BeforeTool" || ev == "AfterTool" }
			if err := mergeHookGroups(hooks, hookEvents(e), toolEvent, ".*", command, func(string) int { return 10000 }); err != nil {
				return err
			}
			servers, err := objectAt(doc, "mcpServers")
			if err != nil {
				return err
			}
			servers.set("madebook", newObject("httpUrl", base+"/mcp", "headers", newObject("Authorization", "Bearer $MADEBOOK_KEY")))
			security, err := objectAt(doc, "security")
			if err != nil {
				return err
			}
			redaction, err := objectAt(security, "environmentVariableRedaction")
			if err != nil {
				return err
			}
			for _, v := range []string{"MADEBOOK_KEY", "MADEBOOK_URL", "MADEBOOK_MISSION", "MADEBOOK_FAIL_OPEN"} {
				if err := addToList(redaction, "allowed", v); err != nil {
					return fmt.Errorf("\"security\".\"environmentVariableRedaction\": %v", err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []*projectFile{settings}, nil
	},
	steps: func(dir string) []string {
		abs, _ := filepath.Abs(dir)
		return []string{
			"Trust the folder (Gemini exits in an untrusted one, and `--skip-trust` loads no project hooks): answer\n" +
				"      its trust prompt, or add \"" + abs + "\": \"TRUST_FOLDER\" to ~/.gemini/trustedFolders.json\n" +
				"      (GEMINI_CLI_TRUST_WORKSPACE=true trusts it for one run).",
		}
	},
}

// mergeHookList puts the hook entry on each event of an executor's hooks
// object whose events hold flat lists of entries ({"event": [{"command",
// …}]}, Copilot's and Cursor's), in place of Madebook's earlier entries;
// entry makes the event's entry.
func mergeHookList(hooks *jsonObject, events []string, entry func(event string) *jsonObject) error {
	for _, ev := range events {
		var list []any
		if v, ok := hooks.get(ev); ok {
			if list, ok = v.([]any); !ok {
				return fmt.Errorf("\"hooks\".%q is %s, not an array", ev, jsonKind(v))
			}
		}
		hooks.set(ev, append(listWithout(list, isMadebookHook), entry(ev)))
	}
	return nil
}

// copilotSetup writes .github/hooks/madebook.json (the hooks, each told
// its event: Copilot's payloads do not name it) and .mcp.json (the MCP
// server "madebook", as Claude Code reads it too).
var copilotSetup = agentSetup{
	executor: mustExecutor("copilot"),
	about: "Set a project up so that Madebook governs GitHub Copilot CLI in it. It writes, or merges into:\n" +
		"PROJECT/.github/hooks/madebook.json: Madebook's hook on every event Copilot offers (this binary,\n" +
		"or madebook-hook beside it); Copilot blocks a tool call when the hook fails or exits non-zero;\n" +
		"PROJECT/.mcp.json: the MCP server \"madebook\" at URL/mcp, its key read from ${MADEBOOK_KEY}.\n" +
		"Every other setting, server and hook is kept; Madebook's own earlier hooks are replaced. The\n" +
		"key is never written. Copilot loads a project's hooks only in a trusted folder: it prints the step.",
	files: func(dir, command, base string) ([]*projectFile, error) {
		e := mustExecutor("copilot")
		hooksFile, err := planFile(filepath.Join(dir, ".github", "hooks", "madebook.json"), func(doc *jsonObject) error {
			doc.set("version", 1)
			hooks, err := objectAt(doc, "hooks")
			if err != nil {
				return err
			}
			return mergeHookList(hooks, hookEvents(e), func(ev string) *jsonObject {
				return newObject("type", "command", "command", withEvent(command, ev), "timeoutSec", 10)
			})
		})
		if err != nil {
			return nil, err
		}
		mcp, err := planFile(filepath.Join(dir, ".mcp.json"), func(doc *jsonObject) error { return mergeMCPServers(doc, base) })
		if err != nil {
			return nil, err
		}
		return []*projectFile{hooksFile, mcp}, nil
	},
	steps: func(dir string) []string {
		abs, _ := filepath.Abs(dir)
		return []string{
			"Trust the folder (Copilot loads no project hooks otherwise, and says nothing): answer its trust\n" +
				"      prompt, or add \"" + abs + "\" to \"trusted_folders\" in ~/.copilot/config.json (`copilot --trust-folder`\n" +
				"      trusts it for one run).",
		}
	},
}

// cursorSetup writes .cursor/hooks.json and .cursor/mcp.json.
var cursorSetup = agentSetup{
	executor: mustExecutor("cursor"),
	about: "Set a project up so that Madebook governs Cursor's agent in it. It writes, or merges into:\n" +
		"PROJECT/.cursor/hooks.json: Madebook's hook on every event it answers (this binary, or\n" +
		"madebook-hook beside it), with failClosed, so that a hook that fails or times out blocks;\n" +
		"PROJECT/.cursor/mcp.json: the MCP server \"madebook\" at URL/mcp, its key read from\n" +
		"${env:MADEBOOK_KEY}. Every other setting, server and hook is kept; Madebook's own earlier hooks\n" +
		"are replaced. The key is never written. Cursor runs a project's hooks only in a trusted workspace.",
	files: func(dir, command, base string) ([]*projectFile, error) {
		e := mustExecutor("cursor")
		hooksFile, err := planFile(filepath.Join(dir, ".cursor", "hooks.json"), func(doc *jsonObject) error {
			doc.set("version", 1)
			hooks, err := objectAt(doc, "hooks")
			if err != nil {
				return err
			}
			return mergeHookList(hooks, hookEvents(e), func(ev string) *jsonObject {
				h := newObject("command", command, "timeout", 10)
				if ev != "stop" && ev != "subagentStop" && ev != "sessionEnd" {
					h.set("failClosed", true)
				}
				return h
			})
		})
		if err != nil {
			return nil, err
		}
		mcp, err := planFile(filepath.Join(dir, ".cursor", "mcp.json"), func(doc *jsonObject) error {
			servers, err := objectAt(doc, "mcpServers")
			if err != nil {
				return err
			}
			servers.set("madebook", newObject("url", base+"/mcp", "headers", newObject("Authorization", "Bearer ${env:MADEBOOK_KEY}")))
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []*projectFile{hooksFile, mcp}, nil
	},
	steps: func(dir string) []string {
		return []string{
			"Trust the workspace in Cursor (it runs no project hooks otherwise), and approve the MCP server\n" +
				"      \"madebook\" in Cursor's MCP settings.",
			"Cursor names an MCP tool without its server, so Madebook checks every MCP tool in Cursor as\n" +
				"      side-effecting unless the tool registry says otherwise (server \"mcp\"): a paused session reads\n" +
				"      its brief in the console.",
		}
	},
}

// withEvent is the hook's shell command told its event: `--event EVENT`
// before the fallback.
func withEvent(command, event string) string {
	head, tail, _ := strings.Cut(command, " || ")
	return head + " --event " + shellQuote(event) + " || " + tail
}

// isToolEvent reports whether an event of Claude Code's names (Codex's)
// is about a tool call: its hooks match every tool.
func isToolEvent(ev string) bool {
	switch ev {
	case hook.PreToolUse, hook.PermissionRequest, hook.PostToolUse, hook.PostToolUseFailure:
		return true
	}
	return false
}

// printAgentInit says what init wrote, what to export, and what the user
// still has to do before the agent is governed.
func printAgentInit(w io.Writer, s agentSetup, files []*projectFile, command string, a initArgs) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%s\n", f.state, f.path)
	}
	tw.Flush()
	fmt.Fprintf(&b, "hook: %s\nMCP server \"madebook\": %s/mcp\n", command, a.base)
	b.WriteString("\nExport before starting " + s.executor.Title + ":\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  export MADEBOOK_KEY=mbk_…\t# madebook key create --name %s\n", s.executor.Name)
	if a.mission == "" {
		fmt.Fprintf(tw, "  export MADEBOOK_MISSION=SLUG\t# the mission's slug (or run init again with --mission SLUG)\n")
	}
	tw.Flush()
	if a.mission != "" {
		fmt.Fprintf(&b, "The hooks name the mission %q: MADEBOOK_MISSION is not needed.\n", a.mission)
	}
	b.WriteString("\nThen:\n")
	for i, step := range s.steps(a.dir) {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, step)
	}
	fmt.Fprintf(&b, "\nTo see that it is governed: the session appears in Madebook (Sessions, agent %s) at %s's first event.\n",
		s.executor.Name, s.executor.Title)
	b.WriteString("Fail closed: a hook that cannot run (missing, crashed) exits 2 and blocks the tool call; " +
		"MADEBOOK_FAIL_OPEN=1 is the only way to fail open.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// planText is planFile for a text file: merge returns the new text.
func planText(path string, merge func(string) (string, error)) (*projectFile, error) {
	p, raw, err := readProjectFile(path)
	if err != nil {
		return nil, err
	}
	text, err := merge(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %v; nothing was written", path, err)
	}
	p.data = []byte(text)
	if p.state == "updated" && bytes.Equal(raw, p.data) {
		p.state, p.data = "unchanged", nil
	}
	return p, nil
}

// setTOMLTable sets the TOML table name ("mcp_servers.madebook") of a
// document to the lines body: the table's header and lines replaced where
// it stands, or added at the end; every other line is kept as it is. A
// document that defines the table another way (dotted keys, an inline
// table) is refused: merging into it would define the table twice.
func setTOMLTable(text, name string, body []string) (string, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	header := "[" + name + "]"
	parent, leaf, _ := strings.Cut(name, ".")
	start, end := -1, len(lines)
	table := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			table = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], " []"))
			switch {
			case tomlHeader(t) == header:
				start = i
			case start >= 0 && end == len(lines) && i > start:
				end = i
			}
			continue
		}
		key := strings.TrimSpace(strings.SplitN(t, "=", 2)[0])
		if (table == "" && strings.HasPrefix(key, name+".")) || (table == "" && key == name) ||
			(table == parent && (key == leaf || strings.HasPrefix(key, leaf+"."))) {
			return "", fmt.Errorf("it defines %s another way than as the table %s (line %d): edit it by hand", name, header, i+1)
		}
	}
	block := append([]string{header}, body...)
	var out []string
	if start >= 0 {
		out = append(append(out, lines[:start]...), block...)
		if end < len(lines) {
			out = append(append(out, ""), lines[end:]...)
		}
	} else {
		out = lines
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, block...)
	}
	return strings.Join(out, "\n") + "\n", nil
}

// tomlHeader is a table header line without its comment and spaces
// ("[ a.b ] # x" is "[a.b]").
func tomlHeader(line string) string {
	line = strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
	if strings.HasPrefix(line, "[[") {
		return line
	}
	return "[" + strings.TrimSpace(strings.Trim(line, "[]")) + "]"
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
