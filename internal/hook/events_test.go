package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/hook"
)

// TestTheReadOnlyToolsOfThePinnedClaudeCode classifies every tool Claude
// Code 2.1.328 offers (its stream-json init line) and the read-only tools
// of earlier versions: ToolSearch, which loads deferred tools' schemas
// (Madebook's own among them), reads only.
func TestTheReadOnlyToolsOfThePinnedClaudeCode(t *testing.T) {
	pinned := map[string]bool{ // 2.1.328's tools: read-only or not
		"Task": false, "Agent": false, "Bash": false, "CronCreate": false, "CronDelete": false, "CronList": true, "Edit": false,
		"EnterWorktree": false, "ExitWorktree": false, "ListAgents": true, "Monitor": false, "NotebookEdit": false, "Read": true,
		"ReportFindings": false, "ScheduleWakeup": false, "SendMessage": false, "Skill": true, "TaskStop": false,
		"ToolSearch": true, "WebFetch": true, "WebSearch": true, "Workflow": false, "Write": false,
	}
	earlier := []string{"Grep", "Glob", "LS", "NotebookRead", "TodoWrite"}
	for tool, ro := range pinned {
		if hook.ClaudeCode.ReadOnly(tool) != ro {
			t.Errorf("%s: read-only %v, want %v", tool, hook.ClaudeCode.ReadOnly(tool), ro)
		}
	}
	for _, tool := range earlier {
		if !hook.ClaudeCode.ReadOnly(tool) {
			t.Errorf("%s of earlier versions is not read-only", tool)
		}
	}
	for _, tool := range gate.ReadOnlyBuiltins(gate.ClaudeCode) {
		if _, ok := pinned[tool]; !ok && !slices.Contains(earlier, tool) {
			t.Errorf("%s is read-only but in neither list: say which version has it", tool)
		}
	}
}

func TestToolSearchRunsOnAPausedSessionAndWhenMadebookIsDown(t *testing.T) {
	f := &fake{state: "BLOCKED"}
	if out := hook.Handle(context.Background(), f, cfg, pre("ToolSearch", `{"query":"select:mcp__madebook__brief"}`)); out.Denied() {
		t.Fatalf("ToolSearch denied on a paused session: %+v", out.Specific)
	}
	down := &fake{err: &hook.NoAnswer{Err: errors.New("connection refused")}}
	if out := hook.Handle(context.Background(), down, cfg, pre("ToolSearch", `{"query":"brief"}`)); out.Denied() {
		t.Fatalf("ToolSearch denied when Madebook is down: %+v", out.Specific)
	}
}

