package notify

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/idna"
)

// Destinations is where webhook deliveries may go. By default no
// loopback, link-local, private, shared, unspecified, multicast,
// broadcast, documentation or otherwise reserved address, in IPv4 or
// IPv6 (an IPv4-mapped, NAT64 or 6to4 address counts as the IPv4 address
// it wraps); Allow opens ranges of them (serve --webhook-allow), for a
// receiver on the operator's own network. The zero value is the default.
//
// The rule is enforced where it cannot be got round: on the address a
// connection is made to, after the name was resolved (Client), so a name
// that resolves to a forbidden address, or changes what it resolves to
// between a check and the connection, is refused all the same; redirects
// are not followed. CheckURL refuses the addresses a URL names outright
// when an endpoint is added.
type Destinations struct {
	// Allow are the ranges opened despite the rule.
	Allow []netip.Prefix
	// Resolver looks names up; nil is the system's.
	Resolver *net.Resolver
}

// AddrError is a connection refused because of where it would go.
type AddrError struct {
	Addr netip.Addr
	// Reason is why the address is forbidden: "loopback", "private", …,
	// with what it wraps for a translated address.
	Reason string
}

// Error is the fixed phrase a failed delivery records, e.g. "address
// not allowed: 10.0.0.1 is private".
func (e *AddrError) Error() string {
	return fmt.Sprintf("address not allowed: %s is %s", e.Addr, e.Reason)
}

// forbiddenRange is one range deliveries may not reach, and why.
type forbiddenRange struct {
	prefix netip.Prefix
	reason string
}

// The IPv4 ranges (IANA's special-purpose registry, the ones not
// reachable on the internet), most specific first where they overlap.
var forbidden4 = ranges(
	"0.0.0.0/32", "unspecified",
	"0.0.0.0/8", "unspecified (this network)",
	"10.0.0.0/8", "private",
	"100.64.0.0/10", "shared (carrier-grade NAT)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local",
	"172.16.0.0/12", "private",
	"192.0.0.0/24", "reserved (IETF protocol assignments)",
	"192.0.2.0/24", "documentation",
	"192.88.99.0/24", "reserved (6to4 relay)",
	"192.168.0.0/16", "private",
	"198.18.0.0/15", "reserved (benchmarking)",
	"198.51.100.0/24", "documentation",
	"203.0.113.0/24", "documentation",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// The IPv6 ranges; anything outside 2000::/3, the global unicast space,
// is reserved too. The ranges that wrap an IPv4 address are judged by it
// (wrapped).
var forbidden6 = ranges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/8", "reserved",
	"100::/64", "reserved (discard)",
	"2001::/32", "reserved (Teredo)",
	"2001:2::/48", "reserved (benchmarking)",
	"2001:db8::/32", "documentation",
	"3fff::/20", "documentation",
	"fc00::/7", "private (unique local)",
	"fec0::/10", "private (site-local)",
	"fe80::/10", "link-local",
	"ff00::/8", "multicast",
)

// global6 is IPv6's global unicast space.
var global6 = netip.MustParsePrefix("2000::/3")

// wrapped are the IPv6 ranges whose addresses carry an IPv4 address:
// where it sits (the byte offset) and what the wrapping is called.
var wrapped = []struct {
	prefix netip.Prefix
	at     int
	name   string
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12, "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, "6to4"},
}

