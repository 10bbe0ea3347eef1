package rules

import (
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"strings"
	"unicode"
)

// langOf returns the language of a source file by its extension.
func langOf(p string) (Lang, bool) {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return Go, true
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts":
		return JS, true
	}
	return "", false
}

// importsOf returns what a source file imports: Go import paths, or the
// npm package specifiers of JavaScript and TypeScript (relative paths,
// URLs and node: built-ins left out). fragment says the text is a diff's
// added lines rather than a whole file.
func importsOf(lang Lang, text string, fragment bool) []string {
	switch lang {
	case Go:
		return goImports(text, fragment)
	case JS:
		return jsImports(text)
	}
	return nil
}

// matches reports whether an import (or a dependency) is matcher or lies
// under it, segment by segment and ignoring case: "lodash" matches
// "lodash/fp" but not "lodash-es", and "github.com/labstack/echo" matches
// "github.com/labstack/echo/v4/middleware".
func matches(imp, matcher string) bool {
	matcher = strings.TrimSuffix(strings.TrimSpace(matcher), "/")
	if matcher == "" || len(imp) < len(matcher) {
		return false
	}
	if !strings.EqualFold(imp[:len(matcher)], matcher) {
		return false
	}
	return len(imp) == len(matcher) || imp[len(matcher)] == '/'
}

// matchesAny reports whether imp matches one of ms.
func matchesAny(imp string, ms []string) bool {
	for _, m := range ms {
		if matches(imp, m) {
			return true
		}
	}
	return false
}

// goImports returns the paths a Go file imports: `import "x"`, `import n
// "x"` and import blocks. Comments and strings elsewhere are skipped by the
// Go scanner, so it reads fragments that would not parse. In a fragment (a
// diff's added lines) a line holding only an import spec (`"x"` or `n "x"`)
// counts too: adding a path to an existing import block adds only that line,
// and no other Go statement is a bare string on its own line.
func goImports(text string, fragment bool) []string {
	type tok struct {
		line int
		tok  token.Token
		lit  string
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(text))
	var s scanner.Scanner
	s.Init(file, []byte(text), func(token.Position, string) {}, 0)
	var toks []tok
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		if t == token.SEMICOLON && lit == "\n" {
			continue // an inserted semicolon: lines are tracked by position
		}
		toks = append(toks, tok{file.Line(pos), t, lit})
	}

	var out []string
	add := func(lit string) {
		// An import path is graphic characters without spaces (the Go
		// spec's restriction, which the go command enforces): a string
		// that is not one is no import, and could match no rule.
		// Nor is an absolute path ("/x": the go command refuses it).
		if p, err := strconv.Unquote(lit); err == nil && p != "" && !strings.HasPrefix(p, "/") &&
			strings.IndexFunc(p, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) < 0 {
			out = append(out, p)
		}
	}
	for i := 0; i < len(toks); i++ {
		if toks[i].tok != token.IMPORT {
			continue
		}
		j := i + 1
		if j < len(toks) && toks[j].tok == token.LPAREN {
			for j++; j < len(toks) && toks[j].tok != token.RPAREN; j++ {
				if toks[j].tok == token.STRING {
					add(toks[j].lit)
				}
			}
			i = j
			continue
		}
		if j < len(toks) && (toks[j].tok == token.IDENT || toks[j].tok == token.PERIOD) {
			j++
		}
		if j < len(toks) && toks[j].tok == token.STRING {
			add(toks[j].lit)
			i = j
		}
	}
	if fragment {
		for i := 0; i < len(toks); {
			j := i
			for j < len(toks) && toks[j].line == toks[i].line {
				j++
			}
			line := toks[i:j]
			if len(line) > 0 && line[len(line)-1].tok == token.SEMICOLON {
				line = line[:len(line)-1]
			}
			switch {
			case len(line) == 1 && line[0].tok == token.STRING:
				add(line[0].lit)
			case len(line) == 2 && (line[0].tok == token.IDENT || line[0].tok == token.PERIOD) && line[1].tok == token.STRING:
				add(line[1].lit)
			}
			i = j
		}
	}
	return out
}

// jsTok is a JavaScript token, as far as finding imports needs: an
// identifier, a string whose value is known, a template with substitutions,
// or one punctuation character.
type jsTok struct {
	kind byte // 'i' identifier, 's' static string, 't' dynamic template, 'p' punctuation
	val  string
}

