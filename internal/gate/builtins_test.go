package gate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/gate"
)

// TestEveryExecutorsBuiltInToolsAsTheGateReadsThem has a row for each
// built-in tool of each executor: a call as the executor's hook sends it,
// aimed at the blocked scope (db/migrations) from the repository's db
// directory; a tool that writes is refused naming the path it writes,
// and a read-only one is classified as changing nothing (it runs).
func TestEveryExecutorsBuiltInToolsAsTheGateReadsThem(t *testing.T) {
	rows := []struct {
		executor, tool, in string
		readOnly           bool
		writes             string // the path the refusal names
	}{
		{gate.ClaudeCode, "Write", `{"file_path":"migrations/1.sql","content":"x"}`, false, "db/migrations/1.sql"},
		{gate.ClaudeCode, "Edit", `{"file_path":"/w/repo/db/migrations/1.sql","old_string":"a","new_string":"b"}`, false, "db/migrations/1.sql"},
		{gate.ClaudeCode, "MultiEdit", `{"file_path":"migrations/1.sql","edits":[]}`, false, "db/migrations/1.sql"},
		{gate.ClaudeCode, "NotebookEdit", `{"notebook_path":"migrations/n.ipynb","new_source":"x"}`, false, "db/migrations/n.ipynb"},
		{gate.ClaudeCode, "Bash", `{"command":"rm migrations/1.sql"}`, false, "db/migrations/1.sql"},
		{gate.ClaudeCode, "Read", `{"file_path":"migrations/1.sql"}`, true, ""},
		{gate.ClaudeCode, "Grep", `{"pattern":"x","path":"migrations"}`, true, ""},
		{gate.ClaudeCode, "Glob", `{"pattern":"*.sql","path":"migrations"}`, true, ""},
		{gate.ClaudeCode, "LS", `{"path":"migrations"}`, true, ""},
		{gate.ClaudeCode, "ToolSearch", `{"query":"select:mcp__madebook__brief"}`, true, ""},
		{gate.ClaudeCode, "ListAgents", `{}`, true, ""},
		{gate.ClaudeCode, "CronList", `{}`, true, ""},
		{gate.ClaudeCode, "WebFetch", `{"url":"https://example.com","prompt":"x"}`, true, ""},
		{gate.ClaudeCode, "WebSearch", `{"query":"x"}`, true, ""},
		{gate.ClaudeCode, "Skill", `{"skill":"x"}`, true, ""},
		{gate.ClaudeCode, "NotebookRead", `{"notebook_path":"migrations/n.ipynb"}`, true, ""},
		{gate.ClaudeCode, "TodoWrite", `{"todos":[]}`, true, ""},

		{gate.Codex, "Bash", `{"command":"echo x > migrations/1.sql"}`, false, "db/migrations/1.sql"},
		{gate.Codex, "apply_patch", `{"command":"*** Begin Patch\n*** Add File: migrations/1.sql\n+x\n*** End Patch\n"}`, false, "db/migrations/1.sql"},
		{gate.Codex, "write_stdin", `{"session_id":3,"chars":"rm migrations/1.sql\n"}`, false, "db/migrations/1.sql"},
		{gate.Codex, "update_plan", `{"plan":[{"step":"migrations","status":"pending"}]}`, true, ""},
		{gate.Codex, "view_image", `{"path":"migrations/a.png"}`, true, ""},
		{gate.Codex, "web_search", `{"query":"x"}`, true, ""},

		{gate.Gemini, "write_file", `{"file_path":"migrations/1.sql","content":"x"}`, false, "db/migrations/1.sql"},
		{gate.Gemini, "replace", `{"file_path":"migrations/1.sql","old_string":"a","new_string":"b","instruction":"x"}`, false, "db/migrations/1.sql"},
		{gate.Gemini, "run_shell_command", `{"command":"rm 1.sql","dir_path":"migrations"}`, false, "db/migrations/1.sql"},
		{gate.Gemini, "read_file", `{"file_path":"migrations/1.sql"}`, true, ""},
		{gate.Gemini, "read_many_files", `{"include":["migrations/*.sql"]}`, true, ""},
		{gate.Gemini, "list_directory", `{"dir_path":"migrations"}`, true, ""},
		{gate.Gemini, "glob", `{"pattern":"*.sql","dir_path":"migrations"}`, true, ""},
		{gate.Gemini, "grep_search", `{"pattern":"x","dir_path":"migrations"}`, true, ""},
		{gate.Gemini, "google_web_search", `{"query":"x"}`, true, ""},
		{gate.Gemini, "web_fetch", `{"prompt":"https://example.com"}`, true, ""},
		{gate.Gemini, "write_todos", `{"todos":[]}`, true, ""},
		{gate.Gemini, "activate_skill", `{"name":"x"}`, true, ""},
		{gate.Gemini, "get_internal_docs", `{"path":"x"}`, true, ""},
		{gate.Gemini, "list_mcp_resources", `{}`, true, ""},
		{gate.Gemini, "read_mcp_resource", `{"uri":"x"}`, true, ""},
		{gate.Gemini, "update_topic", `{"topic":"x"}`, true, ""},

		{gate.Copilot, "create", `{"path":"/w/repo/db/migrations/1.sql","file_text":"x"}`, false, "db/migrations/1.sql"},
		{gate.Copilot, "edit", `{"path":"/w/repo/db/migrations/1.sql","old_str":"a","new_str":"b"}`, false, "db/migrations/1.sql"},
		{gate.Copilot, "apply_patch", `{"input":"*** Begin Patch\n*** Update File: /w/repo/db/migrations/1.sql\n@@\n-a\n+b\n*** End Patch\n"}`, false, "db/migrations/1.sql"},
		{gate.Copilot, "bash", `{"command":"touch migrations/1.sql","description":"x"}`, false, "db/migrations/1.sql"},
		{gate.Copilot, "write_bash", `{"shellId":"1","input":"rm -rf migrations\n"}`, false, "db/migrations"},
		{gate.Copilot, "view", `{"path":"/w/repo/db/migrations/1.sql"}`, true, ""},
		{gate.Copilot, "glob", `{"pattern":"*.sql","paths":"migrations"}`, true, ""},
		{gate.Copilot, "grep", `{"pattern":"x","paths":["migrations"]}`, true, ""},
		{gate.Copilot, "rg", `{"pattern":"x"}`, true, ""},
		{gate.Copilot, "web_fetch", `{"url":"https://example.com"}`, true, ""},
		{gate.Copilot, "read_bash", `{"shellId":"1"}`, true, ""},
		{gate.Copilot, "list_bash", `{}`, true, ""},
		{gate.Copilot, "list_agents", `{}`, true, ""},
		{gate.Copilot, "read_agent", `{"agent_id":"x"}`, true, ""},
		{gate.Copilot, "report_intent", `{"intent":"x"}`, true, ""},
		{gate.Copilot, "update_todo", `{"todos":"x"}`, true, ""},
		{gate.Copilot, "fetch_copilot_cli_documentation", `{}`, true, ""},

		{gate.Cursor, "Shell", `{"command":"rm 1.sql","working_directory":"/w/repo/db/migrations"}`, false, "db/migrations/1.sql"},
		{gate.Cursor, "Read", `{"file_path":"migrations/1.sql"}`, true, ""},
		{gate.Cursor, "Grep", `{"pattern":"x","path":"migrations"}`, true, ""},
		{gate.Cursor, "WebFetch", `{"url":"https://example.com"}`, true, ""},
		{gate.Cursor, "WebSearch", `{"query":"x"}`, true, ""},
	}
	db := gate.Where{Root: "/w/repo", Cwd: "/w/repo/db"}
	tested := map[string][]string{}
	for _, r := range rows {
		tested[r.executor] = append(tested[r.executor], r.tool)
		name := gate.ToolName(r.executor, r.tool)
		t.Run(r.executor+"/"+r.tool, func(t *testing.T) {
			if server, tool := gate.SplitTool(name); server != r.executor || tool != r.tool {
				t.Fatalf("%s splits into %s/%s", name, server, tool)
			}
			if got := !gate.Classify(r.executor, r.tool, nil, nil); got != r.readOnly {
				t.Fatalf("read-only: %v, want %v", got, r.readOnly)
			}
			if r.readOnly {
				return
			}
			v := checked(t, name, r.in, gate.Reading{Where: db})
			if v.Allow || !strings.Contains(v.Reason, `"`+r.writes+`"`) {
				t.Errorf("the call %s: allow %v, reason %q; want it refused naming %q", r.in, v.Allow, v.Reason, r.writes)
			}
		})
	}
	for _, e := range gate.Executors {
		for _, tool := range gate.BuiltinTools(e) {
			if !slices.Contains(tested[e], tool) {
				t.Errorf("%s's built-in %s has no row here", e, tool)
			}
		}
	}
}

