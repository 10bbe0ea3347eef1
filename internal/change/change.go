// Package change is what an agent reports of its session's work: the whole
// change so far, as a pull request's diff is. Each report replaces the
// previous one.
package change

// File is one changed file: its whole new content, or a unified diff.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
	Diff    string `json:"diff,omitempty"`
}

// Change is a session's whole change so far.
type Change struct {
	Files          []File   `json:"files,omitzero" jsonschema:"Every file the change touches so far, with its content or diff: each report replaces the last."`
	Dependencies   []string `json:"dependencies,omitzero" jsonschema:"Dependencies the change adds."`
	SymbolsChanged []string `json:"symbols_changed,omitzero" jsonschema:"Symbols the change modifies."`
	SymbolsUsed    []string `json:"symbols_used,omitzero" jsonschema:"Symbols the change builds on."`
}

// Text returns the text of a file that the checks read: its content, or
// for a diff the lines it adds (without the leading "+"), since a policy
// or a rule is about what the change puts in, not what it takes out.
func (f File) Text() string {
	if f.Diff == "" {
		return f.Content
	}
	var b []byte
	start := 0
	d := f.Diff
	for i := 0; i <= len(d); i++ {
		if i < len(d) && d[i] != '\n' {
			continue
		}
		line := d[start:i]
		start = i + 1
		if len(line) > 0 && line[0] == '+' && !(len(line) >= 3 && line[:3] == "+++") {
			b = append(b, line[1:]...)
			b = append(b, '\n')
		}
	}
	return string(b)
}

// Binary reports whether the text looks binary (a NUL byte in its first
// 8 KiB): checks skip such files rather than match against them.
func Binary(text string) bool {
	n := len(text)
	if n > 8192 {
		n = 8192
	}
	for i := 0; i < n; i++ {
		if text[i] == 0 {
			return true
		}
	}
	return false
}

// Lines counts the lines a file adds: all of its content, or the added
// lines of its diff.
func (f File) Lines() int {
	t := f.Text()
	if t == "" {
		return 0
	}
	n := 0
	for i := 0; i < len(t); i++ {
		if t[i] == '\n' {
			n++
		}
	}
	if t[len(t)-1] != '\n' {
		n++
	}
	return n
}
