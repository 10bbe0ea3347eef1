package demo

// Gate is a question the simulated agent asks a person: a gate's title,
// question and proposal, the scope it blocks and the scope it leaves
// open.
type Gate struct {
	Title, Question, Proposal string
	Blocked, Allowed          []string
}

// gateTopics are the simulated agent's questions, asked in turn.
var gateTopics = []Gate{
	{"Cart state", "Keep the cart in the session cookie, or move it to the database?",
		"Move it to the database: the cookie is at its 4 KB limit.", []string{"internal/cart/", "db/migrations"}, []string{"web/checkout/", "views/"}},
	{"New dependency", "May I add bleve, a pure-Go full-text index, as a dependency?",
		"Add bleve v2 behind an interface so it can be swapped out.", []string{"go.mod", "internal/search/"}, []string{"internal/search/bench/", "docs/"}},
	{"Public API change", "The /search response gains a `took_ms` field. Is a new field a breaking change for our clients?",
		"Add it; clients ignore unknown fields.", []string{"api/openapi.yaml"}, []string{"internal/search/"}},
	{"Flaky test", "TestCheckoutTotals fails one run in twenty on CI. Skip it for now, or fix it first?",
		"Fix it first: the rounding is wrong, not the test.", []string{".github/workflows/"}, []string{"web/checkout/"}},
	{"Migration", "Add an index on orders(created_at)? It locks the table for about 40 s in production.",
		"Create it concurrently in the next maintenance window.", []string{"db/migrations"}, []string{"internal/orders/"}},
	{"Feature flag", "Ship the one-page checkout behind a flag, or replace the old flow at once?",
		"Behind a flag, 10% of traffic first.", []string{"web/checkout/legacy/"}, []string{"web/checkout/", "internal/flags/"}},
	{"Logging", "The payment handler logs the full request. Drop the body from the logs?",
		"Log the order id and the status only.", []string{"internal/payments/"}, []string{"web/checkout/"}},
	{"Timeout", "Raise the search backend's timeout from 2 s to 5 s while the index warms up?",
		"Keep 2 s and serve stale results on timeout.", []string{"deploy/"}, []string{"internal/search/"}},
	{"Vendored code", "The address autocomplete is vendored and has a bug. Patch the vendored copy, or upgrade it?",
		"Upgrade to the release that fixes it.", []string{"vendor/"}, []string{"web/checkout/address.go"}},
	{"Data backfill", "Backfill 1.2 M rows of search_clicks now, or let them fill in over a week?",
		"Let them fill in; the backfill doubles the database load for an hour.", []string{"db/migrations", "scripts/backfill/"}, []string{"internal/search/"}},
}

// expiredTopic is the demo's gate that nobody answered in time.
var expiredTopic = Gate{"Coupon codes", "Delete the 2019 coupon codes, or keep them for the accounting export?",
	"Keep them, marked inactive.", []string{"db/migrations", "internal/coupons/"}, []string{"web/checkout/"}}
