package input

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
)

func TestTextFields(t *testing.T) {
	cases := []struct {
		name      string
		check     func() (string, error)
		want      string
		code      string
		inMessage string
	}{
		{"a required field is trimmed", func() (string, error) { return Required("title", "  Drop it \n", 10) }, "Drop it", "", ""},
		{"a required field that is empty is title_required", func() (string, error) { return Required("title", "", 10) }, "", "title_required", "The title is required."},
		{"a required field of spaces is empty", func() (string, error) { return Required("title", " \t\n", 10) }, "", "title_required", ""},
		{"characters are counted, not bytes: 10 accented letters fit in 10", func() (string, error) { return Required("title", strings.Repeat("é", 10), 10) }, strings.Repeat("é", 10), "", ""},
		{"one character over is <field>_too_long, saying both numbers", func() (string, error) { return Required("title", strings.Repeat("é", 11), 10) }, "", "title_too_long", "11 characters; at most 10"},
		{"an optional field may be empty", func() (string, error) { return Optional("note", "", 10) }, "", "", ""},
		{"an optional field over the limit is refused", func() (string, error) { return Optional("blocked_scope", strings.Repeat("x", 11), 10) }, "", "blocked_scope_too_long", "The blocked scope is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.check()
			if c.code == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %q, %v; want %q", got, err, c.want)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Code != c.code || e.Kind != errs.Invalid {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			if e.Field == "" || !strings.HasPrefix(c.code, e.Field) {
				t.Errorf("the error is about field %q; want the field of %s", e.Field, c.code)
			}
			if !strings.Contains(e.Message, c.inMessage) {
				t.Errorf("message %q does not say %q", e.Message, c.inMessage)
			}
		})
	}
}

func TestLists(t *testing.T) {
	t.Run("entries are trimmed", func(t *testing.T) {
		got, err := List("blocked_scope", []string{" db/ ", "web/"}, 2, 10)
		if err != nil || strings.Join(got, ",") != "db/,web/" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	for _, c := range []struct {
		name string
		list []string
		code string
	}{
		{"more entries than allowed is too_many_entries", []string{"a", "b", "c"}, "too_many_entries"},
		{"an empty entry is empty_entry", []string{"a", " "}, "empty_entry"},
		{"an entry over its limit is <field>_too_long", []string{strings.Repeat("x", 11)}, "blocked_scope_too_long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := List("blocked_scope", c.list, 2, 10)
			if errs.CodeOf(err) != c.code || errs.FieldOf(err) != "blocked_scope" {
				t.Fatalf("error %v (field %q), want %s about blocked_scope", err, errs.FieldOf(err), c.code)
			}
		})
	}
}

// TestControlCharacters proves that every text field refuses NUL, ESC,
// DEL and the C1 controls, keeps newlines and tabs in text but not in a
// list entry, reads a browser's "\r\n" as "\n", and lets bidi controls
// through (the console shows them; see views.Visible).
func TestControlCharacters(t *testing.T) {
	cases := []struct {
		name  string
		check func() (string, error)
		want  string
		code  string
	}{
		{"a NUL in a required field is refused", func() (string, error) { return Required("title", "Drop\x00 it", 50) }, "", "invalid_characters"},
		{"an ESC sequence in an optional field is refused", func() (string, error) { return Optional("note", "\x1b]0;pwned\x07", 50) }, "", "invalid_characters"},
		{"DEL is refused", func() (string, error) { return Optional("note", "a\x7fb", 50) }, "", "invalid_characters"},
		{"a C1 control (CSI, U+009B) is refused", func() (string, error) { return Optional("note", "a\u009b2J", 50) }, "", "invalid_characters"},
		{"a lone carriage return is refused", func() (string, error) { return Optional("note", "done\rnot done", 50) }, "", "invalid_characters"},
		{"a byte that is not UTF-8 is refused", func() (string, error) { return Optional("note", "a\xffb", 50) }, "", "invalid_characters"},
		{"newlines and tabs stay in text", func() (string, error) { return Required("question", "Drop it?\n\tYes or no", 50) }, "Drop it?\n\tYes or no", ""},
		{"a browser's CRLF reads as LF", func() (string, error) { return Required("question", "one\r\ntwo", 50) }, "one\ntwo", ""},
		{"a literal replacement character is text", func() (string, error) { return Required("title", "a\uFFFDb", 50) }, "a\uFFFDb", ""},
		{"bidi controls are allowed in text (shown visibly)", func() (string, error) { return Required("title", "abc\u202Etxt.exe", 50) }, "abc\u202Etxt.exe", ""},
		{"a line refuses a newline", func() (string, error) { return CleanLine("path", "a\nb") }, "", "invalid_characters"},
		{"a line refuses a tab", func() (string, error) { return CleanLine("path", "a\tb") }, "", "invalid_characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.check()
			if c.code == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if errs.CodeOf(err) != c.code || errs.KindOf(err) != errs.Invalid || errs.FieldOf(err) == "" {
				t.Fatalf("error %v (%s about %q), want %s about its field", err, errs.CodeOf(err), errs.FieldOf(err), c.code)
			}
		})
	}
	t.Run("a list entry with a newline is refused, naming the entry", func(t *testing.T) {
		_, err := List("paths", []string{"ok.go", "a\nb.go"}, 5, 50)
		if errs.CodeOf(err) != "invalid_characters" || errs.FieldOf(err) != "paths" || !strings.Contains(err.Error(), "entry 2") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the message names the character and where it is", func(t *testing.T) {
		_, err := Optional("title", "ab\x1b[2J", 50)
		if !strings.Contains(err.Error(), "U+001B at character 3") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, é and 日本", "plain text, é and 日本"},
		{"lines\nand\ttabs stay", "lines\nand\ttabs stay"},
		{"invoice\u202Efdp.exe", "invoice⟨U+202E⟩fdp.exe"},
		{"\u2066isolate\u2069 and \u200Fmark", "⟨U+2066⟩isolate⟨U+2069⟩ and ⟨U+200F⟩mark"},
		{"nul\x00 esc\x1b[2J del\x7f cr\r", "nul⟨U+0000⟩ esc⟨U+001B⟩[2J del⟨U+007F⟩ cr⟨U+000D⟩"},
		{"bad\xffbyte", "bad⟨?⟩byte"},
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
