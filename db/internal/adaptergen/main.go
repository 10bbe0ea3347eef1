// Command adaptergen writes db/pgquerier_gen.go: pgQueries, which
// implements db.Querier over *pgdb.Queries, the same queries as sqlc
// generates them for PostgreSQL. Services depend on db.Querier only, so
// they run on either engine without knowing which.
//
// Every method converts its arguments from db's types to pgdb's and its
// results back. A conversion is a Go conversion between two named types
// of the same name whose underlying types are identical (a struct's
// fields in the same order, with the same names and types); a slice of
// rows converts row by row. When the two packages disagree anywhere (a
// method one has and the other lacks, a parameter or a field typed
// differently, a field renamed or moved), adaptergen fails and says
// where: a query whose Go types differ between the engines must be made
// portable (see queries/), never papered over.
//
// A read (a :one or :many query that is a SELECT) passes its error through noRowHolds (pg.go):
// PostgreSQL refuses text it cannot hold (a NUL, bytes that are not
// UTF-8) even as a query's argument, where SQLite simply finds no row that
// holds it; such a read finds nothing on both engines.
//
// Run it from the db directory (go generate ./db).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/go/packages"
)

const (
	dbPath   = "github.com/madebook/madebook/db"
	pgdbPath = "github.com/madebook/madebook/db/pgdb"
)

func main() {
	out := flag.String("out", "pgquerier_gen.go", "the file to write, in the db package's directory")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintf(os.Stderr, "adaptergen: %v\n", err)
		os.Exit(1)
	}
}

func run(out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	// The file being regenerated may be stale (and not compile against
	// the current pgdb): load the packages as if it were empty. Package
	// db's own code then misses the adapter, so type errors in db are
	// expected and ignored (the types adaptergen reads, sqlc's, come
	// through whole); any other error stops it.
	cfg := &packages.Config{
		Mode:    packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps,
		Overlay: map[string][]byte{abs: []byte("package db\n")},
	}
	pkgs, err := packages.Load(cfg, dbPath, pgdbPath)
	if err != nil {
		return fmt.Errorf("load packages: %w", err)
	}
	byPath := map[string]*packages.Package{}
	var loadErrs []error
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
		for _, e := range p.Errors {
			if p.PkgPath == dbPath && e.Kind == packages.TypeError {
				continue
			}
			loadErrs = append(loadErrs, e)
		}
	}
	if len(loadErrs) > 0 {
		return fmt.Errorf("the packages do not compile: %w", errors.Join(loadErrs...))
	}
	dbPkg, pgPkg := byPath[dbPath], byPath[pgdbPath]
	if dbPkg == nil || pgPkg == nil {
		return fmt.Errorf("could not load %s and %s", dbPath, pgdbPath)
	}
	kinds, err := queryKinds(queriesDir)
	if err != nil {
		return err
	}
	src, err := generate(dbPkg.Types, pgPkg.Types, kinds)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// queriesDir is where sqlc reads the queries, from the db directory.
const queriesDir = "../queries"

var nameLine = regexp.MustCompile(`(?m)^-- name: (\w+) :(\w+)`)

// queryKinds reads each query's sqlc command (one, many, exec, …) from
// the query files.
func queryKinds(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no query files in %s (run adaptergen from the db directory): %v", dir, err)
	}
	kinds := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, block := range strings.Split(string(b), "-- name: ")[1:] {
			m := nameLine.FindStringSubmatch("-- name: " + block)
			if m == nil {
				return nil, fmt.Errorf("%s: a query without a name line: %.40q", f, block)
			}
			kind := m[2]
			if isSelect(block) {
				kind += " select"
			}
			kinds[m[1]] = kind
		}
	}
	return kinds, nil
}

// isSelect reports whether a query's first statement line (after its
// name and comment lines) is a SELECT or a WITH.
func isSelect(block string) bool {
	lines := strings.Split(block, "\n")[1:]
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--") {
			continue
		}
		u := strings.ToUpper(l)
		return strings.HasPrefix(u, "SELECT") || strings.HasPrefix(u, "WITH")
	}
	return false
}

