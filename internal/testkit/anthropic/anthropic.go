// Package anthropic is a scripted Anthropic Messages API on loopback, for
// running a real agent CLI (Claude Code) offline in tests: an httptest
// server that answers POST /v1/messages as the real API does, streaming
// server-sent events (message_start, content_block_start,
// content_block_delta with text_delta or input_json_delta,
// content_block_stop, message_delta with the stop_reason and usage,
// message_stop) or, for a request without "stream", one JSON message.
// Every other path is a 404 in the API's error shape.
//
// The model is a Go function of the request (its model, system prompt and
// messages) that returns the reply: text and tool_use blocks. Write it
// stateless, from the conversation the request carries (Turn, LastToolResult,
// Subagent, …): the CLI may retry a request, and a subagent's requests
// arrive concurrently with the main agent's. Requests the CLI makes on the
// side (Side: a small model, no tools) get a harmless text answer without
// reaching the scenario.
//
// Every request is logged; Server.Dump prints them for a failing test.
package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Block is a content block of a message, as the API spells it: "text",
// "tool_use" (ID, Name, Input), "tool_result" (ToolUseID, Content,
// IsError) or any other type (Raw keeps it whole).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool_result's content: a string or a list of blocks.
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Raw is the block as it was sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw block beside its fields.
func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*b = Block(p)
	b.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// ResultText is a tool_result's content as text: the string, or its text
// blocks joined by newlines.
func (b Block) ResultText() string {
	return textOf(b.Content)
}

// textOf reads a content that is a string or a list of blocks as text.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, b.ResultText())
		}
	}
	return strings.Join(parts, "\n")
}

// Message is one message of the conversation; Content is always a list
// (a string content is read as one text block).
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// UnmarshalJSON reads a content that is a string or a list of blocks.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	m.Content = nil
	var s string
	if err := json.Unmarshal(raw.Content, &s); err == nil {
		m.Content = []Block{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// Text is the message's text blocks and tool results, joined by newlines.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, b.ResultText())
		}
	}
	return strings.Join(parts, "\n")
}

// Tool is a tool the request offers the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Request is one request the CLI sent.
type Request struct {
	// N numbers the server's requests from 1.
	N int `json:"-"`
	// At is when it arrived.
	At     time.Time   `json:"-"`
	Method string      `json:"-"`
	Path   string      `json:"-"`
	Header http.Header `json:"-"`
	// Body is the request's body, whole.
	Body []byte `json:"-"`

	// The Messages API's fields (zero for another path).
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools"`
	// System is the system prompt as text (its text blocks joined).
	System string `json:"-"`
}

// parse reads the body of a POST /v1/messages.
func (r *Request) parse() error {
	var sys struct {
		System json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal(r.Body, r); err != nil {
		return err
	}
	if err := json.Unmarshal(r.Body, &sys); err != nil {
		return err
	}
	r.System = textOf(sys.System)
	return nil
}

// HasTool reports whether the request offers the tool.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolNames are the names of the tools the request offers.
func (r *Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// Turn is how many assistant messages the conversation holds: 0 on its
// first request, 1 once the model has answered once (with a tool call,
// say), and so on.
func (r *Request) Turn() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// FirstUserText is the text of the conversation's first user message.
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Text()
		}
	}
	return ""
}

// LastUserText is the text of the conversation's last user message (tool
// results included).
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// AllText is every message's text, tool calls' inputs and results
// included, and the system prompt: what the model has in its context.
func (r *Request) AllText() string {
	var s strings.Builder
	s.WriteString(r.System)
	for _, m := range r.Messages {
		for _, b := range m.Content {
			s.WriteByte('\n')
			switch b.Type {
			case "text":
				s.WriteString(b.Text)
			case "tool_use":
				s.WriteString(b.Name + " " + string(b.Input))
			case "tool_result":
				s.WriteString(b.ResultText())
			default:
				s.Write(b.Raw)
			}
		}
	}
	return s.String()
}

// LastToolResult is the conversation's last tool_result block.
func (r *Request) LastToolResult() (Block, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		c := r.Messages[i].Content
		for j := len(c) - 1; j >= 0; j-- {
			if c[j].Type == "tool_result" {
				return c[j], true
			}
		}
	}
	return Block{}, false
}

// ToolResult is the result of the tool call id, if the conversation holds
// it.
func (r *Request) ToolResult(id string) (Block, bool) {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" && b.ToolUseID == id {
				return b, true
			}
		}
	}
	return Block{}, false
}

// ToolUses are the conversation's tool_use blocks, in order.
func (r *Request) ToolUses() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				out = append(out, b)
			}
		}
	}
	return out
}

