package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/madebook/madebook/internal/hook"
)

// FuzzHookInput reads any bytes as the JSON Claude Code writes to the
// hook's stdin and, when they parse, answers them against a Madebook in
// each state (or one that does not answer): ParseInput refuses with an
// *InputError carrying a code, or the answer is JSON Claude Code reads,
// about the event it was asked about, with a permission decision only
// for PreToolUse and only allow, deny or ask.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"claude-1","transcript_path":"/home/dev/.claude/t.jsonl","cwd":"/home/dev/billing","permission_mode":"default","hook_event_name":"SessionStart","source":"startup"}`,
		`{"session_id":"claude-1","cwd":"/home/dev/billing","hook_event_name":"UserPromptSubmit","prompt":"drop the legacy table"}`,
		`{"session_id":"claude-1","cwd":"/home/dev/billing","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/home/dev/billing/db/migrations/1.sql","old_string":"a","new_string":"b"}}`,
		`{"session_id":"claude-1","cwd":"/home/dev/billing","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make deploy"}}`,
		`{"session_id":"claude-1","cwd":"/home/dev/billing","hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{"title":"x"}}`,
		`{"session_id":"claude-1","cwd":"/home/dev/billing","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"../x"},"tool_response":{"success":true}}`,
		`{"session_id":"claude-1","hook_event_name":"Stop"}`, `{"session_id":"claude-1","hook_event_name":"PreToolUse","tool_input":null}`,
		`{"session_id":"","hook_event_name":"x"}`, `[]`, `null`, ``, `{"session_id":1}`, `{"session_id":"s","hook_event_name":"PreToolUse","tool_input":"x"}`,
	} {
		for state := range uint8(6) {
			f.Add([]byte(s), state)
		}
	}
	states := []string{"PROCEED", "DECISION_REQUIRED", "HARD_STOP", "BLOCKED", "PLAN_REQUIRED", ""}
	f.Fuzz(func(t *testing.T, b []byte, state uint8) {
		in, err := hook.ParseInput(b)
		if err != nil {
			var ie *hook.InputError
			if !errors.As(err, &ie) || ie.Code == "" || ie.Msg == "" {
				t.Fatalf("ParseInput(%q): %v is not an *InputError with a code", b, err)
			}
			return
		}
		mb := &fake{state: states[int(state)%len(states)], blocked: "db/"}
		if mb.state == "" {
			mb.err = &hook.NoAnswer{Err: errors.New("connection refused")}
		}
		for _, failOpen := range []bool{false, true} {
			out := hook.Handle(context.Background(), mb, hook.Config{Mission: "billing", FailOpen: failOpen}, in)
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("the answer to %q is not JSON: %v", b, err)
			}
			if out.Empty() {
				continue
			}
			if out.Specific.HookEventName != in.HookEventName {
				t.Fatalf("asked about %q, answered about %q", in.HookEventName, out.Specific.HookEventName)
			}
			if d := out.Specific.Decision; d != nil && (in.HookEventName != hook.PermissionRequest || d.Behavior != "deny" || d.Message == "") {
				t.Fatalf("a PermissionRequest decision %+v for %s", d, in.HookEventName)
			}
			switch d := out.Specific.PermissionDecision; {
			case d == "":
			case in.HookEventName != hook.PreToolUse:
				t.Fatalf("a permission decision %q for %s", d, in.HookEventName)

			case d != "allow" && d != "deny" && d != "ask":
				t.Fatalf("permission decision %q", d)
			case d == "deny" && out.Specific.PermissionDecisionReason == "":
				t.Fatalf("a denial without a reason for %q", b)
			}
		}
	})
}
