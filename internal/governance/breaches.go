package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/gate"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/policy"
	"github.com/madebook/madebook/internal/protocol"
)

// ScopeBreachService records the breaches of a blocked scope that coding
// agents' hooks report. While a session has a blocked scope (an open
// decision gate's), the hook notes the scope's state on disk before an
// allowed side-effecting call and compares it after the call ran: files
// that changed inside it are a breach. A breach is a fact about what ran,
// so it is recorded whatever the session's state, and it is a critical
// violation of the session (HARD_STOP until a person clears it, as any
// critical violation: ChangeService.ClearViolation), an Attention item, a
// row of the premature-side-effects audit and a line of the timeline.
type ScopeBreachService struct{ core *core }

// BreachPolicy is what a breach's violation names where a policy's
// violation names its policy: no policy found it.
const BreachPolicy = "Blocked scope breached"

// BreachEvent is the kind of the timeline event a breach records, its
// ref the run, its detail what the call changed where.
const BreachEvent = "scope.breached"

// The limits of a breach report, in characters (runes) or entries.
const (
	MaxBreachFiles   = 100        // the files one breach names, as a tool call's paths
	MaxBreachFile    = 1000       // one of them
	MaxBreachCommand = 2000       // the command the call ran
	MaxToolUseID     = input.Name // the executor's id of the call (Claude Code's tool_use_id)
	MaxBreachTool    = input.Name // the tool, as the agent knows it
)

// ScopeBreachInput is the body of POST /api/v1/runs/{id}/breaches: the
// call, as the agent knows its tool (Bash, Edit, mcp__server__tool) and
// optionally the executor's id of it and its command, the files it
// changed (relative to the project's root) and optionally the blocked
// scope entries they lie in.
type ScopeBreachInput struct {
	Tool      string   `json:"tool"`
	ToolUseID string   `json:"tool_use_id,omitzero"`
	Files     []string `json:"files"`
	Scope     []string `json:"scope,omitzero"`
	Command   string   `json:"command,omitzero"`
}

// ScopeBreach is a breach of a blocked scope, as recorded.
type ScopeBreach struct {
	ID      int64  `json:"id"`
	Run     string `json:"run"`
	Session string `json:"session"`
	// Server and Tool are the tool's, Tool as the agent knows it (see
	// gate.ToolName): "Bash" on server claude-code.
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Command   string `json:"command,omitempty"`
	// Files are the files the call changed, relative to the project root.
	Files []string `json:"files"`
	// Scope are the blocked scope entries they lie in: as the hook named
	// them, else those of the open gates that hold them.
	Scope []string `json:"scope"`
	// Decisions are the open gates (DEC-…) whose blocked scope holds a
	// file or names a scope entry: the decisions the call ran ahead of.
	Decisions []string `json:"decisions"`
	// Violation is the id of the critical violation the breach is.
	Violation  int64     `json:"violation"`
	DetectedAt time.Time `json:"detected_at"`
}

