package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/madebook/madebook/internal/agentcli"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/governance"
)

// initClaudeEvents is every Claude Code event init hooks Madebook's hook
// to, in the order it writes them, with how long Claude Code waits for the
// hook (seconds). A tool event matches every tool ("matcher": "*"). Every
// event but the last three blocks when the hook cannot run ("onFailure":
// "block"); Claude Code ignores that on Stop and SubagentStop, and a
// session that ends has nothing left to block. Those three read the
// transcript, hence their longer timeout.
var initClaudeEvents = []struct {
	name    string
	tool    bool // "matcher": "*"
	timeout int  // seconds
	block   bool // "onFailure": "block"
}{
	{"SessionStart", false, 10, true},
	{"UserPromptSubmit", false, 10, true},
	{"PreToolUse", true, 10, true},
	{"PermissionRequest", true, 10, true},
	{"PostToolUse", true, 10, true},
	{"PostToolUseFailure", true, 10, true},
	{"SubagentStart", false, 10, true},
	{"Stop", false, 30, false},
	{"SubagentStop", false, 30, false},
	{"SessionEnd", false, 30, false},
}

// leanHook is the name of the hook-only binary, built beside madebook
// (cmd/madebook-hook): init prefers it, since it starts faster.
const leanHook = "madebook-hook"

// runInitClaudeCode is `madebook init claude-code`: it writes, or merges
// into, a project's Claude Code settings so that Madebook governs it.
func runInitClaudeCode(_ context.Context, c stdio, args []string) error {
	return initClaudeCode(c, args, os.Executable)
}

// initClaudeCode is runInitClaudeCode with the running binary's path
// given by executable (tests pass their own).
func initClaudeCode(c stdio, args []string, executable func() (string, error)) error {
	f := newFlags("init claude-code", "madebook init claude-code [--mission SLUG] [--url URL] [--dir PROJECT]",
		"Set a project up so that Madebook governs Claude Code in it. It writes, or merges into:\n"+
			"PROJECT/.claude/settings.json: Madebook's hook on every event (this binary, or madebook-hook\n"+
			"beside it), set to block the tool call when the hook cannot run (fail closed), and the MCP\n"+
			"server \"madebook\" approved (enabledMcpjsonServers);\n"+
			"PROJECT/.mcp.json: the MCP server \"madebook\" at URL/mcp, its key read from ${MADEBOOK_KEY}.\n"+
			"Every other setting, MCP server and hook is kept, in its order; Madebook's own earlier\n"+
			"hooks are replaced. The key is never written. Running it again changes nothing.")
	f.Notes = "Without a mission (--mission, MADEBOOK_MISSION) the hook reads MADEBOOK_MISSION when it runs.\n" +
		"It refuses a `go run` build, a binary Go deletes: build it first, `go build -o bin/ ./cmd/...`,\n" +
		"then `bin/madebook init claude-code`.\n" +
		"Exit status: 0 written (or nothing to change); 1 a go run build or a file it cannot merge\n" +
		"(nothing is written); 2 a command-line mistake."
	mission := f.String("mission", "", "the `SLUG` of the mission Claude works on, written into the hook's arguments")
	f.Env["mission"] = "MADEBOOK_MISSION"
	base := f.String("url", agentcli.DefaultURL, "the `URL` Madebook serves at")
	f.Env["url"] = "MADEBOOK_URL"
	dir := f.String("dir", ".", "the `PROJECT` directory, the root Claude Code runs in")
	if err := f.parse(c, args); err != nil {
		return err
	}
	u, err := initURL(*base)
	if err != nil {
		return f.Fail("%v", err)
	}
	if *mission != "" {
		if _, err := (governance.MissionInput{Slug: *mission, Title: "init"}).Validate(); err != nil {
			return f.Fail("--mission (or MADEBOOK_MISSION): %v", err)
		}
	}
	exe, err := executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	cmd, cmdArgs, err := hookCommand(exe, "claude-code", u, *mission, c.getenv("GOCACHE"))
	if err != nil {
		return err
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--dir %s is not a directory", *dir)
	}
	settings, err := planFile(filepath.Join(*dir, ".claude", "settings.json"), func(doc *jsonObject) error {
		return mergeClaudeSettings(doc, cmd, cmdArgs)
	})
	if err != nil {
		return err
	}
	mcp, err := planFile(filepath.Join(*dir, ".mcp.json"), func(doc *jsonObject) error {
		return mergeMCPServers(doc, u)
	})
	if err != nil {
		return err
	}
	if err := writeFiles(settings, mcp); err != nil {
		return err
	}
	return printInit(c.stdout, settings, mcp, cmd, cmdArgs, u, *mission)
}

