package input

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// brief is the body Shallow is for; check is a body with an object, which
// Shallow leaves to DecodeJSON.
type brief struct {
	Session string `json:"session"`
	Ack     string `json:"ack,omitempty"`
}

type check struct {
	Tool  string `json:"tool"`
	Input Object `json:"input"`
	Cwd   string `json:"cwd"`
}

func shallowBrief(data []byte) (brief, bool) {
	var b brief
	ok := Shallow(data, []Member{{Name: "session", Str: &b.Session}, {Name: "ack", Str: &b.Ack}})
	return b, ok
}

func TestShallowReadsPlainStrings(t *testing.T) {
	for _, tt := range []struct {
		body string
		want brief
		ok   bool
	}{
		{`{"session":"ses_1"}`, brief{Session: "ses_1"}, true},
		{` { "session" : "ses_1" , "ack" : "brf_2" } `, brief{"ses_1", "brf_2"}, true},
		{"{\n\t\"ack\":\"brf_2\",\r\n\"session\":\"ses_1\"}\n", brief{"ses_1", "brf_2"}, true},
		{`{"session":""}`, brief{}, true},
		{`{}`, brief{}, true},
		{` {  } `, brief{}, true},
		// Everything else is left to encoding/json, which decides.
		{``, brief{}, false},
		{`{`, brief{}, false},
		{`{"session":"ses_1"`, brief{}, false},
		{`{"session":"ses_1"}x`, brief{}, false},
		{`{"session":"ses_1"}{}`, brief{}, false},
		{`{"session":"ses_1",}`, brief{}, false},
		{`{,"session":"ses_1"}`, brief{}, false},
		{`{"session" "ses_1"}`, brief{}, false},
		{`{"session":"ses_1" "ack":"b"}`, brief{}, false},
		{`{"Session":"ses_1"}`, brief{}, false},           // json matches keys without case: its call
		{`{"session":"a","session":"b"}`, brief{}, false}, // a duplicate: its call
		{`{"session":"ses\u0031"}`, brief{}, false},
		{`{"session":"ses\"1"}`, brief{}, false},
		{"{\"session\":\"s\x01\"}", brief{}, false},
		{`{"session":"sés"}`, brief{}, false},
		{`{"session":null}`, brief{}, false},
		{`{"session":1}`, brief{}, false},
		{`{"session":["a"]}`, brief{}, false},
		{`{"extra":"x"}`, brief{}, false},
		{`["session"]`, brief{}, false},
		{`null`, brief{}, false},
	} {
		got, ok := shallowBrief([]byte(tt.body))
		if ok != tt.ok || got != tt.want {
			t.Errorf("Shallow(%q) = %+v, %v; want %+v, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

func sameRaw(a, b map[string]json.RawMessage) bool {
	return (a == nil) == (b == nil) && maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

func TestShallowWritesNothingWhenItDeclines(t *testing.T) {
	c := check{Tool: "before", Cwd: "before"}
	if Shallow([]byte(`{"tool":"Edit","input":{"a":1},"cwd":"x"}`), []Member{{Name: "tool", Str: &c.Tool}, {Name: "cwd", Str: &c.Cwd}}) {
		t.Fatal("accepted an object")
	}
	if c.Tool != "before" || c.Cwd != "before" {
		t.Errorf("declining wrote %+v", c)
	}
}

// FuzzShallow holds Shallow to DecodeJSON: whatever body it accepts,
// DecodeJSON accepts too, with the same values.
func FuzzShallow(f *testing.F) {
	for _, s := range []string{`{"session":"ses_1"}`, ` {"ack":"brf_1", "session":"s"} `, `{}`, `{"session":"a","session":"b"}`,
		`{"SESSION":"x"}`, `{"session":"x"}}`, "{\"session\":\"\t\"}", `{"session":"\u00e9"}`,
		`{"tool":"Edit","input":{"file_path":"a.go","old_string":"x\n\"y\"","n":-1.5E-2,"b":true,"z":null}}`,
		`{"tool":"Bash","input":{"command":"ls \u002f"},"cwd":"/r"}`, `{"input":{"a":"\ud800"}}`, "{\"input\":{\"a\":\"\xff\"}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := shallowBrief(data); ok {
			var want brief
			if err := DecodeJSON(data, &want, "body", ""); err != nil {
				t.Fatalf("Shallow accepted %q as %+v; DecodeJSON refuses it: %v", data, got, err)
			}
			if got != want {
				t.Fatalf("Shallow(%q) = %+v; DecodeJSON = %+v", data, got, want)
			}
		}
	})
}

// FuzzString holds String to encoding/json: the same string, or false
// where encoding/json refuses.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"web/app.js"`, `""`, `"a\"b"`, `"\u00e9"`, "\"\xff\"", "\"é\"", `"tab\there"`, "\"raw\ttab\"",
		`"unterminated`, `"a" `, ` "a"`, `"a""b"`, `12`, `null`, `{"a":1}`, `"\ud800"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := String(raw)
		var want string
		wantOK := json.Unmarshal(raw, &want) == nil
		if ok != wantOK || got != want {
			t.Fatalf("String(%q) = %q, %v; encoding/json: %q, %v", raw, got, ok, want, wantOK)
		}
	})
}

func BenchmarkShallow(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
		v    func() any
		fast func([]byte) bool
	}{
		{"brief", []byte(`{"session":"ses_01JDZ8Q7K3M2N4P5R6S7T8V9W0"}`), func() any { return new(brief) },
			func(d []byte) bool { _, ok := shallowBrief(d); return ok }},
	} {
		b.Run(c.name+"/shallow", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.fast(c.body) {
					b.Fatal("declined")
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := DecodeJSON(c.body, c.v(), "body", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
