package input

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bidi reports whether r is a bidirectional formatting character: the
// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the
// marks (U+200E, U+200F, U+061C). They are allowed in text (a right-to-left
// language needs them) but can make text read differently from what it
// is, e.g. a file name whose end is shown reversed, so Visible shows them.
func Bidi(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200E || r == 0x200F || r == 0x061C
}

// Visible returns s with every bidirectional formatting character and
// every control character other than newline and tab written as a visible
// marker, ⟨U+202E⟩, so that what a person sees is what was sent. Text
// stored before control characters were refused gets the same treatment.
// An invalid UTF-8 byte is shown as ⟨?⟩.
func Visible(s string) string {
	if !needsMarker(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString("⟨?⟩")
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || Bidi(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsMarker says whether Visible would change s.
func needsMarker(s string) bool {
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || Bidi(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return true
		}
	}
	return false
}
