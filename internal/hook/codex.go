package hook

// Codex CLI (0.171.0) sends Claude Code's fields and event names
// (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop,
// SessionEnd); its shell is Bash {"command"} and its patch tool
// apply_patch {"command": the whole patch}, their paths as the model
// wrote them, from the cwd (which follows the shell's workdir). It gives
// its hooks no project directory: the root is git's top level.

// codexRender is the answer as Codex reads it: Claude Code's
// hookSpecificOutput, with only the keys Codex knows (one key more and
// Codex drops the whole answer, and the tool runs); a message for the
// user goes to stderr.
func codexRender(_ Input, out Output) Rendered {
	r := Rendered{Stderr: out.SystemMessage}
	if out.Specific == nil {
		return r
	}
	r.Stdout = jsonAnswer(struct {
		Specific *Specific `json:"hookSpecificOutput"`
	}{out.Specific}).Stdout
	return r
}
