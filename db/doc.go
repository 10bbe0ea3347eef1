// Package db is Madebook's store: the schema's migrations, the queries
// sqlc generates from queries/*.sql, and Store, which runs them on one of
// two engines chosen by Open's argument.
//
//   - SQLite (a file path, the default): migrations/*.sql; the queries in
//     this package (Queries); one writer connection serialises every write
//     transaction.
//   - PostgreSQL (a postgres:// or postgresql:// URL): postgres/migrations;
//     the same queries over pgConn (pgconn.go), which rewrites SQLite's
//     placeholders as PostgreSQL's and answers a read given text
//     PostgreSQL cannot hold as one that finds no row; an advisory lock
//     held to each commit serialises every write transaction across every
//     replica.
//
// Services depend on Transactor and Querier only, and never know the
// engine.
//
// Migrations are numbered alike on both engines. PostgreSQL's first,
// postgres/migrations/00017_schema.sql, is the whole schema as SQLite has
// it after migrations/00017_admin_activity.sql; every later change is one
// file per engine with the same number (00018_….sql in both directories).
// After changing a migration or a query, run `go tool sqlc generate` and
// `go generate ./db`. sqlc generates the queries for SQLite only; go
// generate runs postgres/typecheck, which has sqlc's postgresql engine
// generate them from PostgreSQL's migrations, compares the Go (leaving
// out the SQL text) and refuses, printing each difference, when a
// query's Go types differ between the engines.
//
//go:generate bash postgres/typecheck
package db
