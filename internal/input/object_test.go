package input

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/errs"
)

// An Object answers alike whether it was read flat or decoded by
// encoding/json, and a flat one is its bytes, with no map.
func TestObjectLooksUpAlikeFlatOrDecoded(t *testing.T) {
	keys := []string{"file_path", "command", "absent"}
	for _, tc := range []struct {
		js   string
		flat bool
		want [3]string
	}{
		{`{"file_path":"a.go","old_string":"x","command":null}`, true, [3]string{`"a.go"`, `null`, ``}},
		{` { "command" : "ls" } `, true, [3]string{``, `"ls"`, ``}},
		{`{}`, true, [3]string{}},
		{`{"file_path":"a.go","edits":[{"old_string":"x"}]}`, false, [3]string{`"a.go"`, ``, ``}}, // a list: encoding/json's
		{`{"file_path":"a","file_path":"b"}`, false, [3]string{`"b"`, ``, ``}},                    // a duplicate: encoding/json's, the last wins
		{many(flatMax), true, [3]string{`"k0"`, ``, ``}},
		{many(flatMax + 1), false, [3]string{`"k0"`, ``, ``}},
	} {
		o, err := ParseObject([]byte(tc.js))
		if err != nil {
			t.Fatalf("ParseObject(%s): %v", tc.js, err)
		}
		if (o.flat != nil) != tc.flat || (o.flat != nil && o.m != nil) {
			t.Errorf("ParseObject(%s) flat %v, want %v", tc.js, o.flat != nil, tc.flat)
		}
		var decoded Object
		if err := json.Unmarshal([]byte(tc.js), &decoded); err != nil {
			t.Fatal(err)
		}
		for _, obj := range []Object{o, decoded} {
			values := []json.RawMessage{json.RawMessage("stale"), nil, nil}
			obj.Lookup(keys, values)
			for i, v := range values {
				if string(v) != tc.want[i] {
					t.Errorf("%s: %s is %q, want %q", tc.js, keys[i], v, tc.want[i])
				}
			}
		}
		if !sameRaw(o.Map(), decoded.Map()) {
			t.Errorf("%s: members %v read flat, %v decoded", tc.js, o.Map(), decoded.Map())
		}
	}
}

// many is a flat object of n members, "file_path" first.
func many(n int) string {
	parts := []string{`"file_path":"k0"`}
	for i := 1; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// An input that is not an object is refused as a map's would be: the
// field named, in encoding/json's words for its type; null is no members.
func TestObjectRefusesWhatAMapRefuses(t *testing.T) {
	type body struct {
		Input Object `json:"input"`
	}
	for js, what := range map[string]string{`"a"`: "string", `[1]`: "array", `7`: "number", `true`: "bool"} {
		err := DecodeJSON([]byte(`{"input":`+js+`}`), new(body), "body", "")
		if e, ok := errs.As(err); !ok || e.Code != "invalid_field" || errs.FieldOf(err) != "input" || !strings.Contains(err.Error(), "an object, not "+what) {
			t.Errorf("input %s: %v, want invalid_field naming input, an object not %s", js, err, what)
		}
	}
	var b body
	if err := DecodeJSON([]byte(`{"input":null}`), &b, "body", ""); err != nil || b.Input.Map() != nil {
		t.Errorf("input null: %v, %v; want no members", err, b.Input.Map())
	}
	if _, err := ParseObject([]byte(`[1]`)); err == nil {
		t.Error("ParseObject took a list")
	}
}
