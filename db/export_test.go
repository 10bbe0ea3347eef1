package db

// PostgresQueries is postgresQueries, for the tests of writers that skip
// the store (db_test).
var PostgresQueries = postgresQueries

// PgRefuses is pgRefuses, for the test that PostgreSQL refuses what it
// says (db_test).
var PgRefuses = pgRefuses
