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
	"strings"
	"sync"

	"github.com/madebook/madebook/internal/testkit"
	"github.com/madebook/madebook/web"
)

// Deps are the server's dependencies on the kit's real services, logging
// nowhere; a test changes a field (Logger, e.g. to a Log, SecureCookies)
// before web.NewServer when it needs to.
func Deps(kit *testkit.Kit) web.Deps {
	return web.Deps{Auth: kit.Auth, Gov: kit.Gov, Ledger: kit.Ledger, Audit: kit.Audit, Health: kit.Store.Ping,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// Log is a server's log, kept for the test to read while the server
// writes it.
type Log struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Write appends to the log.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
