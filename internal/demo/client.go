package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client calls the public HTTP API as the demo lead or the demo agent.
type client struct {
	base, lead, agent string
	http              *http.Client
	// gateAgo opens a gate as the demo agent as if age ago (Config.GateAgo).
	gateAgo func(ctx context.Context, session string, g Gate, age time.Duration) error
}

// call sends body as JSON with the secret and decodes the answer into out
// (unless nil), failing on any status but want.
func (c *client) call(ctx context.Context, secret, method, path string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// openSession opens a session on the mission as the agent and returns
// its id.
func (c *client) openSession(ctx context.Context, mission, title string) (string, error) {
	var s struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions",
		map[string]string{"mission": mission, "agent": agentName, "title": title}, http.StatusCreated, &s)
	return s.ID, err
}

// gate opens a gate on the session, as its agent, and returns its
// reference.
func (c *client) gate(ctx context.Context, session string, g Gate) (string, error) {
	var dec struct {
		Ref string `json:"ref"`
	}
	err := c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions/"+session+"/decisions", map[string]any{
		"title": g.Title, "question": g.Question, "proposal": g.Proposal, "blocked_scope": g.Blocked, "allowed_scope": g.Allowed,
	}, http.StatusCreated, &dec)
	return dec.Ref, err
}

// events reports lifecycle events on the session as its agent, in order.
func (c *client) events(ctx context.Context, session string, events ...map[string]any) error {
	for _, e := range events {
		if err := c.call(ctx, c.agent, http.MethodPost, "/api/v1/sessions/"+session+"/events", e, http.StatusOK, nil); err != nil {
			return err
		}
	}
	return nil
}
