// Package gemini is a scripted Google Gemini API on loopback, for running
// a real agent CLI (the Gemini CLI) offline in tests: an httptest server
// that answers the generative language API's v1beta model methods as the
// real API does.
//
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse streams the
//     reply as server-sent events, each "data: {GenerateContentResponse}"
//     (candidates[0].content.parts with text or functionCall parts; the
//     last chunk carries the finishReason and usageMetadata).
//   - POST /v1beta/models/{model}:generateContent answers one
//     GenerateContentResponse.
//   - POST /v1beta/models/{model}:countTokens answers a rough totalTokens.
//
// Every other path is a 404 in the API's error shape.
//
// The model is a Go function of the request (its model, system instruction,
// contents and tools) that returns the reply: text and function calls.
// Write it stateless, from the conversation the request carries (Turn,
// LastFunctionResponse, Prompt, …): the CLI may retry a request. Requests
// the CLI makes on the side (Side: a generateContent call, one that asks
// for JSON such as the "next speaker" check, or one that offers no tools)
// get a harmless answer without reaching the scenario: a JSON object that
// fits the requested schema, or SideReply.
//
// Function results come back as functionResponse parts in the next
// request's contents. Every request is logged; Server.Dump prints them for a
// failing test.
package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FunctionCall is a call the model makes: a function (tool) name and its
// arguments, a JSON object. ID is optional; the Gemini API leaves it out.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a function's result, as the CLI sends it back: the
// function's name and a response object (the Gemini CLI puts the tool's
// text in "output", or an error in "error").
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response,omitempty"`
}

// Output is the response's "output" field as text, else its "error" field,
// else the whole response object.
func (f FunctionResponse) Output() string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(f.Response, &fields); err != nil {
		return string(f.Response)
	}
	for _, key := range []string{"output", "error"} {
		if raw, ok := fields[key]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			return string(raw)
		}
	}
	return string(f.Response)
}

