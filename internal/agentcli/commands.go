package agentcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/agentops"
	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/protocol"
)

// commands are the sub-commands of `madebook agent`, one an agent
// operation, in the order `madebook agent --help` lists them.
var commands = []command{
	sub("createSession", runSessionOpen),
	sub("takeBrief", runBrief),
	sub("openDecision", runDecide),
	sub("proposePlan", runPlan),
	sub("reportLifecycleEvent", runEvent),
	sub("startRun", runRunStart),
	sub("finishRun", runRunFinish),
	sub("recordAsk", runAsk),
	sub("recordToolCall", runCall),
	sub("reportChange", runChange),
	sub("reportEvidence", runEvidence),
	sub("reportComplete", runComplete),
}

// agentTimeout bounds one agent call, from connecting to the last byte of
// the answer.
const agentTimeout = 30 * time.Second

// stateExit is the exit status of each next_action, for brief and
// --exit-on-state: 0 for the two that let the agent go on, one of its own
// for each of the others.
var stateExit = map[protocol.State]int{
	protocol.Continue:            0,
	protocol.ContinueWithWarning: 0,
	protocol.Remediate:           3,
	protocol.DecisionRequired:    4,
	protocol.Blocked:             5,
	protocol.HardStop:            6,
}

// agentConn is where one agent call goes and as whom: Madebook's base URL,
// the agent key and, for a call on a session, the session; and whether
// the answer's next_action gives the exit status (--exit-on-state).
type agentConn struct {
	base, key, session string
	exitOnState        bool
	stdout             io.Writer
}

// operands parses args and takes exactly the operands named (e.g. "the
// RUN id"), returned in order. A missing or extra operand is a usage
// error. A runner checks the rest of its command line before it reads
// the connection (conn), so that a usage mistake is always exit 2.
func (f *flags) operands(c IO, args []string, names ...string) ([]string, error) {
	rest, err := f.parseArgs(c, args)
	if err != nil {
		return nil, err
	}
	if len(rest) > len(names) {
		return nil, f.Fail("unexpected argument %q", rest[len(names)])
	}
	if len(rest) < len(names) {
		return nil, f.Fail("%s needs %s", strings.TrimPrefix(f.Name(), "madebook "), names[len(rest)])
	}
	return rest, nil
}

// conn reads the connection from the parsed flags and the environment.
// What it lacks (MADEBOOK_KEY, the session) or cannot use (MADEBOOK_URL)
// is an error of the environment, not of the command line: exit 1, its
// JSON on stdout (agentError).
func (f *flags) conn(c IO) (agentConn, error) {
	u, err := url.Parse(*f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return agentConn{}, agentError(c.Stdout, "invalid_url",
			fmt.Sprintf("--url (or MADEBOOK_URL) %q is not an http:// or https:// URL", *f.url))
	}
	conn := agentConn{base: strings.TrimRight(*f.url, "/"), key: c.Getenv("MADEBOOK_KEY"), exitOnState: *f.exitOnState, stdout: c.Stdout}
	if conn.key == "" {
		return agentConn{}, agentError(c.Stdout, "key_missing",
			"MADEBOOK_KEY is not set: export the agent key (`madebook key create` prints one)")
	}
	if f.session != nil {
		if conn.session = *f.session; conn.session == "" {
			return agentConn{}, agentError(c.Stdout, "session_missing",
				"no session: give --session ID or set MADEBOOK_SESSION (`madebook agent session open` opens one)")
		}
	}
	return conn, nil
}

// agentError is an error of `madebook agent` that is not the API's (the
// environment lacks something, Madebook did not answer, its answer is
// not the API's): its JSON, in the API's error shape, on stdout, so that
// a script reads every error the same way, and exit 1 with the message
// on stderr.
func agentError(stdout io.Writer, code, message string) error {
	printError(stdout, map[string]any{"error": map[string]string{"code": code, "message": message}})
	return Exit{1, message}
}

