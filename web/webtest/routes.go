package webtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// RoutesCovered fails the test when a registered route (one keep accepts;
// nil keeps all) has no entry in a test's route table, when the table
// names a route that is not registered, or lists one twice. tested holds
// the table's routes as "METHOD /path" in echo's syntax; table names it
// in the messages. Adding a route without its test breaks the tests.
func RoutesCovered(tb testing.TB, routes []*echo.Route, keep func(*echo.Route) bool, table string, tested []string) {
	tb.Helper()
	listed := map[string]bool{}
	for _, key := range tested {
		if listed[key] {
			tb.Errorf("%s lists %s twice", table, key)
		}
		listed[key] = true
	}
	registered := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound || (keep != nil && !keep(r)) {
			continue // a catch-all answers unknown paths: not a route anyone calls
		}
		key := r.Method + " " + r.Path
		registered[key] = true
		if !listed[key] {
			tb.Errorf("route %s is registered but has no entry in %s: add one with the status for every caller", key, table)
		}
	}
	var stale []string
	for key := range listed {
		if !registered[key] {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		tb.Errorf("%s lists routes that are not registered: %s", table, strings.Join(stale, ", "))
	}
	if len(registered) < 10 {
		tb.Errorf("only %d routes registered; the routes given are not what this test expects", len(registered))
	}
}
