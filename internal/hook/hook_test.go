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
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/hook"
)

// fake is a Madebook whose check answers as the contract says a session in
// state answers: HARD_STOP and BLOCKED deny every side-effecting tool,
// DECISION_REQUIRED denies a path in its blocked scope, the others allow.
type fake struct {
	state    string
	blocked  string // DECISION_REQUIRED's blocked scope, a path prefix
	err      error  // every call fails with it, when set
	checked  []hook.CheckRequest
	opened   []string        // mission/external id of each OpenSession
	recorded []hook.ToolCall // each RecordToolCall
	// transcripts are the calls of each ReportTranscript; it finds those
	// no check named ungoverned.
	transcripts [][]hook.TranscriptCall
}

func (f *fake) OpenSession(_ context.Context, _, mission, externalID, _ string) (hook.Opened, error) {
	f.opened = append(f.opened, mission+"/"+externalID)
	return hook.Opened{ID: "ses_fake", NextAction: f.state, Reason: "the " + f.state + " reason"}, f.err
}

func (f *fake) Brief(context.Context, string) (hook.Brief, error) {
	return hook.Brief{NextAction: f.state, Reason: "the " + f.state + " reason"}, f.err
}

func (f *fake) Check(_ context.Context, session string, req hook.CheckRequest) (hook.Verdict, error) {
	f.checked = append(f.checked, req)
	if f.err != nil {
		return hook.Verdict{}, f.err
	}
	writes := !hook.ClaudeCode.ReadOnly(req.Tool)
	v := hook.Verdict{Allow: true, SideEffecting: writes, NextAction: f.state}
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(req.Input, &in)
	if pl, ok := (gate.Where{Root: req.Root, Cwd: req.Cwd}).Resolve(in.FilePath); ok {
		in.FilePath = pl.Path
	}
	switch {
	case !writes:
	case f.state == "HARD_STOP":
		v.Allow, v.Reason = false, "Session ses_fake is HARD_STOP: Secrets in source was violated. No side-effecting call may run until a person clears it: tell the user what Madebook said."
	case f.state == "BLOCKED":
		v.Allow, v.Reason = false, "Session ses_fake is BLOCKED: A lead paused this session. Read the repository, revise the plan, or ask a person."
	case f.state == "DECISION_REQUIRED" && strings.HasPrefix(in.FilePath, f.blocked):
		v.Allow, v.Reason = false, "DEC-002 is waiting on a person: "+in.FilePath+" is in its blocked scope. Work outside the blocked scope."
	}
	return v, nil
}

func (f *fake) OpenRun(context.Context, string, string, string) (string, error) {
	return "run_fake", f.err
}

func (f *fake) Attach(ctx context.Context, executor, mission, externalID, root string) (string, string, error) {
	s, err := f.OpenSession(ctx, executor, mission, externalID, root)
	return s.ID, "run_fake", err
}

func (f *fake) ReportBreach(context.Context, string, hook.Breach) error { return f.err }

func (f *fake) ReportTranscript(_ context.Context, _ string, calls []hook.TranscriptCall) ([]hook.TranscriptCall, error) {
	f.transcripts = append(f.transcripts, calls)
	var out []hook.TranscriptCall
	for _, c := range calls {
		if !slices.ContainsFunc(f.checked, func(r hook.CheckRequest) bool { return r.ToolUseID == c.ToolUseID }) && !hook.ClaudeCode.ReadOnly(c.Tool) {
			out = append(out, c)
		}
	}
	return out, f.err
}

func (f *fake) RecordToolCall(_ context.Context, _ string, c hook.ToolCall) error {
	f.recorded = append(f.recorded, c)
	return f.err
}

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
		{"HARD_STOP denies an edit, and says to tell the user", "HARD_STOP", edit("web/app.go"), "tell the user"},
		{"HARD_STOP denies Bash", "HARD_STOP", pre("Bash", `{"command":"make deploy"}`), "Secrets in source"},
		{"HARD_STOP denies an MCP tool", "HARD_STOP", pre("mcp__github__create_issue", `{"title":"x"}`), "is HARD_STOP"},
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
			if len(f.checked) != 1 || f.checked[0].Tool != tt.in.ToolName || f.checked[0].Run != "run_fake" || f.checked[0].Cwd != tt.in.Cwd {
				t.Fatalf("checked %+v, want one check of %s on the hook run, with cwd", f.checked, tt.in.ToolName)
			}
			if tt.deny == "" {
				if !out.Empty() || len(f.recorded) != 0 {
					t.Fatalf("an allowed call answers %+v and recorded %v, want nothing", out.Specific, f.recorded)
				}
				return
			}
			reason := out.Specific.PermissionDecisionReason
			if !out.Denied() || out.Specific.HookEventName != hook.PreToolUse || !strings.Contains(reason, tt.deny) {
				t.Fatalf("answer %+v, want a PreToolUse denial saying %q", out.Specific, tt.deny)
			}
			// The check's reason once, with what to do: nothing said twice.
			if want := "Madebook denied this " + tt.in.ToolName + " call. "; !strings.HasPrefix(reason, want) {
				t.Errorf("the denial %q does not start %q", reason, want)
			}
			if v, _ := f.Check(context.Background(), "", f.checked[0]); strings.Count(reason, v.Reason) != 1 {
				t.Errorf("the denial %q does not hold the check's reason exactly once", reason)
			}
			// The attempt is reported: the ledger refuses it and keeps it.
			if len(f.recorded) != 1 || gate.ToolName(f.recorded[0].Server, f.recorded[0].Tool) != tt.in.ToolName {
				t.Errorf("recorded %+v, want the denied call reported once", f.recorded)
			}
		})
	}
}

