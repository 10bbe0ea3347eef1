package shell

import (
	"strings"
)

// codeTokens are the tokens of an interpreter's code string that may name
// paths. Madebook does not parse the language; it reads the code as text:
//
//   - The code is split at the characters that cannot be in a path
//     (blanks, quotes, brackets, commas, semicolons, =, +, <, >, |, &, $,
//     :, backslash escapes, …).
//   - Inside a string literal ('…', "…", `…`), a token is kept when it holds
//     / or ., or when the literal is one word (so 'db' in
//     rmSync('db') is kept, and so is 'fs' in require('fs'), which names
//     no file the command writes: the caller matches paths against its
//     scopes, and a word outside them does no harm). A literal that is a
//     file mode ('w', 'rb', 'a+') is not a path.
//   - Outside string literals, a token is kept only when it holds /, and is
//     not a regular expression (/x/, s/a/b/).
//   - URLs (with ://), tokens of dots alone (., ..) and tokens that start
//     with - are dropped. This misses code that names the directory it
//     runs in as "." (shutil.rmtree('.')), the price of not reading every
//     '.'.join as a write of the whole tree.
func codeTokens(code string) []string {
	code = blankURLs(code)
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t == "" || strings.Trim(t, ".") == "" || t[0] == '-' || strings.Contains(t, "://") || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
	}
	for i := 0; i < len(code); {
		c := code[i]
		if c == '\'' || c == '"' || c == '`' {
			j := i + 1
			for j < len(code) && code[j] != c {
				if code[j] == '\\' {
					j++
				}
				j++
			}
			body := code[i+1 : min(j, len(code))]
			i = j + 1
			whole := !strings.ContainsAny(strings.TrimSpace(body), " \t\n") && !fileMode(body)
			for _, t := range splitCode(body) {
				if whole || strings.ContainsAny(t, "/.") {
					add(t)
				}
			}
			continue
		}
		j := i
		for j < len(code) && !codeSep(code[j]) {
			j++
		}
		if j == i {
			i++
			continue
		}
		t := code[i:j]
		i = j
		if strings.Contains(t, "/") && !regexLike(t) {
			add(t)
		}
	}
	return out
}

// blankURLs replaces the URLs in code (scheme://…) with blanks: they name
// no local file.
func blankURLs(code string) string {
	i := strings.Index(code, "://")
	if i < 0 {
		return code
	}
	b := []byte(code)
	for i >= 0 {
		start := i
		for start > 0 && isSchemeByte(b[start-1]) {
			start--
		}
		end := i + 3
		for end < len(b) && !codeSep(b[end]) || end < len(b) && b[end] == ':' {
			end++
		}
		for k := start; k < end; k++ {
			b[k] = ' '
		}
		j := strings.Index(string(b[end:]), "://")
		if j < 0 {
			break
		}
		i = end + j
	}
	return string(b)
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// codeSep reports whether c cannot be part of a path in code.
func codeSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\'', '"', '`', '(', ')', '[', ']', '{', '}', ',', ';', '=', '+', '<', '>', '|', '&', '!', '^', '%', ':', '#', '@', '$', '\\':
		return true
	}
	return false
}

// splitCode splits the body of a string literal into tokens; a backslash
// escape (\n) separates them.
func splitCode(body string) []string {
	var out []string
	start := 0
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' || codeSep(body[i]) {
			if i > start {
				out = append(out, body[start:i])
			}
			if body[i] == '\\' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(body) {
		out = append(out, body[start:])
	}
	return out
}

// fileMode reports whether s is a mode open() and fopen() take.
func fileMode(s string) bool {
	if s == "" || len(s) > 3 {
		return false
	}
	return strings.Trim(s, "rwaxbtU+") == ""
}

// regexLike reports whether t, outside a string literal, reads as a
// regular expression (/x/, /x/g, s/a/b/, y/a/b/, m/x/, qr/x/, tr/a/b/).
func regexLike(t string) bool {
	u := strings.TrimRight(t, "abcdefghijklmnopqrstuvwxyz")
	if !strings.HasSuffix(u, "/") || strings.Count(u, "/") < 2 {
		return false
	}
	if strings.HasPrefix(u, "/") {
		return true
	}
	for _, p := range []string{"s/", "y/", "m/", "tr/", "qr/"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// sedScript reads a sed script for what it writes: the files of its w and
// W commands and of the s command's w flag, and whether it runs commands
// (e, and s///e). ok is false when Madebook cannot read the script.
func sedScript(s string) (writes []string, exec, ok bool) {
	n := len(s)
	i := 0
	space := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	line := func() string {
		j := i
		for i < n && s[i] != '\n' {
			i++
		}
		return s[j:i]
	}
	label := func() {
		for i < n && s[i] != '\n' && s[i] != ';' {
			i++
		}
	}
	// upto moves past the next d that no backslash escapes.
	upto := func(d byte) bool {
		for i < n {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			case '\n':
				return false
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if !upto('/') {
				return false
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !upto(d) {
				return false
			}
		default:
			return true
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= n {
			return writes, exec, true
		}
		if !address() {
			return nil, false, false
		}
		space()
		if i < n && s[i] == ',' {
			i++
			space()
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return nil, false, false
			}
			space()
		}
		for i < n && s[i] == '!' {
			i++
			space()
		}
		if i >= n {
			return nil, false, false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			space()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case '#':
			line()
		case ':', 'b', 't', 'T', 'v':
			space()
			label()
		case 'a', 'i', 'c':
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 'r', 'R':
			space()
			line()
		case 'w', 'W':
			space()
			f := line()
			if f == "" {
				return nil, false, false
			}
			writes = append(writes, f)
		case 'e':
			exec = true
			line()
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return nil, false, false
			}
			d := s[i]
			i++
			if !upto(d) || !upto(d) {
				return nil, false, false
			}
			for c == 's' && i < n {
				f := s[i]
				if f == 'w' {
					i++
					space()
					w := line()
					if w == "" {
						return nil, false, false
					}
					writes = append(writes, w)
					break
				}
				if f == 'e' {
					exec = true
				} else if !strings.ContainsRune("gpiImM0123456789", rune(f)) {
					break
				}
				i++
			}
		default:
			return nil, false, false
		}
		space()
		if i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '#' {
			return nil, false, false
		}
	}
}
