package input

import (
	"testing"

	"github.com/madebook/madebook/internal/errs"
)

func TestDecodeJSONNamesTheFieldWhereItSits(t *testing.T) {
	type payload struct {
		Task string `json:"task"`
	}
	for _, c := range []struct {
		name, data, code, field string
	}{
		{"a field the payload does not take", `{"tsk":"T1"}`, "unknown_field", "payload.tsk"},
		{"a field of the wrong type", `{"task":5}`, "invalid_field", "payload.task"},
		{"a list where an object belongs", `[1]`, "invalid_payload", "payload"},
		{"null where an object belongs", `null`, "invalid_payload", "payload"},
	} {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			err := DecodeJSON([]byte(c.data), new(payload), "payload", "payload.")
			if errs.CodeOf(err) != c.code || errs.FieldOf(err) != c.field || errs.KindOf(err) != errs.Invalid {
				t.Fatalf("error %v (code %s, field %q), want %s about %s", err, errs.CodeOf(err), errs.FieldOf(err), c.code, c.field)
			}
		})
	}
	t.Run("JSON that does not parse is returned for the caller to answer", func(t *testing.T) {
		if err := DecodeJSON([]byte(`{"task":`), new(payload), "body", ""); err == nil || errs.KindOf(err) != errs.Internal {
			t.Fatalf("error %v, want encoding/json's own", err)
		}
	})
	t.Run("a body that fits decodes", func(t *testing.T) {
		var p payload
		if err := DecodeJSON([]byte(`{"task":"T1"}`), &p, "body", ""); err != nil || p.Task != "T1" {
			t.Fatalf("got %+v, %v", p, err)
		}
	})
}
