package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/internal/plan"
	"github.com/madebook/madebook/internal/ratelimit"
	"github.com/madebook/madebook/web/httpx"
)

// The tools' inputs: the REST bodies' fields, plus the session or run the
// REST path names. A field without omitempty is required by the schema.

type openSessionIn struct {
	Mission string `json:"mission" jsonschema:"The slug of the mission to work on (a lead created it)."`
	Agent   string `json:"agent,omitempty" jsonschema:"The agent's name; the agent key's name when left out."`
	Title   string `json:"title,omitempty" jsonschema:"What this session is about, in a few words."`
	// ExternalID is the REST body's external_id.
	ExternalID string `json:"external_id,omitempty" jsonschema:"Your client's own id for this session (e.g. Claude Code's session id), at most 200 characters: opening again with the same id answers the session it opened (re-attach) instead of a new one."`
}

type sessionIn struct {
	Session string `json:"session" jsonschema:"The session's id (ses_…), as open_session answered it."`
}

type briefIn struct {
	Session string `json:"session" jsonschema:"The session's id (ses_…), as open_session answered it."`
	Ack     string `json:"ack,omitempty" jsonschema:"The brief_id of your last brief (brf_…): acknowledges what it delivered."`
}

type decisionIn struct {
	Session      string   `json:"session" jsonschema:"The session's id (ses_…)."`
	Title        string   `json:"title" jsonschema:"The gate's title, a few words."`
	Question     string   `json:"question" jsonschema:"The question a person must answer."`
	Proposal     string   `json:"proposal,omitempty" jsonschema:"What you propose, if anything."`
	BlockedScope []string `json:"blocked_scope,omitempty" jsonschema:"What you will not touch until it is answered: paths or areas, at most 20."`
	AllowedScope []string `json:"allowed_scope,omitempty" jsonschema:"What you may still work on meanwhile, at most 20."`
}

type planIn struct {
	Session        string               `json:"session" jsonschema:"The session's id (ses_…)."`
	Summary        string               `json:"summary" jsonschema:"The plan in a few sentences."`
	InitialSteps   []plan.Step          `json:"initial_steps,omitempty" jsonschema:"The steps that run first. A side-effecting step here, before any stopping point, is refused (side_effect_before_gate)."`
	StoppingPoints []plan.StoppingPoint `json:"stopping_points,omitempty" jsonschema:"Where a run parks for a person; each option's steps run only once that option is picked."`
}

type changeIn struct {
	Session        string        `json:"session" jsonschema:"The session's id (ses_…)."`
	Files          []change.File `json:"files" jsonschema:"Every file the change touches so far, with its content or diff: each report replaces the last."`
	Dependencies   []string      `json:"dependencies,omitempty" jsonschema:"Dependencies the change adds."`
	SymbolsChanged []string      `json:"symbols_changed,omitempty" jsonschema:"Symbols the change modifies."`
	SymbolsUsed    []string      `json:"symbols_used,omitempty" jsonschema:"Symbols the change builds on."`
}

