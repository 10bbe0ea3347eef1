package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/madebook/madebook/internal/apiclient"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/protocol"
)

// agentCommands are the sub-commands of `madebook agent`, one an agent
// call, in the order `madebook agent --help` lists them.
var agentCommands = []command{
	{"session open", "open a session on a mission and print it (its id is .id)", runAgentSessionOpen},
	{"brief", "take a brief: the next action, and what a person sent back", runAgentBrief},
	{"decide", "open a decision gate: a question a person answers", runAgentDecide},
	{"plan", "propose the session's plan (JSON from --file, or --summary alone)", runAgentPlan},
	{"event", "report a lifecycle event (task.created, …)", runAgentEvent},
	{"run start", "start a run in the session and print it (its id is .id)", runAgentRunStart},
	{"run finish", "finish a run with its status", runAgentRunFinish},
	{"ask", "ask a person a question on a run (the run parks until answered)", runAgentAsk},
	{"call", "record a tool call on a run", runAgentCall},
	{"change", "report the session's whole change so far (files, or JSON from --file)", runAgentChange},
	{"evidence", "report evidence (tests, review, …) that passed or failed", runAgentEvidence},
	{"complete", "ask the evidence gate whether the session may complete", runAgentComplete},
}

// defaultAgentURL is where `madebook agent` finds Madebook when neither
// --url nor MADEBOOK_URL says.
const defaultAgentURL = "http://127.0.0.1:8080"

// agentTimeout bounds one agent call, from connecting to the last byte of
// the answer.
const agentTimeout = 30 * time.Second

// stateExit is the exit status of each next_action: 0 for the two that
// let the agent go on, one of its own for each of the others.
var stateExit = map[protocol.State]int{
	protocol.Continue:            0,
	protocol.ContinueWithWarning: 0,
	protocol.Remediate:           3,
	protocol.DecisionRequired:    4,
	protocol.Blocked:             5,
	protocol.HardStop:            6,
}

// agentExit ends `madebook agent` with an exit status of its own: 3 to 6
// for the next_action an answer names (the answer is on stdout, msg is
// the state and its reason), or 1 for an error (the error's JSON is on
// stdout; msg says why: the API's error code and message, why Madebook
// did not answer, or what the environment lacks). main prints msg after
// "madebook agent: ".
type agentExit struct {
	code int
	msg  string
}

func (e agentExit) Error() string { return e.msg }

// runAgent is `madebook agent`: it runs the sub-command args name.
func runAgent(ctx context.Context, c stdio, args []string) error {
	usage := agentUsage()
	if len(args) == 0 {
		return usageError{"agent needs a sub-command", usage}
	}
	if isHelp(args[0]) {
		if args[0] != "help" || len(args) == 1 {
			_, err := io.WriteString(c.stdout, usage)
			return err
		}
		args = append(args[1:], "--help") // agent help SUB is agent SUB --help
	}
	cmd, rest, err := find(agentCommands, "madebook agent", usage, args)
	if err != nil {
		return err
	}
	return cmd.run(ctx, c, rest)
}

