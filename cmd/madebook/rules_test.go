package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/madebook/madebook/db"
)

func TestRulesInfer(t *testing.T) {
	repo := t.TempDir()
	write := func(path, content string) {
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"a", "b", "c"} {
		write("web/"+c+"/query.ts", "import { useQuery } from '@tanstack/react-query'\n")
	}
	write("web/d/store.ts", "import { configureStore } from '@reduxjs/toolkit'\n")
	write("node_modules/x/index.js", "import { configureStore } from '@reduxjs/toolkit'\n")
	getenv := func(string) string { return "" }
	dbPath := filepath.Join(t.TempDir(), "m.db")

	t.Run("it proposes a rule from the repository's imports and stores nothing", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"madebook", "rules", "infer", "--repo", repo, "--db", dbPath}, getenv, strings.NewReader(""), &out); err != nil {
			t.Fatal(err)
		}
		if want := "server state: React Query, chosen in 3 of 4 components (75%); departures: Redux Toolkit"; !strings.Contains(out.String(), want) {
			t.Fatalf("output %q lacks %q", out.String(), want)
		}
		if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("without --apply a database was created: %v", err)
		}
	})
	t.Run("--apply stores the proposals as advisory rules", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"madebook", "rules", "infer", "--repo", repo, "--apply", "--db", dbPath}, getenv, strings.NewReader(""), &out); err != nil {
			t.Fatal(err)
		}
		store, err := db.Open(dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		rules, err := store.Reader().ListRules(context.Background())
		if err != nil || len(rules) != 1 || rules[0].Chosen != "React Query" || rules[0].Support != 3 || rules[0].Total != 4 || rules[0].Enforced {
			t.Fatalf("stored %+v (%v)", rules, err)
		}
	})
	t.Run("without --repo it is a usage error", func(t *testing.T) {
		err := run(context.Background(), []string{"madebook", "rules", "infer"}, getenv, strings.NewReader(""), &bytes.Buffer{})
		var u usageError
		if !errors.As(err, &u) {
			t.Fatalf("err = %v", err)
		}
	})
}
