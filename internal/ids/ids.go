// Package ids makes the random ids Madebook gives sessions, runs and asks.
package ids

import "crypto/rand"

// New returns a random id with the prefix, e.g. "ses_k3j9x2m4q8wz": 12
// characters from a 32-letter alphabet (60 bits), easy to read aloud.
func New(prefix string) string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 12)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}