// read reports whether the query name is a SELECT of rows (:one or
// :many), whose refused argument means that no row matches.
func (g *generator) read(name string) bool {
	k := g.kinds[name]
	return k == "one select" || k == "many select"
}

// querier returns the Querier interface of pkg.
func querier(pkg *types.Package) (*types.Interface, error) {
	obj := pkg.Scope().Lookup("Querier")
	if obj == nil {
		return nil, fmt.Errorf("package %s has no Querier (is emit_interface on in sqlc.yaml?)", pkg.Path())
	}
	iface, ok := obj.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("%s.Querier is not an interface", pkg.Name())
	}
	return iface, nil
}

// generator holds the two packages and the problems found so far: every
// difference is reported, not just the first.
type generator struct {
	db, pg *types.Package
	// kinds are the queries' sqlc commands by name (one, many, exec,
	// execrows…), from queries/*.sql.
	kinds    map[string]string
	problems []string
	buf      bytes.Buffer
}

func (g *generator) problem(format string, args ...any) {
	g.problems = append(g.problems, fmt.Sprintf(format, args...))
}

func generate(dbPkg, pgPkg *types.Package, kinds map[string]string) ([]byte, error) {
	dbQ, err := querier(dbPkg)
	if err != nil {
		return nil, err
	}
	pgQ, err := querier(pgPkg)
	if err != nil {
		return nil, err
	}
	g := &generator{db: dbPkg, pg: pgPkg, kinds: kinds}
	g.buf.WriteString(`// Code generated by db/internal/adaptergen. DO NOT EDIT.

package db

import (
	"context"
	"database/sql"

	"github.com/madebook/madebook/db/pgdb"
)

// pgQueries is db.Querier over the PostgreSQL queries (package pgdb):
// each method converts its arguments to pgdb's types and its results back.
type pgQueries struct{ q *pgdb.Queries }

var _ Querier = pgQueries{}

// Keep the imports used whatever the queries are.
var (
	_ context.Context
	_ sql.Result
)
`)
	pgMethods := map[string]*types.Func{}
	for i := range pgQ.NumMethods() {
		m := pgQ.Method(i)
		pgMethods[m.Name()] = m
	}
	for i := range dbQ.NumMethods() {
		m := dbQ.Method(i)
		pm, ok := pgMethods[m.Name()]
		if !ok {
			g.problem("%s: db.Querier has it, pgdb.Querier does not (is the query file in both sqlc blocks?)", m.Name())
			continue
		}
		delete(pgMethods, m.Name())
		g.method(m, pm)
	}
	for name := range pgMethods {
		g.problem("%s: pgdb.Querier has it, db.Querier does not", name)
	}
	if len(g.problems) > 0 {
		return nil, fmt.Errorf("db and pgdb differ, so no adapter can be generated; make these queries portable "+
			"(same Go types on both engines, e.g. CAST(… AS BIGINT)):\n  %s", strings.Join(g.problems, "\n  "))
	}
	src, err := format.Source(g.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format the adapter: %w", err)
	}
	return src, nil
}

