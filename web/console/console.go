// Package console is the lead console: server-rendered pages (templ
// components from views) and htmx forms where people work the Attention
// queue, read sessions, edit missions, run the audit reports and, as
// admins, manage users, agent keys, tools, policies and rules. Every route
// but sign-in needs a signed-in person (gorilla/sessions over a table, so
// signing out really ends a session); every state-changing request carries
// the session's CSRF token and must come from this site. Its routes are
// in routes.go.
package console

import (
	"bytes"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/ledger"
	"github.com/madebook/madebook/static"
	"github.com/madebook/madebook/views"
	"github.com/madebook/madebook/web/httpx"
)

const webSessionKey = "madebook.web_session"

// console is what the console's handlers share.
type console struct {
	auth   *auth.Service
	gov    *governance.Services
	ledger *ledger.Service
	audit  *audit.Service
	store  *sessionStore
	cop    *http.CrossOriginProtection
	// stopping ends the push streams when the server shuts down.
	stopping <-chan struct{}
	logger   *slog.Logger
	// ping is how often a push stream says it is alive.
	ping time.Duration
	// streams are the push streams and the broadcaster that feeds them.
	streams *streamHub
}

// loadSession puts the signed-in person, if any, on the context.
func (k *console) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s, err := k.store.Get(c.Request(), k.store.name)
		if err != nil {
			return err
		}
		setWebSession(c, s.Values[valueSession])
		return next(c)
	}
}

// setWebSession puts a signed-in person's session, when v is one, and
// the person as the actor on the request.
func setWebSession(c echo.Context, v any) {
	if ws, ok := v.(auth.WebSession); ok {
		c.Set(webSessionKey, ws)
		httpx.SetActor(c, auth.Actor{UserID: ws.User.ID, Email: ws.User.Email, Role: ws.User.Role})
	}
}

// webSession returns the signed-in person's session, if any.
func webSession(c echo.Context) (auth.WebSession, bool) {
	ws, ok := c.Get(webSessionKey).(auth.WebSession)
	return ws, ok
}

// crossOrigin refuses a state-changing request a browser says came from
// another origin (Sec-Fetch-Site, or Origin against Host).
func (k *console) crossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := k.cop.Check(c.Request()); err != nil {
			return errs.E(errs.Forbidden, "cross_origin", "This request came from another site and was refused.")
		}
		return next(c)
	}
}

// signedIn sends anyone not signed in to the sign-in page, and checks the
// CSRF token of every state-changing request.
func (k *console) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ws, ok := webSession(c)
		if !ok {
			to := "/login"
			if c.Request().Method == http.MethodGet && c.Request().URL.Path != "/" {
				to += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
			}
			if httpx.IsHTMX(c) {
				c.Response().Header().Set("HX-Redirect", to)
				return c.NoContent(http.StatusUnauthorized)
			}
			return c.Redirect(http.StatusSeeOther, to)
		}
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			token := c.Request().Header.Get("X-CSRF-Token")
			if token == "" {
				token = c.FormValue("csrf")
			}
			if subtle.ConstantTimeCompare([]byte(token), []byte(ws.CSRF)) != 1 {
				return errs.E(errs.Forbidden, "csrf", "This form has expired or did not come from Madebook. Reload the page and try again.")
			}
		}
		return next(c)
	}
}

// render writes a component with a status. What people and agents wrote is
// shown as sent but never obeyed: every bidirectional formatting character
// (U+202E would show a file name's end reversed) and control character
// other than newline and tab in the page is written as a visible marker,
// ⟨U+202E⟩ (input.Visible). The templates hold none, so only what was sent
// is marked, on every page, whichever field it came in.
func render(c echo.Context, status int, comp templ.Component) error {
	var b bytes.Buffer
	if err := comp.Render(c.Request().Context(), &b); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	_, err := io.WriteString(c.Response(), input.Visible(b.String()))
	return err
}

var assets = views.Assets{CSS: static.URL("madebook.css"), HTMX: static.URL("htmx.min.js"), JS: static.URL("madebook.js"),
	Icon: static.URL("favicon.svg"), SSE: static.URL("htmx-ext-sse.min.js")}

// page builds what every full page needs for the signed-in person.
func (k *console) page(c echo.Context, title, nav string) (views.Page, error) {
	p := views.Page{Title: title, Nav: nav, Assets: assets}
	ws, ok := webSession(c)
	if !ok {
		return p, nil
	}
	counts, err := k.gov.Attention.Counts(c.Request().Context(), governance.AttentionFilter{})
	if err != nil {
		return p, err
	}
	a := httpx.Actor(c)
	p.Viewer = &views.Viewer{Email: ws.User.Email, Role: string(ws.User.Role), CanLead: a.CanLead(), IsAdmin: a.IsAdmin()}
	p.CSRF, p.Count, p.Since = ws.CSRF, counts.Total(), counts.Fingerprint()
	if c.Request().Method == http.MethodGet {
		p.Notice = k.takeFlash(c)
	}
	return p, nil
}

// ErrorRenderer answers a failed request that is not the API's with a
// message: the message alone for htmx (it shows it beside the form), a page
// of its own otherwise.
type ErrorRenderer func(c echo.Context, status int, message string) error

// renderError is the console's ErrorRenderer. The page keeps the
// navigation for a signed-in person, also at an address no route serves
// (where the session was not loaded yet); if building it fails (the
// database may be what failed), the page goes without it.
func (k *console) renderError(c echo.Context, status int, message string) error {
	if httpx.IsHTMX(c) {
		return c.String(status, message)
	}
	if _, ok := webSession(c); !ok {
		if s, err := k.store.Get(c.Request(), k.store.name); err == nil {
			setWebSession(c, s.Values[valueSession])
		}
	}
	p, err := k.page(c, http.StatusText(status), "")
	if err != nil {
		p = views.Page{Title: http.StatusText(status), Assets: assets}
	}
	return render(c, status, views.ErrorPage(p, message))
}
