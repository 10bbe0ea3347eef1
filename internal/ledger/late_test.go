package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// memory_store ran, then the run parked to ask permission for it: reported
// late, the write is recorded as it happened (the audit then finds it),
// while a write that would start now, on the parked run, is refused.
func TestALateReportOfAWriteBeforeTheAskIsRecordedAsReported(t *testing.T) {
	ctx := context.Background()
	kit := testkit.New(t)
	lead, _ := kit.Lead()
	agent, _ := kit.Agent()
	session := kit.Session(agent, kit.Mission(lead, false))
	run, err := kit.Ledger.StartRun(ctx, agent, session, "graph-ask-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	before := kit.Clock.Now()
	kit.Clock.Advance(time.Minute)
	if _, err := kit.Ledger.RecordAsk(ctx, agent, run.ID, ledger.AskInput{Prompt: "save this reading?",
		Options: map[string]string{"1": "Yes", "2": "No"}}); err != nil {
		t.Fatal(err)
	}
	call, err := kit.Ledger.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store",
		StartedAt: &before})
	if err != nil {
		t.Fatalf("the late report was refused: %v", err)
	}
	if !call.SideEffecting || !call.StartedAt.Equal(before) {
		t.Fatalf("recorded %+v", call)
	}
	now := kit.Clock.Now()
	_, err = kit.Ledger.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store", StartedAt: &now})
	if errs.CodeOf(err) != "run_parked" {
		t.Fatalf("a write starting now on the parked run: %v", err)
	}
	_, err = kit.Ledger.RecordToolCall(ctx, agent, run.ID, ledger.ToolCallInput{Server: "Vodou-Recall", Tool: "memory_store"})
	if errs.CodeOf(err) != "run_parked" {
		t.Fatalf("a write with no time on the parked run: %v", err)
	}
}