// method writes one adapter method, converting m's arguments to pm's
// and pm's results to m's.
func (g *generator) method(m, pm *types.Func) {
	sig, psig := m.Type().(*types.Signature), pm.Type().(*types.Signature)
	name := m.Name()
	if sig.Params().Len() != psig.Params().Len() || sig.Results().Len() != psig.Results().Len() || sig.Variadic() || psig.Variadic() {
		g.problem("%s: db has %s, pgdb has %s", name, g.sigString(sig), g.sigString(psig))
		return
	}
	var params, args []string
	for i := range sig.Params().Len() {
		p, pp := sig.Params().At(i), psig.Params().At(i)
		pname := p.Name()
		if pname == "" || pname == "_" {
			pname = fmt.Sprintf("p%d", i)
		}
		params = append(params, pname+" "+g.typeString(p.Type()))
		conv, ok := g.convert(name, "parameter "+pname, p.Type(), pp.Type(), g.pg)
		if !ok {
			continue
		}
		args = append(args, conv(pname))
	}
	n := sig.Results().Len()
	if n == 0 || !isError(sig.Results().At(n-1).Type()) || n > 2 {
		g.problem("%s: results %s are not (error) or (T, error)", name, sig.Results())
		return
	}
	call := fmt.Sprintf("a.q.%s(%s)", name, strings.Join(args, ", "))
	if n == 1 {
		if !isError(psig.Results().At(0).Type()) {
			g.problem("%s: db returns error, pgdb returns %s", name, psig.Results())
			return
		}
		fmt.Fprintf(&g.buf, "\nfunc (a pgQueries) %s(%s) error {\n\treturn %s\n}\n", name, strings.Join(params, ", "), call)
		return
	}
	rt, prt := sig.Results().At(0).Type(), psig.Results().At(0).Type()
	if !isError(psig.Results().At(1).Type()) {
		g.problem("%s: pgdb's second result is %s, not error", name, psig.Results().At(1).Type())
		return
	}
	head := fmt.Sprintf("\nfunc (a pgQueries) %s(%s) (%s, error) {\n", name, strings.Join(params, ", "), g.typeString(rt))
	if _, ok := rt.(*types.Basic); ok {
		// A scalar :one query, or an :execrows statement: its count is
		// no read, and its error stays as it is.
		mapErr := "noRowHolds(err)"
		if !g.read(name) {
			mapErr = "err"
		}
		fmt.Fprintf(&g.buf, "%s\tr, err := %s\n\treturn r, %s\n}\n", head, call, mapErr)
		return
	}
	if s, ok := rt.(*types.Slice); ok {
		ps, ok := prt.(*types.Slice)
		if !ok {
			g.problem("%s: db returns %s, pgdb returns %s", name, g.typeString(rt), types.TypeString(prt, nil))
			return
		}
		conv, ok := g.convert(name, "result element", ps.Elem(), s.Elem(), g.db)
		if !ok {
			return
		}
		noRows := "\tif err != nil {\n\t\treturn nil, err\n\t}\n"
		if g.read(name) {
			noRows = fmt.Sprintf("\tif err != nil {\n\t\tif noRowHolds(err) == sql.ErrNoRows {\n\t\t\treturn %s{}, nil\n\t\t}\n\t\treturn nil, err\n\t}\n", g.typeString(rt))
		}
		if types.Identical(s.Elem(), ps.Elem()) {
			fmt.Fprintf(&g.buf, "%s\trows, err := %s\n%s\treturn rows, nil\n}\n", head, call, noRows)
			return
		}
		fmt.Fprintf(&g.buf, "%s\trows, err := %s\n%s"+
			"\tout := make(%s, len(rows))\n\tfor i, r := range rows {\n\t\tout[i] = %s\n\t}\n\treturn out, nil\n}\n",
			head, call, noRows, g.typeString(rt), conv("r"))
		return
	}
	conv, ok := g.convert(name, "result", prt, rt, g.db)
	if !ok {
		return
	}
	mapErr := "noRowHolds(err)"
	if !g.read(name) {
		mapErr = "err"
	}
	fmt.Fprintf(&g.buf, "%s\tr, err := %s\n\treturn %s, %s\n}\n", head, call, conv("r"), mapErr)
}

