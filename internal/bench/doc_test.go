package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// WriteDoc replaces what lies between the markers, and only that, and
// refuses a file without them, changing nothing.
func TestWriteDocReplacesTheFiguresSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	before, after := "# Benchmarks\n\nHow to read them.\n\n", "\n\n## More\n\nkept\n"
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(before + docBegin + "\nold figures\n" + docEnd + after)
	at := time.Date(2026, 12, 2, 15, 4, 0, 0, time.UTC)
	for _, output := range []string{"first run\n", "second run\n"} {
		if err := WriteDoc(path, Defaults, output, at); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		s := string(got)
		if !strings.HasPrefix(s, before+docBegin) || !strings.HasSuffix(s, docEnd+after) {
			t.Fatalf("the text around the section changed:\n%s", s)
		}
		if strings.Contains(s, "old figures") || strings.Count(s, "run\n") != 1 || !strings.Contains(s, "```text\n"+output+"```") {
			t.Errorf("the section holds:\n%s", s)
		}
		if !strings.Contains(s, "Run on 2026-12-02 15:04 UTC") || !strings.Contains(s, "SQLite, the default settings") {
			t.Errorf("the heading:\n%s", s)
		}
	}

	for _, broken := range []string{"no markers\n", docEnd + "\n" + docBegin + "\n"} {
		write(broken)
		if err := WriteDoc(path, Defaults, "figures\n", at); err == nil || !strings.Contains(err.Error(), "no section to write") {
			t.Errorf("WriteDoc on %q: %v", broken, err)
		}
		if got, _ := os.ReadFile(path); string(got) != broken {
			t.Errorf("a refused file was changed to %q", got)
		}
	}
}

func TestSettingsNameWhatDiffersFromTheDefaults(t *testing.T) {
	if got := Defaults.settings(); got != "SQLite, the default settings" {
		t.Errorf("defaults: %q", got)
	}
	c := Defaults
	c.DB, c.Sessions = "postgres://x/y", 100
	if got := c.settings(); !strings.HasPrefix(got, "PostgreSQL, --sessions 100 ") {
		t.Errorf("changed: %q", got)
	}
}
