package input

// FlatStrings decodes data when it is the plainest shape of a small
// request body: one JSON object whose members are all strings, each named
// exactly (same case) by one of names at most once, each value printable
// ASCII without a quote or backslash, with JSON's whitespace around the
// tokens. The value of names[i] goes to *dst[i]; a name the object does
// not have leaves its destination alone. It reports false for anything
// else (another field, another type, an escape, a duplicate, broken JSON)
// and then writes nothing: such a body is decoded by DecodeJSON, which
// accepts or refuses it in its own words. For every body it accepts,
// DecodeJSON would decode the same values (a fuzz test holds it to that).
//
// It exists for the hottest body there is, the brief's
// {"session":"ses_…"}, which it reads without encoding/json's reflection,
// allocating only the values.
func FlatStrings(data []byte, names []string, dst []*string) bool {
	if len(names) != len(dst) || len(names) > 8 {
		return false
	}
	var vals [8]string
	var seen uint8
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		key, next, ok := plainString(data, i)
		if !ok {
			return false
		}
		k := -1
		for j, n := range names {
			if n == key {
				k = j
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		val, next, ok := plainString(data, skipSpace(data, i+1))
		if !ok {
			return false
		}
		vals[k], seen = val, seen|1<<k
		i = skipSpace(data, next)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
			continue
		case '}':
			if skipSpace(data, i+1) != len(data) {
				return false
			}
		default:
			return false
		}
		break
	}
	for k := range names {
		if seen&(1<<k) != 0 {
			*dst[k] = vals[k]
		}
	}
	return true
}

// plainString reads the JSON string at data[i:] when it has no escape and
// only printable ASCII, returning it and the index after its closing quote.
func plainString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", 0, false
		}
	}
	return "", 0, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
