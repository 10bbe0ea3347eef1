package rules

import "strings"

// Lang is the language whose imports a concern is read from.
type Lang string

// The languages Madebook reads imports from.
const (
	Go Lang = "go"
	JS Lang = "js" // JavaScript and TypeScript
)

// Alternative is one way of addressing a concern: a display name, the other
// names people give it, and how code imports it.
type Alternative struct {
	// Name is the display name rules use as chosen or as a departure.
	Name string
	// Aliases are other names a person may write for it in a rule (never
	// import paths: a raw import path in a rule means just that path).
	Aliases []string
	// Imports are its import matchers: Go module or package paths and npm
	// package names. An import matches when it is the matcher or lies under
	// it ("github.com/labstack/echo" matches "github.com/labstack/echo/v4").
	Imports []string
}

// Concern is a question a workspace answers once, e.g. how it holds server
// state, and the alternatives Madebook can recognise by their imports.
type Concern struct {
	Name         string
	Lang         Lang
	Alternatives []Alternative
}

// Catalogue is what Infer looks for and how Deviations resolves display
// names. Concerns are per language: a JavaScript component cannot pick a Go
// router, so counting both together would only dilute the confidence.
//
// Some choices are not detectable by import and so are left out: Go's
// net/http ServeMux (every Go server imports net/http), plain database/sql
// (imported by every driver and ORM too) and sqlc (generated code imports
// only database/sql).
var Catalogue = []Concern{
	{Name: "server state", Lang: JS, Alternatives: []Alternative{
		{Name: "React Query", Aliases: []string{"TanStack Query"}, Imports: []string{"@tanstack/react-query", "react-query"}},
		{Name: "Redux Toolkit", Aliases: []string{"redux-toolkit", "RTK"}, Imports: []string{"@reduxjs/toolkit"}},
		{Name: "SWR", Imports: []string{"swr"}},
		{Name: "Apollo", Aliases: []string{"Apollo Client"}, Imports: []string{"@apollo/client"}},
	}},
	{Name: "Go HTTP routing", Lang: Go, Alternatives: []Alternative{
		{Name: "echo", Imports: []string{"github.com/labstack/echo"}},
		{Name: "gin", Imports: []string{"github.com/gin-gonic/gin"}},
		{Name: "chi", Imports: []string{"github.com/go-chi/chi"}},
		{Name: "gorilla/mux", Imports: []string{"github.com/gorilla/mux"}},
	}},
	{Name: "JavaScript HTTP routing", Lang: JS, Alternatives: []Alternative{
		{Name: "Express", Imports: []string{"express"}},
		{Name: "Fastify", Imports: []string{"fastify"}},
		{Name: "Koa", Imports: []string{"koa"}},
	}},
	{Name: "Go logging", Lang: Go, Alternatives: []Alternative{
		{Name: "slog", Imports: []string{"log/slog", "golang.org/x/exp/slog"}},
		{Name: "zap", Imports: []string{"go.uber.org/zap"}},
		{Name: "logrus", Imports: []string{"github.com/sirupsen/logrus"}},
		{Name: "zerolog", Imports: []string{"github.com/rs/zerolog"}},
	}},
	{Name: "JavaScript logging", Lang: JS, Alternatives: []Alternative{
		{Name: "pino", Imports: []string{"pino"}},
		{Name: "winston", Imports: []string{"winston"}},
		{Name: "bunyan", Imports: []string{"bunyan"}},
	}},
	{Name: "Go database access", Lang: Go, Alternatives: []Alternative{
		{Name: "GORM", Imports: []string{"gorm.io/gorm", "github.com/jinzhu/gorm"}},
		{Name: "sqlx", Imports: []string{"github.com/jmoiron/sqlx"}},
		{Name: "ent", Imports: []string{"entgo.io/ent"}},
		{Name: "Bun", Imports: []string{"github.com/uptrace/bun"}},
	}},
	{Name: "JavaScript database access", Lang: JS, Alternatives: []Alternative{
		{Name: "Prisma", Imports: []string{"@prisma/client"}},
		{Name: "TypeORM", Imports: []string{"typeorm"}},
		{Name: "Sequelize", Imports: []string{"sequelize"}},
		{Name: "Knex", Imports: []string{"knex"}},
	}},
}

// Lookup returns the catalogue's alternative whose display name or alias is
// name, ignoring case.
func Lookup(name string) (Alternative, bool) {
	name = strings.TrimSpace(name)
	for _, c := range Catalogue {
		for _, a := range c.Alternatives {
			if strings.EqualFold(a.Name, name) {
				return a, true
			}
			for _, al := range a.Aliases {
				if strings.EqualFold(al, name) {
					return a, true
				}
			}
		}
	}
	return Alternative{}, false
}

// Matchers returns the import matchers a rule's departure (or chosen)
// stands for: a catalogue alternative's imports when name is its display
// name or an alias, and otherwise name itself, read as an import path or a
// package name. An alias that could itself be a package name (no spaces,
// e.g. "redux-toolkit") matches that package too, so a change that adds a
// dependency spelled as in the rule is still caught.
func Matchers(name string) []string {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	a, ok := Lookup(name)
	if !ok {
		return []string{name}
	}
	ms := append([]string(nil), a.Imports...)
	if !strings.EqualFold(a.Name, name) && !strings.ContainsAny(name, " \t") {
		ms = append(ms, name)
	}
	return ms
}
