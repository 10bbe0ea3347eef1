// Package input checks the text fields of what people and agents send:
// trimmed, counted in characters (runes, not bytes), refused when empty
// where required or over the limit the input type names. Every error it
// returns is a 422 that names its field (errs.Error.Field), with the code
// <field>_required, <field>_too_long, too_many_entries or empty_entry.
package input

import (
	"strings"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/errs"
)

// Text is the usual limit of free text a person reads: an instruction, a
// question, a note.
const Text = 4000

// Name is the usual limit of a name or a title.
const Name = 200

// Required trims v and refuses it empty or over max characters.
func Required(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errs.E(errs.Invalid, field+"_required", "The %s is required.", words(field)).In(field)
	}
	return Optional(field, v, max)
}

// Optional trims v and refuses it over max characters.
func Optional(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if n := utf8.RuneCountInString(v); n > max {
		return "", errs.E(errs.Invalid, field+"_too_long", "The %s is %d characters; at most %d are allowed.", words(field), n, max).In(field)
	}
	return v, nil
}

// List trims every entry of list and refuses an empty entry, an entry
// over maxLen characters, and more than max entries.
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
		out = append(out, e)
	}
	return out, nil
}

// words is a field's name as a person reads it: blocked_scope → blocked scope.
func words(field string) string { return strings.ReplaceAll(field, "_", " ") }