// agentUsage is what `madebook agent --help` prints: the sub-commands, the
// environment they read and the exit statuses.
func agentUsage() string {
	var b strings.Builder
	b.WriteString("Usage:\n  madebook agent SUBCOMMAND [FLAGS]\n\n" +
		"Make the agent calls from a shell: each prints Madebook's JSON answer on stdout and\n" +
		"exits with a status its next_action gives, so `madebook agent brief || handle` works.\n\n" +
		"Subcommands:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, c := range agentCommands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	b.WriteString("\nEnvironment:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  MADEBOOK_URL\twhere Madebook serves (default %s; --url overrides)\n", defaultAgentURL)
	fmt.Fprintf(tw, "  MADEBOOK_KEY\tthe agent key, mbk_… (required; `madebook key create` prints one)\n")
	fmt.Fprintf(tw, "  MADEBOOK_SESSION\tthe session the calls are on (--session overrides)\n")
	tw.Flush()
	b.WriteString("\nExit status:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  0\tCONTINUE or CONTINUE_WITH_WARNING, or a success whose answer names no next_action\n")
	fmt.Fprintf(tw, "  1\tan error (the API refused, no answer, MADEBOOK_KEY or the session unset): its JSON on stdout\n")
	fmt.Fprintf(tw, "  2\ta command-line mistake (a flag or operand missing or wrong), with the usage on stderr\n")
	fmt.Fprintf(tw, "  3\tREMEDIATE\n  4\tDECISION_REQUIRED\n  5\tBLOCKED\n  6\tHARD_STOP\n")
	tw.Flush()
	b.WriteString("\nRun `madebook agent SUBCOMMAND --help` for its flags.\n")
	return b.String()
}

// agentFlags are an agent sub-command's flags: its own, --url, and for a
// call on a session --session.
type agentFlags struct {
	*flags
	url, session *string
}

// newAgentFlags starts the flags of the agent sub-command name; onSession
// says whether the call is on a session (and so takes --session).
func newAgentFlags(name, synopsis, about string, onSession bool) *agentFlags {
	f := &agentFlags{flags: newFlags("agent "+name, synopsis, about)}
	f.notes = "Prints Madebook's JSON answer on stdout; the exit status is its next_action's\n" +
		"(`madebook agent --help` has the table). The agent key is MADEBOOK_KEY."
	f.url = f.String("url", defaultAgentURL, "the `URL` Madebook serves at")
	f.env["url"] = "MADEBOOK_URL"
	if onSession {
		f.session = f.String("session", "", "the `ID` of the session the call is on")
		f.env["session"] = "MADEBOOK_SESSION"
	}
	return f
}

// agentConn is where one agent call goes and as whom: Madebook's base URL,
// the agent key and, for a call on a session, the session.
type agentConn struct {
	base, key, session string
	stdout             io.Writer
}

// connect parses args, takes exactly the operands named (e.g. "RUN") and
// reads the connection from the flags and the environment. It returns the
// operands in order. A missing operand is a usage error; a missing key or
// session an error of the environment (see conn).
func (f *agentFlags) connect(c stdio, args []string, operands ...string) (agentConn, []string, error) {
	rest, err := f.parseArgs(c, args)
	if err != nil {
		return agentConn{}, nil, err
	}
	if len(rest) > len(operands) {
		return agentConn{}, nil, f.fail("unexpected argument %q", rest[len(operands)])
	}
	if len(rest) < len(operands) {
		return agentConn{}, nil, f.fail("%s needs %s", strings.TrimPrefix(f.Name(), "madebook "), operands[len(rest)])
	}
	conn, err := f.conn(c)
	return conn, rest, err
}

// conn reads the connection from the parsed flags and the environment.
// What it lacks (MADEBOOK_KEY, the session) or cannot use (MADEBOOK_URL)
// is an error of the environment, not of the command line: exit 1, its
// JSON on stdout (agentError).
func (f *agentFlags) conn(c stdio) (agentConn, error) {
	u, err := url.Parse(*f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return agentConn{}, agentError(c.stdout, "invalid_url",
			fmt.Sprintf("--url (or MADEBOOK_URL) %q is not an http:// or https:// URL", *f.url))
	}
	conn := agentConn{base: strings.TrimRight(*f.url, "/"), key: c.getenv("MADEBOOK_KEY"), stdout: c.stdout}
	if conn.key == "" {
		return agentConn{}, agentError(c.stdout, "key_missing",
			"MADEBOOK_KEY is not set: export the agent key (`madebook key create` prints one)")
	}
	if f.session != nil {
		if conn.session = *f.session; conn.session == "" {
			return agentConn{}, agentError(c.stdout, "session_missing",
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
	return agentExit{1, message}
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

// sessionPath is the path of the session's sub-resource what
// ("decisions", "plan", …).
func (a agentConn) sessionPath(what string) string {
	return "/api/v1/sessions/" + url.PathEscape(a.session) + "/" + what
}

// runPath is the path of the run's sub-resource what ("" for the run).
func runPath(run, what string) string {
	p := "/api/v1/runs/" + url.PathEscape(run)
	if what != "" {
		p += "/" + what
	}
	return p
}

// call sends one agent call with body as its JSON (a json.RawMessage is
// sent as it is) and prints the answer, indented, on stdout. It returns
// nil for an answer whose next_action is CONTINUE or
// CONTINUE_WITH_WARNING or that names none, and an agentExit for the other
// states and for a call that failed.
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
		return agentExit{1, ref.Error()}
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
		return agentExit{1, fmt.Sprintf("%s %s: the answer's next_action or reason is not a string: %v", method, path, err)}
	}
	if head.NextAction == "" {
		return nil
	}
	state, ok := protocol.ParseState(head.NextAction)
	if !ok {
		return agentExit{1, fmt.Sprintf("%s %s: the answer's next_action %q is none of the six states", method, path, head.NextAction)}
	}
	if code := stateExit[state]; code != 0 {
		return agentExit{code, strings.TrimSuffix(state.String()+": "+head.Reason, ": ")}
	}
	return nil
}

// readJSONObject reads a JSON object from the file at path, or stdin for
// "-": the body of a call too rich for flags. A file it cannot read, or
// that holds anything else, is a usage error.
func (f *agentFlags) readJSONObject(c stdio, path string) (json.RawMessage, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(c.stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, f.fail("read --file %s: %v", path, err)
	}
	if !json.Valid(b) || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return nil, f.fail("--file %s does not hold one JSON object", path)
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

// runAgentSessionOpen is `madebook agent session open`: POST /api/v1/sessions.
func runAgentSessionOpen(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("session open", "madebook agent session open --mission SLUG [--title T] [--agent NAME] [--external-id ID]",
		"Open a session of this agent key on a mission and print it. A script keeps its id:\n"+
			"  export MADEBOOK_SESSION=$(madebook agent session open --mission SLUG | jq -r .id)\n"+
			"With --external-id, the same ID again answers the session it opened (re-attach).", false)
	var in governance.SessionInput
	f.StringVar(&in.ExternalID, "external-id", "", "your client's own `ID` for the session (e.g. its session id)")
	f.StringVar(&in.Mission, "mission", "", "the `SLUG` of the mission the session works on")
	f.StringVar(&in.Title, "title", "", "the session's `TITLE`: what it is doing")
	f.StringVar(&in.Agent, "agent", "", "the agent's `NAME`, e.g. claude-code")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	if in.Mission == "" {
		return f.fail("session open needs --mission")
	}
	return conn.call(ctx, http.MethodPost, "/api/v1/sessions", in)
}

// runAgentBrief is `madebook agent brief`: POST /brief.
func runAgentBrief(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("brief", "madebook agent brief [--session ID] [--ack BRIEF_ID]",
		"Take the session's brief: its next_action and reason, the gates still open, and what a\n"+
			"person sent back (resolutions, remediations, answers). --ack acknowledges what the brief\n"+
			"before delivered (its brief_id); what is not acknowledged is delivered again after the\n"+
			"delivery lease, with \"redelivered\": true.", true)
	var in governance.BriefRequest
	f.StringVar(&in.Ack, "ack", "", "the `BRIEF_ID` of the last brief, acknowledging what it delivered")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	in.Session = conn.session
	return conn.call(ctx, http.MethodPost, "/brief", in)
}

// runAgentDecide is `madebook agent decide`: POST /api/v1/sessions/{id}/decisions.
func runAgentDecide(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("decide", "madebook agent decide --title T --question Q [--proposal P] [--blocked-scope PATH …] [--allowed-scope PATH …]",
		"Open a decision gate: a question a person answers. Until then the brief says\n"+
			"DECISION_REQUIRED, and the blocked scope is off limits while the allowed scope is not.", true)
	var in governance.DecisionInput
	var blocked, allowed repeated
	f.StringVar(&in.Title, "title", "", "the decision's `TITLE`, one line")
	f.StringVar(&in.Question, "question", "", "the `QUESTION` a person answers")
	f.StringVar(&in.Proposal, "proposal", "", "the agent's proposal, its `TEXT`")
	f.Var(&blocked, "blocked-scope", "a `PATH` the agent leaves alone until the answer (repeat for more)")
	f.Var(&allowed, "allowed-scope", "a `PATH` the agent may go on working in meanwhile (repeat for more)")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	if in.Title == "" || in.Question == "" {
		return f.fail("decide needs --title and --question")
	}
	in.BlockedScope, in.AllowedScope = blocked.list(), allowed.list()
	return conn.call(ctx, http.MethodPost, conn.sessionPath("decisions"), in)
}

// runAgentPlan is `madebook agent plan`: POST /api/v1/sessions/{id}/plan.
func runAgentPlan(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("plan", "madebook agent plan (--file PATH | --summary S)",
		"Propose the session's plan: {\"summary\",\"initial_steps\",\"stopping_points\"} as JSON from\n"+
			"--file (- for stdin), or --summary alone for a plan without steps. On a high-risk\n"+
			"mission it waits for a person's approval (BLOCKED until then).", true)
	file := f.String("file", "", "the `PATH` of the plan's JSON, - for stdin")
	summary := f.String("summary", "", "the plan's `SUMMARY`, for a plan without steps")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	if (*file == "") == (*summary == "") {
		return f.fail("plan needs --file or --summary, one of them")
	}
	var body any = governance.PlanInput{Summary: *summary}
	if *file != "" {
		if body, err = f.readJSONObject(c, *file); err != nil {
			return err
		}
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("plan"), body)
}

// runAgentEvent is `madebook agent event`: POST /api/v1/sessions/{id}/events.
func runAgentEvent(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("event", "madebook agent event NAME [--payload JSON]",
		"Report a lifecycle event, e.g. task.created, and print the lifecycle it leads to\n"+
			"(docs/lifecycle.md has the events and their payloads).", true)
	payload := f.String("payload", "", "the event's payload, a `JSON` object")
	conn, operands, err := f.connect(c, args, "an event NAME")
	if err != nil {
		return err
	}
	in := governance.EventInput{Name: operands[0]}
	if *payload != "" {
		if !json.Valid([]byte(*payload)) {
			return f.fail("--payload is not JSON: %s", *payload)
		}
		in.Payload = json.RawMessage(*payload)
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("events"), in)
}

// runAgentRunStart is `madebook agent run start`: POST /api/v1/sessions/{id}/runs.
func runAgentRunStart(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("run start", "madebook agent run start --name N [--parent RUN] [--plan | --external-id ID]",
		"Start a run, a unit of work the ledger keeps, and print it. A script keeps its id:\n"+
			"  RUN=$(madebook agent run start --name build | jq -r .id)\n"+
			"With --plan the run executes the session's approved plan: its calls name their --step.\n"+
			"With --external-id, the same ID again answers the run it started (re-attach).", true)
	name := f.String("name", "", "the run's `NAME`")
	externalID := f.String("external-id", "", "your client's own `ID` for the run (e.g. a subagent's id)")
	parent := f.String("parent", "", "the id of the `RUN` this one is part of")
	withPlan := f.Bool("plan", false, "the run executes the session's approved plan")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	if *name == "" {
		return f.fail("run start needs --name")
	}
	body := map[string]any{"name": *name}
	if *parent != "" {
		body["parent"] = *parent
	}
	if *withPlan {
		body["plan"] = true
	}
	if *externalID != "" {
		body["external_id"] = *externalID
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("runs"), body)
}

// runStatuses are the statuses a run finishes with.
const runStatuses = "complete, partial, blocked, failed or cancelled"

// runAgentRunFinish is `madebook agent run finish`: PATCH /api/v1/runs/{id}.
func runAgentRunFinish(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("run finish", "madebook agent run finish RUN --status S",
		"Finish a run. A run with an open ask cannot finish (run_has_open_ask).", false)
	status := f.String("status", "", "how the run ended: `S` is "+runStatuses)
	conn, operands, err := f.connect(c, args, "the RUN id")
	if err != nil {
		return err
	}
	if *status == "" {
		return f.fail("run finish needs --status (%s)", runStatuses)
	}
	return conn.call(ctx, http.MethodPatch, runPath(operands[0], ""), map[string]string{"status": *status})
}

// runAgentAsk is `madebook agent ask`: POST /api/v1/runs/{id}/asks.
func runAgentAsk(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("ask", "madebook agent ask RUN (--prompt P --option LABEL … [--stopping-point N] | --file PATH)",
		"Ask a person a question on a run; the run parks until a person answers. The options\n"+
			"are numbered 1, 2, … in the order given; --file takes {\"prompt\",\"options\":{\"1\":\"Yes\"}}\n"+
			"as JSON instead (- for stdin). On a run of a plan, --stopping-point says which of the\n"+
			"plan's stopping points this ask is: answering option N releases that option's steps.", false)
	prompt := f.String("prompt", "", "the question, the `PROMPT` a person reads")
	stoppingPoint := f.Int("stopping-point", 0, "the plan's stopping point `N` this ask is")
	var options repeated
	f.Var(&options, "option", "an answer a person may choose, its `LABEL` (repeat for each, 1 to 9)")
	file := f.String("file", "", "the `PATH` of the ask's JSON, - for stdin")
	conn, operands, err := f.connect(c, args, "the RUN id")
	if err != nil {
		return err
	}
	var body any
	switch {
	case *file != "" && (*prompt != "" || len(options) > 0):
		return f.fail("ask takes --file or --prompt and --option, not both")
	case *file != "":
		if body, err = f.readJSONObject(c, *file); err != nil {
			return err
		}
	case *prompt == "" || len(options) == 0:
		return f.fail("ask needs --prompt and one --option at least")
	default:
		in := ledger.AskInput{Prompt: *prompt, Options: map[string]string{}}
		if f.isSet("stopping-point") {
			in.StoppingPoint = stoppingPoint
		}
		for i, label := range options {
			in.Options[strconv.Itoa(i+1)] = label
		}
		body = in
	}
	return conn.call(ctx, http.MethodPost, runPath(operands[0], "asks"), body)
}

// runAgentCall is `madebook agent call`: POST /api/v1/runs/{id}/tool-calls.
func runAgentCall(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("call", "madebook agent call RUN --server S --tool T [--side-effecting] [--started-at TIME] [--step ID] [--path P …]",
		"Record a tool call on a run. The tool registry says whether the tool writes (a tool\n"+
			"nobody classified does); --side-effecting may only raise that. A parked run, a blocked\n"+
			"session, a path in a blocked scope or a step before its stopping point is refused.", false)
	var in ledger.ToolCallInput
	f.StringVar(&in.Tool, "tool", "", "the `TOOL` called")
	f.StringVar(&in.Server, "server", "", "the `SERVER` the tool is on: an MCP server's name, or the agent's for its own tools")
	sideEffecting := f.Bool("side-effecting", false, "the call writes (--side-effecting=false: it only reads)")
	startedAt := f.String("started-at", "", "when the call started, an RFC 3339 `TIME` (default now)")
	f.StringVar(&in.Step, "step", "", "on a run of a plan, the plan step `ID` the call runs")
	var paths repeated
	f.Var(&paths, "path", "a `PATH` the call touches (repeat for each)")
	conn, operands, err := f.connect(c, args, "the RUN id")
	if err != nil {
		return err
	}
	in.Paths = paths
	if in.Server == "" || in.Tool == "" {
		return f.fail("call needs --server and --tool")
	}
	if f.isSet("side-effecting") {
		in.SideEffecting = sideEffecting
	}
	if *startedAt != "" {
		at, err := time.Parse(time.RFC3339Nano, *startedAt)
		if err != nil {
			return f.fail("--started-at %q is not an RFC 3339 time, e.g. 2026-11-29T12:00:00Z", *startedAt)
		}
		in.StartedAt = &at
	}
	return conn.call(ctx, http.MethodPost, runPath(operands[0], "tool-calls"), in)
}

// runAgentChange is `madebook agent change`: POST /api/v1/sessions/{id}/changes.
func runAgentChange(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("change", "madebook agent change (PATH … | --file PATH)",
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
		return f.fail("change needs the changed files' paths or --file, one of them")
	}
	conn, err := f.conn(c)
	if err != nil {
		return err
	}
	var body any
	if *file != "" {
		if body, err = f.readJSONObject(c, *file); err != nil {
			return err
		}
	} else {
		in := change.Change{Dependencies: []string{}, SymbolsChanged: []string{}, SymbolsUsed: []string{}}
		for _, p := range rest {
			content, err := os.ReadFile(p)
			if err != nil {
				return f.fail("read %s: %v", p, err)
			}
			in.Files = append(in.Files, change.File{Path: p, Content: string(content)})
		}
		body = in
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("changes"), body)
}

// runAgentEvidence is `madebook agent evidence`: POST /api/v1/sessions/{id}/evidence.
func runAgentEvidence(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("evidence", "madebook agent evidence --kind K --passed[=false] [--detail D]",
		"Report evidence the mission's evidence gate asks for (its kinds, e.g. tests or review):\n"+
			"whether it passed, said either way (--passed or --passed=false).", true)
	var in governance.EvidenceInput
	f.StringVar(&in.Kind, "kind", "", "the evidence's `KIND`, e.g. tests")
	f.BoolVar(&in.Passed, "passed", false, "it passed (--passed=false: it failed)")
	f.StringVar(&in.Detail, "detail", "", "what was run and what it showed, the `DETAIL`")
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	if in.Kind == "" || !f.isSet("passed") {
		return f.fail("evidence needs --kind, and --passed or --passed=false")
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("evidence"), in)
}

// runAgentComplete is `madebook agent complete`: POST /api/v1/sessions/{id}/complete.
func runAgentComplete(ctx context.Context, c stdio, args []string) error {
	f := newAgentFlags("complete", "madebook agent complete [--session ID]",
		"Ask the evidence gate whether the session may complete: the answer says satisfied, or\n"+
			"unsatisfied with the evidence still missing.", true)
	conn, _, err := f.connect(c, args)
	if err != nil {
		return err
	}
	return conn.call(ctx, http.MethodPost, conn.sessionPath("complete"), struct{}{})
}
