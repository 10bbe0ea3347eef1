// Package ids makes the random ids Madebook gives sessions, runs and asks.
package ids

import (
	"crypto/rand"
	"strings"
)

// alphabet is the 32 letters of an id: no 0, 1, l or o, which read alike.
const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// New returns a random id with the prefix, e.g. "ses_k3j9x2m4q8wz": 12
// characters from a 32-letter alphabet (60 bits), easy to read aloud.
// Each brief takes one, so it costs one allocation.
func New(prefix string) string {
	var b [12]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	var out strings.Builder
	out.Grow(len(prefix) + len(b))
	out.WriteString(prefix)
	out.Write(b[:])
	return out.String()
}
