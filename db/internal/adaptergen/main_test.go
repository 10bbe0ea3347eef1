package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// imp is shared, so that both packages see one context.Context.
var imp = importer.Default()

// check type-checks src as the package at path.
func check(t *testing.T, path, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path+".go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

var kinds = map[string]string{"GetRow": "one select", "ListRows": "many select", "Touch": "exec"}

const dbSrc = `package db
import "context"
type Row struct { ID int64; Name string }
type Querier interface {
	GetRow(ctx context.Context, id int64) (Row, error)
	ListRows(ctx context.Context) ([]Row, error)
	Touch(ctx context.Context, id int64) error
}`

func TestGenerateConvertsMatchingShapes(t *testing.T) {
	pg := strings.Replace(strings.Replace(dbSrc, "package db", "package pgdb", 1),
		"type Row struct { ID int64; Name string }", "type Row struct { ID int64 `json:\"id\"`; Name string }", 1)
	src, err := generate(check(t, dbPath, dbSrc), check(t, pgdbPath, pg), kinds)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (a pgQueries) GetRow(ctx context.Context, id int64) (Row, error) {",
		"return Row(r), noRowHolds(err)",
		"out[i] = Row(r)",
		"return []Row{}, nil",
		"return a.q.Touch(ctx, id)",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the adapter lacks %q:\n%s", want, src)
		}
	}
}

func TestGenerateRefusesDifferentShapes(t *testing.T) {
	for name, pg := range map[string]string{
		"a field typed differently": strings.Replace(dbSrc, "ID int64;", "ID int32;", 1),
		"a parameter typed differently": strings.Replace(dbSrc, "GetRow(ctx context.Context, id int64)",
			"GetRow(ctx context.Context, id int32)", 1),
		"a method missing": strings.Replace(dbSrc, "Touch(ctx context.Context, id int64) error", "", 1),
		"fields reordered": strings.Replace(dbSrc, "ID int64; Name string", "Name string; ID int64", 1),
	} {
		t.Run(name, func(t *testing.T) {
			pg = strings.Replace(pg, "package db", "package pgdb", 1)
			_, err := generate(check(t, dbPath, dbSrc), check(t, pgdbPath, pg), kinds)
			if err == nil || !strings.Contains(err.Error(), "db and pgdb differ") {
				t.Fatalf("generate = %v, want a refusal naming the difference", err)
			}
			t.Log(err)
		})
	}
}