// initURL is --url checked, its trailing slashes trimmed.
func initURL(raw string) (string, error) {
	base := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--url (or MADEBOOK_URL) %q is not an http:// or https:// URL with a host (and no query)", raw)
	}
	return base, nil
}

// hookCommand is the hook the executor runs, as a program and its
// arguments: the running binary exe with its symlinks resolved (`hook
// EXECUTOR …`), or madebook-hook when it is an executable beside it. A
// binary in the Go build cache (go run) is refused: the cache deletes it.
func hookCommand(exe, executor, base, mission, gocache string) (string, []string, error) {
	exe, err := filepath.Abs(exe)
	if err != nil {
		return "", nil, fmt.Errorf("find this binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if goRunBuild(exe, gocache) {
		return "", nil, fmt.Errorf("this madebook is a `go run` build (%s), a file Go "+
			"deletes: the agent's hooks would run a program that is gone. Build it first, "+
			"`go build -o bin/ ./cmd/...`, then run `bin/madebook init %s`. Nothing was written", exe, executor)
	}
	flags := []string{"--url", base}
	if mission != "" {
		flags = append(flags, "--mission", mission)
	}
	ext := ""
	if strings.EqualFold(filepath.Ext(exe), ".exe") {
		ext = filepath.Ext(exe)
	}
	if lean := filepath.Join(filepath.Dir(exe), leanHook+ext); isExecutable(lean) {
		return lean, append([]string{executor}, flags...), nil
	}
	return exe, append([]string{"hook", executor}, flags...), nil
}

// goRunBuild reports whether path is a binary `go run` built: in a
// temporary go-build… directory, or in the Go build cache (go-build, or
// GOCACHE when it is set).
func goRunBuild(path, gocache string) bool {
	if gocache != "" && gocache != "off" {
		if rel, err := filepath.Rel(gocache, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	for _, seg := range strings.Split(filepath.ToSlash(path), "/") {
		if n, ok := strings.CutPrefix(seg, "go-build"); ok {
			if _, err := strconv.ParseUint(n, 10, 64); n == "" || err == nil {
				return true
			}
		}
	}
	return false
}

// isExecutable reports whether path is a regular file someone may run.
func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// mergeClaudeSettings puts Madebook's hook (command with args) on every
// event of initClaudeEvents in a Claude Code settings document, in place of
// Madebook's earlier hooks, and approves the MCP server "madebook".
func mergeClaudeSettings(doc *jsonObject, command string, args []string) error {
	if err := addToList(doc, "enabledMcpjsonServers", "madebook"); err != nil {
		return err
	}
	if v, ok := doc.get("disabledMcpjsonServers"); ok {
		if list, ok := v.([]any); ok { // else Claude Code's to complain about
			doc.set("disabledMcpjsonServers", listWithout(list, func(x any) bool { return x == "madebook" }))
		}
	}
	hooks, err := objectAt(doc, "hooks")
	if err != nil {
		return err
	}
	argv := make([]any, len(args))
	for i, a := range args {
		argv[i] = a
	}
	for _, ev := range initClaudeEvents {
		var groups []any
		if v, ok := hooks.get(ev.name); ok {
			if groups, ok = v.([]any); !ok {
				return fmt.Errorf("\"hooks\".%q is %s, not an array", ev.name, jsonKind(v))
			}
		}
		groups = withoutMadebookHooks(groups)
		h := newObject("type", "command", "command", command, "args", argv, "timeout", ev.timeout)
		if ev.block {
			h.set("onFailure", "block")
		}
		group := newObject()
		if ev.tool {
			group.set("matcher", "*")
		}
		group.set("hooks", []any{h})
		hooks.set(ev.name, append(groups, group))
	}
	return nil
}

// withoutMadebookHooks is an event's matcher groups less Madebook's own
// hooks; a group left with no hook is dropped, every other is kept as is.
func withoutMadebookHooks(groups []any) []any {
	kept := []any{}
	for _, g := range groups {
		group, ok := g.(*jsonObject)
		if !ok {
			kept = append(kept, g)
			continue
		}
		v, _ := group.get("hooks")
		list, ok := v.([]any)
		rest := listWithout(list, isMadebookHook)
		switch {
		case !ok || len(rest) == len(list):
			kept = append(kept, g)
		case len(rest) > 0:
			group.set("hooks", rest)
			kept = append(kept, group)
		}
	}
	return kept
}

// isMadebookHook reports whether a hook entry runs Madebook's hook: its
// command holds `madebook hook EXECUTOR` (as hand-written settings did),
// or its program (the command in the exec form, else the first word of the
// shell command) is madebook-hook, or madebook running `hook` (a madebook
// running `agent …` is a hook of the user's own).
func isMadebookHook(h any) bool {
	o, ok := h.(*jsonObject)
	if !ok {
		return false
	}
	v, _ := o.get("command")
	command, ok := v.(string)
	if !ok {
		return false
	}
	for _, e := range gate.Executors {
		if strings.Contains(command, "madebook hook "+e) || strings.Contains(command, leanHook+" "+e) {
			return true
		}
	}
	var args []string
	if v, ok := o.get("args"); ok {
		list, _ := v.([]any)
		for _, a := range list {
			s, _ := a.(string)
			args = append(args, s)
		}
	}
	program, rest := programName(command), args
	if program != "madebook" && program != leanHook {
		words := shellWords(command)
		if len(words) == 0 {
			return false
		}
		program, rest = programName(words[0]), append(words[1:], args...)
	}
	switch program {
	case leanHook:
		return true
	case "madebook":
		return len(rest) == 0 || rest[0] == "hook"
	}
	return false
}

// shellWords are the words of a shell command line up to its first
// operator (|, ;, &, a redirection…), with the POSIX quotes (single,
// double, backslash) taken off: what init's own command lines hold.
func shellWords(line string) []string {
	var (
		words []string
		w     strings.Builder
		in    bool // a word has begun (an empty '' is one)
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
			in = true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case strings.IndexByte("|;&<>()", c) >= 0:
			if in {
				words = append(words, w.String())
			}
			return words
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// programName is the base name of a program's path, less .exe.
func programName(path string) string {
	base := filepath.Base(filepath.FromSlash(path))
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".exe") {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// mergeMCPServers sets the MCP server "madebook" of a .mcp.json document:
// Madebook at base, the key taken from the environment.
func mergeMCPServers(doc *jsonObject, base string) error {
	servers, err := objectAt(doc, "mcpServers")
	if err != nil {
		return err
	}
	servers.set("madebook", newObject("type", "http", "url", base+"/mcp",
		"headers", newObject("Authorization", "Bearer ${MADEBOOK_KEY}")))
	return nil
}

// objectAt is doc's object under key, added empty when there is none.
func objectAt(doc *jsonObject, key string) (*jsonObject, error) {
	v, ok := doc.get(key)
	if !ok {
		o := newObject()
		doc.set(key, o)
		return o, nil
	}
	o, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an object", key, jsonKind(v))
	}
	return o, nil
}

// addToList adds s to doc's array under key (made when there is none),
// unless it holds s already.
func addToList(doc *jsonObject, key, s string) error {
	v, ok := doc.get(key)
	if !ok {
		doc.set(key, []any{s})
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%q is %s, not an array", key, jsonKind(v))
	}
	for _, x := range list {
		if x == s {
			return nil
		}
	}
	doc.set(key, append(list, s))
	return nil
}

// listWithout is list less the elements drop picks.
func listWithout(list []any, drop func(any) bool) []any {
	rest := []any{}
	for _, x := range list {
		if !drop(x) {
			rest = append(rest, x)
		}
	}
	return rest
}

// projectFile is one file init writes: where, in what state it was, and
// what it is to hold.
type projectFile struct {
	path   string // as given and printed
	target string // where it is written: path, its symlinks followed
	mode   fs.FileMode
	state  string // "created", "updated" or "unchanged"
	data   []byte // the new content (unless unchanged)
	tmp    string // the temporary file data is staged in
}

// planFile reads the JSON object at path (none yet: an empty one), merges
// Madebook's part into it and says what writing it would do. An error names
// the file and what is wrong with it.
func planFile(path string, merge func(*jsonObject) error) (*projectFile, error) {
	p, raw, err := readProjectFile(path)
	if err != nil {
		return nil, err
	}
	doc := newObject()
	if len(bytes.TrimSpace(raw)) > 0 {
		v, err := parseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %v; nothing was written", path, err)
		}
		var ok bool
		if doc, ok = v.(*jsonObject); !ok {
			return nil, fmt.Errorf("%s holds %s, not a JSON object; nothing was written", path, jsonKind(v))
		}
	}
	before := renderJSON(doc)
	if err := merge(doc); err != nil {
		return nil, fmt.Errorf("%s: %v; nothing was written", path, err)
	}
	p.data = renderJSON(doc)
	if p.state == "updated" && bytes.Equal(before, p.data) {
		p.state, p.data = "unchanged", nil
	}
	return p, nil
}

// readProjectFile is the file at path as init finds it: where it is
// written (its symlinks followed), its mode, "created" when it is not
// there yet or "updated", and its content. An error names the file.
func readProjectFile(path string) (*projectFile, []byte, error) {
	p := &projectFile{path: path, target: path, mode: 0o644, state: "created"}
	if t, err := filepath.EvalSymlinks(path); err == nil {
		p.target = t
	}
	raw, err := os.ReadFile(p.target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read %s: %w; nothing was written", path, err)
	}
	p.state = "updated"
	if st, err := os.Stat(p.target); err == nil {
		p.mode = st.Mode().Perm()
	}
	return p, raw, nil
}

// writeFiles writes every file that changed: each is staged in a temporary
// file beside it first, then all are renamed into place.
func writeFiles(files ...*projectFile) (err error) {
	defer func() {
		for _, p := range files {
			if p.tmp != "" {
				os.Remove(p.tmp) // a rename that happened left nothing here
			}
		}
	}()
	for _, p := range files {
		if p.state != "unchanged" {
			if err := p.stage(); err != nil {
				return fmt.Errorf("write %s: %w; nothing was written", p.path, err)
			}
		}
	}
	for _, p := range files {
		if p.tmp == "" {
			continue
		}
		if err := os.Rename(p.tmp, p.target); err != nil {
			return fmt.Errorf("write %s: %w", p.path, err)
		}
		p.tmp = ""
		syncDir(filepath.Dir(p.target))
	}
	return nil
}

// stage writes p's new content to a temporary file in its directory
// (made when missing), synced to disk.
func (p *projectFile) stage() error {
	dir := filepath.Dir(p.target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p.target)+".*.tmp")
	if err != nil {
		return err
	}
	p.tmp = f.Name()
	_, err = f.Write(p.data)
	if err == nil {
		err = f.Chmod(p.mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir flushes a directory's entries (a rename) to disk, where the
// system allows it; a failure there loses nothing already written.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// printInit says what init wrote and what to export before starting
// Claude Code.
func printInit(w io.Writer, settings, mcp *projectFile, command string, args []string, base, mission string) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\thooks: %s %s\n", settings.state, settings.path, command, strings.Join(args, " "))
	fmt.Fprintf(tw, "%s\t%s\tMCP server \"madebook\": %s/mcp\n", mcp.state, mcp.path, base)
	tw.Flush()
	b.WriteString("\nExport before starting claude:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  export MADEBOOK_KEY=mbk_…\t# madebook key create --name claude\n")
	if mission == "" {
		fmt.Fprintf(tw, "  export MADEBOOK_MISSION=SLUG\t# the mission's slug (or run init again with --mission SLUG)\n")
	}
	tw.Flush()
	if mission != "" {
		fmt.Fprintf(&b, "The hooks name the mission %q: MADEBOOK_MISSION is not needed.\n", mission)
	}
	b.WriteString("\nFail closed: with these settings a hook that cannot run (missing, crashed, timed out) blocks\n" +
		"the tool call; MADEBOOK_FAIL_OPEN=1 is the only way to fail open.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonObject is a JSON object that keeps its keys in the order they were
// read or set. Its values are *jsonObject, []any, string, json.Number,
// int, bool or nil.
type jsonObject struct{ members []jsonMember }

type jsonMember struct {
	key   string
	value any
}

// newObject is an object of the keys and values kv alternates.
func newObject(kv ...any) *jsonObject {
	o := &jsonObject{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *jsonObject) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of key where it stands, or adds key last.
func (o *jsonObject) set(key string, value any) {
	for i, m := range o.members {
		if m.key == key {
			o.members[i].value = value
			return
		}
	}
	o.members = append(o.members, jsonMember{key, value})
}

// parseJSON reads one JSON value, objects as *jsonObject in their order.
// An error says where (line and column) the input goes wrong.
func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err == nil {
		if _, err = dec.Token(); err == nil {
			err = fmt.Errorf("more data after the JSON value at offset %d", dec.InputOffset())
		} else if err == io.EOF {
			return v, nil
		}
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := jsonPosition(raw, se.Offset)
		return nil, fmt.Errorf("line %d, column %d: %v", line, col, se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, errors.New("it ends in the middle of a value")
	}
	return nil, err
}

func parseValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return t, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		o := newObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := k.(string) // the decoder allows only strings here
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(key, v)
		}
		_, err = dec.Token()
		return o, err
	case '[':
		list := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err = dec.Token()
		return list, err
	}
	return nil, fmt.Errorf("unexpected %q", d)
}

// jsonPosition is the line and column (from 1) of byte offset in raw.
func jsonPosition(raw []byte, offset int64) (line, col int) {
	if offset > int64(len(raw)) {
		offset = int64(len(raw))
	}
	before := raw[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n')
}

// jsonKind names a JSON value's kind for an error message.
func jsonKind(v any) string {
	switch v.(type) {
	case *jsonObject:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, int:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// renderJSON is v as JSON indented by two spaces, with a trailing newline,
// keys in their order, strings without HTML escapes.
func renderJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, indent string) {
	inner := indent + "  "
	switch v := v.(type) {
	case *jsonObject:
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range v.members {
			b.WriteString(inner)
			writeJSON(b, m.key, inner)
			b.WriteString(": ")
			writeJSON(b, m.value, inner)
			if i < len(v.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, x := range v {
			b.WriteString(inner)
			writeJSON(b, x, inner)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case string:
		var s bytes.Buffer
		enc := json.NewEncoder(&s)
		enc.SetEscapeHTML(false)
		enc.Encode(v) // a string always encodes
		b.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
	case json.Number:
		b.WriteString(v.String())
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
}
