package change_test

import (
	"testing"

	"github.com/madebook/madebook/internal/change"
)

func TestText(t *testing.T) {
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n package x\n-var a = 1\n+var a = 2\n+var b = 3"
	f := change.File{Path: "x.go", Diff: diff}
	if got, want := f.Text(), "var a = 2\nvar b = 3\n"; got != want {
		t.Errorf("Text of a diff = %q, want %q (only the added lines)", got, want)
	}
	if f.Lines() != 2 {
		t.Errorf("Lines of a diff = %d, want 2", f.Lines())
	}
	c := change.File{Path: "y.go", Content: "a\nb\nc"}
	if c.Text() != "a\nb\nc" || c.Lines() != 3 {
		t.Errorf("content: %q, %d lines", c.Text(), c.Lines())
	}
	if (change.File{}).Lines() != 0 {
		t.Error("an empty file has lines")
	}
}

func TestBinary(t *testing.T) {
	if !change.Binary("PK\x03\x04\x00\x00") {
		t.Error("a NUL byte is not binary")
	}
	if change.Binary("plain text\n") {
		t.Error("text is binary")
	}
}