// TestAToolNoTableNamesIsSideEffecting: an executor's tool the table does
// not have, and an MCP tool named after an executor's built-in, are
// side-effecting, with every string of their input taken for a path.
func TestAToolNoTableNamesIsSideEffecting(t *testing.T) {
	for _, c := range []struct{ server, tool string }{
		{gate.Codex, "exec_command"}, {gate.Gemini, "invoke_agent"}, {gate.Copilot, "task"}, {gate.Cursor, "Write"},
		{"github", "read_file"}, {gate.ClaudeCode, "read_file"},
	} {
		if !gate.Classify(c.server, c.tool, nil, nil) {
			t.Errorf("%s/%s is read-only; no table row says so", c.server, c.tool)
		}
	}
	v := checked(t, gate.ToolName(gate.Cursor, "Write"), `{"file_path":"/w/repo/db/migrations/1.sql","content":"x"}`, gate.Reading{})
	if v.Allow {
		t.Errorf("Cursor's Write into the blocked scope was allowed: %+v", v)
	}
}

func TestPatchPaths(t *testing.T) {
	for _, c := range []struct {
		patch string
		want  []string
	}{
		{"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", []string{"a.txt"}},
		{"*** Begin Patch\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-a\n+b\n*** Delete File: c.txt\n*** End Patch", []string{"src/a.go", "src/b.go", "c.txt"}},
		{"*** Begin Patch\r\n*** Add File: a.txt\r\n+x\r\n*** Add File: a.txt\r\n*** End Patch\r\n", []string{"a.txt"}},
		{"*** Begin Patch\n*** Update File: a.txt\n@@\n+*** Add File: not/a/header\n *** Delete File: context/line\n*** End Patch\n", []string{"a.txt", "context/line"}},
		{"*** Add File:   \n", nil},
		{"no patch at all", nil},
	} {
		if got := gate.PatchPaths(c.patch); !slices.Equal(got, c.want) {
			t.Errorf("PatchPaths(%q) = %q, want %q", c.patch, got, c.want)
		}
	}
}