// Part is one part of a content: text (a thought when Thought is set), a
// function call or a function response. Raw keeps the part as it was sent,
// for the kinds this package does not name (inlineData, fileData, …).
type Part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	// Raw is the part as it was sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw part beside its fields.
func (p *Part) UnmarshalJSON(data []byte) error {
	type plain Part
	var q plain
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	*p = Part(q)
	p.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// Content is one turn of the conversation: its role ("user", or "model"
// for the model's own turns) and parts.
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Text is the content's text parts (thoughts left out) and function
// responses' outputs, joined by newlines.
func (c Content) Text() string {
	var out []string
	for _, p := range c.Parts {
		switch {
		case p.FunctionResponse != nil:
			out = append(out, p.FunctionResponse.Output())
		case p.Text != "" && !p.Thought:
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// FunctionDeclaration is a function (tool) the request offers the model.
type FunctionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the arguments' schema, in either field the API takes.
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// Tool is one entry of the request's tools: a group of function
// declarations (or a built-in tool such as googleSearch, which this package
// does not name).
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
}

// GenerationConfig is the part of the request's generationConfig this
// package reads; Request.Body has the rest.
type GenerationConfig struct {
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
}

// Request is one request the CLI sent.
type Request struct {
	// N numbers the server's requests from 1.
	N int `json:"-"`
	// At is when it arrived.
	At     time.Time `json:"-"`
	Method string    `json:"-"`
	Path   string    `json:"-"`
	// Query is the URL's query: alt=sse on a streamed request.
	Query  url.Values  `json:"-"`
	Header http.Header `json:"-"`
	// Body is the request's body, whole.
	Body []byte `json:"-"`
	// Model and Action are read from the path
	// /v1beta/models/{Model}:{Action}: Action is streamGenerateContent,
	// generateContent, countTokens, … ("" for another path).
	Model  string `json:"-"`
	Action string `json:"-"`

	// The GenerateContentRequest's fields (zero for another path).
	Contents          []Content        `json:"contents"`
	SystemInstruction *Content         `json:"systemInstruction,omitempty"`
	Tools             []Tool           `json:"tools"`
	GenerationConfig  GenerationConfig `json:"generationConfig"`
}

// parse reads the body of a POST to a model method. countTokens may wrap
// its contents in generateContentRequest.
func (r *Request) parse() error {
	if len(bytes.TrimSpace(r.Body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Body, r); err != nil {
		return err
	}
	if r.Action == "countTokens" && len(r.Contents) == 0 {
		var wrapped struct {
			Request *Request `json:"generateContentRequest"`
		}
		wrapped.Request = r
		return json.Unmarshal(r.Body, &wrapped)
	}
	return nil
}

// System is the system instruction as text.
func (r *Request) System() string {
	if r.SystemInstruction == nil {
		return ""
	}
	return r.SystemInstruction.Text()
}

// Functions are the function declarations the request offers, from every
// tool group.
func (r *Request) Functions() []FunctionDeclaration {
	var out []FunctionDeclaration
	for _, t := range r.Tools {
		out = append(out, t.FunctionDeclarations...)
	}
	return out
}

// HasTool reports whether the request offers the function.
func (r *Request) HasTool(name string) bool {
	for _, f := range r.Functions() {
		if f.Name == name {
			return true
		}
	}
	return false
}

// ToolNames are the names of the functions the request offers.
func (r *Request) ToolNames() []string {
	var names []string
	for _, f := range r.Functions() {
		names = append(names, f.Name)
	}
	return names
}

// Turn is how many model turns the conversation holds: 0 on its first
// request, 1 once the model has answered once (with a function call, say),
// and so on.
func (r *Request) Turn() int {
	n := 0
	for _, c := range r.Contents {
		if c.Role == "model" {
			n++
		}
	}
	return n
}

// FirstUserText is the text of the conversation's first user turn. The
// Gemini CLI opens a session with a turn of its own (the date, the
// operating system, the folder's files), so this is often not the prompt:
// see Prompt.
func (r *Request) FirstUserText() string {
	for _, c := range r.Contents {
		if c.Role == "user" {
			return c.Text()
		}
	}
	return ""
}

// LastUserText is the text of the conversation's last user turn (function
// responses included).
func (r *Request) LastUserText() string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		if r.Contents[i].Role == "user" {
			return r.Contents[i].Text()
		}
	}
	return ""
}

// SessionContextMark opens the text part the Gemini CLI 0.61 puts before
// the user's prompt in a session's first turn: the date, the operating
// system, the workspace's directories and files.
const SessionContextMark = "<session_context>"

// Prompt is the text of the conversation's last user turn that holds text
// rather than function responses, without the CLI's session context
// (SessionContextMark): the user's prompt (gemini -p PROMPT), with
// whatever a hook added to it.
func (r *Request) Prompt() string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role != "user" {
			continue
		}
		var parts []string
		responses := false
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				responses = true
			}
			if p.Text != "" && !p.Thought && !strings.HasPrefix(strings.TrimSpace(p.Text), SessionContextMark) {
				parts = append(parts, p.Text)
			}
		}
		if !responses && len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

// AllText is every turn's text, function calls' arguments and responses
// included, and the system instruction: what the model has in its context.
func (r *Request) AllText() string {
	var s strings.Builder
	s.WriteString(r.System())
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			s.WriteByte('\n')
			switch {
			case p.FunctionCall != nil:
				s.WriteString(p.FunctionCall.Name + " " + string(p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				s.WriteString(p.FunctionResponse.Name + " " + string(p.FunctionResponse.Response))
			case p.Text != "":
				s.WriteString(p.Text)
			default:
				s.Write(p.Raw)
			}
		}
	}
	return s.String()
}

// Count is how many times s occurs in the request's context (AllText).
func (r *Request) Count(s string) int { return strings.Count(r.AllText(), s) }