func TestPermissionRequestIsDeniedAsTheCheckDenies(t *testing.T) {
	f := &fake{state: "BLOCKED"}
	in := pre("Bash", `{"command":"make deploy"}`)
	in.HookEventName = hook.PermissionRequest
	out := hook.Handle(context.Background(), f, cfg, in)
	if !out.Denied() || out.Specific.HookEventName != hook.PermissionRequest || out.Specific.Decision == nil ||
		out.Specific.Decision.Behavior != "deny" || !strings.Contains(out.Specific.Decision.Message, "A lead paused this session") ||
		out.Specific.PermissionDecision != "" {
		t.Fatalf("answer %+v, want a PermissionRequest deny decision with the check's reason", out.Specific)
	}
	if len(f.recorded) != 0 {
		t.Errorf("a permission prompt recorded %v: its PreToolUse reports the attempt", f.recorded)
	}
	b, _ := json.Marshal(out)
	if want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Madebook denied this Bash call.`; !strings.HasPrefix(string(b), want) {
		t.Errorf("JSON %s, want Claude Code's shape %s…", b, want)
	}
	f.state = "CONTINUE"
	if out := hook.Handle(context.Background(), f, cfg, in); !out.Empty() {
		t.Errorf("an allowed prompt answered %+v: the user's own rules decide", out.Specific)
	}
	down := &fake{err: &hook.NoAnswer{Err: errors.New("connection refused")}}
	if out := hook.Handle(context.Background(), down, cfg, in); !out.Denied() || out.Specific.Decision == nil {
		t.Errorf("Madebook down: %+v, want the prompt denied", out.Specific)
	}
}

func TestSubagentStartTellsTheSubagentAndDeliversNothing(t *testing.T) {
	f := &fake{state: "DECISION_REQUIRED"}
	out := hook.Handle(context.Background(), f, cfg, hook.Input{SessionID: "claude-1", HookEventName: hook.SubagentStart,
		AgentID: "a1b2", AgentType: "Explore"})
	if out.Specific == nil || out.Specific.HookEventName != hook.SubagentStart ||
		!strings.Contains(out.Specific.AdditionalContext, "subagent of a Claude Code session governed by Madebook (session ses_fake") ||
		!strings.Contains(out.Specific.AdditionalContext, "next action: DECISION_REQUIRED: the DECISION_REQUIRED reason") {
		t.Fatalf("answer %+v", out.Specific)
	}
}

func TestFailedAndSubagentCallsAreRecordedWithWhoAndWhy(t *testing.T) {
	f := &fake{state: "CONTINUE"}
	in := pre("Bash", `{"command":"make test"}`)
	in.HookEventName, in.ToolUseID, in.AgentID, in.AgentType = hook.PostToolUseFailure, "toolu_7", "a1b2", "general-purpose"
	in.Error = json.RawMessage(`"Exit code 3"`)
	if out := hook.Handle(context.Background(), f, cfg, in); !out.Empty() {
		t.Fatalf("answer %+v", out.Specific)
	}
	if len(f.recorded) != 1 {
		t.Fatalf("recorded %v", f.recorded)
	}
	c := f.recorded[0]
	if c.Tool != "Bash" || c.ToolUseID != "toolu_7" || c.AgentID != "a1b2" || c.AgentType != "general-purpose" || c.Error != "Exit code 3" {
		t.Errorf("recorded %+v", c)
	}
	in.HookEventName = hook.PreToolUse
	hook.Handle(context.Background(), f, cfg, in)
	if len(f.checked) != 1 || f.checked[0].ToolUseID != "toolu_7" || f.checked[0].AgentID != "a1b2" {
		t.Errorf("checked %+v, want the call's tool_use_id and subagent", f.checked)
	}
}

func TestStopReportsTheTranscriptsCalls(t *testing.T) {
	f := &fake{state: "CONTINUE"}
	calls := []hook.TranscriptCall{{ToolUseID: "toolu_1", Tool: "Write", At: time.Now()}, {ToolUseID: "toolu_2", Tool: "Read", At: time.Now()}}
	in := hook.Input{SessionID: "claude-1", HookEventName: hook.Stop, Madebook: &hook.Local{Calls: calls}}
	out := hook.Handle(context.Background(), f, cfg, in)
	if len(f.transcripts) != 1 || len(f.transcripts[0]) != 2 {
		t.Fatalf("reported %v", f.transcripts)
	}
	if !strings.Contains(out.SystemMessage, "Write (toolu_1) ran without a check by its hook") || out.Specific != nil {
		t.Errorf("answer %+v, want a system message naming the ungoverned Write", out)
	}
	if out := hook.Handle(context.Background(), f, cfg, hook.Input{SessionID: "claude-1", HookEventName: hook.SubagentStop}); !out.Empty() {
		t.Errorf("a stop with no calls answered %+v", out)
	}
}

// transcriptLines is a transcript of Claude Code 2.1.328's shape: a Write
// that ran, one a hook denied, one a hook that could not run blocked, a
// Bash in db after cd, and a last line not yet whole.
const transcriptLines = `{"type":"user","timestamp":"2026-12-01T12:00:00Z","cwd":"/repo","message":{"role":"user","content":"hi"}}
{"type":"assistant","timestamp":"2026-12-01T12:00:01Z","cwd":"/repo","message":{"content":[{"type":"tool_use","id":"toolu_ran","name":"Write","input":{"file_path":"/repo/web/a.go","content":"secret stays here"}}]}}
{"type":"user","timestamp":"2026-12-01T12:00:02Z","cwd":"/repo","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_ran","content":"File created"}]}}
{"type":"assistant","timestamp":"2026-12-01T12:00:03Z","cwd":"/repo","message":{"content":[{"type":"tool_use","id":"toolu_denied","name":"Write","input":{"file_path":"/repo/db/x.sql"}}]}}
{"type":"user","timestamp":"2026-12-01T12:00:04Z","cwd":"/repo","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_denied","content":"PreToolUse:Write hook error: Madebook denied this Write call. …","is_error":true}]}}
{"type":"assistant","timestamp":"2026-12-01T12:00:05Z","cwd":"/repo","message":{"content":[{"type":"tool_use","id":"toolu_nohook","name":"Write","input":{"file_path":"/repo/db/y.sql"}}]}}
{"type":"user","timestamp":"2026-12-01T12:00:06Z","cwd":"/repo","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_nohook","content":"PreToolUse:Write hook error: [/nope/madebook hook]: failed; blocking because onFailure is \"block\"","is_error":true}]}}
{"type":"assistant","timestamp":"2026-12-01T12:00:07Z","cwd":"/repo/db","message":{"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_bash","name":"Bash","input":{"command":"echo x > migrations/1.sql; exit 3"}}]}}
{"type":"user","timestamp":"2026-12-01T12:00:08Z","cwd":"/repo/db","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_bash","content":"Exit code 3","is_error":true}]}}
{"type":"assistant","timestamp":"2026-12-01T12:00:09Z","message":{"content":[{"type":"tool_use","id":"toolu_partial"`

func TestTheCommandHookReadsTheTranscriptOnceAndOnlyWhatRan(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(transcript, []byte(transcriptLines), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newEventServer(t, &fake{state: "CONTINUE"})
	cmd := srv.command(t, dir)
	stop := hook.Input{SessionID: "claude-1", HookEventName: hook.Stop, TranscriptPath: transcript, Cwd: "/repo"}
	cmd.Answer(context.Background(), stop)
	got := srv.fake.transcripts
	if len(got) != 1 {
		t.Fatalf("reports %v", got)
	}
	var ids []string
	for _, c := range got[0] {
		ids = append(ids, c.ToolUseID+" "+c.Tool+" "+strings.Join(c.Paths, ",")+" "+c.At.Format(time.RFC3339))
	}
	want := []string{"toolu_ran Write web/a.go 2026-12-01T12:00:01Z", "toolu_bash Bash db/migrations/1.sql 2026-12-01T12:00:07Z"}
	if !slices.Equal(ids, want) {
		t.Fatalf("reported %q, want %q (the calls that ran, paths only)", ids, want)
	}
	if strings.Contains(srv.bodies[0], "secret stays here") {
		t.Errorf("the report carries a call's input: %s", srv.bodies[0])
	}
	// Reported once: the next stop sends only what was added since.
	cmd.Answer(context.Background(), stop)
	if len(srv.fake.transcripts) != 1 {
		t.Fatalf("the same calls were reported again: %v", srv.fake.transcripts)
	}
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`,"name":"Edit","input":{"file_path":"/repo/web/b.go"}}]}}` + "\n")
	f.Close()
	cmd.Answer(context.Background(), stop)
	if n := len(srv.fake.transcripts); n != 2 || len(srv.fake.transcripts[1]) != 1 || srv.fake.transcripts[1][0].ToolUseID != "toolu_partial" {
		t.Fatalf("after the line was finished: %v", srv.fake.transcripts)
	}
	// When Madebook does not take the report, the mark stays: the calls
	// come again at the next stop.
	_ = os.Remove(transcript)
	if err := os.WriteFile(transcript, []byte(transcriptLines[:strings.Index(transcriptLines, "\n")+1]+
		`{"type":"assistant","timestamp":"2026-12-01T13:00:00Z","message":{"content":[{"type":"tool_use","id":"toolu_new","name":"Bash","input":{"command":"ls"}}]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.fake.err = &hook.NoAnswer{Err: errors.New("connection refused")}
	if out := cmd.Answer(context.Background(), stop); !strings.Contains(out.SystemMessage, "did not get this session's tool calls") {
		t.Errorf("a report Madebook did not take answered %+v", out)
	}
	srv.fake.err = nil
	cmd.Answer(context.Background(), stop)
	last := srv.fake.transcripts[len(srv.fake.transcripts)-1]
	if len(last) != 1 || last[0].ToolUseID != "toolu_new" {
		t.Errorf("after Madebook answered again: %v", last)
	}
}

// eventServer is Madebook's POST /hooks/{executor} over a fake: the
// command hook's one request per event, answered by hook.Handle.
type eventServer struct {
	fake   *fake
	mu     sync.Mutex
	bodies []string
}

func newEventServer(t *testing.T, f *fake) *eventServer { return &eventServer{fake: f} }

func (s *eventServer) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(body))
	s.mu.Unlock()
	in, err := hook.ParseInput(body)
	e, known := hook.ExecutorOf(strings.TrimPrefix(r.URL.Path, "/hooks/"))
	status, reply := http.StatusOK, []byte(`{"error":{"code":"invalid_body","message":"not a hook input"}}`)
	if err != nil || !known {
		status = http.StatusUnprocessableEntity
	} else if s.fake.err != nil && errors.As(s.fake.err, new(*hook.NoAnswer)) {
		status, reply = http.StatusServiceUnavailable, []byte(`{"error":{"code":"unavailable","message":"down"}}`)
	} else {
		reply, _ = json.Marshal(hook.Handle(r.Context(), s.fake, hook.Config{Executor: e, Mission: r.URL.Query().Get("mission")}, in))
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(reply))), Request: r}, nil
}

