package anthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

func readEvents(t *testing.T, text string) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("data is not JSON: %q", line)
			}
		case line == "":
			if cur.name == "" || cur.data["type"] != cur.name {
				t.Fatalf("event %q with data type %v", cur.name, cur.data["type"])
			}
			out = append(out, cur)
			cur = event{}
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	if cur.name != "" {
		t.Fatal("the last event is not ended by a blank line")
	}
	return out
}

// TestWriteStreamIsTheMessagesAPIsEventStream checks the event order, the
// deltas reassembling each block, and the stop reason.
func TestWriteStreamIsTheMessagesAPIsEventStream(t *testing.T) {
	reply := Say("Let me write it: é.").With(ToolUse("toolu_1", "Write", map[string]string{"file_path": "a.txt", "content": "hé"}))
	var b strings.Builder
	if err := WriteStream(&b, "msg_1", "claude-x", reply, 10); err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, b.String())
	var names []string
	text, input := "", ""
	for _, e := range evs {
		names = append(names, e.name)
		if e.name != "content_block_delta" {
			continue
		}
		d := e.data["delta"].(map[string]any)
		switch d["type"] {
		case "text_delta":
			text += d["text"].(string)
		case "input_json_delta":
			input += d["partial_json"].(string)
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if text != "Let me write it: é." {
		t.Errorf("text deltas make %q", text)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(input), &in); err != nil || in["content"] != "hé" {
		t.Errorf("input_json deltas make %q (%v)", input, err)
	}
	start := evs[6].data["content_block"].(map[string]any)
	if start["type"] != "tool_use" || start["id"] != "toolu_1" || start["name"] != "Write" {
		t.Errorf("tool_use start %v", start)
	}
	md := evs[len(evs)-2].data
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["output_tokens"] == nil {
		t.Errorf("message_delta %v", md)
	}
	msg := evs[0].data["message"].(map[string]any)
	if msg["id"] != "msg_1" || msg["role"] != "assistant" || msg["model"] != "claude-x" {
		t.Errorf("message_start %v", msg)
	}

	b.Reset()
	if err := WriteStream(&b, "msg_2", "m", Say("hi"), 1); err != nil {
		t.Fatal(err)
	}
	evs = readEvents(t, b.String())
	if got := evs[len(evs)-2].data["delta"].(map[string]any)["stop_reason"]; got != "end_turn" {
		t.Errorf("a text reply stops with %v", got)
	}
}

// TestServerAnswersTheCLIsRequests sends the requests Claude Code sends: a
// streaming turn, one without stream, one on the side, another path.
func TestServerAnswersTheCLIsRequests(t *testing.T) {
	s := New(t, func(r *Request) Reply {
		if res, ok := r.LastToolResult(); ok {
			return Say("got " + res.ResultText())
		}
		return Call("toolu_a", "Bash", map[string]string{"command": "ls"})
	})
	post := func(body string) (*http.Response, string) {
		t.Helper()
		res, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		return res, b.String()
	}
	tools := `"tools":[{"name":"Bash","input_schema":{}}]`
	res, body := post(`{"model":"claude-sonnet","max_tokens":1000,"stream":true,` + tools + `,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328.330; cc_entrypoint=sdk-cli;"},{"type":"text","text":"You are a Claude agent, built on Anthropic's Claude Agent SDK."}],"messages":[{"role":"user","content":"hi"}]}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	if evs := readEvents(t, body); !strings.Contains(body, `"toolu_a"`) || evs[len(evs)-1].name != "message_stop" {
		t.Errorf("stream %s", body)
	}
	_, body = post(`{"model":"claude-sonnet","max_tokens":1000,` + tools + `,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"a.txt"}],"is_error":true}]}]}`)
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []Block
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "got a.txt" || msg.StopReason != "end_turn" {
		t.Errorf("non-streaming answer %s (%v)", body, err)
	}
	_, body = post(`{"model":"claude-haiku-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"title?"}]}`)
	if !strings.Contains(body, `"text":"`+SideReply[:1]) {
		t.Errorf("a side request got %s", body)
	}
	_, body = post(`{"model":"claude-opus","max_tokens":1000,"stream":true,` + tools + `,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328.5e7; cc_entrypoint=sdk-cli; cc_is_subagent=true;"},` +
		`{"type":"text","text":"You are an agent for Claude Code, Anthropic's official CLI for Claude."}],"messages":[{"role":"user","content":[` +
		`{"type":"text","text":"<system-reminder>\nstatus\n</system-reminder>"},{"type":"text","text":"Write web/sub.js."}]}]}`)
	if !strings.Contains(body, "toolu_a") {
		t.Errorf("a subagent's request got %s", body)
	}
	res, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /v1/models: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[0].Subagent() || !reqs[2].Side() || reqs[1].Turn() != 1 || !reqs[3].Subagent() || reqs[3].Prompt() != "Write web/sub.js." {
		t.Errorf("requests %d:\n%s", len(reqs), s.Dump())
	}
	if res, ok := reqs[1].LastToolResult(); !ok || !res.IsError || res.ToolUseID != "toolu_a" {
		t.Errorf("last tool result %+v %v", res, ok)
	}
}