func ranges(pairs ...string) []forbiddenRange {
	out := make([]forbiddenRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, forbiddenRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// Classify says why deliveries may not reach addr by default ("loopback",
// "private", …), or "" when they may: addr is a public address.
func Classify(addr netip.Addr) string {
	addr = addr.WithZone("")
	if addr.Is4In6() {
		if r := Classify(addr.Unmap()); r != "" {
			return r + " (IPv4-mapped " + addr.Unmap().String() + ")"
		}
		return ""
	}
	if addr.Is4() {
		for _, r := range forbidden4 {
			if r.prefix.Contains(addr) {
				return r.reason
			}
		}
		return ""
	}
	if !addr.Is6() {
		return "not an IP address"
	}
	for _, w := range wrapped {
		if w.prefix.Contains(addr) {
			b := addr.As16()
			v4 := netip.AddrFrom4([4]byte(b[w.at : w.at+4]))
			if r := Classify(v4); r != "" {
				return r + " (" + w.name + " of " + v4.String() + ")"
			}
			return ""
		}
	}
	for _, r := range forbidden6 {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	if !global6.Contains(addr) {
		return "reserved"
	}
	return ""
}

// Check is nil when a delivery may connect to addr, else an *AddrError
// saying why not.
func (d Destinations) Check(addr netip.Addr) error {
	addr = addr.WithZone("")
	reason := Classify(addr)
	if reason == "" || d.allows(addr) {
		return nil
	}
	return &AddrError{Addr: addr, Reason: reason}
}

// allows reports whether Allow opens addr (an IPv4-mapped address as the
// IPv4 address it is).
func (d Destinations) allows(addr netip.Addr) bool {
	for _, p := range d.Allow {
		if p.Contains(addr) || (addr.Is4In6() && p.Contains(addr.Unmap())) {
			return true
		}
	}
	return false
}

// ParseAllow reads serve --webhook-allow: CIDRs (10.0.0.0/8, fd00::/8) or
// single addresses (127.0.0.1, ::1), comma-separated; blanks are skipped.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q is not an IP address or a CIDR", part)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or a CIDR", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// namedHosts are names that stand for a forbidden address wherever they
// are resolved: CheckURL refuses them unless Allow opens that address.
var namedHosts = map[string]netip.Addr{
	"localhost":                  netip.MustParseAddr("127.0.0.1"),
	"localhost.localdomain":      netip.MustParseAddr("127.0.0.1"),
	"ip6-localhost":              netip.IPv6Loopback(),
	"ip6-loopback":               netip.IPv6Loopback(),
	"metadata":                   netip.MustParseAddr("169.254.169.254"),
	"metadata.google.internal":   netip.MustParseAddr("169.254.169.254"),
	"metadata.goog":              netip.MustParseAddr("169.254.169.254"),
	"instance-data":              netip.MustParseAddr("169.254.169.254"),
	"instance-data.ec2.internal": netip.MustParseAddr("169.254.169.254"),
}

// HostError is a URL's host refused when an endpoint is added.
type HostError struct {
	// Host is the host as the URL has it.
	Host string
	// Addr is the address the host is or names; invalid when the host is
	// not an address at all (Reason then says what is wrong).
	Addr netip.Addr
	// Named says the host is a name that stands for Addr (localhost).
	Named  bool
	Reason string
}

// Error says what is wrong with the host, in a sentence.
func (e *HostError) Error() string {
	const closed = "webhooks may not reach it unless serve --webhook-allow opens it"
	switch {
	case !e.Addr.IsValid():
		return fmt.Sprintf("The url's host %s %s.", e.Host, e.Reason)
	case e.Named:
		return fmt.Sprintf("The url's host %s names %s, which is %s: %s.", e.Host, e.Addr, e.Reason, closed)
	case !strings.EqualFold(e.Host, e.Addr.String()):
		return fmt.Sprintf("The url's host %s is the address %s, which is %s: %s.", e.Host, e.Addr, e.Reason, closed)
	}
	return fmt.Sprintf("The url's host %s is %s: %s.", e.Host, e.Reason, closed)
}

// CheckHost checks the host of a webhook URL (as url.URL.Hostname gives
// it) when the endpoint is added, and returns it canonical: an IP address
// in any spelling a resolver accepts (decimal 2130706433, hex 0x7f.1,
// octal 0177.0.0.1, short forms 127.1, full-width digits, IPv6 written
// out) is written as its address, 127.0.0.1 (or ::1). A forbidden address (Classify) that Allow does
// not open, or a name that stands for one (localhost, *.localhost,
// metadata.google.internal, …), is refused with a *HostError; so is a
// host that looks like an IPv4 address and is not one (999.1.1.1), and
// an IPv6 zone. Other names pass: what they resolve to is checked when
// a delivery connects.
func (d Destinations) CheckHost(host string) (string, error) {
	h := host
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return host, &HostError{Host: host, Reason: "is not a valid host name"}
		}
		h = a
	}
	h = strings.ToLower(h)
	if h == "" {
		return host, &HostError{Host: host, Reason: "is empty"}
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return host, &HostError{Host: host, Reason: "carries an IPv6 zone, which a webhook cannot use"}
		}
		return d.checkAddr(host, a)
	}
	name := strings.TrimRight(h, ".")
	if a, numeric, ok := parseIPv4(name); numeric {
		if !ok {
			return host, &HostError{Host: host, Reason: "looks like an IPv4 address but is not one"}
		}
		return d.checkAddr(host, a)
	}
	a, named := namedHosts[name]
	if !named && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
		a, named = namedHosts["localhost"], true
	}
	if named {
		if err := d.Check(a); err != nil {
			return host, &HostError{Host: host, Addr: a, Named: true, Reason: Classify(a)}
		}
	}
	return host, nil
}

// checkAddr refuses a forbidden address, and returns it canonical.
func (d Destinations) checkAddr(host string, a netip.Addr) (string, error) {
	if err := d.Check(a); err != nil {
		return host, &HostError{Host: host, Addr: a, Reason: Classify(a)}
	}
	return a.String(), nil
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// parseIPv4 reads a host as the IPv4 address inet_aton (and so a system
// resolver, and browsers) would: one to four parts separated by dots,
// each decimal, octal (a leading 0) or hex (0x), the last filling the
// bytes left. numeric says the host is meant as an address (its last
// part is a number: WHATWG's rule), ok that it is one.
func parseIPv4(s string) (addr netip.Addr, numeric, ok bool) {
	parts := strings.Split(s, ".")
	if !isNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, false
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseNumber(p)
		if !ok {
			return netip.Addr{}, true, false
		}
		vals[i] = v
	}
	last := vals[len(vals)-1]
	var b [4]byte
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, true, false
		}
		b[i] = byte(v)
	}
	rest := 4 - (len(vals) - 1)
	if last >= 1<<(8*rest) {
		return netip.Addr{}, true, false
	}
	for i := 3; i >= len(vals)-1; i-- {
		b[i] = byte(last)
		last >>= 8
	}
	return netip.AddrFrom4(b), true, true
}

// isNumber reports whether a host's part is meant as a number: decimal
// digits, or 0x and hex digits (or none).
func isNumber(p string) bool {
	if p == "" {
		return false
	}
	if strings.HasPrefix(p, "0x") {
		return strings.Trim(p[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(p, "0123456789") == ""
}

// parseNumber reads one part of an IPv4 host: decimal, octal or hex.
func parseNumber(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

// Client returns the HTTP client deliveries are sent with: every
// connection's address is checked (Check) as it is made, after the name
// was resolved; no proxy from the environment is used (it would make
// the proxy the address checked); redirects are not followed (a 3xx is
// the answer).
func (d Destinations) Client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: d.Resolver,
		ControlContext: func(_ context.Context, network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("address not allowed: %q is not an IP address", address)
			}
			return d.Check(ap.Addr())
		}}
	t.DialContext = dialer.DialContext
	return &http.Client{Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
