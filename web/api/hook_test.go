package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/web/webtest"
)

// TestSessionsReattachByExternalID: POST /api/v1/sessions with an external
// id the key already used answers 200 and that session.
func TestSessionsReattachByExternalID(t *testing.T) {
	a := webtest.NewAPI(t)
	mission := a.Kit.Mission(a.Lead, false)
	body := map[string]any{"mission": mission, "title": "Claude Code", "external_id": "claude-7"}
	first := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.AgentKey, body)
	if first["external_id"] != "claude-7" {
		t.Fatalf("the session does not show its external id: %v", first)
	}
	again := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, body)
	if again["id"] != first["id"] {
		t.Fatalf("re-attach opened %v, want %v", again["id"], first["id"])
	}
	other := a.Must(http.StatusCreated, http.MethodPost, "/api/v1/sessions", a.OtherKey, body)
	if other["id"] == first["id"] {
		t.Fatal("another key's same external id re-attached to the first key's session")
	}
	if d := a.Detail(first["id"].(string)); d["external_id"] != "claude-7" {
		t.Fatalf("GET shows external id %v", d["external_id"])
	}
	a.Refused("", http.StatusConflict, "external_id_conflict", http.MethodPost, "/api/v1/sessions", a.AgentKey,
		map[string]any{"mission": a.Kit.Mission(a.Lead, false), "external_id": "claude-7"})
	a.Refused("", http.StatusUnprocessableEntity, "external_id_too_long", http.MethodPost, "/api/v1/sessions", a.AgentKey,
		map[string]any{"mission": mission, "external_id": strings.Repeat("x", 201)})
	a.Refused("", http.StatusUnprocessableEntity, "invalid_field", http.MethodPost, "/api/v1/sessions", a.AgentKey,
		map[string]any{"mission": mission, "external_id": 7})
}

// TestRunsReattachByExternalID: POST /api/v1/sessions/{id}/runs with an
// external id the session already used answers 200 and that run.
func TestRunsReattachByExternalID(t *testing.T) {
	a := webtest.NewAPI(t)
	id := a.Session(false)
	path := "/api/v1/sessions/" + id + "/runs"
	first := a.Must(http.StatusCreated, http.MethodPost, path, a.AgentKey, map[string]any{"name": "claude-code", "external_id": "claude-7"})
	again := a.Must(http.StatusOK, http.MethodPost, path, a.AgentKey, map[string]any{"name": "claude-code", "external_id": "claude-7"})
	if again["id"] != first["id"] || again["external_id"] != "claude-7" {
		t.Fatalf("re-attach: %v, want run %v", again, first["id"])
	}
	a.Refused(id, http.StatusUnprocessableEntity, "external_id_too_long", http.MethodPost, path, a.AgentKey,
		map[string]any{"name": "claude-code", "external_id": strings.Repeat("x", 201)})
}