// LastFunctionResponse is the conversation's last functionResponse part.
func (r *Request) LastFunctionResponse() (FunctionResponse, bool) {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		ps := r.Contents[i].Parts
		for j := len(ps) - 1; j >= 0; j-- {
			if ps[j].FunctionResponse != nil {
				return *ps[j].FunctionResponse, true
			}
		}
	}
	return FunctionResponse{}, false
}

// FunctionResponses are the conversation's function responses, in order.
func (r *Request) FunctionResponses() []FunctionResponse {
	var out []FunctionResponse
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, *p.FunctionResponse)
			}
		}
	}
	return out
}

// FunctionCalls are the conversation's function calls (the model's), in
// order.
func (r *Request) FunctionCalls() []FunctionCall {
	var out []FunctionCall
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				out = append(out, *p.FunctionCall)
			}
		}
	}
	return out
}

// Generate reports whether the request asks for content
// (streamGenerateContent or generateContent).
func (r *Request) Generate() bool {
	return r.Method == http.MethodPost && (r.Action == "streamGenerateContent" || r.Action == "generateContent")
}

// JSON reports whether the request asks for a JSON answer (a
// responseJsonSchema, a responseSchema or the JSON MIME type), as the
// CLI's checks on the side do.
func (r *Request) JSON() bool {
	g := r.GenerationConfig
	return g.ResponseMIMEType == "application/json" || len(g.ResponseJSONSchema) > 0 || len(g.ResponseSchema) > 0
}

// Side reports whether the request is one the CLI makes on the side, not a
// turn of the agent: it is not streamed, or it asks for JSON, or it offers
// no functions.
func (r *Request) Side() bool {
	return r.Action != "streamGenerateContent" || r.JSON() || len(r.Functions()) == 0
}

// Reply is what the model answers: its parts, in order. The finishReason is
// STOP (the API says STOP after function calls too; the CLI runs the calls
// it finds in the parts).
type Reply struct {
	Parts []Part
}

// Say is a reply of text only.
func Say(text string) Reply { return Reply{Parts: []Part{{Text: text}}} }

// Call is a reply that calls one function: an optional line of text, then
// the functionCall part. Args is marshalled to JSON (an object).
func Call(name string, args any, text ...string) Reply {
	var r Reply
	if t := strings.Join(text, " "); t != "" {
		r.Parts = append(r.Parts, Part{Text: t})
	}
	return r.With(FunctionCallPart(name, args))
}

// FunctionCallPart is a functionCall part; args is marshalled to JSON.
func FunctionCallPart(name string, args any) Part {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("gemini.FunctionCallPart %s: %v", name, err))
	}
	if string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	return Part{FunctionCall: &FunctionCall{Name: name, Args: raw}}
}

// With adds parts to the reply.
func (r Reply) With(parts ...Part) Reply {
	r.Parts = append(append([]Part(nil), r.Parts...), parts...)
	return r
}

// Calls reports whether the reply calls a function.
func (r Reply) Calls() bool {
	for _, p := range r.Parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// Scenario is the scripted model: the reply to one request. It must be
// safe for concurrent use.
type Scenario func(*Request) Reply

// SideReply is the text answer to a request made on the side that does not
// ask for JSON.
const SideReply = "OK"

// Server is the scripted API on loopback.
type Server struct {
	// URL is the base URL, for GOOGLE_GEMINI_BASE_URL.
	URL string

	srv      *httptest.Server
	scenario Scenario
	n        atomic.Int64

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

// Turns are the requests that reached the scenario: the agent's turns, not
// the requests on the side.
func (s *Server) Turns() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Generate() && !r.Side() {
			out = append(out, r)
		}
	}
	return out
}

