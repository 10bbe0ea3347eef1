package db_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/madebook/madebook/db"
)

func TestStoredNamesTheTableTheRowAndTheColumn(t *testing.T) {
	good := db.FormatTime(base)
	tests := []struct {
		name string
		read func(c *db.Stored)
		want string // "" for no error
	}{
		{"a row Madebook wrote converts", func(c *db.Stored) {
			c.Time("opened_at", good)
			c.NullTime("resolved_at", sql.NullString{})
			c.TimePtr("delivered_at", sql.NullString{String: good, Valid: true})
			c.List("blocked_scope", `["db/"]`)
			c.JSON("options", `{"1":"Yes"}`, &map[string]string{})
		}, ""},
		{"a time that is not a time", func(c *db.Stored) { c.Time("opened_at", "yesterday") },
			`decisions row DEC-004, column opened_at: stored time "yesterday": parsing time`},
		{"a nullable time that is not a time", func(c *db.Stored) { c.NullTime("resolved_at", sql.NullString{String: "soon", Valid: true}) },
			`decisions row DEC-004, column resolved_at: stored time "soon"`},
		{"a list that is not JSON", func(c *db.Stored) { c.List("blocked_scope", "x") },
			"decisions row DEC-004, column blocked_scope: not a JSON list: invalid character 'x'"},
		{"an object where a list belongs", func(c *db.Stored) { c.List("blocked_scope", `{"a":1}`) },
			"decisions row DEC-004, column blocked_scope: not a JSON list: json: cannot unmarshal object"},
		{"a list where an object belongs", func(c *db.Stored) { c.JSON("options", `["Yes"]`, &map[string]string{}) },
			"decisions row DEC-004, column options: not a JSON object"},
		{"the first column that fails is the one named", func(c *db.Stored) {
			c.Time("opened_at", good)
			c.List("allowed_scope", "[")
			c.Time("opened_at", "later")
		}, "decisions row DEC-004, column allowed_scope: not a JSON list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := db.StoredRow("decisions", "DEC-004")
			tt.read(c)
			err := c.Err()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Err = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "corrupt stored data: "+tt.want)):
				t.Fatalf("Err = %v, want it to start %q", err, tt.want)
			}
		})
	}
	t.Run("NULL is nil for TimePtr and the zero time for NullTime", func(t *testing.T) {
		c := db.StoredRow("decisions", "DEC-004")
		if p := c.TimePtr("delivered_at", sql.NullString{}); p != nil {
			t.Fatalf("TimePtr(NULL) = %v", p)
		}
		if z := c.NullTime("resolved_at", sql.NullString{}); !z.IsZero() {
			t.Fatalf("NullTime(NULL) = %v", z)
		}
		if l := c.List("files", "[]"); l == nil || len(l) != 0 {
			t.Fatalf("List([]) = %#v, want an empty list", l)
		}
	})
}