// printError prints an error's JSON, indented, on stdout. A failure to
// write it leaves stderr, which has the message, to say what happened.
func printError(stdout io.Writer, body any) {
	b, err := json.MarshalIndent(body, "", "  ")
	if err != nil {
		return
	}
	_, _ = stdout.Write(append(b, '\n'))
}

// call sends one agent call with body as its JSON (a json.RawMessage is
// sent as it is) and prints the answer, indented, on stdout. It returns
// an Exit for a call that failed, and nil for one that succeeded; with
// exitOnState, an Exit for an answer whose next_action is none of
// CONTINUE and CONTINUE_WITH_WARNING too.
func (a agentConn) call(ctx context.Context, method, path string, body any) error {
	client := apiclient.Client{Base: a.base, Key: a.key, Timeout: agentTimeout}
	reply, err := client.Call(ctx, method, path, body)
	var (
		na  *apiclient.NotAnswered
		ref *apiclient.Refused
	)
	switch {
	case errors.As(err, &na):
		return agentError(a.stdout, "not_answered", fmt.Sprintf("Madebook does not answer at %s (MADEBOOK_URL): %v", a.base, na.Err))
	case errors.As(err, &ref) && ref.Code != "":
		// The API's error body, as it sent it.
		var out bytes.Buffer
		if json.Indent(&out, ref.Body, "", "  ") == nil {
			out.WriteByte('\n')
			_, _ = a.stdout.Write(out.Bytes())
		}
		return Exit{1, ref.Error()}
	case errors.As(err, &ref):
		return agentError(a.stdout, "not_an_api_answer", ref.Error())
	case err != nil:
		return agentError(a.stdout, "call_failed", err.Error())
	}
	return a.answer(method, path, reply)
}

// answer prints a successful call's answer and turns its next_action into
// the command's outcome (see call).
func (a agentConn) answer(method, path string, reply []byte) error {
	if len(bytes.TrimSpace(reply)) == 0 {
		return nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, reply, "", "  "); err != nil {
		return agentError(a.stdout, "invalid_answer", fmt.Sprintf("%s %s: the answer is not JSON: %v", method, path, err))
	}
	out.WriteByte('\n')
	if _, err := a.stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if !bytes.HasPrefix(bytes.TrimSpace(reply), []byte("{")) {
		return nil // not an object: it names no next_action
	}
	var head struct {
		NextAction string `json:"next_action"`
		Reason     string `json:"reason"`
	}
	if err := json.Unmarshal(reply, &head); err != nil {
		return Exit{1, fmt.Sprintf("%s %s: the answer's next_action or reason is not a string: %v", method, path, err)}
	}
	if head.NextAction == "" {
		return nil
	}
	state, ok := protocol.ParseState(head.NextAction)
	if !ok {
		return Exit{1, fmt.Sprintf("%s %s: the answer's next_action %q is none of the six states", method, path, head.NextAction)}
	}
	if code := stateExit[state]; code != 0 && a.exitOnState {
		return Exit{code, strings.TrimSuffix(state.String()+": "+head.Reason, ": ")}
	}
	return nil
}

// readJSONObject reads a JSON object from the file at path, or stdin for
// "-": the body of a call too rich for flags. A file it cannot read
// (unreadable_file), or that holds anything else (malformed_json), is an
// error, exit 1 with its JSON on stdout: the command line was right.
func readJSONObject(c IO, path string) (json.RawMessage, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(c.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, agentError(c.Stdout, "unreadable_file", fmt.Sprintf("read --file %s: %v", path, err))
	}
	if !json.Valid(b) || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return nil, agentError(c.Stdout, "malformed_json", fmt.Sprintf("--file %s does not hold one JSON object", path))
	}
	return b, nil
}

// repeated is a flag given once for each of its values.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ", ") }

// Set adds one value.
func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// list is the values given, an empty list (not null) when none was.
func (r repeated) list() []string {
	if r == nil {
		return []string{}
	}
	return r
}

