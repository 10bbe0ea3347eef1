// Package openai is a scripted OpenAI Responses API on loopback, for
// running a real agent CLI (the OpenAI Codex CLI) offline in tests: an
// httptest server that answers POST /v1/responses as the real API does,
// streaming server-sent events (response.created, response.in_progress,
// then per output item response.output_item.added, its deltas
// (response.output_text.delta, response.function_call_arguments.delta or
// response.custom_tool_call_input.delta) and response.output_item.done,
// then response.completed with the usage) or, for a request without
// "stream", one JSON response object. GET /v1/models lists the model.
// Every other path is a 404 in the API's error shape.
//
// The model is a Go function of the request (its model, instructions,
// input items and tools) that returns the reply: text and tool calls.
// Codex keeps no server-side state (it sends the whole conversation each
// time, store=false), so write the scenario stateless, from the
// conversation the request carries (Turn, LastToolOutput, Prompt, …):
// the CLI may retry a request.
//
// A function tool's call is a function_call item (Call: name, call_id and
// the arguments as a JSON string); a freeform tool's call, as Codex offers
// apply_patch to the models of its catalog, is a custom_tool_call item
// (Custom: name, call_id and the raw input text). Request.Patch picks the
// form the request offers. The results come back in the next request's
// input as function_call_output and custom_tool_call_output items. Codex
// 0.171 offers MCP tools only through its tool_search tool (Search, then
// MCPCall: a function_call in the namespace "mcp__SERVER").
//
// CodexConfig and CodexArgs give the configuration and command line that
// run Codex 0.171 against the server.
//
// Every request is logged; Server.Dump prints them for a failing test.
package openai

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

