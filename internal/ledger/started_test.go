package ledger_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ledger"
)

// TestStartedAtIsBoundedByTheRunAndNow proves that a tool call's reported
// started_at may be as early as its run's start and as late as now, each
// give or take ledger.ClockSkew, and that outside that it is 422
// started_at_out_of_range naming the field, writing nothing.
func TestStartedAtIsBoundedByTheRunAndNow(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cases := []struct {
		name string
		at   func(runStart, now time.Time) time.Time
		code string
	}{
		{"the year 1 is refused", func(time.Time, time.Time) time.Time { return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) }, "started_at_out_of_range"},
		{"a second past the skew before the run's start is refused", func(r, _ time.Time) time.Time { return r.Add(-ledger.ClockSkew - time.Second) }, "started_at_out_of_range"},
		{"the skew before the run's start is accepted", func(r, _ time.Time) time.Time { return r.Add(-ledger.ClockSkew) }, ""},
		{"the run's start is accepted", func(r, _ time.Time) time.Time { return r }, ""},
		{"now is accepted", func(_, n time.Time) time.Time { return n }, ""},
		{"the skew after now is accepted", func(_, n time.Time) time.Time { return n.Add(ledger.ClockSkew) }, ""},
		{"a second past the skew after now is refused", func(_, n time.Time) time.Time { return n.Add(ledger.ClockSkew + time.Second) }, "started_at_out_of_range"},
		{"the year 9999 is refused", func(time.Time, time.Time) time.Time { return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) }, "started_at_out_of_range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.start(t, "probes", "")
			w.Clock.Advance(time.Hour)
			at := c.at(r.StartedAt, w.Clock.Now())
			before := w.Dump()
			call, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, ledger.ToolCallInput{Server: "fs", Tool: "read_file", StartedAt: &at})
			if c.code == "" {
				if err != nil || !call.StartedAt.Equal(at) {
					t.Fatalf("got %+v, %v; want started at %s", call, err, at)
				}
				return
			}
			if errs.CodeOf(err) != c.code || errs.FieldOf(err) != "started_at" || errs.KindOf(err) != errs.Invalid {
				t.Fatalf("got %v (%s about %q), want %s about started_at", err, errs.CodeOf(err), errs.FieldOf(err), c.code)
			}
			if !reflect.DeepEqual(before, w.Dump()) {
				t.Errorf("a refused tool call wrote to the database")
			}
		})
	}
}

// TestAToolNameIsOneLine refuses a server or tool with a control character,
// a newline included, in a recorded call, a check and the registry.
func TestAToolNameIsOneLine(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r := w.start(t, "probes", "")
	for _, bad := range []ledger.ToolCallInput{
		{Server: "fs", Tool: "\x1b]0;owned\x07read_file"},
		{Server: "fs", Tool: "read\nfile"},
		{Server: "f\x00s", Tool: "read_file"},
	} {
		if _, err := w.Ledger.RecordToolCall(ctx, w.agent, r.ID, bad); errs.CodeOf(err) != "invalid_characters" {
			t.Errorf("record %q/%q: %v, want invalid_characters", bad.Server, bad.Tool, err)
		}
		if _, err := w.Ledger.SetTool(ctx, w.admin, bad.Server, bad.Tool, ledger.ToolInput{SideEffecting: true}); errs.CodeOf(err) != "invalid_characters" {
			t.Errorf("classify %q/%q: %v, want invalid_characters", bad.Server, bad.Tool, err)
		}
	}
	if _, err := w.Ledger.Check(ctx, w.agent, w.session, ledger.CheckInput{Tool: "Bash\x1b[2K"}); errs.CodeOf(err) != "invalid_characters" || errs.FieldOf(err) != "tool" {
		t.Errorf("check: %v, want invalid_characters about tool", err)
	}
}

// TestAToolCallsPathsNeverKeepASecret records a call naming a path with a
// token in it: the path is stored and answered redacted.
func TestAToolCallsPathsNeverKeepASecret(t *testing.T) {
	w := newWorld(t)
	r := w.start(t, "probes", "")
	token := "gh" + "p_" + strings.Repeat("Qw7e", 9)
	c, err := w.Ledger.RecordToolCall(context.Background(), w.agent, r.ID, ledger.ToolCallInput{Server: "fs", Tool: "read_file",
		Site: ledger.Site{Paths: []string{"web/app.go", "tmp/" + token + ".json"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Paths, []string{"web/app.go", "tmp/[REDACTED].json"}) {
		t.Fatalf("paths %q", c.Paths)
	}
	for table, rows := range w.Dump() {
		for _, row := range rows {
			if strings.Contains(row, token) {
				t.Errorf("table %s holds the token: %s", table, row)
			}
		}
	}
}
