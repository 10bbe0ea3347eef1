package hook

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
)

// The bounds of one transcript report: the most calls it sends, and the
// most of the transcript it reads (the rest waits for the next stop).
const (
	MaxTranscriptCalls = 1000
	MaxTranscriptRead  = 64 << 20
)

// transcriptLine is the part of a line of Claude Code's transcript (JSON
// lines: one message each) the hook reads.
type transcriptLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Cwd       string    `json:"cwd"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// block is one content block of a transcript message: a tool_use (id,
// name, input) or a tool_result (tool_use_id, content, is_error).
type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// markFile is where the hook keeps how far it has reported a transcript.
func markFile(dir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(dir, "transcript-"+hex.EncodeToString(sum[:12]))
}

// transcriptReader reads whole lines of an executor's transcript from r
// and returns the tool calls they hold that ran (each with the paths its
// input names, relative to root, and the subagent's agentID and
// agentType), at most MaxTranscriptCalls, and how many bytes it read: up
// to the end of the last whole line it took.
type transcriptReader func(r io.Reader, root, agentID, agentType string) ([]TranscriptCall, int64)

// readTranscript returns the tool calls the transcript at path holds past
// the hook's mark in dir, as read (nil: the executor's transcript is not
// read), leaving out those a hook blocked, which never ran; and the func
// that moves the mark past them, for when Madebook has them. Nothing to
// read: nil, nil.
func readTranscript(read transcriptReader, dir, path, root, agentID, agentType string) ([]TranscriptCall, func()) {
	if read == nil || path == "" || dir == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	mark := markFile(dir, path)
	var from int64
	if b, err := os.ReadFile(mark); err == nil {
		from, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() < from {
		from = 0 // a transcript written anew
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, nil
	}
	calls, n := read(io.LimitReader(f, MaxTranscriptRead), root, agentID, agentType)
	if n == 0 {
		return nil, nil
	}
	return calls, func() {
		if os.MkdirAll(dir, 0o700) == nil {
			forgetOld(dir)
			_ = os.WriteFile(mark, []byte(strconv.FormatInt(from+n, 10)), 0o600)
		}
	}
}

// transcriptCalls is Claude Code's transcriptReader: its messages'
// tool_use blocks, less those whose result says a hook blocked them (see
// blocked).
func transcriptCalls(r io.Reader, root, agentID, agentType string) ([]TranscriptCall, int64) {
	var (
		calls   []TranscriptCall
		at      = map[string]int{} // a call's index in calls, by tool_use_id
		skipped = map[string]bool{}
		read    int64
	)
	read = eachLine(r, func() bool { return len(calls) < MaxTranscriptCalls }, func(line []byte) {
		var l transcriptLine
		if json.Unmarshal(line, &l) != nil || len(l.Message.Content) == 0 || l.Message.Content[0] != '[' {
			return
		}
		var blocks []block
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use" && b.ID != "" && b.Name != "":
				if _, dup := at[b.ID]; dup {
					continue
				}
				at[b.ID] = len(calls)
				calls = append(calls, TranscriptCall{ToolUseID: b.ID, Tool: b.Name, At: l.Timestamp.UTC(),
					Paths: namedPaths(b.Name, b.Input, root, l.Cwd), AgentID: agentID, AgentType: agentType})
			case b.Type == "tool_result" && b.IsError && blocked(b.Content):
				skipped[b.ToolUseID] = true
			}
		}
	})
	out := calls[:0]
	for _, c := range calls {
		if !skipped[c.ToolUseID] {
			out = append(out, c)
		}
	}
	return out, read
}

// eachLine calls each with every whole line r holds (its newline kept)
// while more says so, and returns how many bytes those lines take: a
// partial last line is left for the next report.
func eachLine(r io.Reader, more func() bool, each func(line []byte)) int64 {
	var read int64
	br := bufio.NewReaderSize(r, 64<<10)
	for more() {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break
		}
		read += int64(len(line))
		each(line)
	}
	return read
}

// blocked reports whether a failed call's result says a hook (or the
// user's permission rules) stopped it before it ran: Claude Code's
// "PreToolUse:Write hook error: …", which a hook's denial and a hook that
// could not run under onFailure "block" both give.
func blocked(content json.RawMessage) bool {
	text := string(content)
	var s string
	if json.Unmarshal(content, &s) == nil {
		text = s
	} else {
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(content, &parts) == nil && len(parts) > 0 {
			text = parts[0].Text
		}
	}
	text = strings.TrimSpace(text)
	return strings.HasPrefix(text, PreToolUse+":") || strings.HasPrefix(text, PermissionRequest+":") ||
		strings.Contains(text, "requested permissions to use") || strings.Contains(text, "doesn't want to proceed with this tool use")
}

// namedPaths are the paths a call's input names, relative to root, as
// the gate reads them (nothing of the input but its paths leaves the
// machine).
func namedPaths(tool string, raw json.RawMessage, root, cwd string) []string {
	fields, err := input.ParseObject(bytes.TrimSpace(raw))
	if err != nil {
		return nil
	}
	server, name := gate.SplitTool(tool)
	names := gate.TouchesOf(tool, fields, gate.Reading{Where: gate.Where{Root: root, Cwd: cwd}, Guess: gate.Classify(server, name, nil, nil)}).Names()
	if len(names) == 0 {
		return nil
	}
	return names
}
