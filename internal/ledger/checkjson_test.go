package ledger_test

import (
	"encoding/json"
	"testing"

	"github.com/madebook/madebook/internal/ledger"
)

// FuzzCheckResultJSON holds CheckResult.AppendJSON to encoding/json, byte
// for byte: HTML characters, quotes, control characters, non-ASCII and
// invalid UTF-8 in any field, an empty code left out.
func FuzzCheckResultJSON(f *testing.F) {
	f.Add(true, false, "", "Nothing is in your way: continue the mission.", "CONTINUE")
	f.Add(false, true, "blocked_scope", `Edit of "db/<x>.sql" & more`, "BLOCKED")
	f.Add(false, true, "paused", "line\nbreak\ttab \\ back — dash \u2028", "HARD_STOP")
	f.Add(true, true, "x", "\xff\xfe bad", "\x00")
	f.Fuzz(func(t *testing.T, allow, writes bool, code, reason, next string) {
		r := ledger.CheckResult{Allow: allow, SideEffecting: writes, Code: code, Reason: reason, NextAction: next}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON = %s\nencoding/json = %s", got, want)
		}
	})
}
