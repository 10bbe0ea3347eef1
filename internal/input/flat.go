package input

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Member is one member Shallow may read: a plain string, into Str.
type Member struct {
	Name string
	Str  *string
}

// Shallow decodes data when it is the plainest shape of a small request
// body: one JSON object whose members are each named exactly (same case)
// by one of members, at most once, each a string of printable ASCII
// without an escape, with JSON's whitespace around the tokens. A member the object does not
// have leaves its destination alone. It reports false for anything else
// (another field, another type, a nested list or object, a duplicate,
// broken JSON) and then writes nothing: such a body is decoded by
// DecodeJSON, which accepts or refuses it in its own words. For every body
// it accepts, DecodeJSON decodes the same values (a fuzz test holds it to
// that).
//
// It exists for the body agents send most, the brief's
// {"session":"ses_…","ack":"brf_…"}, which it reads in about a quarter of
// DecodeJSON's time (BenchmarkShallow).
func Shallow(data []byte, members []Member) bool {
	if len(members) > 8 {
		return false
	}
	var strs [8]string
	var seen uint8
	_, ok := object(data, skipSpace(data, 0), true, func(key []byte, i int) (int, bool) {
		k := -1
		for j := range members {
			if members[j].Name == string(key) {
				k = j
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return 0, false
		}
		seen |= 1 << k
		s, next, ok := plainString(data, i)
		strs[k] = s
		return next, ok
	})
	if !ok {
		return false
	}
	for k, m := range members {
		if seen&(1<<k) != 0 {
			*m.Str = strs[k]
		}
	}
	return true
}

// flatObject reads the flat object at data[i:] (top: all of data but
// whitespace): up to flatMax members of plain keys, each key checked
// against those before it, and scalar values. It returns the object and
// the index after it.
func flatObject(data []byte, i int, top bool) (Object, int, bool) {
	var keys [flatMax][]byte
	n := 0
	next, ok := object(data, i, top, func(key []byte, i int) (int, bool) {
		if n == flatMax || slices.ContainsFunc(keys[:n], func(k []byte) bool { return bytes.Equal(k, key) }) {
			return 0, false
		}
		keys[n] = key
		n++
		return scalar(data, i)
	})
	if !ok {
		return Object{}, 0, false
	}
	return Object{flat: data[i:next:next]}, next, true
}

// object reads the JSON object at data[i:] whose keys are plain strings,
// calling value with each key (a slice of data) and the index of its
// value, which returns the index after the value. At the top, the object
// must be all of data but whitespace. It returns the index after the
// object.
func object(data []byte, i int, top bool, value func(key []byte, i int) (int, bool)) (int, bool) {
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	end := func(i int) (int, bool) {
		if top && skipSpace(data, i) != len(data) {
			return 0, false
		}
		return i, true
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return end(i + 1)
	}
	for {
		key, next, ok := plainBytes(data, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		if next, ok = value(key, skipSpace(data, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(data, next)
		if i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return end(i + 1)
		default:
			return 0, false
		}
	}
}

// plainString reads the JSON string at data[i:] when it has no escape and
// only printable ASCII, returning it and the index after its closing quote.
func plainString(data []byte, i int) (string, int, bool) {
	b, next, ok := plainBytes(data, i)
	return string(b), next, ok
}

// plainBytes is plainString's string as the slice of data it is, not a
// copy.
func plainBytes(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// scalar returns the index after the JSON string, number, true, false or
// null at data[i:], checking it as encoding/json's scanner does.
func scalar(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		return stringEnd(data, i)
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(data, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	return 0, false
}

// stringEnd returns the index after the JSON string starting at data[i]
// (a quote): any byte from 0x20 up, and the escapes JSON has.
func stringEnd(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-j <= 4 {
					return 0, false
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// numberEnd returns the index after the JSON number starting at data[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(data []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
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

// String is what encoding/json reads from the JSON value raw into a Go
// string (null reads as ""); false when it refuses (raw is not a string).
// A string of plain printable ASCII, as paths and commands mostly are,
// is read without encoding/json.
func String(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false // absent: encoding/json would refuse it too
	}
	if b, end, ok := plainBytes(raw, 0); ok && end == len(raw) {
		return string(b), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}