// Validate returns the input with its texts trimmed, its files cleaned
// (`db//migrations/./x.sql` is `db/migrations/x.sql`; `\` is a separator)
// and both lists without duplicates, and any secret in a file, a scope
// entry or the command replaced by [REDACTED] (policy.RedactSecrets), as
// a tool call's paths are. Every error names its field. Errors:
// tool_required, tool_too_long, tool_use_id_too_long, files_required,
// too_many_entries, empty_entry, files_too_long, scope_too_long,
// invalid_files (an absolute path, or one that leaves the project),
// command_too_long, invalid_characters.
func (in ScopeBreachInput) Validate() (ScopeBreachInput, error) {
	var err error
	if in.Tool, err = input.Required("tool", in.Tool, MaxBreachTool); err != nil {
		return in, err
	}
	if _, err = input.CleanLine("tool", in.Tool); err != nil {
		return in, err
	}
	if in.ToolUseID, err = input.Optional("tool_use_id", in.ToolUseID, MaxToolUseID); err != nil {
		return in, err
	}
	if _, err = input.CleanLine("tool_use_id", in.ToolUseID); err != nil {
		return in, err
	}
	if len(in.Files) == 0 {
		return in, errs.E(errs.Invalid, "files_required",
			"Name the files the call changed inside the blocked scope, relative to the project root: \"files\": [\"db/migrations/0042.sql\"].").In("files")
	}
	files, err := input.List("files", in.Files, MaxBreachFiles, MaxBreachFile)
	if err != nil {
		return in, err
	}
	in.Files = make([]string, 0, len(files))
	for i, f := range files {
		p, err := projectPath(i, policy.RedactSecrets(f))
		if err != nil {
			return in, err
		}
		if !slices.Contains(in.Files, p) {
			in.Files = append(in.Files, p)
		}
	}
	scope, err := input.List("scope", in.Scope, MaxScopeEntries, MaxScopeEntry)
	if err != nil {
		return in, err
	}
	in.Scope = make([]string, 0, len(scope))
	for _, e := range scope {
		if e = policy.RedactSecrets(e); !slices.Contains(in.Scope, e) {
			in.Scope = append(in.Scope, e)
		}
	}
	if in.Command, err = input.Optional("command", in.Command, MaxBreachCommand); err != nil {
		return in, err
	}
	in.Command = policy.RedactSecrets(in.Command)
	return in, nil
}

// projectPath is the i-th file of a breach cleaned as the scopes read
// paths, or invalid_files when it is not a path inside the project: an
// absolute path (the hook sends them relative to the root), or one whose
// ".." leaves it. The path is already redacted, so the error may quote it.
func projectPath(i int, p string) (string, error) {
	q := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(q, "/") || strings.HasPrefix(q, "~") || (len(q) >= 2 && q[1] == ':' && isASCIILetter(q[0])) {
		return "", errs.E(errs.Invalid, "invalid_files",
			"files entry %d (%q) is an absolute path: send each file relative to the project root, such as db/migrations/0042.sql.", i+1, p).In("files")
	}
	c := path.Clean(q)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", errs.E(errs.Invalid, "invalid_files",
			"files entry %d (%q) is not a file inside the project: send each file relative to the project root, such as db/migrations/0042.sql.", i+1, p).In("files")
	}
	return c, nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Report records a breach of a blocked scope on the agent's own run, in