// runSessionOpen is `madebook agent session open`.
func runSessionOpen(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent session open --mission SLUG [--title T] [--agent NAME] [--external-id ID]",
		"Open a session of this agent key on a mission and print it. A script keeps its id:\n"+
			"  export MADEBOOK_SESSION=$(madebook agent session open --mission SLUG | jq -r .id)\n"+
			"With --external-id, the same ID again answers the session it opened (re-attach).", false)
	var in governance.SessionInput
	f.StringVar(&in.ExternalID, "external-id", "", "your client's own `ID` for the session (e.g. its session id)")
	f.StringVar(&in.Mission, "mission", "", "the `SLUG` of the mission the session works on")
	f.StringVar(&in.Title, "title", "", "the session's `TITLE`: what it is doing")
	f.StringVar(&in.Agent, "agent", "", "the agent's `NAME`, e.g. claude-code")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	if in.Mission == "" {
		return f.Fail("session open needs --mission")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(""), in)
}

// runBrief is `madebook agent brief`.
func runBrief(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent brief [--session ID] [--ack BRIEF_ID]",
		"Take the session's brief: its next_action and reason, the gates still open, and what a\n"+
			"person sent back (resolutions, remediations, answers). --ack acknowledges what the brief\n"+
			"before delivered (its brief_id); what is not acknowledged is delivered again after the\n"+
			"delivery lease, with \"redelivered\": true.", true)
	var in governance.BriefRequest
	f.StringVar(&in.Ack, "ack", "", "the `BRIEF_ID` of the last brief, acknowledging what it delivered")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	in.Session = conn.session
	return conn.call(ctx, op.Method, op.URL(""), in)
}

// runDecide is `madebook agent decide`.
func runDecide(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent decide --title T --question Q [--proposal P] [--blocked-scope PATH …] [--allowed-scope PATH …]",
		"Open a decision gate: a question a person answers. Until then the brief says\n"+
			"DECISION_REQUIRED, and the blocked scope is off limits while the allowed scope is not.", true)
	var in governance.DecisionInput
	var blocked, allowed repeated
	f.StringVar(&in.Title, "title", "", "the decision's `TITLE`, one line")
	f.StringVar(&in.Question, "question", "", "the `QUESTION` a person answers")
	f.StringVar(&in.Proposal, "proposal", "", "the agent's proposal, its `TEXT`")
	f.Var(&blocked, "blocked-scope", "a `PATH` the agent leaves alone until the answer (repeat for more)")
	f.Var(&allowed, "allowed-scope", "a `PATH` the agent may go on working in meanwhile (repeat for more)")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	if in.Title == "" || in.Question == "" {
		return f.Fail("decide needs --title and --question")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	in.BlockedScope, in.AllowedScope = blocked.list(), allowed.list()
	return conn.call(ctx, op.Method, op.URL(conn.session), in)
}

// runPlan is `madebook agent plan`.
func runPlan(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent plan (--file PATH | --summary S)",
		"Propose the session's plan: {\"summary\",\"initial_steps\",\"stopping_points\"} as JSON from\n"+
			"--file (- for stdin), or --summary alone for a plan without steps. On a high-risk\n"+
			"mission it waits for a person's approval (BLOCKED until then).", true)
	file := f.String("file", "", "the `PATH` of the plan's JSON, - for stdin")
	summary := f.String("summary", "", "the plan's `SUMMARY`, for a plan without steps")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	if (*file == "") == (*summary == "") {
		return f.Fail("plan needs --file or --summary, one of them")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	var body any = agentops.Plan{Summary: *summary}
	if *file != "" {
		if body, err = readJSONObject(c, *file); err != nil {
			return err
		}
	}
	return conn.call(ctx, op.Method, op.URL(conn.session), body)
}

// runEvent is `madebook agent event`.
func runEvent(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent event NAME [--payload JSON]",
		"Report a lifecycle event, e.g. task.created, and print the lifecycle it leads to\n"+
			"(docs/lifecycle.md has the events and their payloads).", true)
	payload := f.String("payload", "", "the event's payload, a `JSON` object")
	operands, err := f.operands(c, args, "an event NAME")
	if err != nil {
		return err
	}
	in := governance.EventInput{Name: operands[0]}
	if *payload != "" {
		if !json.Valid([]byte(*payload)) {
			return f.Fail("--payload is not JSON: %s", *payload)
		}
		in.Payload = json.RawMessage(*payload)
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(conn.session), in)
}

