package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/madebook/madebook/internal/apiclient"
)

// Client is Madebook over its REST API: the agent calls, made with
// apiclient, and the whole event in one request (Event).
type Client struct {
	API *apiclient.Client
}

// call sends one call and decodes its answer into out (nil: ignored),
// turning apiclient's errors into the hook's: *NoAnswer for no answer or a
// 5xx, *APIError for a refusal.
func (c Client) call(ctx context.Context, path string, body, out any) error {
	reply, err := c.API.Call(ctx, http.MethodPost, path, body)
	var (
		na  *apiclient.NotAnswered
		ref *apiclient.Refused
	)
	switch {
	case errors.As(err, &na):
		return &NoAnswer{Err: fmt.Errorf("at %s: %w", na.Base, na.Err)}
	case errors.As(err, &ref) && ref.Status >= 500:
		return &NoAnswer{Err: fmt.Errorf("it failed (HTTP %d) at %s: %w", ref.Status, c.API.Base, ref)}
	case errors.As(err, &ref):
		if ref.Code == "" {
			return &NoAnswer{Err: ref} // not Madebook's answer: a proxy, a wrong URL
		}
		return &APIError{Status: ref.Status, Code: ref.Code, Message: ref.Message}
	case err != nil:
		return &NoAnswer{Err: err}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(reply, out); err != nil {
		return &NoAnswer{Err: fmt.Errorf("POST %s: the answer is not what Madebook answers: %w", path, err)}
	}
	return nil
}

// OpenSession is POST /api/v1/sessions with an external_id, the
// executor as the agent.
func (c Client) OpenSession(ctx context.Context, executor, mission, externalID, root string) (Opened, error) {
	var s Opened
	body := map[string]string{"mission": mission, "agent": executor, "title": SessionTitle(executor, externalID), "external_id": externalID}
	if root != "" {
		body["root"] = root
	}
	err := c.call(ctx, "/api/v1/sessions", body, &s)
	return s, err
}

// SessionTitle is the title of the session the hook opens for the
// executor's session externalID: "Codex session 019a…".
func SessionTitle(executor, externalID string) string {
	title := executor
	if e, ok := ExecutorOf(executor); ok {
		title = e.Title
	}
	return title + " session " + externalID
}

// Brief is POST /brief, acknowledged as TakeBrief says.
func (c Client) Brief(ctx context.Context, session string) (Brief, error) {
	return TakeBrief(ctx, func(ctx context.Context, ack string) (Brief, error) {
		var b Brief
		body := map[string]string{"session": session}
		if ack != "" {
			body["ack"] = ack
		}
		err := c.call(ctx, "/brief", body, &b)
		return b, err
	})
}

// TakeBrief takes a brief with brief (ack: the id of the brief to
// acknowledge, "" for none). The hook is where the agent receives its
// brief, so what a brief hands over is acknowledged at once (a second
// brief with its id as ack): a lead's answer shown to Claude is not shown
// again when the delivery lease runs out. Anything the acknowledging
// brief hands over is shown too (and, unacknowledged, comes back after its
// lease); if it fails, the first brief stands.
func TakeBrief(ctx context.Context, brief func(ctx context.Context, ack string) (Brief, error)) (Brief, error) {
	b, err := brief(ctx, "")
	if err != nil {
		return b, err
	}
	if b.BriefID == "" || len(b.Resolutions)+len(b.Permissions)+len(b.Remediations) == 0 {
		return b, nil
	}
	if next, err := brief(ctx, b.BriefID); err == nil {
		b.Resolutions = append(b.Resolutions, next.Resolutions...)
		b.Permissions = append(b.Permissions, next.Permissions...)
	}
	return b, nil
}

// Check is POST /api/v1/sessions/{id}/tool-calls/check.
func (c Client) Check(ctx context.Context, session string, req CheckRequest) (Verdict, error) {
	var v Verdict
	err := c.call(ctx, "/api/v1/sessions/"+url.PathEscape(session)+"/tool-calls/check", req, &v)
	return v, err
}

// OpenRun is POST /api/v1/sessions/{id}/runs with an external_id.
func (c Client) OpenRun(ctx context.Context, session, name, externalID string) (string, error) {
	var r struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, "/api/v1/sessions/"+url.PathEscape(session)+"/runs",
		map[string]string{"name": name, "external_id": externalID}, &r)
	return r.ID, err
}

// Attach is OpenSession, then OpenRun of the hook's run.
func (c Client) Attach(ctx context.Context, executor, mission, externalID, root string) (session, run string, err error) {
	s, err := c.OpenSession(ctx, executor, mission, externalID, root)
	if err != nil {
		return "", "", err
	}
	run, err = c.OpenRun(ctx, s.ID, executor, externalID)
	return s.ID, run, err
}

// RecordToolCall is POST /api/v1/runs/{id}/tool-calls.
func (c Client) RecordToolCall(ctx context.Context, run string, call ToolCall) error {
	return c.call(ctx, "/api/v1/runs/"+url.PathEscape(run)+"/tool-calls", call, nil)
}

// ReportTranscript is POST /api/v1/runs/{id}/transcript.
func (c Client) ReportTranscript(ctx context.Context, run string, calls []TranscriptCall) ([]TranscriptCall, error) {
	var out struct {
		Ungoverned []TranscriptCall `json:"ungoverned"`
	}
	err := c.call(ctx, "/api/v1/runs/"+url.PathEscape(run)+"/transcript", map[string]any{"calls": calls}, &out)
	return out.Ungoverned, err
}

// Event is POST /hooks/{executor}?mission=…: the whole event in one
// request, answered by Handle in the server.
func (c Client) Event(ctx context.Context, executor, mission string, in Input) (Output, error) {
	var out Output
	err := c.call(ctx, "/hooks/"+url.PathEscape(executor)+"?mission="+url.QueryEscape(mission), in, &out)
	return out, err
}

// ReportBreach is POST /api/v1/runs/{id}/breaches.
func (c Client) ReportBreach(ctx context.Context, run string, b Breach) error {
	return c.call(ctx, "/api/v1/runs/"+url.PathEscape(run)+"/breaches", b, nil)
}