// hookEvent is a Claude Code hook payload of the event, on Claude session sid.
func hookEvent(sid, event string, extra map[string]any) map[string]any {
	m := map[string]any{"session_id": sid, "transcript_path": "/home/dev/.claude/projects/billing/" + sid + ".jsonl",
		"cwd": "/home/dev/billing", "permission_mode": "default", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// hookContext sends the payload to POST /hooks/claude-code and returns the
// additionalContext of its answer.
func hookContext(a *webtest.API, mission string, payload map[string]any) string {
	a.T.Helper()
	out := a.Must(http.StatusOK, http.MethodPost, "/hooks/claude-code?mission="+mission, a.AgentKey, payload)
	spec, _ := out["hookSpecificOutput"].(map[string]any)
	if spec["hookEventName"] != payload["hook_event_name"] {
		a.T.Fatalf("the answer is for %v, want %v: %v", spec["hookEventName"], payload["hook_event_name"], out)
	}
	text, _ := spec["additionalContext"].(string)
	return text
}

// TestClaudeCodeHTTPHook drives POST /hooks/claude-code as Claude Code's
// http hooks do: the same logic as the command hook, in the server.
func TestClaudeCodeHTTPHook(t *testing.T) {
	a := webtest.NewAPI(t)
	ctx := context.Background()
	mission := a.Kit.Mission(a.Lead, false)
	const sid = "5b2f8c1a-0d3e-4f56-9a7b-claude-http"
	reattach := func() string {
		s := a.Must(http.StatusOK, http.MethodPost, "/api/v1/sessions", a.AgentKey, map[string]any{"mission": mission, "external_id": sid})
		return s["id"].(string)
	}

	text := hookContext(a, mission, hookEvent(sid, "SessionStart", map[string]any{"source": "startup"}))
	session := reattach()
	if !strings.Contains(text, session) || !strings.Contains(text, "next action: CONTINUE") || !strings.Contains(text, "HARD_STOP") {
		t.Fatalf("SessionStart's context lacks the session, the brief or the protocol: %s", text)
	}
	t.Run("SessionStart again re-attaches to the same session", func(t *testing.T) {
		hookContext(a, mission, hookEvent(sid, "SessionStart", map[string]any{"source": "resume"}))
		if got := reattach(); got != session {
			t.Fatalf("resume opened %s, want %s", got, session)
		}
	})
	t.Run("UserPromptSubmit delivers a lead's resolution once", func(t *testing.T) {
		d, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, session, governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}})
		if err != nil {
			t.Fatal(err)
		}
		text := hookContext(a, mission, hookEvent(sid, "UserPromptSubmit", map[string]any{"prompt": "go on"}))
		if !strings.Contains(text, "DECISION_REQUIRED") || !strings.Contains(text, "db/migrations") {
			t.Fatalf("an open gate is not in the context: %s", text)
		}
		if _, err := a.Kit.Gov.Decisions.Resolve(ctx, a.Lead, d.Ref, "Keep it.", "Archive the table instead."); err != nil {
			t.Fatal(err)
		}
		text = hookContext(a, mission, hookEvent(sid, "UserPromptSubmit", map[string]any{"prompt": "and now?"}))
		if !strings.Contains(text, "Resolved "+d.Ref) || !strings.Contains(text, "Archive the table instead.") {
			t.Fatalf("the resolution is not delivered: %s", text)
		}
		text = hookContext(a, mission, hookEvent(sid, "UserPromptSubmit", map[string]any{"prompt": "again"}))
		if strings.Contains(text, "Archive the table instead.") {
			t.Fatalf("the resolution is delivered twice: %s", text)
		}
	})
	t.Run("PostToolUse records the call on the Claude session's run", func(t *testing.T) {
		for _, p := range []map[string]any{
			hookEvent(sid, "PostToolUse", map[string]any{"tool_name": "Edit", "tool_use_id": "toolu_1",
				"tool_input":    map[string]any{"file_path": "/home/dev/billing/web/app.go", "old_string": "a", "new_string": "b"},
				"tool_response": map[string]any{"filePath": "/home/dev/billing/web/app.go", "success": true}}),
			hookEvent(sid, "PostToolUse", map[string]any{"tool_name": "Read", "tool_use_id": "toolu_2",
				"tool_input": map[string]any{"file_path": "/home/dev/billing/web/app.go"}, "tool_response": "package web"}),
		} {
			out := a.Must(http.StatusOK, http.MethodPost, "/hooks/claude-code?mission="+mission, a.AgentKey, p)
			if len(out) != 0 {
				t.Fatalf("a recorded call answers %v, want {}", out)
			}
		}
		rows, err := a.Kit.SQL().Query(`SELECT r.name, r.external_id, t.server, t.tool, t.is_side_effecting
			FROM tool_calls t JOIN runs r ON r.id = t.run_id WHERE r.session_id = ? ORDER BY t.id`, session)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var name, ext, server, tool string
			var writes bool
			if err := rows.Scan(&name, &ext, &server, &tool, &writes); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Join([]string{name, ext, server, tool, map[bool]string{true: "writes", false: "reads"}[writes]}, " "))
		}
		want := []string{"claude-code " + sid + " claude-code Edit writes", "claude-code " + sid + " claude-code Read reads"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("the ledger holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("PreToolUse denies a call in the blocked scope, and the attempt is on the record", func(t *testing.T) {
		if _, err := a.Kit.Gov.Decisions.Open(ctx, a.Agent, session, governance.DecisionInput{Title: "Schema",
			Question: "Drop the legacy billing table?", BlockedScope: []string{"db/migrations"}}); err != nil {
			t.Fatal(err)
		}
		pre := func(tool string, input map[string]any) map[string]any {
			t.Helper()
			return a.Must(http.StatusOK, http.MethodPost, "/hooks/claude-code?mission="+mission, a.AgentKey,
				hookEvent(sid, "PreToolUse", map[string]any{"tool_name": tool, "tool_use_id": "toolu_3", "tool_input": input}))
		}
		refusedBefore := webtest.CountOf(a.Timeline(session), "tool_call.refused")
		out := pre("Edit", map[string]any{"file_path": "/home/dev/billing/web/../db/migrations/0042_drop.sql", "old_string": "a", "new_string": "b"})
		spec, _ := out["hookSpecificOutput"].(map[string]any)
		reason, _ := spec["permissionDecisionReason"].(string)
		if spec["hookEventName"] != "PreToolUse" || spec["permissionDecision"] != "deny" ||
			!strings.HasPrefix(reason, "Madebook denied this Edit call. Session "+session+" is DECISION_REQUIRED") ||
			!strings.Contains(reason, `"db/migrations/0042_drop.sql"`) || !strings.Contains(reason, "Work outside the blocked scope") {
			t.Fatalf("the denial: %v", out)
		}
		if n := webtest.CountOf(a.Timeline(session), "tool_call.refused") - refusedBefore; n != 1 {
			t.Errorf("%d tool_call.refused events for the denial, want 1", n)
		}
		if out := pre("Bash", map[string]any{"command": "rm -f db/migrations/0042_drop.sql"}); out["hookSpecificOutput"] == nil {
			t.Errorf("Bash naming the blocked scope runs: %v", out)
		}
		for tool, input := range map[string]map[string]any{
			"Edit":                         {"file_path": "/home/dev/billing/web/app.go", "old_string": "a", "new_string": "b"},
			"Read":                         {"file_path": "/home/dev/billing/db/migrations/0042_drop.sql"},
			"mcp__madebook__open_decision": {"session": session, "title": "x", "question": "y?"},
		} {
			if out := pre(tool, input); len(out) != 0 {
				t.Errorf("%s: %v, want {} (the call may run)", tool, out)
			}
		}
	})
	t.Run("an event the hook does not answer gets {}", func(t *testing.T) {
		out := a.Must(http.StatusOK, http.MethodPost, "/hooks/claude-code?mission="+mission, a.AgentKey, hookEvent(sid, "Stop", nil))
		if len(out) != 0 {
			t.Fatalf("Stop answers %v, want {}", out)
		}
	})
	t.Run("an unknown mission is said in the context", func(t *testing.T) {
		text := hookContext(a, "no-such-mission", hookEvent("other-claude", "SessionStart", nil))
		if !strings.Contains(text, "unknown_mission") || !strings.Contains(text, "denied") {
			t.Fatalf("context: %s", text)
		}
	})
	t.Run("bad input is refused with the contract's errors, writing nothing", func(t *testing.T) {
		p := "/hooks/claude-code?mission=" + mission
		a.Refused("", http.StatusBadRequest, "malformed_json", http.MethodPost, p, a.AgentKey, webtest.RawBody(`{"session_id":`))
		a.Refused("", http.StatusUnprocessableEntity, "invalid_body", http.MethodPost, p, a.AgentKey, webtest.RawBody(`[1]`))
		a.Refused("", http.StatusUnprocessableEntity, "session_id_required", http.MethodPost, p, a.AgentKey, hookEvent("", "SessionStart", nil))
		a.Refused("", http.StatusUnprocessableEntity, "hook_event_name_required", http.MethodPost, p, a.AgentKey, hookEvent(sid, "", nil))
		a.Refused("", http.StatusUnprocessableEntity, "invalid_field", http.MethodPost, p, a.AgentKey,
			hookEvent(sid, "PreToolUse", map[string]any{"tool_name": "Edit", "tool_input": "rm -rf /"}))
		a.Refused("", http.StatusUnprocessableEntity, "mission_required", http.MethodPost, "/hooks/claude-code", a.AgentKey,
			hookEvent(sid, "SessionStart", nil))
		a.Refused("", http.StatusForbidden, "forbidden", http.MethodPost, p, a.LeadTok, hookEvent(sid, "SessionStart", nil))
		a.Refused("", http.StatusUnauthorized, "unauthorized", http.MethodPost, p, "", hookEvent(sid, "SessionStart", nil))
		a.Refused("", http.StatusNotFound, "executor_not_found", http.MethodPost, "/hooks/aider?mission="+mission, a.AgentKey,
			hookEvent(sid, "SessionStart", nil))
	})
	t.Run("another executor's session is its own, its built-ins recorded under its name", func(t *testing.T) {
		p := "/hooks/gemini?mission=" + mission
		start := a.Must(http.StatusOK, http.MethodPost, p, a.AgentKey, hookEvent("gem-1", "SessionStart", nil))
		text, _ := start["hookSpecificOutput"].(map[string]any)["additionalContext"].(string)
		if !strings.Contains(text, "This Gemini CLI session is governed by Madebook") {
			t.Fatalf("context: %s", text)
		}
		a.Must(http.StatusOK, http.MethodPost, p, a.AgentKey, hookEvent("gem-1", "PostToolUse",
			map[string]any{"tool_name": "write_file", "tool_input": map[string]any{"file_path": "web/a.txt", "content": "x"}, "tool_use_id": "gemini_1", "cwd": "/home/dev/billing"}))
		s := a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions?external_id=gem-1", a.LeadTok, nil)
		items, _ := s["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["executor"] != "gemini" {
			t.Fatalf("sessions: %v", s)
		}
		id := items[0].(map[string]any)["id"].(string)
		runs := a.Must(http.StatusOK, http.MethodGet, "/api/v1/sessions/"+id+"/runs", a.LeadTok, nil)
		run := runs["items"].([]any)[0].(map[string]any)
		got := a.Must(http.StatusOK, http.MethodGet, "/api/v1/runs/"+run["id"].(string), a.LeadTok, nil)
		calls, _ := got["tool_calls"].([]any)
		if run["name"] != "gemini" || len(calls) != 1 || calls[0].(map[string]any)["server"] != "gemini" || calls[0].(map[string]any)["tool"] != "write_file" {
			t.Fatalf("run %v, calls %v", run, calls)
		}
	})
}
