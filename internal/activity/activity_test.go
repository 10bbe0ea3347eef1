package activity_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/testkit"
)

// TestRecordRedactsEverySecretItIsHanded: a value under a secret's name,
// at any depth, is stored as "(set)"; other values as given; no state is
// NULL.
func TestRecordRedactsEverySecretItIsHanded(t *testing.T) {
	store, _ := testkit.MustOpenDB(t)
	ctx := context.Background()
	before := activity.State{"url": "https://h.example.com", "secret": "s3cret-value", "token": ""}
	after := activity.State{"nested": map[string]any{"password": "pa55word", "key_hash": "abcdef"},
		"list": []any{map[string]any{"token": "mbt_xyz", "name": "n"}}, "key": "mbk_abc"}
	err := store.Write(ctx, func(q db.Querier) error {
		if err := activity.Record(ctx, q, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), "ann@example.com", activity.WebhookCreate,
			"webhook 1", before, after); err != nil {
			return err
		}
		return activity.Record(ctx, q, time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC), "cli", activity.KeyCreate, "key 1", nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := store.Reader().ListAdminActivity(ctx, db.ListAdminActivityParams{Before: 1 << 62, Lim: 10})
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v %v", rows, err)
	}
	got := rows[1]
	for _, secret := range []string{"s3cret-value", "pa55word", "abcdef", "mbt_xyz", "mbk_abc"} {
		if strings.Contains(got.BeforeJson.String+got.AfterJson.String, secret) {
			t.Errorf("the record holds %q: %s %s", secret, got.BeforeJson.String, got.AfterJson.String)
		}
	}
	if want := `{"secret":"(set)","token":"","url":"https://h.example.com"}`; got.BeforeJson.String != want {
		t.Errorf("before = %s, want %s", got.BeforeJson.String, want)
	}
	if want := `{"key":"(set)","list":[{"name":"n","token":"(set)"}],"nested":{"key_hash":"(set)","password":"(set)"}}`; got.AfterJson.String != want {
		t.Errorf("after = %s, want %s", got.AfterJson.String, want)
	}
	if rows[0].BeforeJson != (sql.NullString{}) || rows[0].AfterJson != (sql.NullString{}) {
		t.Errorf("a nil state is stored as %+v %+v, want NULL", rows[0].BeforeJson, rows[0].AfterJson)
	}
	e, err := activity.FromRow(rows[0])
	if err != nil || string(e.Before) != "null" || e.Actor != "cli" || e.Action != "key.create" {
		t.Errorf("entry %+v %v", e, err)
	}
}

// TestParsePage reads the query of a page and refuses what is not one.
func TestParsePage(t *testing.T) {
	for _, c := range []struct {
		limit, before, code string
		want                activity.Page
	}{
		{"", "", "", activity.Page{}},
		{"10", "42", "", activity.Page{Limit: 10, Before: 42}},
		{"0", "", "invalid_limit", activity.Page{}},
		{"501", "", "invalid_limit", activity.Page{}},
		{"ten", "", "invalid_limit", activity.Page{}},
		{"", "0", "invalid_before", activity.Page{}},
		{"", "x", "invalid_before", activity.Page{}},
	} {
		p, err := activity.ParsePage(c.limit, c.before, "")
		if c.code != "" {
			if errs.CodeOf(err) != c.code {
				t.Errorf("limit %q before %q: %+v %v, want %s", c.limit, c.before, p, err, c.code)
			}
			continue
		}
		if err != nil || p != c.want {
			t.Errorf("limit %q before %q: %+v %v, want %+v", c.limit, c.before, p, err, c.want)
		}
	}
}
