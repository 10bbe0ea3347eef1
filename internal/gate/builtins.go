package gate

import (
	"maps"
	"slices"
)

// The executors Madebook governs. Each is also the server its built-in
// tools are classified under, in the tool registry and in recorded calls
// (Codex's apply_patch is tool apply_patch of server codex); a coding
// agent's MCP tools keep their own server's name.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	Gemini     = "gemini"
	Copilot    = "copilot"
	Cursor     = "cursor"
)

// Executors lists the executors, in the order the docs name them.
var Executors = []string{ClaudeCode, Codex, Gemini, Copilot, Cursor}

// IsExecutor reports whether name is one of Executors.
func IsExecutor(name string) bool { return slices.Contains(Executors, name) }

// Class is what a built-in tool of an executor does, as the gate reads
// its calls.
type Class int

const (
	// Writes: the tool writes the paths its Fields name (Write, Edit,
	// write_file). Any tool nobody classified is read as this class with
	// every string of its input taken for a path.
	Writes Class = iota
	// ReadOnly: the tool changes nothing (Read, grep_search, view).
	ReadOnly
	// Shell: the tool runs the shell command in its first Field (Bash,
	// run_shell_command); Dir, when set, is the field naming the
	// directory the command runs in.
	Shell
	// Patch: the tool applies the patch in its first Field, in the
	// apply_patch format (*** Add File: path, …): the paths its headers
	// name are written.
	Patch
)

// Builtin is a built-in tool of an executor.
type Builtin struct {
	Class Class
	// Fields are the input fields that name the tool's paths (Writes), or
	// hold its command (Shell) or its patch (Patch).
	Fields []string
	// Dir is the input field a Shell tool's working directory is in ("":
	// it runs in the call's cwd).
	Dir string
}

// builtins are the executors' own tools: executor → tool → what it does.
// A tool an executor has that is not here is side-effecting with every
// string of its input taken for a path (fail safe), unless the registry
// says otherwise.
var builtins = map[string]map[string]Builtin{
	// Claude Code 2.1.328, and the read-only tools of earlier versions
	// (Grep, Glob, LS, NotebookRead, TodoWrite). ToolSearch loads the
	// schemas of deferred tools, Madebook's own MCP tools among them, so a
	// paused or HARD_STOP session can still reach Madebook. Edit, Write,
	// MultiEdit, NotebookEdit, Bash, Agent, Workflow, … side-effect.
	ClaudeCode: {
		"Write": writes("file_path"), "Edit": writes("file_path"), "MultiEdit": writes("file_path"),
		"NotebookEdit": writes("notebook_path"), "Bash": {Class: Shell, Fields: []string{"command"}},
		"Read": readOnly("file_path"), "Grep": readOnly("path"), "Glob": readOnly("path"), "LS": readOnly("path"),
		"ToolSearch": readOnly(), "ListAgents": readOnly(), "CronList": readOnly(), "WebFetch": readOnly(),
		"WebSearch": readOnly(), "Skill": readOnly(), "NotebookRead": readOnly(), "TodoWrite": readOnly(),
	},
	// Codex CLI 0.171.0: its hooks name the shell Bash and the patch tool
	// apply_patch (the whole patch in "command"). write_stdin types into a
	// running command and fires no hook: its calls reach the gate from the
	// transcript, their characters read as a command.
	Codex: {
		"Bash": {Class: Shell, Fields: []string{"command"}, Dir: "workdir"}, "apply_patch": {Class: Patch, Fields: []string{"command"}},
		"write_stdin": {Class: Shell, Fields: []string{"chars"}},
		"update_plan": readOnly(), "view_image": readOnly("path"), "web_search": readOnly(),
	},
	// Gemini CLI 0.61.0: invoke_agent, ask_user, the plan-mode and tracker
	// tools side-effect.
	Gemini: {
		"write_file": writes("file_path"), "replace": writes("file_path"),
		"run_shell_command": {Class: Shell, Fields: []string{"command"}, Dir: "dir_path"},
		"read_file":         readOnly("file_path"), "read_many_files": readOnly(), "list_directory": readOnly("dir_path"),
		"glob": readOnly("dir_path"), "grep_search": readOnly("dir_path"), "google_web_search": readOnly(), "web_fetch": readOnly(),
		"write_todos": readOnly(), "activate_skill": readOnly(), "get_internal_docs": readOnly(),
		"list_mcp_resources": readOnly(), "read_mcp_resource": readOnly(), "update_topic": readOnly(),
	},
	// GitHub Copilot CLI 1.0.102: its tools depend on the model (create and
	// edit, or apply_patch, whose patch the hook gets as a string and
	// passes on as {"input": patch}); write_bash types into a running
	// shell, so its input is read as a command; task starts a subagent.
	Copilot: {
		"create": writes("path"), "edit": writes("path"), "apply_patch": {Class: Patch, Fields: []string{"input"}},
		"bash": {Class: Shell, Fields: []string{"command"}}, "write_bash": {Class: Shell, Fields: []string{"input"}},
		"view": readOnly("path"), "glob": readOnly(), "grep": readOnly(), "rg": readOnly(), "web_fetch": readOnly(),
		"read_bash": readOnly(), "list_bash": readOnly(), "list_agents": readOnly(), "read_agent": readOnly(),
		"report_intent": readOnly(), "update_todo": readOnly(), "fetch_copilot_cli_documentation": readOnly(),
	},
	// Cursor, as its documentation shows its hooks' tool names (no Cursor
	// runs here): Shell's fields are documented; its file tools' are not,
	// so they are left to the fail-safe reading (every string a path).
	Cursor: {
		"Shell": {Class: Shell, Fields: []string{"command"}, Dir: "working_directory"},
		"Read":  readOnly(), "Grep": readOnly(), "WebFetch": readOnly(), "WebSearch": readOnly(),
	},
}

func writes(fields ...string) Builtin { return Builtin{Class: Writes, Fields: fields} }

func readOnly(fields ...string) Builtin { return Builtin{Class: ReadOnly, Fields: fields} }

// BuiltinOf returns the executor's built-in tool (server the executor,
// tool its name), and whether it is one.
func BuiltinOf(server, tool string) (Builtin, bool) {
	b, ok := builtins[server][tool]
	return b, ok
}

// ReadOnlyBuiltin reports whether the tool is a built-in of the executor
// (server) that changes nothing.
func ReadOnlyBuiltin(server, tool string) bool {
	b, ok := builtins[server][tool]
	return ok && b.Class == ReadOnly
}

// ReadOnlyBuiltins lists the executor's built-in read-only tools, sorted.
func ReadOnlyBuiltins(server string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(builtins[server])) {
		if builtins[server][name].Class == ReadOnly {
			out = append(out, name)
		}
	}
	return out
}

// BuiltinTools lists the executor's built-in tools the gate knows, sorted.
func BuiltinTools(server string) []string { return slices.Sorted(maps.Keys(builtins[server])) }
