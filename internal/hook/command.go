package hook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/apiclient"
)

// Timeout bounds one event of the command hook, its request to Madebook
// included: the hook runs before every tool call Claude makes.
const Timeout = 3 * time.Second

// MaxInput is the largest hook input the command hook reads (a
// PostToolUse carries the tool's response: a whole file Claude read, say).
const MaxInput = 64 << 20

// DefaultURL is where the command hook finds Madebook when neither
// --url nor MADEBOOK_URL says.
const DefaultURL = "http://127.0.0.1:8080"

// Command is the command hook on the agent's machine (`madebook hook
// claude-code|codex|gemini|…`, and the lean `madebook-hook …`): it reads
// an event on stdin as its executor sends it, adds what only the machine
// knows (Local), sends the whole event to Madebook in one request (POST
// /hooks/{executor}), and gives the answer as the executor reads it; when
// Madebook does not answer, it answers itself (Unanswered):
// side-effecting calls denied unless FailOpen.
type Command struct {
	// Executor is the coding agent running the hook; nil is Claude Code.
	Executor *Executor
	// URL is where Madebook serves; Key the agent key; Mission the
	// mission's slug.
	URL, Key, Mission string
	// FailOpen lets every tool run when Madebook does not answer.
	FailOpen bool
	// Machine is the agent's machine.
	Machine Machine
	// StateDir is where the hook keeps, between events, what it noted of
	// a blocked scope before a call and how far it read each transcript.
	StateDir string
	// Transport, when set, carries the request (tests); nil: the network.
	Transport http.RoundTripper
	// Event is the event's name as the command line gives it, for an
	// executor whose events do not name themselves (Executor.EventArg).
	Event string
	// Getenv reads the environment the executor ran the hook in (its
	// session id, for an executor whose events lack one); nil: none.
	Getenv func(string) string
}

// executor is the command's executor: Claude Code unless it names one.
func (c Command) executor() *Executor {
	if c.Executor == nil {
		return ClaudeCode
	}
	return c.Executor
}

// NewCommand is the command hook of executor e as the environment
// (getenv) sets it up: MADEBOOK_KEY, MADEBOOK_FAIL_OPEN, and, when the
// flags leave them empty, MADEBOOK_URL and MADEBOOK_MISSION.
func NewCommand(e *Executor, getenv func(string) string, url, mission string) Command {
	if url == "" {
		url = getenv("MADEBOOK_URL")
	}
	if url == "" {
		url = DefaultURL
	}
	if mission == "" {
		mission = getenv("MADEBOOK_MISSION")
	}
	return Command{Executor: e, URL: strings.TrimRight(strings.TrimSpace(url), "/"), Key: strings.TrimSpace(getenv("MADEBOOK_KEY")),
		Mission: strings.TrimSpace(mission), FailOpen: failOpen(getenv("MADEBOOK_FAIL_OPEN")),
		Machine: OS{Getenv: getenv, ProjectDir: e.ProjectDir}, StateDir: StateDir(getenv), Getenv: getenv}
}

// failOpen reads MADEBOOK_FAIL_OPEN: 1 or true (any case) turns it on.
func failOpen(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || strings.EqualFold(v, "true")
}

// StateDir is where the command hook keeps its notes: a directory of this
// user's under the temporary directory ($TMPDIR).
func StateDir(getenv func(string) string) string {
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, "madebook-hook-"+strconv.Itoa(os.Getuid()))
}

// Run answers the event on stdin: the answer on stdout and stderr, as
// the executor reads it. Its error is an *InputError when stdin is not a
// hook's input (the caller exits 2 with it, which blocks the call: every
// executor shows the reason); every failure of Madebook is part of the
// answer instead.
func (c Command) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	raw, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		return &InputError{Code: "invalid_body", Msg: fmt.Sprintf("Reading stdin failed: %v.", err)}
	}
	if len(raw) > MaxInput {
		return &InputError{Code: "invalid_body", Msg: fmt.Sprintf("The hook input is over %d MiB.", MaxInput>>20)}
	}
	in, err := c.executor().ParseEvent(raw, c.Event, c.Getenv)
	if err != nil {
		return err
	}
	r := c.executor().Render(in, c.Answer(ctx, in))
	if len(r.Stdout) > 0 {
		if _, err := stdout.Write(r.Stdout); err != nil {
			return err
		}
	}
	if r.Stderr != "" {
		_, _ = io.WriteString(stderr, r.Stderr+"\n")
	}
	return nil
}

// Answer answers one event: Local added, one request to Madebook, the
// blocked scope watched while an allowed call runs, and the transcript's
// read mark moved once Madebook has its calls.
func (c Command) Answer(ctx context.Context, in Input) Output {
	cfg := Config{Executor: c.executor(), Mission: c.Mission, FailOpen: c.FailOpen}
	if !slices.Contains(Events, in.HookEventName) || Own(in.ToolName) && (in.HookEventName == PreToolUse || in.HookEventName == PermissionRequest) {
		return Output{} // nothing to ask: an event the hook does not answer, or Madebook's own tool
	}
	client, err := c.client()
	if err != nil {
		return Unanswered(cfg, in, err)
	}
	if c.Mission == "" {
		return Handle(ctx, client, cfg, in) // says what to set
	}
	local, mark := c.local(in)
	in.Madebook = &local
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	out, err := client.Event(ctx, c.executor().Name, c.Mission, in)
	if err != nil {
		return Unanswered(cfg, in, err)
	}
	if in.HookEventName == PreToolUse && !out.Denied() && out.Madebook != nil {
		watchBefore(c.Machine, c.StateDir, in, local.Root, out.Madebook.Watch)
	}
	if mark != nil {
		mark()
	}
	return out
}

// client is Madebook at c.URL as c.Key, or an error saying what to set.
func (c Command) client() (Client, error) {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return Client{}, &APIError{Code: "bad_url", Message: fmt.Sprintf("MADEBOOK_URL (or --url) %q is not an http:// or https:// URL.", c.URL)}
	case c.Key == "":
		return Client{}, &APIError{Code: "key_required", Message: "MADEBOOK_KEY is not set: export the agent key (`madebook key create` prints one)."}
	}
	return Client{API: &apiclient.Client{Base: c.URL, Key: c.Key, Timeout: Timeout, Transport: c.Transport}}, nil
}

// local is what the machine adds to the event, and, for a stop, the mark
// to move once Madebook has the transcript's calls (nil: none).
func (c Command) local(in Input) (Local, func()) {
	var l Local
	if c.Machine == nil {
		return l, nil
	}
	l.Root = c.Machine.Root(in.Cwd)
	switch in.HookEventName {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
		s := siteOf(c.Machine, c.executor(), in, l.Root)
		s.Input = nil // the event's tool_input: not sent twice
		l.Site = &s
	}
	switch in.HookEventName {
	case PostToolUse, PostToolUseFailure:
		l.Breach = watchAfter(c.Machine, c.executor(), c.StateDir, in)
	case Stop, SessionEnd:
		calls, mark := readTranscript(c.executor().transcript, c.StateDir, in.TranscriptPath, l.Root, "", "")
		l.Calls = calls
		return l, mark
	case SubagentStop:
		calls, mark := readTranscript(c.executor().transcript, c.StateDir, in.AgentTranscriptPath, l.Root, in.AgentID, in.AgentType)
		l.Calls = calls
		return l, mark
	}
	return l, nil
}