// SubagentMark is what Claude Code 2.1.328 puts in a subagent's system
// prompt, in its first block (the billing header
// "x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;
// cc_is_subagent=true;"); the main agent's header has no cc_is_subagent.
const SubagentMark = "cc_is_subagent=true"

// SubagentPrompt opens the system prompt proper of Claude Code 2.1.328's
// general-purpose subagent, after the header and "You are a Claude agent,
// built on Anthropic's Claude Agent SDK."; the main agent's goes on with
// "You are an agent working with the user toward their goals".
const SubagentPrompt = "You are an agent for Claude Code"

// Subagent reports whether the request is a subagent's (one the Agent
// tool started) rather than the main agent's: its system prompt is the
// subagent's own (SubagentMark, SubagentPrompt). A subagent's requests
// offer tools too (Agent among them), and their first user message ends
// with the prompt the main agent gave the Agent tool (Prompt).
func (r *Request) Subagent() bool {
	return r.Path == "/v1/messages" && (strings.Contains(r.System, SubagentMark) || strings.Contains(r.System, SubagentPrompt))
}

// Prompt is the conversation's first user message without the
// <system-reminder> blocks Claude Code adds before it: the user's prompt
// (claude -p PROMPT) or, in a subagent's request, the Agent tool's prompt.
func (r *Request) Prompt() string {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// SessionID is the CLI's session id, as Claude Code sends it in the
// request's metadata (user_id is a JSON object holding session_id); "" if
// the request has none.
func (r *Request) SessionID() string {
	var body struct {
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return ""
	}
	var user struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(body.Metadata.UserID), &user) != nil {
		return ""
	}
	return user.SessionID
}

// Count is how many times s occurs in the request's context (AllText).
func (r *Request) Count(s string) int { return strings.Count(r.AllText(), s) }

// Side reports whether the request is one the CLI makes on the side, not
// a turn of an agent: it offers no tools, or it asks a small (Haiku)
// model, or very few tokens (a quota check).
func (r *Request) Side() bool {
	return len(r.Tools) == 0 || strings.Contains(strings.ToLower(r.Model), "haiku") || (r.MaxTokens > 0 && r.MaxTokens <= 16)
}

// Reply is what the model answers: its content blocks, in order. The
// stop_reason is tool_use when a block is a tool call, else end_turn.
type Reply struct {
	Blocks []Block
}

// Say is a reply of text only.
func Say(text string) Reply { return Reply{Blocks: []Block{{Type: "text", Text: text}}} }

// Call is a reply that calls one tool: an optional line of text, then the
// tool_use block. Input is marshalled to JSON.
func Call(id, name string, input any, text ...string) Reply {
	var r Reply
	if len(text) > 0 {
		r.Blocks = append(r.Blocks, Block{Type: "text", Text: strings.Join(text, " ")})
	}
	return r.With(ToolUse(id, name, input))
}

// ToolUse is a tool_use block; input is marshalled to JSON.
func ToolUse(id, name string, input any) Block {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("anthropic.ToolUse %s: %v", name, err))
	}
	return Block{Type: "tool_use", ID: id, Name: name, Input: raw}
}

// With adds blocks to the reply.
func (r Reply) With(blocks ...Block) Reply {
	r.Blocks = append(append([]Block(nil), r.Blocks...), blocks...)
	return r
}

