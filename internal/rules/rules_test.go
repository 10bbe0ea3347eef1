package rules_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/change"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
	"github.com/madebook/madebook/internal/rules"
)

// The rules the deviation tests hold changes to.
var (
	// serverState is the seed's rule, with its departure as the seed spells it.
	serverState = rules.Rule{ID: 1, Concern: "server state", Chosen: "React Query", Departures: []string{"redux-toolkit"},
		Support: 31, Total: 34, Enforced: true}
	// router names its departure by raw module path.
	router = rules.Rule{ID: 2, Concern: "Go HTTP routing", Chosen: "echo", Departures: []string{"github.com/gin-gonic/gin"},
		Support: 9, Total: 10, Enforced: true}
	// utilities names raw npm packages.
	utilities = rules.Rule{ID: 3, Concern: "utilities", Chosen: "ramda", Departures: []string{"lodash", "underscore"},
		Support: 5, Total: 6}
	// inferred uses catalogue display names only, as Infer writes them.
	inferred = rules.Rule{ID: 4, Concern: "server state", Chosen: "React Query", Departures: []string{"Redux Toolkit", "SWR", "Apollo"},
		Support: 31, Total: 34}
)

func content(path, text string) change.File { return change.File{Path: path, Content: text} }
func diff(path, text string) change.File    { return change.File{Path: path, Diff: text} }

func dev(id int64, departure string, files ...string) rules.Deviation {
	if files == nil {
		files = []string{}
	}
	return rules.Deviation{RuleID: id, Departure: departure, Files: files}
}

