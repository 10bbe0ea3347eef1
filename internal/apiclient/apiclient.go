// Package apiclient is the HTTP client of Madebook's agent calls, shared
// by `madebook agent …` and the Claude Code hook: one JSON request with
// the agent key as bearer, one JSON answer, and errors that tell a call
// Madebook refused from one it never answered.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxReply is the largest answer a call reads (a brief carries the
// protocol text: kilobytes, not megabytes).
const MaxReply = 16 << 20

// Client sends agent calls to one Madebook as one agent key.
type Client struct {
	// Base is Madebook's base URL, without a trailing slash.
	Base string
	// Key is the agent key, sent as `Authorization: Bearer …`.
	Key string
	// Timeout bounds one call, from connecting to the last byte of the
	// answer; 0 is no bound beyond the context's.
	Timeout time.Duration
	// Transport carries the requests; nil is http.DefaultTransport.
	Transport http.RoundTripper
}

// NotAnswered is a call Madebook did not answer: it could not be reached,
// or it did not answer in time.
type NotAnswered struct {
	Base string
	Err  error
}

func (e *NotAnswered) Error() string {
	return fmt.Sprintf("Madebook does not answer at %s: %v", e.Base, e.Err)
}

func (e *NotAnswered) Unwrap() error { return e.Err }

// Refused is a call Madebook answered with a status that is not 2xx.
type Refused struct {
	Method, Path string
	Status       int
	// Code and Message are the API's error, "" when the answer was not
	// the API's error body.
	Code, Message string
	// Body is the answer as received.
	Body []byte
}

// Error says what the API said: its error code and message, or, for an
// answer that is not the API's error, its status and the start of its body.
func (e *Refused) Error() string {
	if e.Code != "" {
		return e.Code + ": " + e.Message
	}
	text := strings.TrimSpace(string(e.Body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return fmt.Sprintf("%s %s: HTTP %d, not an answer of Madebook's API: %q", e.Method, e.Path, e.Status, text)
}

// Call sends one agent call with body as its JSON (a json.RawMessage is
// sent as it is) and returns the answer's body. A redirect is reported,
// not followed. Errors: *NotAnswered when Madebook did not answer,
// *Refused for an answer that is not 2xx, and a plain error for an answer
// it could not read.
func (c *Client) Call(ctx context.Context, method, path string, body any) ([]byte, error) {
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, bytes.NewReader(buf))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Key)
	// A redirect is not the API's answer: report it, do not follow it.
	client := &http.Client{Transport: c.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &NotAnswered{Base: c.Base, Err: err}
	}
	defer res.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(res.Body, MaxReply+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if len(reply) > MaxReply {
		return nil, fmt.Errorf("%s %s: the answer is over %d MiB", method, path, MaxReply>>20)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		r := &Refused{Method: method, Path: path, Status: res.StatusCode, Body: reply}
		var env struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(reply, &env) == nil && env.Error.Code != "" {
			r.Code, r.Message = env.Error.Code, env.Error.Message
		}
		return nil, r
	}
	return reply, nil
}
