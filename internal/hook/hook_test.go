package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/hook"
)

// fake is a Madebook whose check answers as the contract says a session in
// state answers: HARD_STOP and BLOCKED deny every side-effecting tool,
// DECISION_REQUIRED denies a path in its blocked scope, the others allow.
type fake struct {
	state   string
	blocked string // DECISION_REQUIRED's blocked scope, a path prefix
	err     error  // every call fails with it, when set
	checked []hook.CheckRequest
	opened  []string // mission/external id of each OpenSession
}

func (f *fake) OpenSession(_ context.Context, mission, externalID string) (string, error) {
	f.opened = append(f.opened, mission+"/"+externalID)
	return "ses_fake", f.err
}

func (f *fake) Brief(context.Context, string) (hook.Brief, error) {
	return hook.Brief{NextAction: f.state, Reason: "the " + f.state + " reason"}, f.err
}

func (f *fake) Check(_ context.Context, session string, req hook.CheckRequest) (hook.Verdict, error) {
	f.checked = append(f.checked, req)
	if f.err != nil {
		return hook.Verdict{}, f.err
	}
	writes := !hook.ReadOnly(req.Tool)
	v := hook.Verdict{Allow: true, SideEffecting: writes, NextAction: f.state}
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(req.Input, &in)
	switch {
	case !writes:
	case f.state == "HARD_STOP":
		v.Allow, v.Reason = false, "Secrets in source was violated by AWS_SECRET_ACCESS_KEY. Found in config/deploy.sh."
	case f.state == "BLOCKED":
		v.Allow, v.Reason = false, "A lead paused this session: wait for the release."
	case f.state == "DECISION_REQUIRED" && strings.HasPrefix(in.FilePath, f.blocked):
		v.Allow, v.Reason = false, "DEC-002 is waiting on a person: Drop the legacy billing table? "+in.FilePath+" is in its blocked scope."
	}
	return v, nil
}

func (f *fake) OpenRun(context.Context, string, string, string) (string, error) {
	return "run_fake", f.err
}

func (f *fake) RecordToolCall(context.Context, string, hook.ToolCall) error { return f.err }

// pre is a PreToolUse payload of the tool with its input, in /home/dev/billing.
func pre(tool string, input string) hook.Input {
	return hook.Input{SessionID: "claude-1", Cwd: "/home/dev/billing", HookEventName: hook.PreToolUse, ToolName: tool,
		ToolInput: json.RawMessage(input)}
}

var cfg = hook.Config{Mission: "billing"}

func TestPreToolUseFollowsTheCheckInEveryState(t *testing.T) {
	edit := func(path string) hook.Input {
		return pre("Edit", `{"file_path":"/home/dev/billing/`+path+`","old_string":"a","new_string":"b"}`)
	}
	tests := []struct {
		name, state string
		in          hook.Input
		deny        string // a part of the denial's reason; "" for an allowed call
	}{
		{"HARD_STOP denies an edit, and says to stop", "HARD_STOP", edit("web/app.go"), "Stop: do not work around it"},
		{"HARD_STOP denies Bash", "HARD_STOP", pre("Bash", `{"command":"make deploy"}`), "Secrets in source"},
		{"HARD_STOP denies an MCP tool", "HARD_STOP", pre("mcp__github__create_issue", `{"title":"x"}`), "(HARD_STOP)"},
		{"HARD_STOP lets Read run", "HARD_STOP", pre("Read", `{"file_path":"/home/dev/billing/web/app.go"}`), ""},
		{"BLOCKED denies Write, and says to revise the plan", "BLOCKED", pre("Write", `{"file_path":"/home/dev/billing/x.go","content":"x"}`), "revise the plan"},
		{"BLOCKED denies MultiEdit", "BLOCKED", pre("MultiEdit", `{"file_path":"/home/dev/billing/x.go","edits":[]}`), "A lead paused this session"},
		{"BLOCKED lets Grep run", "BLOCKED", pre("Grep", `{"pattern":"TODO","path":"/home/dev/billing"}`), ""},
		{"DECISION_REQUIRED denies an edit in the blocked scope", "DECISION_REQUIRED", edit("db/migrations/0042_drop.sql"), "Work outside the blocked scope"},
		{"DECISION_REQUIRED lets an edit outside the blocked scope run", "DECISION_REQUIRED", edit("web/app.go"), ""},
		{"REMEDIATE lets an edit run", "REMEDIATE", edit("web/app.go"), ""},
		{"CONTINUE_WITH_WARNING lets an edit run", "CONTINUE_WITH_WARNING", edit("web/app.go"), ""},
		{"CONTINUE lets Bash run", "CONTINUE", pre("Bash", `{"command":"go test ./..."}`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{state: tt.state, blocked: "db/migrations/"}
			out := hook.Handle(context.Background(), f, cfg, tt.in)
			if len(f.checked) != 1 || f.checked[0].Tool != tt.in.ToolName {
				t.Fatalf("checked %+v, want one check of %s", f.checked, tt.in.ToolName)
			}
			if tt.deny == "" {
				if !out.Empty() {
					t.Fatalf("an allowed call answers %+v, want nothing", out.Specific)
				}
				return
			}
			if !out.Denied() || out.Specific.HookEventName != hook.PreToolUse || !strings.Contains(out.Specific.PermissionDecisionReason, tt.deny) {
				t.Fatalf("answer %+v, want a PreToolUse denial saying %q", out.Specific, tt.deny)
			}
		})
	}
}

