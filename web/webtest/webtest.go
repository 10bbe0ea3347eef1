// Package webtest is the one home of the helpers Madebook's HTTP tests
// share: a real server on a test kit (Deps, NewAPI, StartBrowserApp), an
// API client that checks the contract's error shape (API, CheckError), a
// browser-like console client with cookies and CSRF tokens (Client),
// headless Chromium (NewBrowser), and the route-completeness check
// (RoutesCovered).
package webtest

import (
	"io"
	"log/slog"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
)

// Deps are the server's dependencies on the kit's real services, logging
// nowhere; a test changes a field (Logger, SecureCookies) before
// web.NewServer when it needs to.
func Deps(kit *testkit.Kit) web.Deps {
	return web.Deps{Auth: kit.Auth, Gov: kit.Gov, Ledger: kit.Ledger, Audit: kit.Audit, Health: kit.Store.Ping,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}