// StopReason is tool_use when the reply calls a tool, else end_turn.
func (r Reply) StopReason() string {
	for _, b := range r.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// Scenario is the scripted model: the reply to one request. It must be
// safe for concurrent use.
type Scenario func(*Request) Reply

// SideReply is the answer to a request made on the side.
const SideReply = "OK"

// Server is the scripted API on loopback.
type Server struct {
	// URL is the base URL, for ANTHROPIC_BASE_URL.
	URL string

	srv      *httptest.Server
	scenario Scenario
	n        atomic.Int64
	ids      atomic.Int64

	mu       sync.Mutex
	requests []*Request
	replies  map[int]Reply
}

// New starts the API with the scenario, closed when the test ends.
func New(tb testing.TB, scenario Scenario) *Server {
	tb.Helper()
	s := &Server{scenario: scenario, replies: map[int]Reply{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests are the requests received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Messages are the POST /v1/messages requests that are not on the side:
// the agents' turns.
func (s *Server) Messages() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Path == "/v1/messages" && !r.Side() {
			out = append(out, r)
		}
	}
	return out
}

// Dump describes every request and its reply, for a failing test's log:
// per request its path, model, whether it was the main agent's, a
// subagent's or on the side, the last user message, and what was answered.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.requests {
		fmt.Fprintf(&b, "#%d %s %s", r.N, r.Method, r.Path)
		if r.Path == "/v1/messages" {
			who := "main"
			switch {
			case r.Side():
				who = "side"
			case r.Subagent():
				who = "subagent"
			}
			fmt.Fprintf(&b, " model=%s %s stream=%v turn=%d tools=%d", r.Model, who, r.Stream, r.Turn(), len(r.Tools))
			fmt.Fprintf(&b, "\n  last user: %s", clip(r.LastUserText(), 600))
		} else {
			fmt.Fprintf(&b, "\n  body: %s", clip(string(r.Body), 300))
		}
		if reply, ok := s.replies[r.N]; ok {
			raw, _ := json.Marshal(reply.Blocks)
			fmt.Fprintf(&b, "\n  reply: %s", clip(string(raw), 600))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r := &Request{N: int(s.n.Add(1)), At: time.Now(), Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
	messages := req.Method == http.MethodPost && r.Path == "/v1/messages"
	var bad error
	if messages {
		bad = r.parse() // before the request is logged: logged requests are read concurrently
	}
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	switch {
	case messages && bad != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "the body is not a Messages request: "+bad.Error())
		return
	case messages:
	case req.Method == http.MethodPost && r.Path == "/v1/messages/count_tokens":
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
		return
	default:
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("%s %s is not scripted", req.Method, r.Path))
		return
	}
	var reply Reply
	if r.Side() {
		reply = Say(SideReply)
	} else {
		reply = s.scenario(r)
	}
	if len(reply.Blocks) == 0 {
		reply = Say("Done.")
	}
	// A copy: the scenario may hand out the same reply again.
	reply.Blocks = append([]Block(nil), reply.Blocks...)
	for i, b := range reply.Blocks {
		if b.Type == "tool_use" {
			if b.ID == "" {
				b.ID = fmt.Sprintf("toolu_mock%04d", s.ids.Add(1))
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage(`{}`)
			}
			reply.Blocks[i] = b
		}
	}
	s.mu.Lock()
	s.replies[r.N] = reply
	s.mu.Unlock()
	id := fmt.Sprintf("msg_mock%06d", r.N)
	model := r.Model
	if model == "" {
		model = "claude-mock"
	}
	inTokens := len(body)/4 + 1
	if !r.Stream {
		writeJSON(w, http.StatusOK, message(id, model, reply, inTokens))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_mock"+fmt.Sprint(r.N))
	w.WriteHeader(http.StatusOK)
	_ = WriteStream(w, id, model, reply, inTokens)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// usage is the usage object the API reports.
func usage(in, out int) map[string]any {
	return map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// outputTokens is a rough count of the reply's tokens.
func outputTokens(reply Reply) int {
	n := 1
	for _, b := range reply.Blocks {
		n += (len(b.Text) + len(b.Input)) / 4
	}
	return n
}

// message is the non-streaming answer: one message object.
func message(id, model string, reply Reply, inTokens int) map[string]any {
	content := make([]map[string]any, 0, len(reply.Blocks))
	for _, b := range reply.Blocks {
		content = append(content, blockStart(b, true))
	}
	return map[string]any{"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": reply.StopReason(), "stop_sequence": nil, "usage": usage(inTokens, outputTokens(reply))}
}

// blockStart is a block as content_block_start opens it (full: as a
// non-streaming message holds it).
func blockStart(b Block, full bool) map[string]any {
	switch b.Type {
	case "tool_use":
		input := json.RawMessage(`{}`)
		if full {
			input = b.Input
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	case "text":
		text := ""
		if full {
			text = b.Text
		}
		return map[string]any{"type": "text", "text": text}
	}
	if len(b.Raw) > 0 {
		var m map[string]any
		if json.Unmarshal(b.Raw, &m) == nil {
			return m
		}
	}
	return map[string]any{"type": b.Type}
}

// WriteStream writes the reply as the Messages API's server-sent events:
// message_start, per block content_block_start, its deltas (text_delta,
// or input_json_delta in two pieces) and content_block_stop, then
// message_delta with the stop_reason and usage, and message_stop.
func WriteStream(w io.Writer, id, model string, reply Reply, inTokens int) error {
	var buf bytes.Buffer
	event := func(name string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, raw)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(inTokens, 1)}})
	event("ping", map[string]any{"type": "ping"})
	for i, b := range reply.Blocks {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": blockStart(b, false)})
		switch b.Type {
		case "text":
			for _, part := range halves(b.Text) {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			for _, part := range halves(string(b.Input)) {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reply.StopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outputTokens(reply)}})
	event("message_stop", map[string]any{"type": "message_stop"})
	_, err := w.Write(buf.Bytes())
	return err
}

// halves splits s in two pieces at a rune boundary (one piece when it is
// short), as the API streams a block in several deltas.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	mid := len(s) / 2
	for mid < len(s) && !utf8Start(s[mid]) {
		mid++
	}
	if mid >= len(s) {
		return []string{s}
	}
	return []string{s[:mid], s[mid:]}
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the API's error shape.
func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
}