func TestPreToolUseAsksWithPathsRelativeToTheProject(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"an absolute file_path inside cwd is made relative", `{"file_path":"/home/dev/billing/db/migrations/0042_drop.sql","content":"x"}`,
			`{"content":"x","file_path":"db/migrations/0042_drop.sql"}`},
		{"a notebook_path too", `{"notebook_path":"/home/dev/billing/nb/a.ipynb","new_source":"x"}`, `{"new_source":"x","notebook_path":"nb/a.ipynb"}`},
		{"a path too, and cwd itself is .", `{"pattern":"x","path":"/home/dev/billing"}`, `{"path":".","pattern":"x"}`},
		{"a path outside cwd stays absolute", `{"file_path":"/etc/hosts"}`, `{"file_path":"/etc/hosts"}`},
		{"a sibling that shares cwd's prefix stays absolute", `{"file_path":"/home/dev/billing-old/x.go"}`, `{"file_path":"/home/dev/billing-old/x.go"}`},
		{"a relative path stays as it is", `{"file_path":"web/app.go"}`, `{"file_path":"web/app.go"}`},
		{"a command is not a path", `{"command":"rm /home/dev/billing/x"}`, `{"command":"rm /home/dev/billing/x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{state: "CONTINUE"}
			hook.Handle(context.Background(), f, cfg, pre("Write", tt.in))
			var got, want any
			if err := json.Unmarshal(f.checked[0].Input, &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(tt.want), &want)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("asked with %s, want %s", g, w)
			}
		})
	}
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func TestMadebookThatDoesNotAnswer(t *testing.T) {
	down := hook.Client{API: &apiclient.Client{Base: closedURL(t), Key: "mbk_x"}}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"code":"internal","message":"Internal error."}}`))
	}))
	defer failing.Close()
	broken := hook.Client{API: &apiclient.Client{Base: failing.URL, Key: "mbk_x"}}
	tests := []struct {
		name     string
		mb       hook.Madebook
		failOpen bool
		in       hook.Input
		deny     string
	}{
		{"an edit is denied when Madebook is down", down, false, pre("Edit", `{"file_path":"/home/dev/billing/x.go"}`), "Madebook does not answer at http://127.0.0.1:"},
		{"Bash is denied when Madebook is down", down, false, pre("Bash", `{"command":"ls"}`), "connection refused"},
		{"an MCP tool is denied when Madebook is down", down, false, pre("mcp__db__query", `{}`), "Madebook does not answer"},
		{"Read runs when Madebook is down", down, false, pre("Read", `{"file_path":"/home/dev/billing/x.go"}`), ""},
		{"Glob runs when Madebook is down", down, false, pre("Glob", `{"pattern":"**/*.go"}`), ""},
		{"MADEBOOK_FAIL_OPEN lets an edit run when Madebook is down", down, true, pre("Edit", `{"file_path":"/home/dev/billing/x.go"}`), ""},
		{"a 5xx is no answer: an edit is denied", broken, false, pre("Edit", `{"file_path":"/home/dev/billing/x.go"}`), "it failed (HTTP 500)"},
		{"a 5xx is no answer: Read runs", broken, false, pre("Read", `{"file_path":"/home/dev/billing/x.go"}`), ""},
		{"no mission set denies an edit and says so", &fake{state: "CONTINUE"}, false, pre("Edit", `{}`), "MADEBOOK_MISSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hook.Config{Mission: "billing", FailOpen: tt.failOpen}
			if strings.HasPrefix(tt.name, "no mission") {
				c.Mission = ""
			}
			out := hook.Handle(context.Background(), tt.mb, c, tt.in)
			if tt.deny == "" {
				if !out.Empty() {
					t.Fatalf("answer %+v, want nothing", out.Specific)
				}
				return
			}
			if !out.Denied() || !strings.Contains(out.Specific.PermissionDecisionReason, tt.deny) {
				t.Fatalf("answer %+v, want a denial saying %q", out.Specific, tt.deny)
			}
		})
	}
	t.Run("SessionStart tells Claude that Madebook does not answer", func(t *testing.T) {
		out := hook.Handle(context.Background(), down, cfg, hook.Input{SessionID: "c", HookEventName: hook.SessionStart})
		if out.Specific == nil || !strings.Contains(out.Specific.AdditionalContext, "Side-effecting tools") {
			t.Fatalf("answer %+v", out.Specific)
		}
	})
	t.Run("PostToolUse tells Claude the call is not on the record", func(t *testing.T) {
		out := hook.Handle(context.Background(), down, cfg, hook.Input{SessionID: "c", HookEventName: hook.PostToolUse, ToolName: "Edit"})
		if out.Specific == nil || out.Specific.HookEventName != hook.PostToolUse || !strings.Contains(out.Specific.AdditionalContext, "not on Madebook's record") {
			t.Fatalf("answer %+v", out.Specific)
		}
	})
}