func TestDeviations(t *testing.T) {
	cases := []struct {
		name  string
		rules []rules.Rule
		c     change.Change
		want  []rules.Deviation
	}{
		{
			name:  "a Go import block that imports a departure's package departs",
			rules: []rules.Rule{router},
			c: change.Change{Files: []change.File{content("api/render.go", `package api

import (
	"net/http"

	ginrender "github.com/gin-gonic/gin/render"
)
`)}},
			want: []rules.Deviation{dev(2, "github.com/gin-gonic/gin", "api/render.go")},
		},
		{
			name:  "single Go imports depart, named or not",
			rules: []rules.Rule{router},
			c: change.Change{Files: []change.File{
				content("b/b.go", "package b\n\nimport g \"github.com/gin-gonic/gin\"\n"),
				content("a/a.go", "package a\nimport \"github.com/gin-gonic/gin\"\nimport _ \"embed\"\n"),
				content("c/c.go", "package c\nimport . `github.com/gin-gonic/gin`\n"),
			}},
			want: []rules.Deviation{dev(2, "github.com/gin-gonic/gin", "a/a.go", "b/b.go", "c/c.go")},
		},
		{
			name:  "a Go module path that only shares a prefix does not depart",
			rules: []rules.Rule{router},
			c:     change.Change{Files: []change.File{content("a/a.go", "package a\nimport \"github.com/gin-gonic/ginkgo\"\n")}},
		},
		{
			name:  "a Go path in a comment or an ordinary string does not depart",
			rules: []rules.Rule{router},
			c: change.Change{Files: []change.File{content("a/a.go", `package a

// import "github.com/gin-gonic/gin"
/* import (
	"github.com/gin-gonic/gin"
) */
var s = "import \"github.com/gin-gonic/gin\""
`)}},
		},
		{
			name:  "a catalogue name matches the alternative's imports, major version included",
			rules: []rules.Rule{{ID: 9, Concern: "Go HTTP routing", Chosen: "chi", Departures: []string{"echo"}, Support: 3, Total: 4}},
			c: change.Change{Files: []change.File{content("srv/main.go",
				"package main\n\nimport (\n\t\"github.com/labstack/echo/v4\"\n\t\"github.com/labstack/echo/v4/middleware\"\n)\n")}},
			want: []rules.Deviation{dev(9, "echo", "srv/main.go")},
		},
		{
			name:  "a JavaScript import from a package departs",
			rules: []rules.Rule{inferred},
			c: change.Change{Files: []change.File{content("web/store.ts",
				"import { configureStore } from '@reduxjs/toolkit'\nimport React from \"react\"\n")}},
			want: []rules.Deviation{dev(4, "Redux Toolkit", "web/store.ts")},
		},
		{
			name:  "every form of JavaScript import is read",
			rules: []rules.Rule{utilities},
			c: change.Change{Files: []change.File{
				content("a.js", "import 'lodash'\n"),
				content("b.cjs", "const _ = require(\"lodash\");\n"),
				content("c.mjs", "const _ = await import('lodash');\n"),
				content("d.tsx", "import {\n  map,\n  filter,\n} from 'lodash';\n"),
				content("e.ts", "export { map } from 'lodash'\nexport * from \"underscore\"\n"),
				content("f.ts", "import type { Dictionary } from 'lodash'\n"),
				content("g.jsx", "import _, { map as m } from \"lodash\"\n"),
				content("h.ts", "import _ = require('underscore')\n"),
				content("i.js", "const _ = require(`lodash`)\n"),
			}},
			want: []rules.Deviation{
				dev(3, "lodash", "a.js", "b.cjs", "c.mjs", "d.tsx", "e.ts", "f.ts", "g.jsx", "i.js"),
				dev(3, "underscore", "e.ts", "h.ts"),
			},
		},
		{
			name:  "a subpath import departs as its package",
			rules: []rules.Rule{utilities},
			c:     change.Change{Files: []change.File{content("fp.js", "import flow from 'lodash/fp/flow'\n")}},
			want:  []rules.Deviation{dev(3, "lodash", "fp.js")},
		},
		{
			name:  "a scoped package departs through its subpaths, and a scope's other packages do not",
			rules: []rules.Rule{{ID: 5, Concern: "server state", Chosen: "React Query", Departures: []string{"@reduxjs/toolkit"}, Support: 3, Total: 4}},
			c: change.Change{Files: []change.File{
				content("api.ts", "import { createApi } from '@reduxjs/toolkit/query/react'\n"),
				content("other.ts", "import x from '@reduxjs/toolkit-extra'\nimport y from '@reduxjs/other'\n"),
			}},
			want: []rules.Deviation{dev(5, "@reduxjs/toolkit", "api.ts")},
		},
		{
			name:  "a package that only shares a prefix does not depart",
			rules: []rules.Rule{utilities},
			c:     change.Change{Files: []change.File{content("a.js", "import map from 'lodash-es/map'\nimport u from 'underscore.string'\n")}},
		},
		{
			name:  "relative imports, URLs, built-ins and dynamic specifiers are not packages",
			rules: []rules.Rule{utilities},
			c: change.Change{Files: []change.File{content("a.js", `import a from './lodash'
import b from '../lodash'
import c from '/lodash'
import d from 'https://esm.sh/lodash'
import e from 'node:lodash'
const f = require(`+"`${'lodash'}`"+`)
const g = import(name)
const h = foo.require('lodash')
`)}},
		},
		{
			name:  "a JavaScript import in a comment does not depart",
			rules: []rules.Rule{utilities},
			c: change.Change{Files: []change.File{content("a.js",
				"// import _ from 'lodash'\n/* const _ = require('lodash') */\nconst url = 'http://example.com' // require('underscore')\n")}},
		},
		{
			name:  "an added dependency departs, whatever its version",
			rules: []rules.Rule{serverState, router},
			c:     change.Change{Dependencies: []string{"redux-toolkit@2.2.0", "github.com/gin-gonic/gin v1.10.0"}},
			want:  []rules.Deviation{dev(1, "redux-toolkit"), dev(2, "github.com/gin-gonic/gin")},
		},
		{
			name:  "npm dependency names match ignoring case",
			rules: []rules.Rule{utilities},
			c:     change.Change{Dependencies: []string{"LoDash"}},
			want:  []rules.Deviation{dev(3, "lodash")},
		},
		{
			name:  "a departure spelled as an alias matches the alternative's package",
			rules: []rules.Rule{serverState},
			c: change.Change{
				Dependencies: []string{"@reduxjs/toolkit@^2.0.0"},
				Files:        []change.File{content("src/store.ts", "import { configureStore } from '@reduxjs/toolkit'\n")},
			},
			want: []rules.Deviation{dev(1, "redux-toolkit", "src/store.ts")},
		},
		{
			name:  "a departing dependency names the manifest the change adds it to",
			rules: []rules.Rule{inferred},
			c: change.Change{
				Dependencies: []string{"swr"},
				Files: []change.File{
					diff("web/package.json", "@@ -3,3 +3,4 @@\n   \"dependencies\": {\n+    \"swr\": \"^2.2.0\",\n     \"react\": \"^18.0.0\"\n"),
					content("go.mod", "module example.com/x\n"),
				},
			},
			want: []rules.Deviation{dev(4, "SWR", "web/package.json")},
		},
		{
			name:  "a diff counts the imports it adds, not those it removes",
			rules: []rules.Rule{router, utilities},
			c: change.Change{Files: []change.File{
				diff("api/api.go", `--- a/api/api.go
+++ b/api/api.go
@@ -1,6 +1,6 @@
 package api
 
 import (
-	"github.com/gin-gonic/gin"
+	"github.com/labstack/echo/v4"
 )
`),
				diff("web/app.js", "--- a/web/app.js\n+++ b/web/app.js\n@@ -1,2 +1,2 @@\n-import _ from 'lodash'\n+import R from 'ramda'\n"),
			}},
		},
		{
			name:  "a diff that adds one line to an existing import block departs",
			rules: []rules.Rule{router},
			c: change.Change{Files: []change.File{diff("api/api.go", `--- a/api/api.go
+++ b/api/api.go
@@ -3,4 +3,5 @@ import (
 	"net/http"
 
+	gin "github.com/gin-gonic/gin"
 	"github.com/labstack/echo/v4"
`)}},
			want: []rules.Deviation{dev(2, "github.com/gin-gonic/gin", "api/api.go")},
		},
		{
			name:  "binary files are skipped",
			rules: []rules.Rule{utilities},
			c:     change.Change{Files: []change.File{content("blob.js", "import _ from 'lodash'\x00\x01\x02")}},
		},
		{
			name:  "files in other languages are not read",
			rules: []rules.Rule{utilities},
			c:     change.Change{Files: []change.File{content("README.md", "import _ from 'lodash'\n"), content("a.py", "import lodash\n")}},
		},
		{
			name:  "each file is listed once, in order",
			rules: []rules.Rule{utilities},
			c: change.Change{Files: []change.File{
				content("z/z.js", "import a from 'lodash/map'\nimport b from 'lodash/filter'\n"),
				content("a/a.js", "require('lodash')\n"),
				content("m/m.js", "import('lodash')\n"),
			}},
			want: []rules.Deviation{dev(3, "lodash", "a/a.js", "m/m.js", "z/z.js")},
		},
		{
			name: "a rule that does not validate is skipped",
			rules: []rules.Rule{{ID: 7, Concern: "server state", Chosen: "React Query", Departures: []string{"React Query", "swr"},
				Support: 3, Total: 4}},
			c: change.Change{Dependencies: []string{"swr"}},
		},
		{
			name:  "the chosen approach does not depart",
			rules: []rules.Rule{serverState, inferred},
			c:     change.Change{Files: []change.File{content("q.ts", "import { useQuery } from '@tanstack/react-query'\n")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rules.Deviations(tc.rules, tc.c)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Deviations:\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestDeviationsAreInADeterministicOrder(t *testing.T) {
	rs := []rules.Rule{
		{ID: 3, Concern: "utilities", Chosen: "ramda", Departures: []string{"underscore", "lodash"}, Support: 2, Total: 3},
		{ID: 1, Concern: "dates", Chosen: "date-fns", Departures: []string{"moment", "dayjs"}, Support: 2, Total: 3},
		{ID: 2, Concern: "server state", Chosen: "React Query", Departures: []string{"SWR"}, Support: 2, Total: 3},
	}
	c := change.Change{
		Dependencies: []string{"lodash", "dayjs"},
		Files: []change.File{
			content("b.ts", "import useSWR from 'swr'\nimport m from 'moment'\n"),
			content("a.ts", "import _ from 'underscore'\nimport m from 'moment'\n"),
		},
	}
	want := []rules.Deviation{
		dev(1, "moment", "a.ts", "b.ts"),
		dev(1, "dayjs"),
		dev(2, "SWR", "b.ts"),
		dev(3, "underscore", "a.ts"),
		dev(3, "lodash"),
	}
	for i := range 20 {
		// Reordering the change's files must not reorder the answer.
		c.Files[0], c.Files[1] = c.Files[1], c.Files[0]
		if got := rules.Deviations(rs, c); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d:\n got %#v\nwant %#v", i, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	valid := func(edit func(*rules.Rule)) rules.Rule {
		r := rules.Rule{Concern: "server state", Chosen: "React Query", Departures: []string{"redux-toolkit", "SWR"}, Support: 31, Total: 34}
		edit(&r)
		return r
	}
	t.Run("the seed's rule is valid", func(t *testing.T) {
		if err := valid(func(*rules.Rule) {}).Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a rule every component follows is valid", func(t *testing.T) {
		if err := valid(func(r *rules.Rule) { r.Support = r.Total }).Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a departure more specific than the chosen package is valid", func(t *testing.T) {
		r := rules.Rule{Concern: "utilities", Chosen: "lodash", Departures: []string{"lodash/fp"}, Support: 1, Total: 1}
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an upgrade from a legacy package to its successor is valid", func(t *testing.T) {
		r := rules.Rule{Concern: "server state", Chosen: "@tanstack/react-query", Departures: []string{"react-query"}, Support: 1, Total: 2}
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
	})

	cases := []struct {
		name  string
		rule  rules.Rule
		field string
		says  string
	}{
		{"a rule needs a concern", valid(func(r *rules.Rule) { r.Concern = "  " }), "concern", "needs a concern"},
		{"a rule needs a chosen approach", valid(func(r *rules.Rule) { r.Chosen = "" }), "chosen", "needs a chosen approach"},
		{"a rule needs a departure", valid(func(r *rules.Rule) { r.Departures = nil }), "departures", "at least one departure"},
		{"a departure cannot be empty", valid(func(r *rules.Rule) { r.Departures = []string{"swr", " "} }), "departures", "Departure 2 is empty"},
		{"a departure cannot be the chosen approach", valid(func(r *rules.Rule) { r.Departures = []string{"react query"} }), "departures", "is the chosen approach"},
		{"a departure cannot be listed twice", valid(func(r *rules.Rule) { r.Departures = []string{"swr", "SWR"} }), "departures", "listed twice"},
		{"a departure cannot be how the chosen approach is imported", valid(func(r *rules.Rule) { r.Departures = []string{"@tanstack/react-query"} }),
			"departures", "would flag React Query itself"},
		{"support cannot be zero", valid(func(r *rules.Rule) { r.Support = 0 }), "support", "at least 1"},
		{"support cannot be negative", valid(func(r *rules.Rule) { r.Support = -3 }), "support", "at least 1"},
		{"support cannot exceed total", valid(func(r *rules.Rule) { r.Support, r.Total = 35, 34 }), "total", "Support (35) cannot be more than total (34)"},
		{"a total of zero is refused", valid(func(r *rules.Rule) { r.Support, r.Total = 1, 0 }), "total", "cannot be more than total (0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rule.Validate()
			e, ok := errs.As(err)
			if !ok {
				t.Fatalf("Validate = %v, want an *errs.Error", err)
			}
			if e.Kind != errs.Invalid || e.Code != "invalid_rule" || e.Field != tc.field {
				t.Errorf("got kind %v, code %q, field %q; want Invalid, invalid_rule, %s", e.Kind, e.Code, e.Field, tc.field)
			}
			if !strings.Contains(e.Message, tc.says) || !strings.HasSuffix(e.Message, ".") {
				t.Errorf("message %q should say %q, as a sentence", e.Message, tc.says)
			}
		})
	}
}

func TestToFact(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := change.Change{Dependencies: []string{"redux-toolkit"}, Files: []change.File{content("src/store.ts", "import { configureStore } from '@reduxjs/toolkit'\n")}}

	t.Run("an enforced rule held with 91% confidence makes the agent remediate, naming the compliant alternative", func(t *testing.T) {
		ds := rules.Deviations([]rules.Rule{serverState}, c)
		if len(ds) != 1 {
			t.Fatalf("Deviations = %#v, want one", ds)
		}
		f := rules.ToFact(serverState, ds[0])
		want := protocol.Deviation{Departure: "redux-toolkit", Chosen: "React Query", Concern: "server state", Support: 31, Total: 34,
			Enforced: true, Files: []string{"src/store.ts"}}
		if !reflect.DeepEqual(f, want) {
			t.Fatalf("ToFact:\n got %#v\nwant %#v", f, want)
		}
		b := protocol.Decide(protocol.Facts{Deviations: []protocol.Deviation{f}}, now)
		if b.NextAction != protocol.Remediate {
			t.Errorf("next action = %v, want REMEDIATE", b.NextAction)
		}
		const text = "redux-toolkit departs from this workspace's approach. Use React Query — chosen for server state in 31 of 34 components."
		if b.Reason.String() != text {
			t.Errorf("reason = %q\nwant %q", b.Reason.String(), text)
		}
	})

	advisory := func(t *testing.T, r rules.Rule) {
		t.Helper()
		ds := rules.Deviations([]rules.Rule{r}, c)
		if len(ds) != 1 {
			t.Fatalf("Deviations = %#v, want one", ds)
		}
		b := protocol.Decide(protocol.Facts{Deviations: []protocol.Deviation{rules.ToFact(r, ds[0])}}, now)
		if b.NextAction != protocol.ContinueWithWarning {
			t.Errorf("next action = %v, want CONTINUE_WITH_WARNING", b.NextAction)
		}
		if !strings.Contains(b.Reason.String(), "(React Query, inferred with 55% confidence — advisory)") {
			t.Errorf("reason = %q, want the advisory text", b.Reason.String())
		}
	}
	t.Run("an advisory rule held with 55% confidence only warns", func(t *testing.T) {
		r := serverState
		r.Support, r.Total, r.Enforced = 11, 20, false
		advisory(t, r)
	})
	t.Run("an enforced rule held with 55% confidence only warns", func(t *testing.T) {
		r := serverState
		r.Support, r.Total = 11, 20
		advisory(t, r)
	})

	t.Run("the fact does not share the deviation's file list", func(t *testing.T) {
		d := dev(1, "redux-toolkit", "a.ts")
		f := rules.ToFact(serverState, d)
		f.Files[0] = "changed.ts"
		if d.Files[0] != "a.ts" {
			t.Error("changing the fact's files changed the deviation's")
		}
	})
}

func TestCatalogue(t *testing.T) {
	t.Run("display names and aliases name one alternative each", func(t *testing.T) {
		seen := map[string]string{}
		for _, c := range rules.Catalogue {
			for _, a := range c.Alternatives {
				for _, n := range append([]string{a.Name}, a.Aliases...) {
					k := strings.ToLower(n)
					if prev, ok := seen[k]; ok {
						t.Errorf("%q names both %s and %s", n, prev, a.Name)
					}
					seen[k] = a.Name
				}
				if len(a.Imports) == 0 {
					t.Errorf("%s has no import matchers", a.Name)
				}
			}
		}
	})
	t.Run("a display name stands for its imports", func(t *testing.T) {
		if got := rules.Matchers("react query"); !reflect.DeepEqual(got, []string{"@tanstack/react-query", "react-query"}) {
			t.Errorf("Matchers = %q", got)
		}
	})
	t.Run("an alias that could be a package stands for itself too", func(t *testing.T) {
		if got := rules.Matchers("redux-toolkit"); !reflect.DeepEqual(got, []string{"@reduxjs/toolkit", "redux-toolkit"}) {
			t.Errorf("Matchers = %q", got)
		}
	})
	t.Run("any other name is an import path", func(t *testing.T) {
		if got := rules.Matchers(" github.com/gin-gonic/gin "); !reflect.DeepEqual(got, []string{"github.com/gin-gonic/gin"}) {
			t.Errorf("Matchers = %q", got)
		}
	})
}
