package main

import (
	"bytes"
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/madebook/madebook/db"
)

// TestTheCommandLineRecordsWhatItDoesInTheAdminActivity runs user add,
// key create, token create and rules infer --apply, and reads the admin
// activity each recorded: the actor is the command line with the
// operating system's user, and no entry holds the password, key or token.
func TestTheCommandLineRecordsWhatItDoesInTheAdminActivity(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "m.db")
	getenv := func(k string) string {
		if k == "USER" {
			return "fallback-user"
		}
		return ""
	}
	want := "cli:fallback-user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		want = "cli:" + u.Username
	}
	repo := t.TempDir()
	for _, c := range []string{"a", "b"} {
		p := filepath.Join(repo, "web", c, "log.go")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n\nimport \"log/slog\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const password = "cli-secret-password"
	var secrets []string
	for _, args := range [][]string{
		{"user", "add", "--email", "ann@example.com", "--role", "admin"},
		{"key", "create", "--name", "cli-agent"},
		{"token", "create", "--email", "ann@example.com"},
		{"rules", "infer", "--repo", repo, "--apply"},
	} {
		var out bytes.Buffer
		if err := run(ctx, append(append([]string{"madebook"}, args...), "--db", dbPath), getenv, strings.NewReader(password+"\n"), &out); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if s := strings.TrimSpace(out.String()); strings.HasPrefix(s, "mbk_") || strings.HasPrefix(s, "mbt_") {
			secrets = append(secrets, s, s[4:])
		}
	}
	if len(secrets) != 4 {
		t.Fatalf("printed secrets %q, want a key and a token", secrets)
	}
	store, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.Reader().ListAdminActivity(ctx, db.ListAdminActivityParams{Before: 1 << 62, Lim: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Actor+" "+r.Action+" "+r.Target)
		for _, s := range append(secrets, password) {
			if strings.Contains(r.BeforeJson.String+r.AfterJson.String+r.Target, s) {
				t.Errorf("the %s entry holds a secret: %s %s", r.Action, r.BeforeJson.String, r.AfterJson.String)
			}
		}
	}
	wantRows := []string{want + " rules.import 1 rules", want + " token.create user ann@example.com",
		want + " key.create key 1 (cli-agent)", want + " user.add user ann@example.com"}
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("the admin activity:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
}
