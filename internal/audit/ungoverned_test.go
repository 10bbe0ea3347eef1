package audit_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/protocol"
)

// TestAnUnCheckedSideEffectIsUngoverned: the calls a transcript holds are
// compared with the checks made; a side-effecting call no check names is
// a row of ungoverned-tool-calls (once), a critical violation, and not a
// premature side effect.
func TestAnUnCheckedSideEffectIsUngoverned(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r := w.run("claude-code")
	if _, err := w.kit.Ledger.Check(ctx, w.agent, w.session, ledger.CheckInput{Tool: "Bash", Run: r.ID, ToolUseID: "toolu_checked"}); err != nil {
		t.Fatal(err)
	}
	at := w.kit.Clock.Now().Add(-time.Minute)
	calls := []governance.TranscriptCall{
		{ToolUseID: "toolu_checked", Tool: "Bash", At: at},
		{ToolUseID: "toolu_unchecked", Tool: "Write", At: at, Paths: []string{"web/app.go"}, AgentID: "a1b2", AgentType: "general-purpose"},
		{ToolUseID: "toolu_read", Tool: "Read", At: at, Paths: []string{"web/app.go"}},
		{ToolUseID: "toolu_search", Tool: "ToolSearch", At: at},
		{ToolUseID: "toolu_own", Tool: "mcp__madebook__brief", At: at},
	}
	rep, err := w.kit.Gov.ScopeBreaches.ReportTranscript(ctx, w.agent, r.ID, governance.TranscriptInput{Calls: calls})
	w.must(err)
	if rep.Reported != 5 || len(rep.Ungoverned) != 1 || rep.Ungoverned[0].ToolUseID != "toolu_unchecked" {
		t.Fatalf("report %+v, want the one side-effecting call no check named", rep)
	}
	again, err := w.kit.Gov.ScopeBreaches.ReportTranscript(ctx, w.agent, r.ID, governance.TranscriptInput{Calls: calls})
	w.must(err)
	if len(again.Ungoverned) != 0 {
		t.Fatalf("a transcript reported again found %+v again", again.Ungoverned)
	}

	res := w.report(audit.UngovernedToolCalls)
	recs := res.Records.([]audit.UngovernedToolCall)
	if len(recs) != 1 || res.Passing() {
		t.Fatalf("rows %v, want the one ungoverned call", res.Rows)
	}
	got := recs[0]
	if got.SessionID != w.session || got.RunID != r.ID || got.Tool != "Write" || got.ToolUseID != "toolu_unchecked" ||
		got.AgentID != "a1b2" || got.AgentType != "general-purpose" || !got.RanAt.Equal(at) || !slices.Equal(got.Paths, []string{"web/app.go"}) ||
		got.ViolationID == 0 || got.Cleared {
		t.Errorf("row %+v", got)
	}
	if prem := w.report(audit.PrematureSideEffects); !prem.Passing() {
		t.Errorf("an ungoverned call is listed as a premature side effect: %v", prem.Rows)
	}

	b, err := w.kit.Gov.Briefs.Brief(ctx, w.agent, governance.BriefRequest{Session: w.session})
	w.must(err)
	if b.NextAction != protocol.HardStop || !strings.Contains(b.Reason, "Write ran without a check: no hook asked Madebook before it ran (web/app.go)") {
		t.Errorf("brief %s %q, want HARD_STOP naming the ungoverned call", b.NextAction, b.Reason)
	}

	if _, err := w.kit.Gov.Changes.ClearViolation(ctx, w.lead, got.ViolationID, "false_positive", "The hook was set up after this call."); err != nil {
		t.Fatal(err)
	}
	if recs := w.report(audit.UngovernedToolCalls).Records.([]audit.UngovernedToolCall); len(recs) != 1 || !recs[0].Cleared {
		t.Errorf("after clearing: %+v, want the row kept, cleared", recs)
	}
}

func TestATranscriptReportIsValidated(t *testing.T) {
	w := newWorld(t)
	r := w.run("claude-code")
	at := w.kit.Clock.Now()
	for _, tt := range []struct {
		name  string
		calls []governance.TranscriptCall
		code  string
	}{
		{"no calls", nil, "calls_required"},
		{"no tool_use_id", []governance.TranscriptCall{{Tool: "Bash", At: at}}, "tool_use_id_required"},
		{"no tool", []governance.TranscriptCall{{ToolUseID: "t", At: at}}, "tool_required"},
		{"no time", []governance.TranscriptCall{{ToolUseID: "t", Tool: "Bash"}}, "at_required"},
		{"a control character", []governance.TranscriptCall{{ToolUseID: "t\x00", Tool: "Bash", At: at}}, "invalid_characters"},
		{"too many", make([]governance.TranscriptCall, governance.MaxTranscriptCalls+1), "too_many_calls"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.kit.Gov.ScopeBreaches.ReportTranscript(context.Background(), w.agent, r.ID, governance.TranscriptInput{Calls: tt.calls})
			if errs.CodeOf(err) != tt.code {
				t.Fatalf("err %v, want %s", err, tt.code)
			}
		})
	}
	if _, err := w.kit.Gov.ScopeBreaches.ReportTranscript(context.Background(), w.lead, r.ID,
		governance.TranscriptInput{Calls: []governance.TranscriptCall{{ToolUseID: "t", Tool: "Bash", At: at}}}); err == nil {
		t.Error("a lead reported a transcript")
	}
}
