// Package input checks the text fields of what people and agents send:
// trimmed, counted in characters (runes, not bytes), refused when empty
// where required or over the limit the input type names, and refused when
// they hold a control character (see Clean). Every error it returns is a
// 422 that names its field (errs.Error.Field), with the code
// <field>_required, <field>_too_long, too_many_entries, empty_entry or
// invalid_characters.
package input

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/errs"
)

// Text is the usual limit of free text a person reads: an instruction, a
// question, a note.
const Text = 4000

// Name is the usual limit of a name or a title.
const Name = 200

// Text fields may hold newlines and tabs; a line (a list entry: a path, a
// scope, a name in a list) may not. No field may hold any other control
// character: NUL, ESC (and so terminal escape sequences), DEL, or the C1
// controls U+0080 to U+009F. A carriage return before a newline (a browser
// form's line ending) is read as the newline alone.

// Clean returns v with "\r\n" read as "\n", or 422 invalid_characters
// naming field when v holds a control character other than newline and
// tab, or is not valid UTF-8.
func Clean(field, v string) (string, error) {
	if strings.Contains(v, "\r\n") {
		v = strings.ReplaceAll(v, "\r\n", "\n")
	}
	if i, r := badRune(v, true); i >= 0 {
		return "", refuse(field, "The "+words(field), i, r)
	}
	return v, nil
}

// CleanLine returns v, or 422 invalid_characters naming field when v holds
// any control character, newline and tab included: it is one line, such as
// a path, a name or a list entry.
func CleanLine(field, v string) (string, error) {
	if i, r := badRune(v, false); i >= 0 {
		return "", refuse(field, "The "+words(field), i, r)
	}
	return v, nil
}

// badRune returns the character offset and the rune of v's first control
// character (newline and tab allowed when text), or of an invalid UTF-8
// byte (utf8.RuneError); -1 when there is none.
func badRune(v string, text bool) (int, rune) {
	n := 0
	for i, r := range v {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(v[i:], "\uFFFD"):
			return n, r
		case text && (r == '\n' || r == '\t'):
		case unicode.IsControl(r):
			return n, r
		}
		n++
	}
	return -1, 0
}

// refuse is the invalid_characters error: what names the text, at is the
// offending character's position (0-based), r the character.
func refuse(field, what string, at int, r rune) error {
	c := "a byte that is not UTF-8"
	if r != utf8.RuneError {
		c = fmt.Sprintf("the control character U+%04X", r)
	}
	return errs.E(errs.Invalid, "invalid_characters", "%s holds %s at character %d: send text without control characters (newlines and tabs are allowed in text, not in names, paths or list entries).",
		what, c, at+1).In(field)
}

// Required trims v and refuses it empty, over max characters, or holding a
// control character other than newline and tab (see Clean).
func Required(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errs.E(errs.Invalid, field+"_required", "The %s is required.", words(field)).In(field)
	}
	return Optional(field, v, max)
}

// Optional trims v and refuses it over max characters or holding a
// control character other than newline and tab (see Clean).
func Optional(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	v, err := Clean(field, v)
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(v); n > max {
		return "", errs.E(errs.Invalid, field+"_too_long", "The %s is %d characters; at most %d are allowed.", words(field), n, max).In(field)
	}
	return v, nil
}

// List trims every entry of list and refuses an empty entry, an entry
// over maxLen characters or holding any control character (see
// CleanLine), and more than max entries.
func List(field string, list []string, max, maxLen int) ([]string, error) {
	if len(list) > max {
		return nil, errs.E(errs.Invalid, "too_many_entries", "%s has %d entries; at most %d are allowed.", field, len(list), max).In(field)
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, errs.E(errs.Invalid, "empty_entry", "%s entry %d is empty.", field, i+1).In(field)
		}
		if n := utf8.RuneCountInString(e); n > maxLen {
			return nil, errs.E(errs.Invalid, field+"_too_long", "%s entry %d is %d characters; at most %d are allowed.", field, i+1, n, maxLen).In(field)
		}
		if j, r := badRune(e, false); j >= 0 {
			return nil, refuse(field, fmt.Sprintf("%s entry %d", field, i+1), j, r)
		}
		out = append(out, e)
	}
	return out, nil
}

// words is a field's name as a person reads it: blocked_scope → blocked scope.
func words(field string) string { return strings.ReplaceAll(field, "_", " ") }
