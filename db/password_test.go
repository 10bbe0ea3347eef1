package db_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/db"
)

func TestHasPassword(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]bool{
		"postgres://madebook:secret@db.example.com/madebook":          true,
		"postgresql://madebook:@db.example.com/madebook":              true,
		"postgres://madebook@db.example.com/madebook?sslmode=require": false,
		"postgres://db.example.com/madebook":                          false,
		"postgres://u:p@h1:5432,h2:5432/madebook":                     true,
		"./madebook.db":                                             false,
		"/var/lib/madebook/user:secret@host.db":                     false,
		"postgres://madebook:se%2Fcret@db.example.com/madebook?x=1": true,
		"postgres://%zz@db.example.com/madebook":                    false,
	} {
		if got := db.HasPassword(dsn); got != want {
			t.Errorf("HasPassword(%q) = %t, want %t", dsn, got, want)
		}
	}
}

func TestWithPassword(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dsn, password, want string
	}{
		{"postgres://madebook@db.example.com:5432/madebook?sslmode=require", "s3cret",
			"postgres://madebook:s3cret@db.example.com:5432/madebook?sslmode=require"},
		{"postgresql://madebook@h1:5432,h2:5432/madebook?target_session_attrs=read-write", "p@ss:w/rd",
			"postgresql://madebook:p%40ss%3Aw%2Frd@h1:5432,h2:5432/madebook?target_session_attrs=read-write"},
	} {
		got, err := db.WithPassword(tt.dsn, tt.password)
		if err != nil || got != tt.want {
			t.Errorf("WithPassword(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
		if !db.HasPassword(got) || strings.Contains(db.Describe(got), tt.password) {
			t.Errorf("%q: HasPassword %t, Describe %q", got, db.HasPassword(got), db.Describe(got))
		}
	}
	for dsn, says := range map[string]string{
		"./madebook.db":                      "only to a postgres:// URL",
		"postgres://db.example.com/madebook": "names no user",
		"postgres://u:p@db.example.com/x":    "holds a password already",
		"postgres://u@[::1/x":                "does not parse",
	} {
		if _, err := db.WithPassword(dsn, "pw"); err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), ":p@") {
			t.Errorf("WithPassword(%q): %v, want an error saying %q without the URL's password", dsn, err, says)
		}
	}
}
