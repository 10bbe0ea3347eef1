package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/madebook/madebook/internal/hook"
	"github.com/madebook/madebook/web/webtest"
)

// FuzzHookCommand feeds `madebook hook claude-code` fuzzed stdin, talking
// to a real server as an agent key on a real mission, seeded with the
// payloads Claude Code sends (testdata/claude-code): the command refuses
// input that is not a hook's with a hookInputError (exit 2, which Claude
// Code shows and blocks the call on), and otherwise prints nothing or one answer
// of Claude Code's shape, about the event it was given.
func FuzzHookCommand(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "claude-code", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no recorded hook payloads: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"session_id":"s"}`, `{"session_id":"s","hook_event_name":"Stop"}`,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"\u0000"}}`} {
		f.Add([]byte(s))
	}
	a := webtest.NewAPI(f)
	mission := a.Kit.Mission(a.Lead, true)
	env := map[string]string{"MADEBOOK_KEY": a.AgentKey, "MADEBOOK_MISSION": mission, "MADEBOOK_URL": a.Srv.URL}
	f.Fuzz(func(t *testing.T, stdin []byte) {
		a.T, a.Kit.TB = t, t
		var out bytes.Buffer
		err := run(context.Background(), []string{"madebook", "hook", "claude-code"}, func(k string) string { return env[k] },
			bytes.NewReader(stdin), &out)
		var ie hookInputError
		switch {
		case errors.As(err, &ie):
			if out.Len() != 0 {
				t.Fatalf("a refused input printed %q", out.String())
			}
			return
		case err != nil:
			t.Fatalf("stdin %q: %v", stdin, err)
		case out.Len() == 0:
			return
		}
		in, perr := hook.ParseInput(stdin)
		if perr != nil {
			t.Fatalf("answered %q to an input ParseInput refuses: %v", out.String(), perr)
		}
		var answer hook.Output
		dec := json.NewDecoder(&out)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&answer); err != nil || dec.More() {
			t.Fatalf("the answer %q is not one hook answer: %v", out.String(), err)
		}
		if answer.Empty() || answer.Specific.HookEventName != in.HookEventName {
			t.Fatalf("asked about %q, answered %q", in.HookEventName, out.String())
		}
		if d := answer.Specific.PermissionDecision; d != "" && (in.HookEventName != hook.PreToolUse || (d != "allow" && d != "deny" && d != "ask")) {
			t.Fatalf("%s answered the permission decision %q", in.HookEventName, d)
		}
	})
}