// one transaction: the breach, the critical violation it is (no policy
// found it: BreachPolicy, its match the call), a scope.breached and a
// violation.detected event in the session's timeline, and the
// notifications a critical violation causes (hard_stop,
// attention.created). It is recorded whatever the session's state and the
// run's status: a HARD_STOP, paused or ended session still reports what
// ran. The scope, when the hook names none, is the blocked scope entries
// of the session's open gates that hold the files. Errors: forbidden (not
// an agent, or another key's run), those of ScopeBreachInput.Validate,
// run_not_found.
func (s *ScopeBreachService) Report(ctx context.Context, actor auth.Actor, runID string, in ScopeBreachInput) (ScopeBreach, error) {
	if err := actor.RequireAgent("report a breach of a blocked scope"); err != nil {
		return ScopeBreach{}, err
	}
	in, err := in.Validate()
	if err != nil {
		return ScopeBreach{}, err
	}
	server, tool := gate.SplitTool(in.Tool)
	now := s.core.now()
	out := ScopeBreach{Run: runID, Server: server, Tool: gate.ToolName(server, tool), ToolUseID: in.ToolUseID, Command: in.Command,
		Files: in.Files, DetectedAt: now}
	err = s.core.write(ctx, func(q db.Querier) error {
		r, err := q.GetRun(ctx, runID)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "run_not_found", "No run has the id %q.", runID)
		} else if err != nil {
			return err
		}
		if r.AgentKeyID != actor.KeyID {
			return errs.E(errs.Forbidden, "forbidden", "This run belongs to another agent key.")
		}
		out.Session = r.SessionID
		open, err := q.ListOpenDecisions(ctx, r.SessionID)
		if err != nil {
			return err
		}
		var held []string
		if out.Decisions, held, err = governing(open, in.Files, in.Scope); err != nil {
			return err
		}
		out.Scope = in.Scope
		if len(out.Scope) == 0 {
			out.Scope = held
		}
		b, err := q.CreateScopeBreach(ctx, db.CreateScopeBreachParams{SessionID: r.SessionID, RunID: runID, Server: server, Tool: tool,
			ToolUseID: in.ToolUseID, Command: in.Command, Files: encodeList(out.Files), Scope: encodeList(out.Scope),
			Decisions: encodeList(out.Decisions), DetectedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		out.ID = b.ID
		call := breachCall(out.Tool, in.Command)
		v, err := q.CreateBreachViolation(ctx, db.CreateBreachViolationParams{SessionID: r.SessionID,
			BreachID: sql.NullInt64{Int64: b.ID, Valid: true}, Policy: BreachPolicy, Match: call, File: out.Files[0],
			DetectedAt: db.FormatTime(now)})
		if err != nil {
			return err
		}
		out.Violation = v.ID
		what := protocol.ScopeBreach{Call: call, Scope: out.Scope, Files: out.Files}
		detail := BreachTitle(what) + ": " + strings.Join(out.Files, ", ")
		if in.ToolUseID != "" {
			detail += " (tool use " + in.ToolUseID + ")"
		}
		if err := s.core.event(ctx, q, r.SessionID, actor, now, BreachEvent, runID, detail); err != nil {
			return err
		}
		return s.core.event(ctx, q, r.SessionID, actor, now, notify.KindViolationDetected, fmt.Sprint(v.ID),
			fmt.Sprintf("%s %s: %s in %s", v.Severity, v.Policy, v.Match, strings.Join(out.Files, ", ")))
	})
	if err != nil {
		return ScopeBreach{}, fmt.Errorf("breach on run %s: %w", runID, err)
	}
	return out, nil
}

// governing returns the open gates a breach ran ahead of, those whose
// blocked scope holds one of the files or names an entry of the reported
// scope, and the entries of theirs that hold a file (each once, in the
// gates' order).
func governing(open []db.Decision, files, scope []string) (refs, held []string, err error) {
	refs, held = []string{}, []string{}
	for _, d := range open {
		c := db.StoredRow("decisions", d.Ref)
		blocked := c.List("blocked_scope", d.BlockedScope)
		if err := c.Err(); err != nil {
			return nil, nil, err
		}
		governs := false
		for _, entry := range blocked {
			if slices.Contains(scope, entry) {
				governs = true
			}
			for _, f := range files {
				if gate.InScope(entry, f) {
					governs = true
					if !slices.Contains(held, entry) {
						held = append(held, entry)
					}
					break
				}
			}
		}
		if governs {
			refs = append(refs, d.Ref)
		}
	}
	return refs, held, nil
}

// maxCallCommand is how much of a command a breach's reason quotes.
const maxCallCommand = 80

// breachCall names a breach's call as its reason does: the tool, and the
// first line of its command, cut at maxCallCommand characters ("Bash
// (make migrate)").
func breachCall(tool, command string) string {
	line, rest, _ := strings.Cut(strings.TrimSpace(command), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return tool
	}
	if utf8.RuneCountInString(line) > maxCallCommand {
		line = string([]rune(line)[:maxCallCommand]) + "…"
	} else if strings.TrimSpace(rest) != "" {
		line += " …"
	}
	return tool + " (" + line + ")"
}

// BreachTitle says what a breach is in a line, as the Attention view and
// the timeline show it: "Bash (make migrate) wrote into the blocked scope
// db/migrations before its decision was made", or "Bash ran without a
// check by Madebook's hook" for an ungoverned call.
func BreachTitle(b protocol.ScopeBreach) string {
	if b.Ungoverned {
		return b.Call + " ran without a check by Madebook's hook"
	}
	if len(b.Scope) == 0 {
		return b.Call + " wrote into a blocked scope before its decision was made"
	}
	return b.Call + " wrote into the blocked scope " + strings.Join(b.Scope, ", ") + " before its decision was made"
}
