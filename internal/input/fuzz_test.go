package input

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/madebook/madebook/internal/errs"
)

// FuzzTextChecks sends any text through every check of the package: each
// either refuses it with a 422 naming its field, or returns text that holds
// no control character (newline and tab allowed in text), is valid UTF-8,
// is within its limit, and passes the same check again unchanged. Visible
// leaves nothing a terminal or a page would act on.
func FuzzTextChecks(f *testing.F) {
	for _, s := range []string{"", "plain", " padded \t", "two\nlines\r\n", "nul\x00", "esc\x1b[2J", "del\x7f", "c1\u0085",
		"bidi\u202etxt.exe", "\xff\xfe", "\ufffd", "lone\rreturn", strings.Repeat("é", 60), "tab\tin", "\u2066iso\u2069"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		const max = 50
		check := func(name string, out string, err error, text bool) {
			t.Helper()
			if err != nil {
				var e *errs.Error
				if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "title" || e.Code == "" {
					t.Fatalf("%s(%q): error %v is not a 422 naming the field", name, v, err)
				}
				return
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", name, v, out)
			}
			for _, r := range out {
				if unicode.IsControl(r) && !(text && (r == '\n' || r == '\t')) {
					t.Fatalf("%s(%q) = %q: holds U+%04X", name, v, out, r)
				}
			}
		}
		out, err := Clean("title", v)
		check("Clean", out, err, true)
		if err == nil {
			if again, err := Clean("title", out); err != nil || again != out {
				t.Fatalf("Clean is not stable on %q: %q, %v", out, again, err)
			}
		}
		out, err = CleanLine("title", v)
		check("CleanLine", out, err, false)
		for _, required := range []bool{false, true} {
			fn, name := Optional, "Optional"
			if required {
				fn, name = Required, "Required"
			}
			out, err = fn("title", v, max)
			check(name, out, err, true)
			if err == nil {
				if n := utf8.RuneCountInString(out); n > max || out != strings.TrimSpace(out) || (required && out == "") {
					t.Fatalf("%s(%q) = %q: %d characters, not trimmed or empty", name, v, out, n)
				}
			}
		}
		list, err := List("title", strings.Split(v, ","), 5, max)
		if err == nil {
			for _, e := range list {
				check("List", e, nil, false)
				if e == "" || utf8.RuneCountInString(e) > max {
					t.Fatalf("List(%q) kept entry %q", v, e)
				}
			}
		} else {
			check("List", "", err, false)
		}
		vis := Visible(v)
		if needsMarker(vis) {
			t.Fatalf("Visible(%q) = %q still needs a marker", v, vis)
		}
		if !needsMarker(v) && vis != v {
			t.Fatalf("Visible changed %q, which needs no marker, to %q", v, vis)
		}
	})
}

// FuzzDecodeJSON decodes any bytes into a struct of every field kind a
// request has: the answer is nil, a 422 naming the field (for a field the
// struct does not have, one of the wrong type, or a body that is not an
// object), or encoding/json's own error for bytes that are not JSON, which
// the handlers answer as a 400.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `[]`, `"x"`, `1`, `{"title":"T","n":1,"ok":true,"list":["a"],"m":{"k":"v"},"sub":{"x":1}}`,
		`{"zzz":1}`, `{"n":"1"}`, `{"n":1e999}`, `{"list":[1]}`, `{"sub":{"y":1}}`, `{"title":"\ud800"}`, "{\"title\":\"\xff\"}", `{`, ``, ` `, `{} {}`, `{"raw":[[[]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v struct {
			Title string            `json:"title"`
			N     int               `json:"n"`
			OK    *bool             `json:"ok"`
			List  []string          `json:"list"`
			M     map[string]string `json:"m"`
			Sub   struct {
				X int `json:"x"`
			} `json:"sub"`
			Raw json.RawMessage `json:"raw"`
		}
		err := DecodeJSON(data, &v, "body", "")
		if err == nil {
			return
		}
		var e *errs.Error
		if errors.As(err, &e) {
			if e.Kind != errs.Invalid || e.Code == "" || e.Message == "" {
				t.Fatalf("DecodeJSON(%q): %v is not a 422 with a code", data, err)
			}
			return
		}
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("DecodeJSON(%q): %T %v is neither a 422 nor a JSON syntax error", data, err, err)
		}
	})
}