func TestPreToolUseAsksWithTheInputAndTheWorkingDirectory(t *testing.T) {
	f := &fake{state: "CONTINUE"}
	in := `{"file_path":"/home/dev/billing/db/migrations/0042_drop.sql","content":"x"}`
	hook.Handle(context.Background(), f, cfg, pre("Write", in))
	if len(f.checked) != 1 || string(f.checked[0].Input) != in || f.checked[0].Cwd != "/home/dev/billing" {
		t.Fatalf("checked %+v, want the input as Claude sent it and cwd", f.checked)
	}
}

func TestMadebooksOwnToolsRunUnasked(t *testing.T) {
	for _, state := range []string{"HARD_STOP", "BLOCKED"} {
		f := &fake{state: state}
		for _, tool := range []string{"mcp__madebook__brief", "mcp__madebook__propose_plan", "mcp__madebook__open_decision", "mcp__madebook__ask"} {
			if out := hook.Handle(context.Background(), f, cfg, pre(tool, `{"session":"ses_fake"}`)); !out.Empty() {
				t.Errorf("%s: %s answers %+v, want nothing", state, tool, out.Specific)
			}
		}
		if len(f.checked) != 0 {
			t.Errorf("%s: the hook asked about Madebook's own tools: %+v", state, f.checked)
		}
		if out := hook.Handle(context.Background(), f, cfg, pre("mcp__madebook__drop_tables", `{}`)); !out.Denied() {
			t.Errorf("%s: a tool Madebook's server lacks is not its own: %+v", state, out.Specific)
		}
	}
	down := hook.Client{API: &apiclient.Client{Base: closedURL(t), Key: "mbk_x"}}
	if out := hook.Handle(context.Background(), down, cfg, pre("mcp__madebook__brief", `{}`)); !out.Empty() {
		t.Errorf("Madebook's brief tool is denied when Madebook is down: %+v", out.Specific)
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
		name, tool, input, server, want string
		readOnly                        bool
	}{
		{"an MCP tool is recorded under its server", "mcp__github__create_issue", `{"title":"x"}`, "github", "create_issue", false},
		{"an MCP tool whose name has underscores keeps them", "mcp__db__run__query", `{}`, "db", "run__query", false},
		{"Edit is Claude Code's own", "Edit", `{"file_path":"/home/dev/billing/web/app.go"}`, "claude-code", "Edit", false},
		{"Bash is Claude Code's own", "Bash", `{"command":"rm /home/dev/billing/db/migrations/x.sql web/a.go"}`, "claude-code", "Bash", false},
		{"Read is said to read only", "Read", `{"file_path":"/home/dev/billing/x.go"}`, "claude-code", "Read", true},
		{"a malformed MCP name is taken whole", "mcp__broken", `{}`, "claude-code", "mcp__broken", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := pre(tt.tool, tt.input)
			in.HookEventName = hook.PostToolUse
			c := hook.ToolCallOf(hook.ClaudeCode, in)
			if c.Server != tt.server || c.Tool != tt.want || (c.SideEffecting != nil) != tt.readOnly || (c.SideEffecting != nil && *c.SideEffecting) {
				t.Fatalf("ToolCallOf(%q) = %+v", tt.tool, c)
			}
			// What it names goes as it is, for Madebook to read as the check
			// did; with no machine, nothing is resolved.
			if string(c.Input) != tt.input || c.Cwd != in.Cwd || c.Root != "" || len(c.Paths) != 0 || len(c.Scripts) != 0 {
				t.Errorf("ToolCallOf(%q) names %+v", tt.tool, c.Site)
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
