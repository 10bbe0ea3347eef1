package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/hook"
)

// hookTimeout bounds one hook event, every call to Madebook included: the
// hook runs before every tool call Claude makes.
const hookTimeout = 3 * time.Second

// maxHookInput is the largest hook input read (a PostToolUse carries the
// tool's response: a whole file Claude read, say).
const maxHookInput = 64 << 20

// hookInputError is a hook input the hook cannot act on: main prints it
// and exits 1, which Claude Code takes as a non-blocking error (it shows
// the message to the user and goes on).
type hookInputError struct{ err error }

func (e hookInputError) Error() string { return "hook claude-code: " + e.err.Error() }

func (e hookInputError) Unwrap() error { return e.err }

// runHookClaudeCode is `madebook hook claude-code`: a Claude Code command
// hook. It reads the event on stdin and prints the answer on stdout; it
// opens no database.
func runHookClaudeCode(ctx context.Context, c stdio, args []string) error {
	f := newFlags("hook claude-code", "madebook hook claude-code [--url URL]",
		"A Claude Code command hook (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,\n"+
			"PostToolUseFailure): the event's JSON on stdin, the answer's JSON on stdout (nothing\n"+
			"when a tool call may run).\n"+
			"Each event opens or re-attaches the Madebook session whose external_id is Claude's\n"+
			"session_id. PreToolUse denies a call Madebook refuses, with the reason and what to do\n"+
			"instead. When Madebook does not answer, side-effecting tools are denied and read-only\n"+
			"ones run (MADEBOOK_FAIL_OPEN=1: all run). docs/agents.md has the settings.")
	f.notes = "Environment:\n" +
		"  MADEBOOK_KEY        the agent key, mbk_… (required)\n" +
		"  MADEBOOK_MISSION    the slug of the mission the Claude session works on (required)\n" +
		"  MADEBOOK_FAIL_OPEN  1: let every tool run when Madebook does not answer\n" +
		"  CLAUDE_PROJECT_DIR  the project root (Claude Code sets it; else git's top level, else the cwd)\n\n" +
		"Exit status: 0 with an answer (a denial included); 1 when stdin is not a hook's JSON\n" +
		"(Claude Code shows the message and goes on); 2 a command-line mistake."
	base := f.String("url", defaultAgentURL, "the `URL` Madebook serves at")
	f.env["url"] = "MADEBOOK_URL"
	if err := f.parse(c, args); err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(c.stdin, maxHookInput+1))
	if err != nil {
		return hookInputError{fmt.Errorf("read stdin: %w", err)}
	}
	if len(raw) > maxHookInput {
		return hookInputError{fmt.Errorf("the hook input is over %d MiB", maxHookInput>>20)}
	}
	in, err := hook.ParseInput(raw)
	if err != nil {
		return hookInputError{err}
	}
	cfg := hook.Config{Mission: strings.TrimSpace(c.getenv("MADEBOOK_MISSION")), FailOpen: failOpen(c.getenv("MADEBOOK_FAIL_OPEN")),
		Machine: hook.OS{Getenv: c.getenv}, StateDir: hookStateDir(c.getenv)}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	out := hook.Handle(ctx, hookMadebook(strings.TrimRight(*base, "/"), c.getenv("MADEBOOK_KEY")), cfg, in)
	if out.Empty() {
		return nil
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(out); err != nil {
		return err
	}
	_, err = c.stdout.Write(b.Bytes())
	return err
}

// hookStateDir is where the hook keeps, between a PreToolUse and its
// PostToolUse, what it noted of the blocked scope on disk: a directory of
// this user's under the temporary directory ($TMPDIR).
func hookStateDir(getenv func(string) string) string {
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, "madebook-hook-"+strconv.Itoa(os.Getuid()))
}

// hookMadebook is the Madebook the hook talks to at base as key, or, when
// either is unusable, one whose every call says what to set.
func hookMadebook(base, key string) hook.Madebook {
	u, err := url.Parse(base)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return hook.Unconfigured{Err: &hook.APIError{Code: "bad_url",
			Message: fmt.Sprintf("MADEBOOK_URL (or --url) %q is not an http:// or https:// URL.", base)}}
	case strings.TrimSpace(key) == "":
		return hook.Unconfigured{Err: &hook.APIError{Code: "key_required",
			Message: "MADEBOOK_KEY is not set: export the agent key (`madebook key create` prints one)."}}
	}
	return hook.Client{API: &apiclient.Client{Base: base, Key: key, Timeout: hookTimeout}}
}

// failOpen reads MADEBOOK_FAIL_OPEN: 1 or true (any case) turns it on.
func failOpen(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || strings.EqualFold(v, "true")
}