// Dump describes every request and its reply, for a failing test's log:
// per request its method, model and action, whether it was a turn or on
// the side, the last user turn, and what was answered.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.requests {
		fmt.Fprintf(&b, "#%d %s %s", r.N, r.Method, r.Path)
		if r.Generate() {
			who := "turn"
			if r.Side() {
				who = "side"
			}
			fmt.Fprintf(&b, " %s turn=%d functions=%d json=%v", who, r.Turn(), len(r.Functions()), r.JSON())
			fmt.Fprintf(&b, "\n  last user: %s", clip(r.LastUserText(), 600))
		} else {
			fmt.Fprintf(&b, "\n  body: %s", clip(string(r.Body), 300))
		}
		if reply, ok := s.replies[r.N]; ok {
			raw, _ := json.Marshal(reply.Parts)
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

// Env is the environment that points the Gemini CLI at the server, with
// the private home: GEMINI_API_KEY (any value does), GOOGLE_GEMINI_BASE_URL,
// GEMINI_SANDBOX=false and HOME. Add PATH and the rest yourself.
func (s *Server) Env(home string) []string {
	return []string{"GEMINI_API_KEY=mock-key", "GOOGLE_GEMINI_BASE_URL=" + s.URL, "GEMINI_SANDBOX=false", "HOME=" + home}
}

// Home makes a private home directory for the Gemini CLI, removed when the
// test ends: ~/.gemini/settings.json chooses API-key auth and turns usage
// statistics, telemetry and auto-update off, and ~/.gemini/trustedFolders.json
// trusts each of the folders given (the CLI exits 55 in an untrusted
// folder, and loads a project's .gemini/settings.json hooks only in a
// trusted one).
func Home(tb testing.TB, trusted ...string) string {
	tb.Helper()
	home := tb.TempDir()
	dir := filepath.Join(home, ".gemini")
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	folders := map[string]string{}
	for _, f := range trusted {
		folders[f] = "TRUST_FOLDER"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, v := range map[string]any{"settings.json": settings, "trustedFolders.json": folders} {
		raw, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return home
}

// modelPath splits /v1beta/models/{model}:{action} (or v1, v1alpha).
func modelPath(path string) (model, action string, ok bool) {
	for _, v := range []string{"/v1beta/models/", "/v1/models/", "/v1alpha/models/"} {
		if rest, found := strings.CutPrefix(path, v); found {
			model, action, ok = strings.Cut(rest, ":")
			return model, action, ok && model != ""
		}
	}
	return "", "", false
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r := &Request{N: int(s.n.Add(1)), At: time.Now(), Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Header: req.Header.Clone(), Body: body}
	model, action, isModel := modelPath(r.Path)
	var bad error
	if isModel && req.Method == http.MethodPost {
		r.Model, r.Action = model, action
		bad = r.parse() // before the request is logged: logged requests are read concurrently
	}
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	switch {
	case r.Action != "" && bad != nil:
		writeError(w, http.StatusBadRequest, "the body is not a "+r.Action+" request: "+bad.Error())
		return
	case r.Action == "countTokens":
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": len(body)/4 + 1})
		return
	case r.Generate():
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s %s is not scripted", req.Method, r.Path))
		return
	}
	var reply Reply
	switch {
	case r.JSON():
		reply = Say(sideJSON(r))
	case r.Side():
		reply = Say(SideReply)
	default:
		reply = s.scenario(r)
	}
	if len(reply.Parts) == 0 {
		reply = Say("Done.")
	}
	// A copy: the scenario may hand out the same reply again.
	reply.Parts = append([]Part(nil), reply.Parts...)
	for i, p := range reply.Parts {
		if p.FunctionCall != nil && len(p.FunctionCall.Args) == 0 {
			fc := *p.FunctionCall
			fc.Args = json.RawMessage(`{}`)
			reply.Parts[i].FunctionCall = &fc
		}
	}
	s.mu.Lock()
	s.replies[r.N] = reply
	s.mu.Unlock()
	id := fmt.Sprintf("mock%06d", r.N)
	inTokens := len(body)/4 + 1
	if r.Action == "generateContent" {
		writeJSON(w, http.StatusOK, Response(id, r.Model, reply, inTokens))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_ = WriteStream(w, id, r.Model, reply, inTokens)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sideJSON is a JSON object that fits the schema a request on the side
// asks for: each property gets its enum's first value or its type's zero
// value ("" for a string). The CLI's "next speaker" check (next_speaker:
// "user" or "model") gets "user", so the agent's turn ends.
func sideJSON(r *Request) string {
	schema := r.GenerationConfig.ResponseJSONSchema
	if len(schema) == 0 {
		schema = r.GenerationConfig.ResponseSchema
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		v = nil
	}
	obj, ok := fill(v, 0).(map[string]any)
	if !ok {
		obj = map[string]any{}
	}
	if _, ok := obj["next_speaker"]; ok {
		obj["next_speaker"] = "user"
	}
	raw, _ := json.Marshal(obj)
	return string(raw)
}

// fill makes a value that fits a JSON schema (loosely: type, enum,
// properties, items).
func fill(schema any, depth int) any {
	m, ok := schema.(map[string]any)
	if !ok || depth > 8 {
		return map[string]any{}
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := m["type"].(string)
	switch strings.ToLower(typ) {
	case "string":
		return ""
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = fill(props[k], depth+1)
	}
	return out
}

// usage is the usageMetadata object the API reports.
func usage(in, out int) map[string]any {
	return map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
}

// outputTokens is a rough count of the reply's tokens.
func outputTokens(reply Reply) int {
	n := 1
	for _, p := range reply.Parts {
		n += len(p.Text) / 4
		if p.FunctionCall != nil {
			n += (len(p.FunctionCall.Name) + len(p.FunctionCall.Args)) / 4
		}
	}
	return n
}

// partJSON is a part as the API sends it.
func partJSON(p Part) map[string]any {
	switch {
	case p.FunctionCall != nil:
		fc := map[string]any{"name": p.FunctionCall.Name, "args": p.FunctionCall.Args}
		if p.FunctionCall.ID != "" {
			fc["id"] = p.FunctionCall.ID
		}
		return map[string]any{"functionCall": fc}
	case len(p.Raw) > 0 && p.Text == "":
		var m map[string]any
		if json.Unmarshal(p.Raw, &m) == nil {
			return m
		}
	}
	m := map[string]any{"text": p.Text}
	if p.Thought {
		m["thought"] = true
	}
	return m
}

// chunk is one GenerateContentResponse holding parts; the last one adds
// the finishReason and usage.
func chunk(id, model string, parts []Part, last bool, inTokens, outTokens int) map[string]any {
	ps := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		ps = append(ps, partJSON(p))
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
	res := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": id}
	if last {
		cand["finishReason"] = "STOP"
		res["usageMetadata"] = usage(inTokens, outTokens)
	} else {
		res["usageMetadata"] = usage(inTokens, 0)
	}
	return res
}

// Response is the reply as one GenerateContentResponse, the answer to
// generateContent.
func Response(id, model string, reply Reply, inTokens int) map[string]any {
	return chunk(id, model, reply.Parts, true, inTokens, outputTokens(reply))
}

// WriteStream writes the reply as streamGenerateContent's server-sent
// events (alt=sse): one "data: {GenerateContentResponse}" event per part,
// in order; the last event carries finishReason STOP and usageMetadata.
// Text is not split further: the Gemini CLI joins a turn's chunks with
// spaces for the AfterAgent hook's prompt_response, so a split word would
// come out split there.
func WriteStream(w io.Writer, id, model string, reply Reply, inTokens int) error {
	parts := reply.Parts
	if len(parts) == 0 {
		parts = []Part{{Text: ""}}
	}
	var buf bytes.Buffer
	out := outputTokens(reply)
	for i, p := range parts {
		raw, err := json.Marshal(chunk(id, model, []Part{p}, i == len(parts)-1, inTokens, out))
		if err != nil {
			return err
		}
		fmt.Fprintf(&buf, "data: %s\r\n\r\n", raw)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the API's error shape (google.rpc.Status).
func writeError(w http.ResponseWriter, status int, msg string) {
	code := "INVALID_ARGUMENT"
	if status == http.StatusNotFound {
		code = "NOT_FOUND"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": code}})
}