// runRunStart is `madebook agent run start`.
func runRunStart(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent run start --name N [--parent RUN] [--plan | --external-id ID]",
		"Start a run, a unit of work the ledger keeps, and print it. A script keeps its id:\n"+
			"  RUN=$(madebook agent run start --name build | jq -r .id)\n"+
			"With --plan the run executes the session's approved plan: its calls name their --step.\n"+
			"With --external-id, the same ID again answers the run it started (re-attach).", true)
	name := f.String("name", "", "the run's `NAME`")
	externalID := f.String("external-id", "", "your client's own `ID` for the run (e.g. a subagent's id)")
	parent := f.String("parent", "", "the id of the `RUN` this one is part of")
	withPlan := f.Bool("plan", false, "the run executes the session's approved plan")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	if *name == "" {
		return f.Fail("run start needs --name")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	body := ledger.RunInput{Name: *name, Parent: *parent, Plan: *withPlan, ExternalID: *externalID}
	return conn.call(ctx, op.Method, op.URL(conn.session), body)
}

// runStatuses are the statuses a run finishes with.
const runStatuses = "complete, partial, blocked, failed or cancelled"

// runRunFinish is `madebook agent run finish`.
func runRunFinish(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent run finish RUN --status S",
		"Finish a run. A run with an open ask cannot finish (run_has_open_ask).", false)
	status := f.String("status", "", "how the run ended: `S` is "+runStatuses)
	operands, err := f.operands(c, args, "the RUN id")
	if err != nil {
		return err
	}
	if *status == "" {
		return f.Fail("run finish needs --status (%s)", runStatuses)
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(operands[0]), agentops.RunFinish{Status: *status})
}

// runAsk is `madebook agent ask`.
func runAsk(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent ask RUN (--prompt P --option LABEL … [--stopping-point N] | --file PATH)",
		"Ask a person a question on a run; the run parks until a person answers. The options\n"+
			"are numbered 1, 2, … in the order given; --file takes {\"prompt\",\"options\":{\"1\":\"Yes\"}}\n"+
			"as JSON instead (- for stdin). On a run of a plan, --stopping-point says which of the\n"+
			"plan's stopping points this ask is: answering option N releases that option's steps.", false)
	prompt := f.String("prompt", "", "the question, the `PROMPT` a person reads")
	stoppingPoint := f.Int("stopping-point", 0, "the plan's stopping point `N` this ask is")
	var options repeated
	f.Var(&options, "option", "an answer a person may choose, its `LABEL` (repeat for each, 1 to 9)")
	file := f.String("file", "", "the `PATH` of the ask's JSON, - for stdin")
	operands, err := f.operands(c, args, "the RUN id")
	if err != nil {
		return err
	}
	switch {
	case *file != "" && (*prompt != "" || len(options) > 0):
		return f.Fail("ask takes --file or --prompt and --option, not both")
	case *file == "" && (*prompt == "" || len(options) == 0):
		return f.Fail("ask needs --prompt and one --option at least")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	var body any
	switch {
	case *file != "":
		if body, err = readJSONObject(c, *file); err != nil {
			return err
		}
	default:
		in := ledger.AskInput{Prompt: *prompt, Options: map[string]string{}}
		if f.IsSet("stopping-point") {
			in.StoppingPoint = stoppingPoint
		}
		for i, label := range options {
			in.Options[strconv.Itoa(i+1)] = label
		}
		body = in
	}
	return conn.call(ctx, op.Method, op.URL(operands[0]), body)
}