type eventIn struct {
	Session string          `json:"session" jsonschema:"The session's id (ses_…)."`
	Name    string          `json:"name" jsonschema:"The lifecycle event: user.message.created, IntentClassified, DirectModeEntered, DirectModeExited, reply.sent, architecture.impact.completed, architecture.plan.updated, task.created, task.progress, task.completed, task.failed, task.blocked, requirement.changed or permission.prompt.requested."`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"The event's payload, e.g. {\"intent\":\"task\"} for IntentClassified, {\"level\":\"architecture\"} for architecture.impact.completed, a plan (summary, initial_steps, stopping_points) for architecture.plan.updated."`
}

type runIn struct {
	Session string `json:"session" jsonschema:"The session's id (ses_…)."`
	Name    string `json:"name" jsonschema:"The run's name."`
	Parent  string `json:"parent,omitempty" jsonschema:"The id of the run this one runs under (run_…), if any."`
	Plan    bool   `json:"plan,omitempty" jsonschema:"Execute the session's approved plan: each tool call then names its step, and a step behind a stopping point runs only after that stopping point's ask is answered with its option."`
	// ExternalID is the REST body's external_id.
	ExternalID string `json:"external_id,omitempty" jsonschema:"Your client's own id for this run (e.g. a subagent's id), at most 200 characters: starting again with the same id answers the run it started (re-attach). Not with plan: a run that executes the plan is always new."`
}

type finishIn struct {
	Run    string `json:"run" jsonschema:"The run's id (run_…), as start_run answered it."`
	Status string `json:"status" jsonschema:"How it ended: complete, partial, blocked, failed or cancelled."`
}

type askIn struct {
	Run     string            `json:"run" jsonschema:"The run's id (run_…); it parks until a person answers."`
	Prompt  string            `json:"prompt" jsonschema:"The question."`
	Options map[string]string `json:"options" jsonschema:"The numbered options, keys 1 to 9, e.g. {\"1\":\"Yes\",\"2\":\"No\"}."`
	// StoppingPoint is a pointer: 0 is no stopping point's id to assume.
	StoppingPoint *int `json:"stopping_point,omitempty" jsonschema:"The stopping point of the plan this ask is: of the plan the run executes, or, on a run of no plan (e.g. one a Claude Code session starts under its hook run to ask it), of the session's approved plan. Answering option N releases that option's steps for the whole plan."`
}

type toolCallIn struct {
	Run           string   `json:"run" jsonschema:"The run's id (run_…)."`
	Server        string   `json:"server" jsonschema:"The MCP server (or tool family) the call went to."`
	Tool          string   `json:"tool" jsonschema:"The tool called."`
	SideEffecting *bool    `json:"side_effecting,omitempty" jsonschema:"Whether the call writes; left out, the tool registry decides, and an unclassified tool writes."`
	StartedAt     *string  `json:"started_at,omitempty" jsonschema:"When the call started, RFC 3339; now when left out."`
	Step          string   `json:"step,omitempty" jsonschema:"On a run executing the plan, the plan step this call runs."`
	Paths         []string `json:"paths,omitempty" jsonschema:"The paths the call touches, relative to the repository: compared with the blocked scope."`
}

type evidenceIn struct {
	Session string `json:"session" jsonschema:"The session's id (ses_…)."`
	Kind    string `json:"kind" jsonschema:"The kind of evidence, e.g. tests, review, lint."`
	Passed  bool   `json:"passed" jsonschema:"Whether it passed."`
	Detail  string `json:"detail,omitempty" jsonschema:"A line of detail, e.g. 212 passed."`
}

// tools are the MCP tools, each calling the service its REST handler
// calls.
type tools struct{ Deps }

// reply is what a tool answers: the structured content (the REST answer
// with next_action and reason) and the next action for the text.
type reply struct {
	body any
	next governance.Next
}

func (t tools) register(s *sdk.Server) {
	add(t, s, "open_session", "Open a Madebook session on a mission (POST /api/v1/sessions). Answers the session, "+
		"lifecycle IDLE; with an external_id you opened a session with before, it answers that session (re-attach).",
		func(ctx context.Context, a auth.Actor, in openSessionIn) (reply, error) {
			sess, _, err := t.Gov.Sessions.Open(ctx, a, governance.SessionInput{Mission: in.Mission, Agent: in.Agent, Title: in.Title,
				ExternalID: in.ExternalID})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, sess.ID, sess)
		})
	add(t, s, "brief", "Take a brief (POST /brief): the next action, the open gates and remediations, and the people's "+
		"answers (resolutions, permissions) not yet delivered. Send the brief_id of your last brief as ack: what it "+
		"delivered is then acknowledged; what is not acknowledged within the delivery lease is delivered again "+
		"(redelivered: true). Take one before you start and whenever a reply's next_action is not CONTINUE.",
		func(ctx context.Context, a auth.Actor, in briefIn) (reply, error) {
			b, err := t.Gov.Briefs.Brief(ctx, a, governance.BriefRequest{Session: in.Session, Ack: in.Ack})
			if err != nil {
				return reply{}, err
			}
			return reply{body: b, next: governance.Next{NextAction: b.NextAction, Reason: b.Reason}}, nil
		})
	add(t, s, "open_decision", "Open a decision gate a person must answer (POST …/decisions): name what it blocks and "+
		"what stays allowed. The next action becomes DECISION_REQUIRED until the answer is delivered by a brief.",
		func(ctx context.Context, a auth.Actor, in decisionIn) (reply, error) {
			d, err := t.Gov.Decisions.Open(ctx, a, in.Session, governance.DecisionInput{Title: in.Title, Question: in.Question,
				Proposal: in.Proposal, BlockedScope: in.BlockedScope, AllowedScope: in.AllowedScope})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, d)
		})
	add(t, s, "propose_plan", "Propose the session's execution plan (POST …/plan): proposed on a high-risk mission "+
		"(it waits for a lead), approved otherwise.",
		func(ctx context.Context, a auth.Actor, in planIn) (reply, error) {
			p, err := t.Gov.Plans.Propose(ctx, a, in.Session, governance.PlanInput{Summary: in.Summary,
				Plan: plan.Plan{InitialSteps: in.InitialSteps, StoppingPoints: in.StoppingPoints}})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, p)
		})
	add(t, s, "report_change", "Report the session's whole change so far (POST …/changes): policy violations, rule "+
		"deviations, contract breaches, collisions and the risk it carries.",
		func(ctx context.Context, a auth.Actor, in changeIn) (reply, error) {
			res, err := t.Gov.Changes.Report(ctx, a, in.Session, change.Change{Files: in.Files, Dependencies: in.Dependencies,
				SymbolsChanged: in.SymbolsChanged, SymbolsUsed: in.SymbolsUsed})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, res)
		})
	add(t, s, "report_event", "Report a lifecycle event (POST …/events): answers the state after it and every "+
		"transition taken; an event the state does not allow is refused (transition_not_allowed, naming those allowed).",
		func(ctx context.Context, a auth.Actor, in eventIn) (reply, error) {
			r, err := t.Gov.Lifecycle.Report(ctx, a, in.Session, governance.EventInput{Name: in.Name, Payload: in.Payload})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, r)
		})
	add(t, s, "start_run", "Start a run of work on the session (POST …/runs); with an external_id the session "+
		"already gave a run, it answers that run (re-attach).",
		func(ctx context.Context, a auth.Actor, in runIn) (reply, error) {
			r, _, err := t.Ledger.Start(ctx, a, in.Session, ledger.RunInput{Name: in.Name, Parent: in.Parent,
				ExternalID: in.ExternalID, Plan: in.Plan})
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, r.Session, r)
		})
	add(t, s, "ask", "Ask a person a numbered question on a run (POST /api/v1/runs/{id}/asks): the run parks until "+
		"it is answered, and side-effecting calls on it are refused meanwhile.",
		func(ctx context.Context, a auth.Actor, in askIn) (reply, error) {
			q, err := t.Ledger.RecordAsk(ctx, a, in.Run, ledger.AskInput{Prompt: in.Prompt, Options: in.Options,
				StoppingPoint: in.StoppingPoint})
			if err != nil {
				return reply{}, err
			}
			return t.aboutRun(ctx, a, q.Run, q)
		})
	add(t, s, "record_tool_call", "Record a tool call a run made (POST /api/v1/runs/{id}/tool-calls). A "+
		"side-effecting call on a parked run, or outside execution on a tracked session, is refused.",
		func(ctx context.Context, a auth.Actor, in toolCallIn) (reply, error) {
			call := ledger.ToolCallInput{Server: in.Server, Tool: in.Tool, SideEffecting: in.SideEffecting, Step: in.Step,
				Site: ledger.Site{Paths: in.Paths}}
			if in.StartedAt != nil {
				at, err := ledger.ParseStartedAt(*in.StartedAt)
				if err != nil {
					return reply{}, err
				}
				call.StartedAt = &at
			}
			c, err := t.Ledger.RecordToolCall(ctx, a, in.Run, call)
			if err != nil {
				return reply{}, err
			}
			return t.aboutRun(ctx, a, c.Run, c)
		})
	add(t, s, "finish_run", "Finish a run with its outcome (PATCH /api/v1/runs/{id}); refused while it waits on an ask.",
		func(ctx context.Context, a auth.Actor, in finishIn) (reply, error) {
			r, err := t.Ledger.FinishRun(ctx, a, in.Run, in.Status)
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, r.Session, r)
		})
	add(t, s, "report_evidence", "Report evidence you produced (POST …/evidence): tests, a review, …",
		func(ctx context.Context, a auth.Actor, in evidenceIn) (reply, error) {
			if err := t.Gov.Evidence.Report(ctx, a, in.Session, governance.EvidenceInput{Kind: in.Kind, Passed: in.Passed,
				Detail: in.Detail}); err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, map[string]any{"kind": in.Kind, "passed": in.Passed})
		})
	add(t, s, "complete", "Report the implementation complete (POST …/complete): answers the mission's evidence gate, "+
		"satisfied or not and what is missing. You never mark the mission complete yourself.",
		func(ctx context.Context, a auth.Actor, in sessionIn) (reply, error) {
			g, err := t.Gov.Evidence.Complete(ctx, a, in.Session)
			if err != nil {
				return reply{}, err
			}
			return t.about(ctx, a, in.Session, g)
		})
}

// about is the reply to a call about a session: the answer with the
// session's next action beside its fields, delivering nothing.
func (t tools) about(ctx context.Context, a auth.Actor, session string, answer any) (reply, error) {
	next, err := t.Gov.Briefs.Next(ctx, a, session)
	if err != nil {
		return reply{}, err
	}
	return reply{body: governance.Reply{Answer: answer, Next: next}, next: next}, nil
}

// aboutRun is about for a call about a run: its session's next action.
func (t tools) aboutRun(ctx context.Context, a auth.Actor, run string, answer any) (reply, error) {
	next, err := t.Gov.Briefs.NextOfRun(ctx, a, run)
	if err != nil {
		return reply{}, err
	}
	return reply{body: governance.Reply{Answer: answer, Next: next}, next: next}, nil
}

// toolClass is what a call of the named tool costs against its key's rate
// limits, as its REST route does.
func toolClass(name string) ratelimit.Class {
	switch name {
	case "open_session":
		return ratelimit.Session
	case "brief":
		return ratelimit.Read
	default:
		return ratelimit.Write
	}
}

// schemaTypes are the schemas of the input types jsonschema.For cannot
// infer: a payload (json.RawMessage) is an object.
var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Type: "object"},
}

// add registers one tool: its input schema is derived from In (the
// jsonschema tags are the fields' descriptions). The SDK validates
// nothing: the arguments are decoded as REST decodes a body
// (httpx.DecodeBody: an unknown field, a value of the wrong type) and
// the service checks them (a field missing), so a tool refuses what REST
// refuses with the same code and message. It answers the reply as
// structured content and as two text blocks, "NEXT_ACTION: reason" first
// and the reply's JSON (for clients that show the model only text); an
// error as a tool error whose text and structured content are the REST
// error body.
func add[In any](t tools, s *sdk.Server, name, description string, do func(context.Context, auth.Actor, In) (reply, error)) {
	schema, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: schemaTypes})
	if err != nil {
		panic(fmt.Sprintf("mcp: the input schema of %s: %v", name, err))
	}
	s.AddTool(&sdk.Tool{Name: name, Description: description, InputSchema: schema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := actorOf(req.Extra)
			if err == nil {
				err = t.Limits.Allow(httpx.Credential(a), toolClass(name), time.Now())
			}
			var r reply
			if err == nil {
				var in In
				if err = httpx.DecodeBody(arguments(req), &in); err == nil {
					r, err = do(ctx, a, in)
				}
			}
			if err != nil {
				body := t.errorBody(ctx, name, err)
				text, jerr := jsonText(body)
				if jerr != nil {
					return nil, jerr
				}
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}},
					StructuredContent: body}, nil
			}
			answer, err := jsonText(r.body)
			if err != nil {
				return nil, fmt.Errorf("encode the answer of %s: %w", name, err)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: fmt.Sprintf("%s: %s", r.next.NextAction, r.next.Reason)},
				&sdk.TextContent{Text: answer}}, StructuredContent: json.RawMessage(answer)}, nil
		})
}

// arguments are a call's arguments as JSON: none at all read as {} (a
// tool whose fields are all optional may be called without any).
func arguments(req *sdk.CallToolRequest) []byte {
	if req.Params == nil {
		return []byte("{}")
	}
	raw := bytes.TrimSpace(req.Params.Arguments)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []byte("{}")
	}
	return raw
}
