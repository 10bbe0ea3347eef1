package errs_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/madebook/madebook/internal/errs"
)

func TestJoin(t *testing.T) {
	t.Parallel()
	a := errs.E(errs.Invalid, "a_required", "Give a.").In("a")
	b := errs.E(errs.Invalid, "b_required", "Give b.").In("b")
	plain := errors.New("disk full")

	if err := errs.Join(nil, nil); err != nil {
		t.Errorf("Join of nothing = %v, want nil", err)
	}
	if err := errs.Join(nil, b); errs.FieldOf(err) != "b" || len(mustAs(t, err).Also) != 0 {
		t.Errorf("Join(nil, b) = %#v, want b alone", err)
	}
	if err := errs.Join(a, plain, b); err != plain {
		t.Errorf("Join with a plain error = %v, want the plain error", err)
	}
	joined := errs.Join(a, nil, b)
	e := mustAs(t, joined)
	if e.Field != "a" || len(e.Also) != 1 || e.Also[0] != b || len(a.Also) != 0 {
		t.Fatalf("Join(a, b) = %#v; want a with b in Also, a itself unchanged", e)
	}
	want := []map[string]any{
		{"field": "a", "code": "a_required", "message": "Give a."},
		{"field": "b", "code": "b_required", "message": "Give b."},
	}
	body := errs.Body(joined)
	if body["code"] != "a_required" || body["field"] != "a" || !reflect.DeepEqual(body["errors"], want) {
		t.Errorf("Body = %v, want a's code and field and errors %v", body, want)
	}
	if _, listed := errs.Body(a)["errors"]; listed {
		t.Error("a single error lists errors")
	}
}

func mustAs(t *testing.T, err error) *errs.Error {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("%v is not a domain error", err)
	}
	return e
}
