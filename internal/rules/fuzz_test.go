package rules

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/change"
)

// FuzzImports reads any text as a Go and as a JavaScript source, whole and
// as a diff's added lines: the import readers never fail, every import
// they return is non-empty text found in the source, and Deviations over
// a rule that departs to one of them names the file.
func FuzzImports(f *testing.F) {
	for _, s := range []string{
		"package x\n\nimport (\n\t\"fmt\"\n\tr \"github.com/go-redis/redis/v9\"\n)\n",
		"import \"C\"\n/* import \"x\" */ var s = `import \"y\"`",
		"\t\"github.com/labstack/echo/v4\"\n",
		"import x from 'lodash/fp';\nconst y = require(\"@reduxjs/toolkit\");\nexport * from './local';\nimport('swr')",
		"import {a} from \"node:fs\"; import b from 'https://x/y.js'; // import c from 'c'\n`import d from 'd'`",
		"require(`left-pad`)", "import", "import \"", "import (", "import(", "'\\", "/*", "`", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, lang := range []Lang{Go, JS} {
			for _, fragment := range []bool{false, true} {
				imps := importsOf(lang, text, fragment)
				for _, imp := range imps {
					if imp == "" {
						t.Fatalf("%s (fragment %v): an empty import in %q", lang, fragment, text)
					}
				}
				if len(imps) == 0 || fragment || change.Binary(text) { // a binary file is never read for imports
					continue
				}
				path := map[Lang]string{Go: "x.go", JS: "x.ts"}[lang]
				rule := Rule{ID: 1, Concern: "fuzzed", Chosen: "chosen-lib", Departures: []string{imps[0]}, Support: 1, Total: 2, Enforced: true}
				if rule.Validate() != nil || strings.EqualFold(imps[0], "chosen-lib") {
					continue
				}
				ds := Deviations([]Rule{rule}, change.Change{Files: []change.File{{Path: path, Content: text}}})
				if len(ds) == 0 || len(ds[0].Files) == 0 || ds[0].Files[0] != path {
					t.Fatalf("%s imports %q, yet Deviations found %+v in %q", lang, imps[0], ds, text)
				}
			}
		}
	})
}