// runCall is `madebook agent call`.
func runCall(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent call RUN --server S --tool T [--side-effecting] [--started-at TIME] [--step ID] [--path P …]",
		"Record a tool call on a run. The tool registry says whether the tool writes (a tool\n"+
			"nobody classified does); --side-effecting may only raise that. A parked run, a blocked\n"+
			"session, a path in a blocked scope or a step before its stopping point is refused.", false)
	var in agentops.ToolCall
	f.StringVar(&in.Tool, "tool", "", "the `TOOL` called")
	f.StringVar(&in.Server, "server", "", "the `SERVER` the tool is on: an MCP server's name, or the agent's for its own tools")
	sideEffecting := f.Bool("side-effecting", false, "the call writes (--side-effecting=false: it only reads)")
	startedAt := f.String("started-at", "", "when the call started, an RFC 3339 `TIME` (default now)")
	f.StringVar(&in.Step, "step", "", "on a run of a plan, the plan step `ID` the call runs")
	var paths repeated
	f.Var(&paths, "path", "a `PATH` the call touches (repeat for each)")
	operands, err := f.operands(c, args, "the RUN id")
	if err != nil {
		return err
	}
	in.Paths = paths
	if in.Server == "" || in.Tool == "" {
		return f.Fail("call needs --server and --tool")
	}
	if f.IsSet("side-effecting") {
		in.SideEffecting = sideEffecting
	}
	if *startedAt != "" {
		at, err := time.Parse(time.RFC3339Nano, *startedAt)
		if err != nil {
			return f.Fail("--started-at %q is not an RFC 3339 time, e.g. 2026-11-29T12:00:00Z", *startedAt)
		}
		text := at.Format(time.RFC3339Nano)
		in.StartedAt = &text
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(operands[0]), in)
}

// runChange is `madebook agent change`.
func runChange(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent change (PATH … | --file PATH)",
		"Report the session's whole change so far; each report replaces the one before. Name\n"+
			"the changed files (their content is read from disk), or give the change's JSON,\n"+
			"{\"files\":[{\"path\",\"content\"}],\"dependencies\",\"symbols_changed\",\"symbols_used\"},\n"+
			"with --file (- for stdin). The answer has the violations, deviations and risk.", true)
	file := f.String("file", "", "the `PATH` of the change's JSON, - for stdin")
	rest, err := f.parseArgs(c, args)
	if err != nil {
		return err
	}
	if (*file == "") == (len(rest) == 0) {
		return f.Fail("change needs the changed files' paths or --file, one of them")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	var body any
	if *file != "" {
		if body, err = readJSONObject(c, *file); err != nil {
			return err
		}
	} else {
		in := change.Change{Dependencies: []string{}, SymbolsChanged: []string{}, SymbolsUsed: []string{}}
		for _, p := range rest {
			content, err := os.ReadFile(p)
			if err != nil {
				return agentError(c.Stdout, "unreadable_file", fmt.Sprintf("read %s: %v", p, err))
			}
			in.Files = append(in.Files, change.File{Path: p, Content: string(content)})
		}
		body = in
	}
	return conn.call(ctx, op.Method, op.URL(conn.session), body)
}

// runEvidence is `madebook agent evidence`.
func runEvidence(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent evidence --kind K --passed[=false] [--detail D]",
		"Report evidence the mission's evidence gate asks for (its kinds, e.g. tests or review):\n"+
			"whether it passed, said either way (--passed or --passed=false).", true)
	var in governance.EvidenceInput
	f.StringVar(&in.Kind, "kind", "", "the evidence's `KIND`, e.g. tests")
	f.BoolVar(&in.Passed, "passed", false, "it passed (--passed=false: it failed)")
	f.StringVar(&in.Detail, "detail", "", "what was run and what it showed, the `DETAIL`")
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	if in.Kind == "" || !f.IsSet("passed") {
		return f.Fail("evidence needs --kind, and --passed or --passed=false")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(conn.session), in)
}

// runComplete is `madebook agent complete`.
func runComplete(ctx context.Context, c IO, op agentops.Op, args []string) error {
	f := newFlags(op.CLI, "madebook agent complete [--session ID]",
		"Ask the evidence gate whether the session may complete: the answer says satisfied, or\n"+
			"unsatisfied with the evidence still missing.", true)
	if _, err := f.operands(c, args); err != nil {
		return err
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	return conn.call(ctx, op.Method, op.URL(conn.session), agentops.Empty{})
}