// Content is one part of a message's content: input_text (the user's and
// the developer's), output_text (the assistant's), or another type (Raw
// keeps it whole).
type Content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Raw is the part as it was sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw part beside its fields.
func (c *Content) UnmarshalJSON(data []byte) error {
	type plain Content
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = Content(p)
	c.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// Item is an item of a request's input or a reply's output, as the API
// spells it: a "message" (Role, Content), a "function_call" (Name, CallID,
// Arguments), a "custom_tool_call" (Name, CallID, Input), their outputs
// "function_call_output" and "custom_tool_call_output" (CallID, Output),
// "reasoning", or any other type (Raw keeps it whole).
type Item struct {
	Type    string    `json:"type"`
	ID      string    `json:"id,omitempty"`
	Role    string    `json:"role,omitempty"`
	Content []Content `json:"content,omitempty"`
	Name    string    `json:"name,omitempty"`
	// Namespace is a namespaced function's namespace: Codex offers an MCP
	// server's tools, once tool_search loaded them, as the functions of the
	// namespace "mcp__SERVER".
	Namespace string `json:"namespace,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	// Arguments is a function_call's arguments: a JSON object as a string
	// (a tool_search_call's arguments object is kept as its JSON text).
	Arguments string `json:"arguments,omitempty"`
	// Input is a custom_tool_call's input: free text.
	Input string `json:"input,omitempty"`
	// Output is a tool call's output: a string or a list of content parts.
	Output json.RawMessage `json:"output,omitempty"`
	Status string          `json:"status,omitempty"`
	// Raw is the item as it was sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw item beside its fields, reads a message's
// content that is a string as one input_text part, and arguments that are
// an object as their JSON text.
func (it *Item) UnmarshalJSON(data []byte) error {
	type plain Item
	var p struct {
		plain
		Content   json.RawMessage `json:"content"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*it = Item(p.plain)
	it.Arguments = ""
	if len(p.Arguments) > 0 {
		// A string for a function_call; an object for a tool_search_call.
		if err := json.Unmarshal(p.Arguments, &it.Arguments); err != nil {
			it.Arguments = string(p.Arguments)
		}
	}
	it.Content = nil
	if len(p.Content) > 0 && string(p.Content) != "null" {
		var s string
		if err := json.Unmarshal(p.Content, &s); err == nil {
			it.Content = []Content{{Type: "input_text", Text: s}}
		} else if err := json.Unmarshal(p.Content, &it.Content); err != nil {
			return err
		}
	}
	it.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// IsCall reports whether the item is a tool call the model made.
func (it Item) IsCall() bool {
	switch it.Type {
	case "function_call", "custom_tool_call", "local_shell_call", "tool_search_call":
		return true
	}
	return false
}

// IsOutput reports whether the item is a tool call's output:
// function_call_output, custom_tool_call_output, tool_search_output, ….
func (it Item) IsOutput() bool {
	return strings.HasSuffix(it.Type, "_output")
}

// Text is a message's text parts joined by newlines, or a tool output's
// text (OutputText).
func (it Item) Text() string {
	if it.IsOutput() {
		return it.OutputText()
	}
	var parts []string
	for _, c := range it.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// OutputText is a tool output as text: the string, or its text parts
// joined by newlines.
func (it Item) OutputText() string {
	if len(it.Output) == 0 {
		if it.Type == "tool_search_output" {
			return string(it.Raw)
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(it.Output, &s); err == nil {
		return s
	}
	var parts []Content
	if err := json.Unmarshal(it.Output, &parts); err == nil {
		var texts []string
		for _, c := range parts {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return string(it.Output)
}

// Args decodes a function_call's arguments into v.
func (it Item) Args(v any) error {
	return json.Unmarshal([]byte(it.Arguments), v)
}

// Tool is a tool the request offers the model: a "function" (Parameters,
// a JSON schema), a "custom" (freeform) tool (Format, a grammar or
// text), a "namespace" of functions (Tools), or a built-in type such as
// "tool_search" or "web_search" (Raw keeps it whole).
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Tools       []Tool          `json:"tools,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Format      json.RawMessage `json:"format,omitempty"`
	// Raw is the tool as it was sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw tool beside its fields.
func (t *Tool) UnmarshalJSON(data []byte) error {
	type plain Tool
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*t = Tool(p)
	t.Raw = append(json.RawMessage(nil), data...)
	return nil
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

	// The Responses API's fields (zero for another path).
	Model              string `json:"model"`
	Instructions       string `json:"instructions"`
	Input              []Item `json:"input"`
	Tools              []Tool `json:"tools"`
	ToolChoice         any    `json:"tool_choice"`
	ParallelToolCalls  bool   `json:"parallel_tool_calls"`
	Stream             bool   `json:"stream"`
	Store              bool   `json:"store"`
	PromptCacheKey     string `json:"prompt_cache_key"`
	PreviousResponseID string `json:"previous_response_id"`
}

// parse reads the body of a POST /v1/responses. An input that is a string
// is read as one user message.
func (r *Request) parse() error {
	var raw struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		return err
	}
	var s string
	if json.Unmarshal(raw.Input, &s) == nil {
		body := map[string]json.RawMessage{}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			return err
		}
		delete(body, "input")
		rest, _ := json.Marshal(body)
		if err := json.Unmarshal(rest, r); err != nil {
			return err
		}
		r.Input = []Item{{Type: "message", Role: "user", Content: []Content{{Type: "input_text", Text: s}}}}
		return nil
	}
	return json.Unmarshal(r.Body, r)
}

// Tool is the offered tool of that name.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name || (t.Name == "" && t.Type == name) {
			return t, true
		}
	}
	return Tool{}, false
}

// HasTool reports whether the request offers the tool (by name, or by
// type for a built-in tool without a name, such as web_search).
func (r *Request) HasTool(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// ToolNames are the names of the tools the request offers (a built-in
// tool's type when it has no name).
func (r *Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		if t.Name != "" {
			names = append(names, t.Name)
		} else {
			names = append(names, t.Type)
		}
	}
	return names
}

// SearchedTools are the functions tool_search loaded into the
// conversation (its tool_search_output items), each named as the model
// calls it: Namespace "mcp__SERVER" and the MCP tool's name as Name. A
// function outside a namespace has Namespace "".
func (r *Request) SearchedTools() []SearchedTool {
	var out []SearchedTool
	for _, it := range r.Input {
		if it.Type != "tool_search_output" {
			continue
		}
		var body struct {
			Tools []Tool `json:"tools"`
		}
		if json.Unmarshal(it.Raw, &body) != nil {
			continue
		}
		for _, t := range body.Tools {
			if t.Type == "namespace" {
				for _, f := range t.Tools {
					out = append(out, SearchedTool{Namespace: t.Name, Tool: f})
				}
				continue
			}
			out = append(out, SearchedTool{Tool: t})
		}
	}
	return out
}

// SearchedTool is a function tool_search loaded, in its namespace.
type SearchedTool struct {
	Namespace string
	Tool
}

// Turn is how many replies of the model the conversation holds: 0 on its
// first request, 1 once the model has answered once (with a tool call,
// say), and so on. A reply is a run of assistant messages, reasoning and
// tool calls.
func (r *Request) Turn() int {
	n, in := 0, false
	for _, it := range r.Input {
		model := it.IsCall() || it.Type == "reasoning" || (it.Type == "message" && it.Role == "assistant")
		if model && !in {
			n++
		}
		in = model
	}
	return n
}

// Messages are the input's messages of the role ("user", "assistant",
// "developer" or "system"), in order.
func (r *Request) Messages(role string) []Item {
	var out []Item
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == role {
			out = append(out, it)
		}
	}
	return out
}

// FirstUserText is the text of the conversation's first user message
// (with Codex, its AGENTS.md and environment context come first: see
// Prompt).
func (r *Request) FirstUserText() string {
	if m := r.Messages("user"); len(m) > 0 {
		return m[0].Text()
	}
	return ""
}

// LastUserText is the text of the conversation's last user message.
func (r *Request) LastUserText() string {
	if m := r.Messages("user"); len(m) > 0 {
		return m[len(m)-1].Text()
	}
	return ""
}

// contextMarks open the user messages Codex adds before the user's prompt
// (the project's AGENTS.md, the environment) and the ones hooks add.
var contextMarks = []string{"# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "<hook_", "<turn_aborted>", "<user_shell_command>", "<subagent_notification>"}

// IsContext reports whether a user message's text is one Codex adds on
// its own (AGENTS.md, the environment context, hook context) rather than
// the user's prompt.
func IsContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, m := range contextMarks {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

// Prompt is the text of the conversation's last user message that is not
// one Codex adds on its own (IsContext): the user's prompt (codex exec
// PROMPT).
func (r *Request) Prompt() string {
	m := r.Messages("user")
	for i := len(m) - 1; i >= 0; i-- {
		var parts []string
		for _, c := range m[i].Content {
			if c.Text != "" && !IsContext(c.Text) {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

// AllText is the instructions and every input item's text, tool calls'
// arguments and outputs included: what the model has in its context.
func (r *Request) AllText() string {
	var s strings.Builder
	s.WriteString(r.Instructions)
	for _, it := range r.Input {
		s.WriteByte('\n')
		switch {
		case it.Type == "message":
			s.WriteString(it.Text())
		case it.Type == "function_call":
			s.WriteString(it.Name + " " + it.Arguments)
		case it.Type == "custom_tool_call":
			s.WriteString(it.Name + " " + it.Input)
		case it.IsOutput():
			s.WriteString(it.OutputText())
		default:
			s.Write(it.Raw)
		}
	}
	return s.String()
}

// Count is how many times s occurs in the request's context (AllText).
func (r *Request) Count(s string) int { return strings.Count(r.AllText(), s) }

// ToolCalls are the conversation's tool calls, in order.
func (r *Request) ToolCalls() []Item {
	var out []Item
	for _, it := range r.Input {
		if it.IsCall() {
			out = append(out, it)
		}
	}
	return out
}

// LastToolOutput is the conversation's last tool output item.
func (r *Request) LastToolOutput() (Item, bool) {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if r.Input[i].IsOutput() {
			return r.Input[i], true
		}
	}
	return Item{}, false
}

// ToolOutput is the output of the tool call callID, if the conversation
// holds it.
func (r *Request) ToolOutput(callID string) (Item, bool) {
	for _, it := range r.Input {
		if it.IsOutput() && it.CallID == callID {
			return it, true
		}
	}
	return Item{}, false
}

// Side reports whether the request is one the CLI makes on the side, not
// a turn of the agent: it offers no tools.
func (r *Request) Side() bool { return len(r.Tools) == 0 }

// Patch is a reply that calls apply_patch with the patch, in the form the
// request offers it: a custom_tool_call with the patch as its input when
// apply_patch is a freeform ("custom") tool, else a function_call with
// {"input": patch}. The patch is in Codex's format:
//
//	*** Begin Patch
//	*** Add File: notes.txt
//	+hello
//	*** End Patch
func (r *Request) Patch(id, patch string, text ...string) Reply {
	if t, ok := r.Tool("apply_patch"); ok && t.Type == "function" {
		return Call(id, "apply_patch", map[string]string{"input": patch}, text...)
	}
	return Custom(id, "apply_patch", patch, text...)
}

// MCPNamespace is the namespace under which Codex 0.171 offers the tools
// of the MCP server named server (its [mcp_servers.NAME] entry). Hooks
// see such a tool as "mcp__SERVER__TOOL".
func MCPNamespace(server string) string { return "mcp__" + server }

// Reply is what the model answers: its output items, in order (messages
// and tool calls).
type Reply struct {
	Items []Item
}

// Message is an assistant message item with the text.
func Message(text string) Item {
	return Item{Type: "message", Role: "assistant", Status: "completed", Content: []Content{{Type: "output_text", Text: text}}}
}

// FunctionCall is a function_call item; args is marshalled to JSON (a
// string or json.RawMessage is taken as JSON already).
func FunctionCall(callID, name string, args any) Item {
	var raw string
	switch a := args.(type) {
	case string:
		raw = a
	case json.RawMessage:
		raw = string(a)
	default:
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("openai.FunctionCall %s: %v", name, err))
		}
		raw = string(b)
	}
	return Item{Type: "function_call", Status: "completed", CallID: callID, Name: name, Arguments: raw}
}

// ToolSearchCall is a tool_search_call item: a call of Codex's
// client-side tool_search tool, which loads deferred tools (MCP tools among
// them) matching the query into the next request.
func ToolSearchCall(callID, query string) Item {
	args, _ := json.Marshal(map[string]any{"query": query, "limit": 8})
	return Item{Type: "tool_search_call", Status: "completed", CallID: callID, Arguments: string(args)}
}

// MCPCall is a function_call item that calls the tool of the MCP server
// named server, as Codex expects it once tool_search has loaded it: the
// tool's own name in the namespace MCPNamespace(server). Codex 0.171 runs
// the call even when tool_search has not loaded the tool; a function_call
// named "mcp__SERVER__TOOL" instead is answered "unsupported call".
func MCPCall(callID, server, tool string, args any) Item {
	it := FunctionCall(callID, tool, args)
	it.Namespace = MCPNamespace(server)
	return it
}

// CustomCall is a custom_tool_call item: a call of a freeform tool with
// the input text.
func CustomCall(callID, name, input string) Item {
	return Item{Type: "custom_tool_call", Status: "completed", CallID: callID, Name: name, Input: input}
}

// Say is a reply of text only.
func Say(text string) Reply { return Reply{Items: []Item{Message(text)}} }

// Call is a reply that calls one function tool: an optional message, then
// the function_call item. Args is marshalled to JSON.
func Call(callID, name string, args any, text ...string) Reply {
	var r Reply
	if len(text) > 0 {
		r.Items = append(r.Items, Message(strings.Join(text, " ")))
	}
	return r.With(FunctionCall(callID, name, args))
}

// Custom is a reply that calls one freeform tool with the input text: an
// optional message, then the custom_tool_call item.
func Custom(callID, name, input string, text ...string) Reply {
	var r Reply
	if len(text) > 0 {
		r.Items = append(r.Items, Message(strings.Join(text, " ")))
	}
	return r.With(CustomCall(callID, name, input))
}

// Search is a reply that calls tool_search with the query: Codex 0.171
// offers MCP tools only through it (deferred), and answers with a
// tool_search_output item listing the matching tools (SearchedTools).
func Search(callID, query string) Reply { return Reply{Items: []Item{ToolSearchCall(callID, query)}} }

// CallMCP is a reply that calls the tool of the MCP server named server
// (MCPCall): an optional message, then the call.
func CallMCP(callID, server, tool string, args any, text ...string) Reply {
	var r Reply
	if len(text) > 0 {
		r.Items = append(r.Items, Message(strings.Join(text, " ")))
	}
	return r.With(MCPCall(callID, server, tool, args))
}

// With adds items to the reply.
func (r Reply) With(items ...Item) Reply {
	r.Items = append(append([]Item(nil), r.Items...), items...)
	return r
}

// Calls reports whether the reply calls a tool.
func (r Reply) Calls() bool {
	for _, it := range r.Items {
		if it.IsCall() {
			return true
		}
	}
	return false
}

// Scenario is the scripted model: the reply to one request. It must be
// safe for concurrent use.
type Scenario func(*Request) Reply

// SideReply is the answer to a request made on the side.
const SideReply = "OK"

// Server is the scripted API on loopback.
type Server struct {
	// URL is the server's base URL; the API is under URL+"/v1" (BaseURL).
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

// BaseURL is the API's base URL, for a Codex model provider's base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// KeyEnv is the environment variable CodexConfig's model provider reads
// its API key from; Codex refuses to start when it is unset.
const KeyEnv = "MOCK_KEY"

// Model is the model CodexConfig asks for: a model of Codex 0.171's bundled
// catalog, for which it offers the freeform apply_patch tool (with a model
// outside the catalog it offers no apply_patch).
const Model = "gpt-5.5"

// CodexConfig is a $CODEX_HOME/config.toml that runs Codex 0.171 against
// the server: the model provider "mock" at BaseURL (wire_api "responses",
// the key in KeyEnv), no update check, analytics, plugins or apps, and each
// of the projects (absolute paths) trusted, which Codex needs to read the
// project's .codex/config.toml and .codex/hooks.json. Run it as
//
//	CODEX_HOME=DIR MOCK_KEY=x codex exec --json --skip-git-repo-check \
//	  --dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust \
//	  --color never PROMPT </dev/null
//
// with the project as the working directory (CodexArgs).
func (s *Server) CodexConfig(projects ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model = %q\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n", Model)
	fmt.Fprintf(&b, "[model_providers.mock]\nname = \"mock\"\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\n\n", s.BaseURL(), KeyEnv)
	b.WriteString("[analytics]\nenabled = false\n\n[features]\nplugins = false\napps = false\n")
	for _, p := range projects {
		fmt.Fprintf(&b, "\n[projects.%q]\ntrust_level = \"trusted\"\n", p)
	}
	return b.String()
}

// CodexArgs are the arguments of a headless, offline codex exec of the
// prompt: JSON events on stdout, no git check, no sandbox or approvals, and
// the project's hooks run without their hashes being trusted first
// (without --dangerously-bypass-hook-trust Codex skips them silently).
// Give it an empty stdin (</dev/null), or it waits to read more prompt.
func CodexArgs(prompt string) []string {
	return []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"--dangerously-bypass-hook-trust", "--color", "never", prompt}
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests are the requests received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Responses are the POST /v1/responses requests that are not on the side:
// the agent's turns.
func (s *Server) Responses() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Path == "/v1/responses" && r.Method == http.MethodPost && !r.Side() {
			out = append(out, r)
		}
	}
	return out
}

// Dump describes every request and its reply, for a failing test's log:
// per request its path, model, turn, tools, the last input item, and what
// was answered.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.requests {
		fmt.Fprintf(&b, "#%d %s %s %s", r.N, r.At.Format("15:04:05.000"), r.Method, r.Path)
		if r.Path == "/v1/responses" && r.Method == http.MethodPost {
			fmt.Fprintf(&b, " model=%s stream=%v turn=%d tools=%s", r.Model, r.Stream, r.Turn(), strings.Join(r.ToolNames(), ","))
			if len(r.Input) > 0 {
				last := r.Input[len(r.Input)-1]
				fmt.Fprintf(&b, "\n  last input (%s %s): %s", last.Type, last.Role, clip(itemText(last), 600))
			}
		} else if len(r.Body) > 0 {
			fmt.Fprintf(&b, "\n  body: %s", clip(string(r.Body), 300))
		}
		if reply, ok := s.replies[r.N]; ok {
			raw, _ := json.Marshal(reply.Items)
			fmt.Fprintf(&b, "\n  reply: %s", clip(string(raw), 600))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// itemText is an item as Dump shows it.
func itemText(it Item) string {
	switch {
	case it.Type == "function_call":
		return it.Name + " " + it.Arguments
	case it.Type == "custom_tool_call":
		return it.Name + " " + it.Input
	case it.Type == "message" || it.IsOutput():
		return it.Text()
	}
	return string(it.Raw)
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
	responses := req.Method == http.MethodPost && r.Path == "/v1/responses"
	var bad error
	if responses {
		bad = r.parse() // before the request is logged: logged requests are read concurrently
	}
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	switch {
	case responses && bad != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "the body is not a Responses request: "+bad.Error())
		return
	case responses:
	case req.Method == http.MethodGet && r.Path == "/v1/models":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}})
		return
	default:
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s %s is not scripted", req.Method, r.Path))
		return
	}
	var reply Reply
	if r.Side() {
		reply = Say(SideReply)
	} else {
		reply = s.scenario(r)
	}
	if len(reply.Items) == 0 {
		reply = Say("Done.")
	}
	// A copy: the scenario may hand out the same reply again.
	reply.Items = append([]Item(nil), reply.Items...)
	for i, it := range reply.Items {
		n := s.ids.Add(1)
		if it.ID == "" {
			switch it.Type {
			case "message":
				it.ID = fmt.Sprintf("msg_mock%04d", n)
			case "function_call":
				it.ID = fmt.Sprintf("fc_mock%04d", n)
			case "custom_tool_call":
				it.ID = fmt.Sprintf("ctc_mock%04d", n)
			default:
				it.ID = fmt.Sprintf("item_mock%04d", n)
			}
		}
		if it.IsCall() && it.CallID == "" {
			it.CallID = fmt.Sprintf("call_mock%04d", n)
		}
		if it.Type == "function_call" && it.Arguments == "" {
			it.Arguments = "{}"
		}
		reply.Items[i] = it
	}
	s.mu.Lock()
	s.replies[r.N] = reply
	s.mu.Unlock()
	id := fmt.Sprintf("resp_mock%06d", r.N)
	model := r.Model
	if model == "" {
		model = "gpt-mock"
	}
	inTokens := len(body)/4 + 1
	if !r.Stream {
		writeJSON(w, http.StatusOK, response(id, model, "completed", reply.Items, usage(inTokens, outputTokens(reply))))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_mock%d", r.N))
	w.WriteHeader(http.StatusOK)
	_ = WriteStream(w, id, model, reply, inTokens)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// usage is the usage object the API reports.
func usage(in, out int) map[string]any {
	return map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + out,
	}
}

// outputTokens is a rough count of the reply's tokens.
func outputTokens(reply Reply) int {
	n := 1
	for _, it := range reply.Items {
		n += (len(it.Text()) + len(it.Arguments) + len(it.Input)) / 4
	}
	return n
}

// response is a response object: the non-streaming answer, and what
// response.created and response.completed carry.
func response(id, model, status string, output []Item, usage map[string]any) map[string]any {
	out := make([]map[string]any, 0, len(output))
	for _, it := range output {
		out = append(out, itemJSON(it, true))
	}
	r := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status,
		"model": model, "output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	if usage != nil {
		r["usage"] = usage
	}
	return r
}

// itemJSON is an output item as the API spells it: whole (full), or as
// response.output_item.added opens it, with its text, arguments or input
// still empty and its status in_progress.
func itemJSON(it Item, full bool) map[string]any {
	status := "completed"
	if !full {
		status = "in_progress"
	}
	switch it.Type {
	case "message":
		content := []any{}
		if full {
			for _, c := range it.Content {
				content = append(content, map[string]any{"type": "output_text", "text": c.Text, "annotations": []any{}})
			}
		}
		return map[string]any{"type": "message", "id": it.ID, "status": status, "role": "assistant", "content": content}
	case "function_call":
		args := ""
		if full {
			args = it.Arguments
		}
		m := map[string]any{"type": "function_call", "id": it.ID, "status": status, "call_id": it.CallID, "name": it.Name, "arguments": args}
		if it.Namespace != "" {
			m["namespace"] = it.Namespace
		}
		return m
	case "tool_search_call":
		args := json.RawMessage(`{}`)
		if full && json.Valid([]byte(it.Arguments)) {
			args = json.RawMessage(it.Arguments)
		}
		return map[string]any{"type": "tool_search_call", "id": it.ID, "status": status, "call_id": it.CallID, "execution": "client", "arguments": args}
	case "custom_tool_call":
		input := ""
		if full {
			input = it.Input
		}
		return map[string]any{"type": "custom_tool_call", "id": it.ID, "status": status, "call_id": it.CallID, "name": it.Name, "input": input}
	}
	if len(it.Raw) > 0 {
		var m map[string]any
		if json.Unmarshal(it.Raw, &m) == nil {
			return m
		}
	}
	return map[string]any{"type": it.Type, "id": it.ID}
}

// WriteStream writes the reply as the Responses API's server-sent events:
// response.created and response.in_progress; per output item
// response.output_item.added, its deltas (for a message
// response.content_part.added, response.output_text.delta in two pieces,
// response.output_text.done and response.content_part.done; for a
// function_call response.function_call_arguments.delta and .done; for a
// custom_tool_call response.custom_tool_call_input.delta and .done) and
// response.output_item.done; then response.completed with the output and
// usage. Every event carries a sequence_number.
func WriteStream(w io.Writer, id, model string, reply Reply, inTokens int) error {
	var buf bytes.Buffer
	seq := 0
	event := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		raw, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, raw)
	}
	event("response.created", map[string]any{"response": response(id, model, "in_progress", nil, nil)})
	event("response.in_progress", map[string]any{"response": response(id, model, "in_progress", nil, nil)})
	for i, it := range reply.Items {
		event("response.output_item.added", map[string]any{"output_index": i, "item": itemJSON(it, false)})
		switch it.Type {
		case "message":
			for j, c := range it.Content {
				part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
				event("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "part": part})
				for _, piece := range halves(c.Text) {
					event("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "delta": piece, "logprobs": []any{}})
				}
				event("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "text": c.Text, "logprobs": []any{}})
				done := map[string]any{"type": "output_text", "text": c.Text, "annotations": []any{}}
				event("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "part": done})
			}
		case "function_call":
			for _, piece := range halves(it.Arguments) {
				event("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": piece})
			}
			event("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "arguments": it.Arguments})
		case "custom_tool_call":
			for _, piece := range halves(it.Input) {
				event("response.custom_tool_call_input.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": piece})
			}
			event("response.custom_tool_call_input.done", map[string]any{"item_id": it.ID, "output_index": i, "input": it.Input})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": itemJSON(it, true)})
	}
	event("response.completed", map[string]any{"response": response(id, model, "completed", reply.Items, usage(inTokens, outputTokens(reply)))})
	_, err := w.Write(buf.Bytes())
	return err
}

// Event is one server-sent event of a stream: its name and its data.
type Event struct {
	Name string
	Data map[string]any
}

// ReadStream reads a stream of server-sent events, as WriteStream writes
// them: "event:" and "data:" lines (data is JSON), each event ended by a
// blank line. Lines starting with ":" are comments.
func ReadStream(r io.Reader) ([]Event, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var out []Event
	var cur Event
	var data []string
	flush := func() error {
		if cur.Name == "" && len(data) == 0 {
			return nil
		}
		if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &cur.Data); err != nil {
			return fmt.Errorf("event %q: data is not JSON: %w", cur.Name, err)
		}
		if cur.Name == "" {
			cur.Name, _ = cur.Data["type"].(string)
		}
		out = append(out, cur)
		cur, data = Event{}, nil
		return nil
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n") {
		switch {
		case line == "":
			if err := flush(); err != nil {
				return out, err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			cur.Name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		default:
			return out, fmt.Errorf("not an SSE line: %q", line)
		}
	}
	return out, flush()
}

// halves splits s in two pieces at a rune boundary (one piece when it is
// short), as the API streams a text in several deltas.
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
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": kind, "message": msg, "code": nil, "param": nil}})
}
