package gate

import (
	"slices"
	"strings"
)

// The headers of the apply_patch format (Codex's patch tool, and
// Copilot's) that name a file the patch writes.
var patchHeaders = []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"}

// PatchPaths returns the files a patch in the apply_patch format writes,
// in the order its headers name them, each once: every file it adds,
// updates or deletes, and every file an update moves to. Lines that are
// not headers (the hunks' changes) name nothing; a context line that
// reads as a header is taken for one, which can only refuse more.
func PatchPaths(patch string) []string {
	var out []string
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(line, h); ok {
				if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}
