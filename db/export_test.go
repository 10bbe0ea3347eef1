package db

// PostgresQueries is postgresQueries, for the tests of writers that skip
// the store (db_test).
var PostgresQueries = postgresQueries
