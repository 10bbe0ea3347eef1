package input

import (
	"encoding/json"
	"testing"
)

// brief is the body FlatStrings is for.
type brief struct {
	Session string `json:"session"`
	Ack     string `json:"ack,omitempty"`
}

func flatBrief(data []byte) (brief, bool) {
	var b brief
	ok := FlatStrings(data, []string{"session", "ack"}, []*string{&b.Session, &b.Ack})
	return b, ok
}

func TestFlatStrings(t *testing.T) {
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
		got, ok := flatBrief([]byte(tt.body))
		if ok != tt.ok || got != tt.want {
			t.Errorf("FlatStrings(%q) = %+v, %v; want %+v, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFlatStringsWritesNothingWhenItDeclines(t *testing.T) {
	b := brief{Session: "before", Ack: "before"}
	if FlatStrings([]byte(`{"session":"ses_1","ack":1}`), []string{"session", "ack"}, []*string{&b.Session, &b.Ack}) {
		t.Fatal("accepted a number")
	}
	if b.Session != "before" || b.Ack != "before" {
		t.Errorf("declining wrote %+v", b)
	}
}

// FuzzFlatStrings holds FlatStrings to DecodeJSON: whatever body it
// accepts, DecodeJSON accepts too, with the same values.
func FuzzFlatStrings(f *testing.F) {
	for _, s := range []string{`{"session":"ses_1"}`, ` {"ack":"brf_1", "session":"s"} `, `{}`, `{"session":"a","session":"b"}`,
		`{"SESSION":"x"}`, `{"session":"x"}}`, "{\"session\":\"\t\"}", `{"session":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := flatBrief(data)
		if !ok {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("FlatStrings accepted %q, which is not JSON", data)
		}
		var want brief
		if err := DecodeJSON(data, &want, "body", ""); err != nil {
			t.Fatalf("FlatStrings accepted %q as %+v; DecodeJSON refuses it: %v", data, got, err)
		}
		if got != want {
			t.Fatalf("FlatStrings(%q) = %+v; DecodeJSON = %+v", data, got, want)
		}
	})
}

func BenchmarkBriefBody(b *testing.B) {
	body := []byte(`{"session":"ses_01JDZ8Q7K3M2N4P5R6S7T8V9W0"}`)
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := flatBrief(body); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v brief
			if err := DecodeJSON(body, &v, "body", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}
