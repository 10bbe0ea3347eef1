package ledger_test

import (
	"fmt"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/testkit"
)

// TestCorruptLedgerRowsAreErrors stores, with raw SQL, what Madebook never
// writes in a runs, asks, tools or tool_calls row the services made, and
// checks that the call reading it returns a server fault naming the table,
// the row and the column — never a panic.
func TestCorruptLedgerRowsAreErrors(t *testing.T) {
	testkit.CorruptRows(t, newWorld, []testkit.CorruptRow[*world]{
		{Name: "a run started at a malformed time fails to finish", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			r := w.start(t, "build", "")
			w.Corrupt(`UPDATE runs SET started_at = 'dawn' WHERE id = ?`, r.ID)
			return "runs row " + r.ID + `, column started_at: stored time "dawn"`, func() error {
				_, err := w.Ledger.FinishRun(t.Context(), w.agent, r.ID, ledger.Complete)
				return err
			}
		}},
		{Name: "an ask whose options are not JSON fails to be answered", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			a := w.park(t, w.start(t, "build", "").ID)
			w.Corrupt(`UPDATE asks SET options = 'yes or no' WHERE id = ?`, a.ID)
			return "asks row " + a.ID + ", column options: not a JSON object", func() error {
				_, err := w.Ledger.AnswerAsk(t.Context(), w.lead, a.ID, "1")
				return err
			}
		}},
		{Name: "an ask whose options are not JSON fails the attention queue", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			a := w.park(t, w.start(t, "build", "").ID)
			w.Corrupt(`UPDATE asks SET options = '["Yes","No"]' WHERE id = ?`, a.ID)
			return "asks row " + a.ID + ", column options: not a JSON object", func() error {
				_, err := w.Gov.Attention.List(t.Context())
				return err
			}
		}},
		{Name: "an ask asked at a malformed time fails a late report of a write", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			r := w.start(t, "build", "")
			a := w.park(t, r.ID)
			w.Corrupt(`UPDATE asks SET created_at = 'a while ago' WHERE id = ?`, a.ID)
			started := w.Clock.Now()
			return "asks row " + a.ID + `, column created_at: stored time "a while ago"`, func() error {
				_, err := w.Ledger.RecordToolCall(t.Context(), w.agent, r.ID, ledger.ToolCallInput{Server: "fs", Tool: "write_file",
					StartedAt: &started})
				return err
			}
		}},
		{Name: "a tool classified at a malformed time fails the registry", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			if _, err := w.Ledger.SetTool(t.Context(), w.admin, "fs", "write_file", ledger.ToolInput{SideEffecting: true}); err != nil {
				t.Fatal(err)
			}
			w.Corrupt(`UPDATE tools SET updated_at = 'last week' WHERE server = 'fs' AND tool = 'write_file'`)
			return `tools row fs.write_file, column updated_at: stored time "last week"`, func() error {
				_, err := w.Ledger.ListTools(t.Context())
				return err
			}
		}},
		{Name: "a tool call recorded at a malformed time fails to convert", Corrupt: func(t *testing.T, w *world) (string, func() error) {
			call, err := w.Ledger.RecordToolCall(t.Context(), w.agent, w.start(t, "build", "").ID, ledger.ToolCallInput{Server: "fs", Tool: "read_file"})
			if err != nil {
				t.Fatal(err)
			}
			w.Corrupt(`UPDATE tool_calls SET recorded_at = 'never' WHERE id = ?`, call.ID)
			return fmt.Sprintf(`tool_calls row %d, column recorded_at: stored time "never"`, call.ID), func() error {
				var r db.ToolCall
				if err := w.raw().QueryRowContext(t.Context(), `SELECT id, run_id, server, tool, is_side_effecting, started_at, recorded_at,
					paths FROM tool_calls WHERE id = ?`, call.ID).Scan(&r.ID, &r.RunID, &r.Server, &r.Tool, &r.IsSideEffecting,
					&r.StartedAt, &r.RecordedAt, &r.Paths); err != nil {
					t.Fatal(err)
				}
				_, err := ledger.ToolCallFrom(r)
				return err
			}
		}},
	})
}