func TestARefusalIsNotAnOutage(t *testing.T) {
	f := &fake{err: &hook.APIError{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "Send an agent key."}}
	out := hook.Handle(context.Background(), f, cfg, pre("Edit", `{}`))
	if !out.Denied() || !strings.Contains(out.Specific.PermissionDecisionReason, "Madebook refused the hook's call: unauthorized") {
		t.Fatalf("answer %+v", out.Specific)
	}
	var na *hook.NoAnswer
	if errors.As(f.err, &na) {
		t.Fatal("an APIError reads as no answer")
	}
}

func TestEveryEventReattachesByClaudesSessionID(t *testing.T) {
	f := &fake{state: "CONTINUE"}
	for _, ev := range []string{hook.SessionStart, hook.UserPromptSubmit, hook.PreToolUse, hook.PostToolUse} {
		hook.Handle(context.Background(), f, cfg, hook.Input{SessionID: "claude-9", HookEventName: ev, ToolName: "Read"})
	}
	if want := []string{"billing/claude-9", "billing/claude-9", "billing/claude-9", "billing/claude-9"}; !slices.Equal(f.opened, want) {
		t.Fatalf("opened %q, want billing/claude-9 four times", f.opened)
	}
	if out := hook.Handle(context.Background(), f, cfg, hook.Input{SessionID: "claude-9", HookEventName: "Stop"}); !out.Empty() || len(f.opened) != 4 {
		t.Fatalf("Stop answered %+v and opened %d sessions", out.Specific, len(f.opened))
	}
}

func TestToolCallOf(t *testing.T) {
	tests := []struct {
		name, tool, server, want string
		readOnly                 bool
	}{
		{"an MCP tool is recorded under its server", "mcp__github__create_issue", "github", "create_issue", false},
		{"an MCP tool whose name has underscores keeps them", "mcp__db__run__query", "db", "run__query", false},
		{"Edit is Claude Code's own", "Edit", "claude-code", "Edit", false},
		{"Read is said to read only", "Read", "claude-code", "Read", true},
		{"a malformed MCP name is taken whole", "mcp__broken", "claude-code", "mcp__broken", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hook.ToolCallOf(tt.tool)
			if c.Server != tt.server || c.Tool != tt.want || (c.SideEffecting != nil) != tt.readOnly || (c.SideEffecting != nil && *c.SideEffecting) {
				t.Fatalf("ToolCallOf(%q) = %+v", tt.tool, c)
			}
		})
	}
}

func TestParseInput(t *testing.T) {
	tests := []struct {
		name, in, code string
	}{
		{"a PreToolUse with fields the hook does not read is read", `{"session_id":"s","hook_event_name":"PreToolUse","tool_use_id":"t","tool_input":{}}`, ""},
		{"not JSON", `{"session_id":`, "invalid_body"},
		{"an array", `[1]`, "invalid_body"},
		{"empty", ``, "invalid_body"},
		{"a session_id of the wrong type", `{"session_id":1,"hook_event_name":"x"}`, "invalid_body"},
		{"no session_id", `{"hook_event_name":"SessionStart"}`, "session_id_required"},
		{"a session_id over 200 characters", `{"session_id":"` + strings.Repeat("s", 201) + `","hook_event_name":"x"}`, "session_id_too_long"},
		{"no hook_event_name", `{"session_id":"s"}`, "hook_event_name_required"},
		{"a tool_input that is not an object", `{"session_id":"s","hook_event_name":"PreToolUse","tool_input":"x"}`, "invalid_field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hook.ParseInput([]byte(tt.in))
			var ie *hook.InputError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.code != "" && (!errors.As(err, &ie) || ie.Code != tt.code):
				t.Fatalf("err %v, want %s", err, tt.code)
			}
		})
	}
}
