package agentops

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/ledger"
)

// The MCP tools' texts for the path's {id}.
const (
	sessionID = "The session's id (ses_…)."
	runID     = "The run's id (run_…)."
)

// Ops are the agent operations, in the order the MCP server lists its
// tools.
var Ops = []Op{
	row(Op{Name: "createSession", Method: http.MethodPost, Path: "/api/v1/sessions",
		Tool: "open_session", Description: "Open a Madebook session on a mission (POST /api/v1/sessions). Answers the session, " +
			"lifecycle IDLE; with an external_id you opened a session with before, it answers that session (re-attach).",
		CLI: "session open", Summary: "open a session on a mission and print it (its id is .id)"},
		func(ctx context.Context, s Services, a auth.Actor, _ string, in governance.SessionInput) (Answer, error) {
			sess, created, err := s.Gov.Sessions.Open(ctx, a, in)
			return Answer{Status: createdOr(created), Body: sess, Session: sess.ID}, err
		}),
	row(Op{Name: "takeBrief", Method: http.MethodPost, Path: "/brief",
		Tool: "brief", Description: "Take a brief (POST /brief): the next action, the open gates and remediations, and the people's " +
			"answers (resolutions, permissions) not yet delivered. Send the brief_id of your last brief as ack: what it " +
			"delivered is then acknowledged; what is not acknowledged within the delivery lease is delivered again " +
			"(redelivered: true). Take one before you start and whenever a reply's next_action is not CONTINUE.",
		CLI: "brief", Summary: "take a brief: the next action, and what a person sent back"},
		func(ctx context.Context, s Services, a auth.Actor, _ string, in governance.BriefRequest) (Answer, error) {
			enc, err := s.Gov.Briefs.BriefJSON(ctx, a, in)
			return Answer{Status: http.StatusOK, JSON: enc}, err
		}),
	row(Op{Name: "openDecision", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/decisions", ID: "session", IDText: sessionID,
		Tool: "open_decision", Description: "Open a decision gate a person must answer (POST …/decisions): name what it blocks and " +
			"what stays allowed. The next action becomes DECISION_REQUIRED until the answer is delivered by a brief.",
		CLI: "decide", Summary: "open a decision gate: a question a person answers"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in governance.DecisionInput) (Answer, error) {
			d, err := s.Gov.Decisions.Open(ctx, a, session, in)
			return Answer{Status: http.StatusCreated, Body: d, Session: session}, err
		}),
	row(Op{Name: "proposePlan", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/plan", ID: "session", IDText: sessionID,
		Tool: "propose_plan", Description: "Propose the session's execution plan (POST …/plan): proposed on a high-risk mission " +
			"(it waits for a lead), approved otherwise.",
		CLI: "plan", Summary: "propose the session's plan (JSON from --file, or --summary alone)"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in Plan) (Answer, error) {
			p, err := s.Gov.Plans.Propose(ctx, a, session, in.Input())
			return Answer{Status: http.StatusCreated, Body: p, Session: session}, err
		}),
	row(Op{Name: "reportChange", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/changes", ID: "session", IDText: sessionID,
		Tool: "report_change", Description: "Report the session's whole change so far (POST …/changes): policy violations, rule " +
			"deviations, contract breaches, collisions and the risk it carries.",
		CLI: "change", Summary: "report the session's whole change so far (files, or JSON from --file)"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in change.Change) (Answer, error) {
			res, err := s.Gov.Changes.Report(ctx, a, session, in)
			return Answer{Status: http.StatusOK, Body: res, Session: session}, err
		}),
	row(Op{Name: "reportLifecycleEvent", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/events", ID: "session", IDText: sessionID,
		Tool: "report_event", Description: "Report a lifecycle event (POST …/events): answers the state after it and every " +
			"transition taken; an event the state does not allow is refused (transition_not_allowed, naming those allowed).",
		CLI: "event", Summary: "report a lifecycle event (task.created, …)"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in governance.EventInput) (Answer, error) {
			r, err := s.Gov.Lifecycle.Report(ctx, a, session, in)
			return Answer{Status: http.StatusOK, Body: r, Session: session}, err
		}),
	row(Op{Name: "startRun", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/runs", ID: "session", IDText: sessionID,
		Tool: "start_run", Description: "Start a run of work on the session (POST …/runs); with an external_id the session " +
			"already gave a run, it answers that run (re-attach).",
		CLI: "run start", Summary: "start a run in the session and print it (its id is .id)"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in ledger.RunInput) (Answer, error) {
			r, created, err := s.Ledger.Start(ctx, a, session, in)
			return Answer{Status: createdOr(created), Body: r, Session: r.Session}, err
		}),
	row(Op{Name: "recordAsk", Method: http.MethodPost, Path: "/api/v1/runs/{id}/asks", ID: "run",
		IDText: "The run's id (run_…); it parks until a person answers.",
		Tool:   "ask", Description: "Ask a person a numbered question on a run (POST /api/v1/runs/{id}/asks): the run parks until " +
			"it is answered, and side-effecting calls on it are refused meanwhile.",
		CLI: "ask", Summary: "ask a person a question on a run (the run parks until answered)"},
		func(ctx context.Context, s Services, a auth.Actor, run string, in ledger.AskInput) (Answer, error) {
			q, err := s.Ledger.RecordAsk(ctx, a, run, in)
			return Answer{Status: http.StatusCreated, Body: q, Run: q.Run}, err
		}),
	row(Op{Name: "recordToolCall", Method: http.MethodPost, Path: "/api/v1/runs/{id}/tool-calls", ID: "run", IDText: runID,
		Tool: "record_tool_call", Description: "Record a tool call a run made (POST /api/v1/runs/{id}/tool-calls). A " +
			"side-effecting call on a parked run, or outside execution on a tracked session, is refused.",
		CLI: "call", Summary: "record a tool call on a run"},
		func(ctx context.Context, s Services, a auth.Actor, run string, in ToolCall) (Answer, error) {
			call, err := in.Input()
			if err != nil {
				return Answer{}, err
			}
			c, err := s.Ledger.RecordToolCall(ctx, a, run, call)
			return Answer{Status: http.StatusCreated, Body: c, Run: c.Run}, err
		}),
	row(Op{Name: "finishRun", Method: http.MethodPatch, Path: "/api/v1/runs/{id}", ID: "run",
		IDText: "The run's id (run_…), as start_run answered it.",
		Tool:   "finish_run", Description: "Finish a run with its outcome (PATCH /api/v1/runs/{id}); refused while it waits on an ask.",
		CLI: "run finish", Summary: "finish a run with its status"},
		func(ctx context.Context, s Services, a auth.Actor, run string, in RunFinish) (Answer, error) {
			r, err := s.Ledger.FinishRun(ctx, a, run, in.Status)
			return Answer{Status: http.StatusOK, Body: r, Session: r.Session}, err
		}),
	row(Op{Name: "reportEvidence", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/evidence", ID: "session", IDText: sessionID,
		Tool: "report_evidence", Description: "Report evidence you produced (POST …/evidence): tests, a review, …",
		CLI: "evidence", Summary: "report evidence (tests, review, …) that passed or failed"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in governance.EvidenceInput) (Answer, error) {
			err := s.Gov.Evidence.Report(ctx, a, session, in)
			return Answer{Status: http.StatusCreated, Body: map[string]any{"kind": in.Kind, "passed": in.Passed}, Session: session}, err
		}),
	row(Op{Name: "reportComplete", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/complete", ID: "session",
		IDText: "The session's id (ses_…), as open_session answered it.", Optional: true,
		Tool: "complete", Description: "Report the implementation complete (POST …/complete): answers the mission's evidence gate, " +
			"satisfied or not and what is missing. You never mark the mission complete yourself.",
		CLI: "complete", Summary: "ask the evidence gate whether the session may complete"},
		func(ctx context.Context, s Services, a auth.Actor, session string, _ Empty) (Answer, error) {
			g, err := s.Gov.Evidence.Complete(ctx, a, session)
			return Answer{Status: http.StatusOK, Body: g, Session: session}, err
		}),
	// The calls a coding agent's hook makes (internal/hook), over REST only.
	row(Op{Name: "checkToolCall", Method: http.MethodPost, Path: "/api/v1/sessions/{id}/tool-calls/check", ID: "session"},
		func(ctx context.Context, s Services, a auth.Actor, session string, in ledger.CheckInput) (Answer, error) {
			v, err := s.Ledger.Check(ctx, a, session, in)
			if err != nil {
				return Answer{}, err
			}
			b, err := json.Marshal(v) // it carries its own next_action and reason
			return Answer{Status: http.StatusOK, JSON: [][]byte{b}}, err
		}),
	row(Op{Name: "reportBreach", Method: http.MethodPost, Path: "/api/v1/runs/{id}/breaches", ID: "run"},
		func(ctx context.Context, s Services, a auth.Actor, run string, in governance.ScopeBreachInput) (Answer, error) {
			b, err := s.Gov.ScopeBreaches.Report(ctx, a, run, in)
			return Answer{Status: http.StatusCreated, Body: b, Session: b.Session}, err
		}),
	row(Op{Name: "reportTranscript", Method: http.MethodPost, Path: "/api/v1/runs/{id}/transcript", ID: "run"},
		func(ctx context.Context, s Services, a auth.Actor, run string, in governance.TranscriptInput) (Answer, error) {
			r, err := s.Gov.ScopeBreaches.ReportTranscript(ctx, a, run, in)
			return Answer{Status: http.StatusOK, Body: r, Run: run}, err
		}),
}

// createdOr is the status of a call that opens a thing or re-attaches to
// the one its external id names: 201 Created, or 200 OK.
func createdOr(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}
