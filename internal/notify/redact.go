package notify

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Mask stands for the hidden part of a secret.
const Mask = "••••"

// RedactURL is a webhook URL as it may be shown, logged and recorded:
// the sender needs the whole URL, nobody else does. Userinfo becomes
// Mask; each path segment or query value that looks like a secret shows
// only its last four characters after Mask (or none, when it is too
// short for four to be safe to show). A secret is a segment in a known
// token's place (Slack's /services/T…/B…/SECRET, Discord's
// /webhooks/ID/TOKEN, Zapier's /hooks/catch/ID/KEY), the value of a query
// parameter whose name says it holds one (token, key, secret, sig,
// password, auth, code, …), or anything long and random-looking (a run of
// 24 letters and digits, a long hex string or UUID, a 16-character string
// that keeps switching between digits, lower and upper case). Host, port
// and readable words stay as they are. What cannot be read as an
// absolute URL is Mask whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" || u.Scheme == "" {
		return Mask
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(Mask + "@")
	}
	b.WriteString(u.Host)
	segs := strings.Split(u.EscapedPath(), "/")
	known := knownSecrets(segs)
	for i, s := range segs {
		if known[i] || secretLike(s) {
			segs[i] = masked(s)
		}
	}
	b.WriteString(strings.Join(segs, "/"))
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?" + redactQuery(u.RawQuery))
	}
	if u.Fragment != "" || u.RawFragment != "" {
		b.WriteString("#" + Mask)
	}
	return b.String()
}

// masked is a secret as shown: Mask and its last four characters, when
// it has at least twelve (so a quarter at most shows); Mask alone
// otherwise; "" stays "".
func masked(s string) string {
	if s == "" {
		return s
	}
	if utf8.RuneCountInString(s) < 12 {
		return Mask
	}
	r := []rune(s)
	return Mask + string(r[len(r)-4:])
}

// knownSecrets marks the path segments that hold a known service's
// token, whatever they look like.
func knownSecrets(segs []string) map[int]bool {
	out := map[int]bool{}
	for i, s := range segs {
		switch {
		// Slack: /services/T…/B…/SECRET
		case s == "services" && i+3 < len(segs) && strings.HasPrefix(segs[i+1], "T") && strings.HasPrefix(segs[i+2], "B"):
			out[i+3] = true
		// Discord: /api/webhooks/ID/TOKEN (and /api/v10/webhooks/…)
		case s == "webhooks" && i+2 < len(segs) && segs[i+1] != "" && strings.Trim(segs[i+1], "0123456789") == "":
			out[i+2] = true
		// Zapier: /hooks/catch/ID/KEY
		case s == "catch" && i > 0 && segs[i-1] == "hooks" && i+2 < len(segs):
			out[i+2] = true
		}
	}
	return out
}

// redactQuery masks the query values that are secrets, keeping the
// names and the order.
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, found := strings.Cut(p, "=")
		if !found || v == "" {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if secretName(name) || secretLike(v) {
			parts[i] = k + "=" + masked(v)
		}
	}
	return strings.Join(parts, "&")
}

// secretName reports whether a query parameter's name says its value is
// a secret.
func secretName(name string) bool {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return -1
	}, name)
	if n == "code" || n == "pwd" || n == "pass" {
		return true
	}
	for _, w := range []string{"token", "key", "secret", "sig", "signature", "password", "passwd", "auth", "authorization",
		"credential", "credentials", "session", "sessionid"} {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	return false
}

// secretLike reports whether a path segment or query value (as written
// in the URL, escaped) looks like a secret: long and random, not words.
func secretLike(s string) bool {
	if len(s) < 16 {
		return false
	}
	var (
		alnum, changes, run  int
		prev                 byte // the class of the previous character: 'a', 'A', '0', or 0 after a separator
		hex, digits, letters = true, 0, 0
	)
	for i := range len(s) {
		c := s[i]
		var class byte
		switch {
		case c >= 'a' && c <= 'z':
			class = 'a'
		case c >= 'A' && c <= 'Z':
			class = 'A'
		case c >= '0' && c <= '9':
			class = '0'
		}
		switch {
		case class == '0':
			digits++
		case class != 0:
			letters++
		}
		if !(class == '0' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-') {
			hex = false
		}
		if class == 0 {
			prev, run = 0, 0
			continue
		}
		alnum++
		run++
		if run >= 24 {
			return true // no word is that long
		}
		if prev != 0 && class != prev {
			changes++
		}
		prev = class
	}
	if hex && digits > 0 && letters > 0 {
		return true // a hex string or a UUID
	}
	return changes >= 4 && changes*5 >= alnum
}
