package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/web/httpx"
)

// The transport's guards (MCP 2025-06-18, Streamable HTTP, "Security
// Warning"): a request a browser sent from another site's page is refused
// by its Origin; one that reached a loopback listener under another name
// (DNS rebinding: evil.example resolved to 127.0.0.1) by its Host; and a
// JSON-RPC batch, which that version of the transport dropped, is refused
// whatever protocol version the request names.

// ParseOrigin returns s as an origin in the form browsers send it: the
// scheme and host in lower case and the scheme's default port left out,
// e.g. "https://madebook.example.com" for "HTTPS://Madebook.example.com:443/".
// Errors: s is not scheme://host[:port] (a trailing "/" aside: no path,
// query, fragment or user).
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin: write it as scheme://host[:port], e.g. https://ide.example.com", s)
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	scheme := strings.ToLower(u.Scheme)
	if port := u.Port(); port != "" && port != defaultPorts[scheme] {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// defaultPorts are the ports an origin leaves out.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// LoopbackHost reports whether a Host header names this machine's
// loopback interface: localhost or a loopback address (127.0.0.1, [::1],
// any of 127.0.0.0/8), with or without a port.
func LoopbackHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// guard is who may reach the MCP server: the origins allowed besides the
// request's own, and the names a loopback listener answers to besides
// the loopback names.
type guard struct {
	origins map[string]bool
	hosts   map[string]bool
}

// newGuard allows the public URL's origin and host and the origins
// listed. Errors: a value that is not an origin (ParseOrigin).
func newGuard(publicURL string, origins []string) (guard, error) {
	g := guard{origins: map[string]bool{}, hosts: map[string]bool{}}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Host == "" {
			return g, fmt.Errorf("the public URL %q is not an absolute address", publicURL)
		}
		o, err := ParseOrigin(u.Scheme + "://" + u.Host)
		if err != nil {
			return g, err
		}
		g.origins[o] = true
		g.hosts[normalHost(u.Host)] = true
	}
	for _, s := range origins {
		o, err := ParseOrigin(s)
		if err != nil {
			return g, err
		}
		g.origins[o] = true
	}
	return g, nil
}

// originAllowed reports whether an Origin header may call the server:
// the request's own origin (scheme and Host), the public URL's, or one
// listed. "null" and anything that is no origin are refused.
func (g guard) originAllowed(origin, scheme, host string) bool {
	o, err := ParseOrigin(origin)
	if err != nil {
		return false
	}
	if own, err := ParseOrigin(scheme + "://" + host); err == nil && o == own {
		return true
	}
	return g.origins[o]
}

// hostAllowed reports whether a request that reached a loopback listener
// may go on: its Host is a loopback name or the public URL's host.
func (g guard) hostAllowed(host string) bool {
	return LoopbackHost(host) || g.hosts[normalHost(host)]
}

// normalHost is a Host header in lower case without a default port (80
// or 443), as the public URL's host is kept.
func normalHost(host string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil && (port == "80" || port == "443") {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// check refuses (403), before the credential is read, a request whose
// Origin header is present and not allowed, and one that reached a
// loopback listener with a Host that is not allowed.
func (g guard) check(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if onLoopback(r) && !g.hostAllowed(r.Host) {
			return errs.E(errs.Forbidden, "host_not_allowed", "This MCP server listens on loopback and does not answer to the host %q: "+
				"call it as localhost or 127.0.0.1, or as the host of its --public-url.", r.Host)
		}
		if values, present := r.Header["Origin"]; present {
			if len(values) != 1 || !g.originAllowed(values[0], c.Scheme(), r.Host) {
				return errs.E(errs.Forbidden, "origin_not_allowed", "Requests from the origin %q may not call this MCP server: "+
					"an operator allows an origin with serve --mcp-origin.", strings.Join(values, ", "))
			}
		}
		return next(c)
	}
}

// onLoopback reports whether the request reached the server on a
// loopback address.
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseBatch refuses a body that is a JSON array (a JSON-RPC batch) with
// 400 batch_not_supported, whatever the request's MCP-Protocol-Version,
// so that nothing in it runs. It reads only up to the first byte that is
// not white space.
func refuseBatch(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		br := bufio.NewReader(r.Body)
		first, err := firstByte(br)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return httpx.TooLarge(tooLarge.Limit)
		case err != nil && !errors.Is(err, io.EOF):
			return fmt.Errorf("read the MCP request: %w", err)
		case first == '[':
			return errs.E(errs.Malformed, "batch_not_supported", "JSON-RPC batches are not accepted (MCP 2025-06-18 dropped "+
				"them): send each request in a POST of its own. Nothing in this one ran.")
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{br, r.Body}
		return next(c)
	}
}

// firstByte returns the first byte of r that is not JSON white space,
// leaving it unread.
func firstByte(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b, r.UnreadByte()
	}
}