// command is the command hook talking to s, keeping its state in dir,
// on a machine whose project root is /repo.
func (s *eventServer) command(t *testing.T, dir string) hook.Command {
	return hook.Command{URL: "http://madebook.test", Key: "mbk_test", Mission: "billing", Machine: rootAt("/repo"), StateDir: dir, Transport: s}
}

// rootAt is a machine whose project root is root, with nothing on disk.
type rootAt string

func (r rootAt) Root(string) string                        { return string(r) }
func (rootAt) Home() string                                { return "/home/dev" }
func (rootAt) Resolve(p string) string                     { return p }
func (rootAt) Script(string) (string, bool)                { return "", false }
func (rootAt) Glob(string) []string                        { return nil }
func (rootAt) Snapshot(string, []string) map[string]string { return map[string]string{} }

func TestTheCommandHookMakesOneRequestPerEvent(t *testing.T) {
	srv := newEventServer(t, &fake{state: "DECISION_REQUIRED", blocked: "db/"})
	cmd := srv.command(t, t.TempDir())
	deny := cmd.Answer(context.Background(), hook.Input{SessionID: "claude-1", Cwd: "/repo/db", HookEventName: hook.PreToolUse, ToolName: "Write",
		ToolUseID: "toolu_1", ToolInput: json.RawMessage(`{"file_path":"migrations/0042.sql","content":"x"}`)})
	if !deny.Denied() || deny.Madebook != nil && deny.ForClaude().Madebook != nil {
		t.Fatalf("a Write in the blocked scope after cd db: %+v", deny.Specific)
	}
	allow := cmd.Answer(context.Background(), hook.Input{SessionID: "claude-1", Cwd: "/repo", HookEventName: hook.PreToolUse, ToolName: "Edit",
		ToolUseID: "toolu_2", ToolInput: json.RawMessage(`{"file_path":"/repo/web/a.go"}`)})
	if !allow.Empty() {
		t.Fatalf("an Edit outside the blocked scope: %+v", allow)
	}
	if len(srv.bodies) != 2 {
		t.Fatalf("%d requests for two events, want one each", len(srv.bodies))
	}
	var sent hook.Input
	if err := json.Unmarshal([]byte(srv.bodies[0]), &sent); err != nil || sent.Madebook == nil || sent.Madebook.Root != "/repo" ||
		sent.Madebook.Site == nil || sent.Madebook.Site.Cwd != "/repo/db" || len(sent.Madebook.Site.Input) != 0 {
		t.Fatalf("the event went as %s, want the root and the site (its input not sent twice)", srv.bodies[0])
	}
	if c := srv.fake.checked[0]; c.Root != "/repo" || c.Cwd != "/repo/db" || c.ToolUseID != "toolu_1" || !strings.Contains(string(c.Input), "migrations/0042.sql") {
		t.Errorf("the check was %+v", c)
	}
	// Madebook's own tools run without a request.
	if out := cmd.Answer(context.Background(), pre("mcp__madebook__brief", `{}`)); !out.Empty() || len(srv.bodies) != 2 {
		t.Errorf("Madebook's own tool answered %+v after %d requests", out, len(srv.bodies))
	}
	// No key: the hook says what to set, and asks nothing.
	cmd.Key = ""
	if out := cmd.Answer(context.Background(), pre("Edit", `{}`)); !strings.Contains(out.DenialReason(), "MADEBOOK_KEY is not set") || len(srv.bodies) != 2 {
		t.Errorf("no key: %+v", out.Specific)
	}
}

func TestTheCommandPrintsValidJSONOrRefusesTheInput(t *testing.T) {
	srv := newEventServer(t, &fake{state: "HARD_STOP"})
	cmd := srv.command(t, t.TempDir())
	var out strings.Builder
	if err := cmd.Run(context.Background(), strings.NewReader(`{"session_id":"c","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var o hook.Output
	if err := json.Unmarshal([]byte(out.String()), &o); err != nil || !o.Denied() || strings.Contains(out.String(), `"madebook"`) {
		t.Fatalf("printed %q", out.String())
	}
	err := cmd.Run(context.Background(), strings.NewReader(`not json`), &out, io.Discard)
	var ie *hook.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err %v, want an *InputError", err)
	}
}