// jsTokens splits JavaScript or TypeScript into tokens, dropping comments.
// A quoted string ends at its line's end when unterminated, so a regular
// expression literal holding a quote loses at most the rest of its line.
func jsTokens(src string) []jsTok {
	var toks []jsTok
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			if end := strings.Index(src[i+2:], "*/"); end >= 0 {
				i += 2 + end + 2
			} else {
				i = n
			}
		case c == '\'' || c == '"':
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, jsTok{'s', src[i+1 : min(j, n)]})
			i = j + 1
		case c == '`':
			j, dynamic := i+1, false
			for j < n && src[j] != '`' {
				if src[j] == '\\' {
					j++
				} else if src[j] == '$' && j+1 < n && src[j+1] == '{' {
					dynamic = true
				}
				j++
			}
			kind := byte('s')
			if dynamic {
				kind = 't'
			}
			toks = append(toks, jsTok{kind, src[i+1 : min(j, n)]})
			i = j + 1
		case isJSIdent(c, false):
			j := i + 1
			for j < n && isJSIdent(src[j], true) {
				j++
			}
			toks = append(toks, jsTok{'i', src[i:j]})
			i = j
		default:
			toks = append(toks, jsTok{'p', src[i : i+1]})
			i++
		}
	}
	return toks
}

func isJSIdent(c byte, rest bool) bool {
	return c == '_' || c == '$' || c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || rest && '0' <= c && c <= '9'
}

// jsImports returns the packages a JavaScript or TypeScript file imports:
// `import … from 'x'`, `import 'x'`, `export … from 'x'`, `require('x')`
// and `import('x')`.
func jsImports(text string) []string {
	toks := jsTokens(text)
	var out []string
	add := func(spec string) {
		if p, ok := jsPackage(spec); ok {
			out = append(out, p)
		}
	}
	is := func(k int, kind byte, val string) bool {
		return k < len(toks) && toks[k].kind == kind && (val == "" || toks[k].val == val)
	}
	// from scans an import or export clause (identifiers, braces, commas,
	// stars) for `from 'x'`.
	from := func(k int) {
		for ; k < len(toks); k++ {
			t := toks[k]
			switch {
			case t.kind == 'i' && t.val == "from" && is(k+1, 's', ""):
				add(toks[k+1].val)
				return
			case t.kind == 'i', t.kind == 'p' && strings.Contains("{},*", t.val):
			default:
				return
			}
		}
	}
	for i, t := range toks {
		if t.kind != 'i' || i > 0 && is(i-1, 'p', ".") {
			continue
		}
		switch t.val {
		case "import":
			switch {
			case is(i+1, 'p', "(") && is(i+2, 's', ""):
				add(toks[i+2].val)
			case is(i+1, 's', ""):
				add(toks[i+1].val)
			default:
				from(i + 1)
			}
		case "export":
			from(i + 1)
		case "require":
			if is(i+1, 'p', "(") && is(i+2, 's', "") && is(i+3, 'p', ")") {
				add(toks[i+2].val)
			}
		}
	}
	return out
}

// jsPackage returns the package specifier of an import: "lodash/fp" stays
// as it is (matchers compare by path segment), "npm:express@4" is
// "express". Relative paths, absolute paths, subpath imports ("#x"), URLs
// and node: built-ins are not packages.
func jsPackage(spec string) (string, bool) {
	s := strings.TrimSpace(spec)
	if rest, ok := strings.CutPrefix(s, "npm:"); ok {
		s = stripVersion(rest)
	}
	if s == "" || strings.ContainsAny(s[:1], "./#") || strings.Contains(s, ":") {
		return "", false
	}
	return s, true
}

// stripVersion drops a version from an npm specifier's package name:
// "@reduxjs/toolkit@2/query" is "@reduxjs/toolkit/query".
func stripVersion(s string) string {
	segs := 1
	if strings.HasPrefix(s, "@") {
		segs = 2
	}
	parts := strings.SplitN(s, "/", segs+1)
	if len(parts) < segs {
		return s
	}
	last := parts[segs-1]
	if i := strings.LastIndex(last, "@"); i > 0 {
		parts[segs-1] = last[:i]
	}
	return strings.Join(parts, "/")
}

// normalizeDependency returns the name of a reported dependency without its
// version: "github.com/labstack/echo/v4 v4.16.0", "gorm.io/gorm@v1.25.0"
// and "@reduxjs/toolkit@^2.0.0" name "github.com/labstack/echo/v4",
// "gorm.io/gorm" and "@reduxjs/toolkit".
func normalizeDependency(dep string) string {
	f := strings.Fields(dep)
	if len(f) == 0 {
		return ""
	}
	s := strings.TrimPrefix(f[0], "npm:")
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	return s
}
