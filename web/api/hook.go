package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/hook"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/web/httpx"
)

// handleHook serves POST /hooks/{executor} (agent): one hook event of the
// executor (claude-code, codex, gemini, copilot, cursor), answered by
// hook.Handle in one request. The body is the event as the command hook
// sends it (`madebook hook EXECUTOR`: Claude Code's fields and event
// names, with what the agent's machine adds), which is what Claude Code's
// own http hook sends to /hooks/claude-code. Its calls go straight to the
// services the REST routes call, as the caller, so both follow the same
// rules. The mission is the query parameter `mission`.
func handleHook(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		actor := httpx.Actor(c)
		executor, ok := hook.ExecutorOf(c.Param("executor"))
		if !ok {
			return errs.E(errs.NotFound, "executor_not_found", "Madebook has no hook for %q: the executors are %s.",
				c.Param("executor"), strings.Join(gate.Executors, ", "))
		}
		if err := actor.RequireAgent("answer a " + executor.Title + " hook"); err != nil {
			return err
		}
		body, err := io.ReadAll(c.Request().Body)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return httpx.TooLarge(tooBig.Limit)
		} else if err != nil {
			return errs.E(errs.Malformed, "malformed_json", "The body could not be read: %v.", err)
		}
		if !json.Valid(body) {
			return errs.E(errs.Malformed, "malformed_json", "The body is not valid JSON: send the hook's JSON, as the command hook does.")
		}
		in, err := hook.ParseInput(body)
		var ie *hook.InputError
		if errors.As(err, &ie) {
			return errs.E(errs.Invalid, ie.Code, "%s", ie.Msg).In(ie.Field)
		}
		mission := strings.TrimSpace(c.QueryParam("mission"))
		if mission == "" {
			return invalid("mission_required", "Name the mission in the hook's URL: /hooks/"+executor.Name+"?mission=SLUG.")
		}
		out := hook.Handle(c.Request().Context(), direct{d: d, actor: actor}, hook.Config{Executor: executor, Mission: mission}, in)
		return c.JSON(http.StatusOK, out)
	}
}

// direct is the hook's Madebook inside the server: each call is the
// service call its REST route makes, as the hook's caller, with the
// route's body read from the hook's (the same JSON).
type direct struct {
	d     Deps
	actor auth.Actor
}

// hookError is err as the hook reads a REST answer: a refusal with its
// status and code, or no answer for anything else (a 5xx).
func hookError(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errs.As(err); ok && httpx.Status(e.Kind) < http.StatusInternalServerError {
		return &hook.APIError{Status: httpx.Status(e.Kind), Code: e.Code, Message: e.Message}
	}
	return &hook.NoAnswer{Err: fmt.Errorf("in the server: it failed: %w", err)}
}

// as reads v into the body type T of a REST route, as the route would
// decode it.
func as[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, errs.E(errs.Invalid, "invalid_body", "The hook's call does not read as the route's body: %v.", err)
	}
	return out, nil
}

func (m direct) OpenSession(ctx context.Context, executor, mission, externalID, root string) (hook.Opened, error) {
	s, _, err := m.d.Gov.Sessions.Open(ctx, m.actor, governance.SessionInput{Mission: mission, Agent: executor,
		Title: hook.SessionTitle(executor, externalID), ExternalID: externalID, Root: root})
	if err != nil {
		return hook.Opened{}, hookError(err)
	}
	next, err := m.d.Gov.Briefs.Next(ctx, m.actor, s.ID)
	return hook.Opened{ID: s.ID, NextAction: next.NextAction.String(), Reason: next.Reason}, hookError(err)
}

func (m direct) Brief(ctx context.Context, session string) (hook.Brief, error) {
	return hook.TakeBrief(ctx, func(ctx context.Context, ack string) (hook.Brief, error) {
		enc, err := m.d.Gov.Briefs.BriefJSON(ctx, m.actor, governance.BriefRequest{Session: session, Ack: ack})
		if err != nil {
			return hook.Brief{}, hookError(err)
		}
		var b hook.Brief
		if err := json.Unmarshal(enc.Bytes(), &b); err != nil {
			return hook.Brief{}, hookError(err)
		}
		return b, nil
	})
}

func (m direct) Check(ctx context.Context, session string, req hook.CheckRequest) (hook.Verdict, error) {
	in, err := as[ledger.CheckInput](req)
	if err != nil {
		return hook.Verdict{}, hookError(err)
	}
	v, err := m.d.Ledger.Check(ctx, m.actor, session, in)
	if err != nil {
		return hook.Verdict{}, hookError(err)
	}
	return hook.Verdict{Allow: v.Allow, SideEffecting: v.SideEffecting, Reason: v.Reason, NextAction: v.NextAction, Watch: v.Watch}, nil
}

func (m direct) OpenRun(ctx context.Context, session, name, externalID string) (string, error) {
	r, _, err := m.d.Ledger.Start(ctx, m.actor, session, ledger.RunInput{Name: name, ExternalID: externalID})
	return r.ID, hookError(err)
}

// Attach re-attaches in one read (ledger.Reattach) when the session and
// its hook run exist as asked, and opens them as their routes do
// otherwise.
func (m direct) Attach(ctx context.Context, executor, mission, externalID, root string) (string, string, error) {
	session, run, ok, err := m.d.Ledger.Reattach(ctx, m.actor, mission, externalID, root)
	if ok || err != nil {
		return session, run, hookError(err)
	}
	s, err := m.OpenSession(ctx, executor, mission, externalID, root)
	if err != nil {
		return "", "", err
	}
	run, err = m.OpenRun(ctx, s.ID, executor, externalID)
	return s.ID, run, err
}

func (m direct) RecordToolCall(ctx context.Context, run string, call hook.ToolCall) error {
	in, err := as[ledger.ToolCallInput](call)
	if err == nil {
		_, err = m.d.Ledger.RecordToolCall(ctx, m.actor, run, in)
	}
	return hookError(err)
}

func (m direct) ReportBreach(ctx context.Context, run string, b hook.Breach) error {
	in, err := as[governance.ScopeBreachInput](b)
	if err == nil {
		_, err = m.d.Gov.ScopeBreaches.Report(ctx, m.actor, run, in)
	}
	return hookError(err)
}

func (m direct) ReportTranscript(ctx context.Context, run string, calls []hook.TranscriptCall) ([]hook.TranscriptCall, error) {
	in, err := as[governance.TranscriptInput](map[string]any{"calls": calls})
	if err != nil {
		return nil, hookError(err)
	}
	r, err := m.d.Gov.ScopeBreaches.ReportTranscript(ctx, m.actor, run, in)
	if err != nil {
		return nil, hookError(err)
	}
	found, err := as[[]hook.TranscriptCall](r.Ungoverned)
	return found, hookError(err)
}
