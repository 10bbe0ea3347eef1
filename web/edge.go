package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/mcp"
)

// StatusClientGone is the status the request log gives a request whose
// client hung up before it was answered (nginx's convention): nothing is
// sent, and it is no server fault.
const StatusClientGone = 499

// ParseOrigin reads an origin the MCP server may be called from (serve
// --mcp-origin), as mcp.ParseOrigin does: scheme://host[:port], kept in
// the form browsers send.
func ParseOrigin(s string) (string, error) { return mcp.ParseOrigin(s) }

// ParseProxies reads trusted proxy addresses: CIDRs (10.0.0.0/8,
// fd00::/8) or single addresses (10.0.0.7, ::1), comma-separated.
func ParseProxies(s string) ([]*net.IPNet, error) {
	var nets []*net.IPNet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip := net.ParseIP(part)
			if ip == nil {
				return nil, fmt.Errorf("%q is not an IP address or a CIDR", part)
			}
			bits := 128
			if ip4 := ip.To4(); ip4 != nil {
				ip, bits = ip4, 32
			}
			nets = append(nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or a CIDR", part)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// clientIP is how the server finds a request's client address, the one
// the request log and the sign-in limits use. With no trusted proxy it is
// the TCP peer, whatever headers say. Behind trusted proxies it is the
// nearest address in X-Forwarded-For that is not one of them (or, when a
// trusted peer sends no X-Forwarded-For, its X-Real-IP); a forwarding
// header from any other peer is ignored.
func clientIP(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	xff, real := echo.ExtractIPFromXFFHeader(opts...), echo.ExtractIPFromRealIPHeader(opts...)
	return func(r *http.Request) string {
		if len(r.Header[echo.HeaderXForwardedFor]) > 0 {
			return xff(r)
		}
		return real(r)
	}
}

// ContentSecurityPolicy is the console's CSP: scripts, styles and every
// other resource from this site only, no inline script or style, no
// plugin, no framing by any site, forms posted only here.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// APIContentSecurityPolicy is the CSP of a JSON answer: it loads nothing
// and may be framed by no site. A JSON answer needs no more (it is never
// a page; nosniff keeps browsers from reading it as one), and its headers
// stay short: a quiet brief, protocol text and all, then fits with them in
// net/http's 4 KB write buffer and leaves in one write.
const APIContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer carries: nosniff on all;
// no-store on everything but the assets (pages, fragments, the JSON API,
// errors), so a signed-in page or an agent's brief is never kept in a
// cache. Pages and fragments carry the console's CSP, no framing and a
// same-origin referrer; JSON answers (the API, /brief, the hooks, health)
// the CSP that loads nothing and forbids framing. Assets set their own
// caching.
func securityHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set(echo.HeaderXContentTypeOptions, "nosniff")
			switch p := c.Request().URL.Path; {
			case strings.HasPrefix(p, "/static/") || p == "/favicon.ico":
			case jsonPath(p):
				h.Set(echo.HeaderContentSecurityPolicy, APIContentSecurityPolicy)
				h.Set(echo.HeaderCacheControl, "no-store")
			default:
				h.Set(echo.HeaderContentSecurityPolicy, ContentSecurityPolicy)
				h.Set(echo.HeaderXFrameOptions, "DENY")
				h.Set(echo.HeaderReferrerPolicy, "same-origin")
				h.Set(echo.HeaderCacheControl, "no-store")
			}
			return next(c)
		}
	}
}

// jsonPath reports whether the path is one of the routes that answer JSON
// (or Prometheus text) to programs, never a page: the API, /brief, the
// coding-agent hooks, MCP, health and metrics.
func jsonPath(p string) bool {
	switch {
	case p == "/brief", p == "/healthz", p == "/metrics", p == "/mcp":
		return true
	case strings.HasPrefix(p, "/api/"), strings.HasPrefix(p, "/hooks/"):
		return true
	}
	return false
}

// clientGone reports whether err, or the request's own context, says the
// client hung up before it was answered.
func clientGone(c echo.Context, err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(c.Request().Context().Err(), context.Canceled)
}