// convert returns how to turn an expression of type from into type to,
// whose package is toPkg (db or pgdb): as is when the types are
// identical, by a Go conversion when both are the packages' own named
// types of the same name and shape, and field by field when they are
// structs of the same fields whose types convert so (a row embedding a
// model: sqlc.embed). Otherwise it records the difference.
func (g *generator) convert(method, what string, from, to types.Type, toPkg *types.Package) (func(string) string, bool) {
	if types.Identical(from, to) {
		return func(x string) string { return x }, true
	}
	fn, tn := asNamed(from), asNamed(to)
	if fn == nil || tn == nil || fn.Obj().Name() != tn.Obj().Name() || !own(fn, g) || !own(tn, g) {
		g.problem("%s: %s is %s on one engine and %s on the other", method, what,
			types.TypeString(from, relTo(g)), types.TypeString(to, relTo(g)))
		return nil, false
	}
	prefix := tn.Obj().Name()
	if toPkg == g.pg {
		prefix = "pgdb." + prefix
	}
	if types.IdenticalIgnoreTags(fn.Underlying(), tn.Underlying()) {
		return func(x string) string { return prefix + "(" + x + ")" }, true
	}
	fs, oka := fn.Underlying().(*types.Struct)
	ts, okb := tn.Underlying().(*types.Struct)
	if !oka || !okb || fs.NumFields() != ts.NumFields() {
		g.problem("%s: %s %s differs: %s", method, what, tn.Obj().Name(), g.shapeDiff(fn, tn))
		return nil, false
	}
	var convs []func(string) string
	for i := range fs.NumFields() {
		ff, tf := fs.Field(i), ts.Field(i)
		if ff.Name() != tf.Name() {
			g.problem("%s: %s %s differs: %s", method, what, tn.Obj().Name(), g.shapeDiff(fn, tn))
			return nil, false
		}
		c, ok := g.convert(method, what+" field "+tn.Obj().Name()+"."+tf.Name(), ff.Type(), tf.Type(), toPkg)
		if !ok {
			return nil, false
		}
		convs = append(convs, c)
	}
	return func(x string) string {
		parts := make([]string, len(convs))
		for i, c := range convs {
			f := ts.Field(i).Name()
			parts[i] = f + ": " + c(x+"."+f)
		}
		return prefix + "{" + strings.Join(parts, ", ") + "}"
	}, true
}

// shapeDiff says how two named types' underlying types differ, field by
// field for structs.
func (g *generator) shapeDiff(na, nb *types.Named) string {
	a, b := na.Underlying(), nb.Underlying()
	la, lb := na.Obj().Pkg().Name(), nb.Obj().Pkg().Name()
	sa, oka := a.(*types.Struct)
	sb, okb := b.(*types.Struct)
	if !oka || !okb {
		return fmt.Sprintf("%s (%s) vs %s (%s)", types.TypeString(a, relTo(g)), la, types.TypeString(b, relTo(g)), lb)
	}
	var diffs []string
	for i := range max(sa.NumFields(), sb.NumFields()) {
		var fa, fb *types.Var
		if i < sa.NumFields() {
			fa = sa.Field(i)
		}
		if i < sb.NumFields() {
			fb = sb.Field(i)
		}
		switch {
		case fa == nil:
			diffs = append(diffs, fmt.Sprintf("field %d: only %s has %s %s", i, lb, fb.Name(), types.TypeString(fb.Type(), relTo(g))))
		case fb == nil:
			diffs = append(diffs, fmt.Sprintf("field %d: only %s has %s %s", i, la, fa.Name(), types.TypeString(fa.Type(), relTo(g))))
		case fa.Name() != fb.Name() || !types.Identical(fa.Type(), fb.Type()):
			diffs = append(diffs, fmt.Sprintf("field %d: %s %s (%s) vs %s %s (%s)", i,
				fa.Name(), types.TypeString(fa.Type(), relTo(g)), la, fb.Name(), types.TypeString(fb.Type(), relTo(g)), lb))
		}
	}
	return strings.Join(diffs, "; ")
}

func asNamed(t types.Type) *types.Named {
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// own reports whether n is declared in db or pgdb.
func own(n *types.Named, g *generator) bool {
	p := n.Obj().Pkg()
	return p == g.db || p == g.pg
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// typeString writes t as the db package spells it.
func (g *generator) typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == g.db {
			return ""
		}
		return p.Name()
	})
}

func (g *generator) sigString(s *types.Signature) string { return types.TypeString(s, relTo(g)) }

// relTo names packages by their name (db., pgdb., sql.) in messages.
func relTo(*generator) types.Qualifier {
	return func(p *types.Package) string { return p.Name() }
}
