package rules_test

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/rules"
)

// repo is a repository of 34 React components (31 on React Query, 3 on
// Redux Toolkit) and 7 Go packages (slog in 5, zap in 3), with plenty
// around them that Infer must not count.
func repo() fstest.MapFS {
	m := fstest.MapFS{}
	file := func(p, text string) { m[p] = &fstest.MapFile{Data: []byte(text)} }
	for i := 1; i <= 31; i++ {
		file(fmt.Sprintf("web/src/features/f%02d/index.tsx", i), "import { useQuery } from '@tanstack/react-query'\nimport React from 'react'\n")
	}
	// A component counts once, however many of its files import.
	file("web/src/features/f01/hooks.ts", "import { useMutation } from '@tanstack/react-query'\n")
	file("web/src/features/f01/types.d.ts", "export type X = import('@tanstack/react-query').QueryKey\n")
	for i := 1; i <= 3; i++ {
		file(fmt.Sprintf("web/src/legacy/l%d/store.js", i), "const { configureStore } = require('@reduxjs/toolkit')\n")
	}

	goFile := func(p, imports string) { file(p, "package x\n\nimport (\n"+imports+")\n") }
	for _, p := range []string{"internal/a", "internal/b", "internal/c", "cmd/tool"} {
		goFile(p+"/x.go", "\t\"fmt\"\n\t\"log/slog\"\n")
	}
	goFile("internal/d/x.go", "\t\"go.uber.org/zap\"\n")
	goFile("internal/e/x.go", "\tzl \"go.uber.org/zap/zapcore\"\n")
	goFile("internal/both/x.go", "\t\"log/slog\"\n")
	goFile("internal/both/y_test.go", "\t\"go.uber.org/zap\"\n")

	// Only one component uses a router: too few for a rule.
	file("server/index.mjs", "import express from 'express'\n")

	// None of these count.
	for i := range 40 {
		file(fmt.Sprintf("node_modules/pkg%d/index.js", i), "require('@reduxjs/toolkit')\n")
		file(fmt.Sprintf("web/node_modules/pkg%d/index.js", i), "require('@reduxjs/toolkit')\n")
		file(fmt.Sprintf("vendor/go.uber.org/zap/p%d/x.go", i), "package p\nimport \"go.uber.org/zap\"\n")
	}
	file(".git/hooks/x.js", "require('@reduxjs/toolkit')\n")
	file(".storybook/a/preview.js", "import '@reduxjs/toolkit'\n")
	file("internal/a/testdata/fixture.go", "package f\nimport \"go.uber.org/zap\"\n")
	file("web/src/big/bundle.js", "import '@reduxjs/toolkit'\n"+strings.Repeat("x", rules.MaxFileSize))
	file("web/src/bin/blob.js", "import '@reduxjs/toolkit'\x00\x00")
	file("docs/store.md", "import { configureStore } from '@reduxjs/toolkit'\n")
	file("docs/old/store.jsx", "// import { configureStore } from '@reduxjs/toolkit'\n")
	m["web/src/link/store.js"] = &fstest.MapFile{Data: []byte("../legacy/l1/store.js"), Mode: fs.ModeSymlink}
	return m
}

func TestInfer(t *testing.T) {
	t.Run("each concern two or more components address gets an advisory rule for its most used alternative", func(t *testing.T) {
		got, err := rules.Infer(repo())
		if err != nil {
			t.Fatal(err)
		}
		want := []rules.Rule{
			{Concern: "server state", Chosen: "React Query", Departures: []string{"Redux Toolkit", "SWR", "Apollo"}, Support: 31, Total: 34},
			{Concern: "Go logging", Chosen: "slog", Departures: []string{"zap", "logrus", "zerolog"}, Support: 5, Total: 7},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Infer:\n got %+v\nwant %+v", got, want)
		}
		for _, r := range got {
			if err := r.Validate(); err != nil {
				t.Errorf("inferred rule %q does not validate: %v", r.Concern, err)
			}
		}
	})

	t.Run("an inferred rule, once enforced, catches a change that uses a departure", func(t *testing.T) {
		got, err := rules.Infer(repo())
		if err != nil {
			t.Fatal(err)
		}
		r := got[0]
		r.ID, r.Enforced = 12, true
		c := change.Change{Files: []change.File{content("web/src/features/f32/index.tsx", "import { createSlice } from '@reduxjs/toolkit'\n")}}
		want := []rules.Deviation{dev(12, "Redux Toolkit", "web/src/features/f32/index.tsx")}
		if ds := rules.Deviations([]rules.Rule{r}, c); !reflect.DeepEqual(ds, want) {
			t.Errorf("Deviations:\n got %#v\nwant %#v", ds, want)
		}
	})

	t.Run("a tie goes to the alternative listed first in the catalogue", func(t *testing.T) {
		m := fstest.MapFS{
			"a/x.js": {Data: []byte("import pino from 'pino'\n")},
			"b/x.js": {Data: []byte("const w = require('winston')\n")},
		}
		got, err := rules.Infer(m)
		if err != nil {
			t.Fatal(err)
		}
		want := []rules.Rule{{Concern: "JavaScript logging", Chosen: "pino", Departures: []string{"winston", "bunyan"}, Support: 1, Total: 2}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Infer:\n got %+v\nwant %+v", got, want)
		}
	})

	t.Run("a repository with nothing to infer gives no rules, not nil", func(t *testing.T) {
		got, err := rules.Infer(fstest.MapFS{"main.go": {Data: []byte("package main\n")}})
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Infer = %#v, %v; want an empty list", got, err)
		}
	})

	t.Run("an unreadable file is an error that names it", func(t *testing.T) {
		_, err := rules.Infer(failingFS{repo(), "internal/b/x.go"})
		if err == nil || !strings.Contains(err.Error(), "internal/b/x.go") || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Infer error = %v, want one naming internal/b/x.go", err)
		}
	})
}

// failingFS refuses to open one file.
type failingFS struct {
	fstest.MapFS
	bad string
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.MapFS.Open(name)
}
