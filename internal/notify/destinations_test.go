package notify_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/notify"
)

func TestClassifySaysWhyAnAddressIsClosed(t *testing.T) {
	cases := []struct{ addr, want string }{
		// Public addresses are open.
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"1.1.1.1", ""},
		{"2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},     // NAT64 of a public address
		{"2002:808:808::1", ""},      // 6to4 of a public address
		{"100.63.255.255", ""},       // just below the shared range
		{"100.128.0.0", ""},          // just above it
		{"172.32.0.1", ""},           // just past 172.16/12
		{"192.0.1.1", ""},            // between the special /24s
		{"223.255.255.255", ""},      // the last unicast
		{"2001:4860:4860::8888", ""}, // Google's resolver, in 2001::/16 but not Teredo
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private (unique local)"},
		{"fec0::1", "private (site-local)"},
		{"100.64.0.1", "shared (carrier-grade NAT)"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified (this network)"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"198.18.0.1", "reserved (benchmarking)"},
		{"192.0.0.8", "reserved (IETF protocol assignments)"},
		{"2001::1", "reserved (Teredo)"},
		{"100::1", "reserved (discard)"},
		{"::7f00:1", "reserved"}, // IPv4-compatible, deprecated
		{"4000::1", "reserved"},  // outside 2000::/3
		// What wraps an IPv4 address is judged by it.
		{"::ffff:127.0.0.1", "loopback (IPv4-mapped 127.0.0.1)"},
		{"::ffff:10.0.0.1", "private (IPv4-mapped 10.0.0.1)"},
		{"::ffff:169.254.169.254", "link-local (IPv4-mapped 169.254.169.254)"},
		{"64:ff9b::a00:1", "private (NAT64 of 10.0.0.1)"},
		{"64:ff9b::7f00:1", "loopback (NAT64 of 127.0.0.1)"},
		{"64:ff9b:1::a9fe:a9fe", "link-local (NAT64 of 169.254.169.254)"},
		{"2002:7f00:1::", "loopback (6to4 of 127.0.0.1)"},
		{"2002:c0a8:101::1", "private (6to4 of 192.168.1.1)"},
		{"fe80::1%eth0", "link-local"},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			if got := notify.Classify(netip.MustParseAddr(c.addr)); got != c.want {
				t.Errorf("Classify(%s) = %q, want %q", c.addr, got, c.want)
			}
		})
	}
}

func TestAllowOpensOnlyTheRangesItNames(t *testing.T) {
	allow, err := notify.ParseAllow("127.0.0.1/32, 10.1.0.0/16,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	to := notify.Destinations{Allow: allow}
	cases := []struct {
		addr string
		open bool
	}{
		{"127.0.0.1", true},
		{"::ffff:127.0.0.1", true}, // the same address
		{"127.0.0.2", false},
		{"::1", false},
		{"10.1.2.3", true},
		{"10.2.0.1", false},
		{"fd12::1", true},
		{"169.254.169.254", false},
		{"8.8.8.8", true}, // public: open anyway
	}
	for _, c := range cases {
		err := to.Check(netip.MustParseAddr(c.addr))
		if (err == nil) != c.open {
			t.Errorf("Check(%s) = %v, want open %v", c.addr, err, c.open)
		}
	}
	if err := (notify.Destinations{}).Check(netip.MustParseAddr("10.0.0.1")); err == nil ||
		err.Error() != "address not allowed: 10.0.0.1 is private" {
		t.Errorf("the default refuses 10.0.0.1 with %v", err)
	}
}

func TestParseAllowReadsCIDRsAndAddresses(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{"127.0.0.1", "127.0.0.1/32", ""},
		{"::1", "::1/128", ""},
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"10.1.2.3/8", "10.0.0.0/8", ""}, // masked
		{" 10.0.0.0/8 , fd00::/8 ,", "10.0.0.0/8 fd00::/8", ""},
		{"::ffff:127.0.0.1", "127.0.0.1/32", ""},
		{"", "", ""},
		{"hooks.internal", "", `"hooks.internal" is not an IP address or a CIDR`},
		{"10.0.0.0/33", "", `"10.0.0.0/33" is not an IP address or a CIDR`},
		{"fe80::1%eth0", "", `"fe80::1%eth0" is not an IP address or a CIDR`},
	}
	for _, c := range cases {
		got, err := notify.ParseAllow(c.in)
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseAllow(%q) = %v, %v; want the error %s", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(s, " ") != c.want {
			t.Errorf("ParseAllow(%q) = %v, %v; want %s", c.in, s, err, c.want)
		}
	}
}

// A webhook's host is refused when it is, in any spelling a resolver
// accepts, or names, an address that is closed; it is returned as its
// address when it is spelled oddly; other names pass (what they resolve
// to is checked at connect).
func TestCheckHostRefusesClosedAddressesInEverySpelling(t *testing.T) {
	loopback := notify.Destinations{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	cases := []struct {
		name string
		to   notify.Destinations
		host string
		want string // the canonical host, when it passes
		err  string // the refusal
	}{
		{"a public name", notify.Destinations{}, "hooks.slack.com", "hooks.slack.com", ""},
		{"a name that may resolve anywhere", notify.Destinations{}, "hooks.internal.example", "hooks.internal.example", ""},
		{"a public address", notify.Destinations{}, "93.184.215.14", "93.184.215.14", ""},
		{"a public address in hex", notify.Destinations{}, "0x8.0x8.0x8.0x8", "8.8.8.8", ""},
		{"a public IPv6 address", notify.Destinations{}, "2606:4700:4700:0:0:0:0:1111", "2606:4700:4700::1111", ""},
		{"the metadata address", notify.Destinations{}, "169.254.169.254", "", "The url's host 169.254.169.254 is link-local: webhooks may not reach it unless serve --webhook-allow opens it."},
		{"IPv6 loopback", notify.Destinations{}, "::1", "", "The url's host ::1 is loopback"},
		{"IPv6 loopback written out", notify.Destinations{}, "0:0:0:0:0:0:0:1", "", "is the address ::1, which is loopback"},
		{"a private address", notify.Destinations{}, "10.0.0.1", "", "The url's host 10.0.0.1 is private"},
		{"the unspecified address", notify.Destinations{}, "0.0.0.0", "", "is unspecified"},
		{"a short unspecified address", notify.Destinations{}, "0", "", "is the address 0.0.0.0, which is unspecified"},
		{"loopback in decimal", notify.Destinations{}, "2130706433", "", "The url's host 2130706433 is the address 127.0.0.1, which is loopback"},
		{"loopback in hex, short", notify.Destinations{}, "0x7f.1", "", "is the address 127.0.0.1, which is loopback"},
		{"loopback in hex, whole", notify.Destinations{}, "0x7F000001", "", "is the address 127.0.0.1, which is loopback"},
		{"loopback in octal", notify.Destinations{}, "0177.0.0.1", "", "is the address 127.0.0.1, which is loopback"},
		{"loopback, short", notify.Destinations{}, "127.1", "", "is the address 127.0.0.1, which is loopback"},
		{"loopback with a trailing dot", notify.Destinations{}, "127.0.0.1.", "", "is the address 127.0.0.1, which is loopback"},
		{"private, three parts", notify.Destinations{}, "10.1.257", "", "is the address 10.1.1.1, which is private"},
		{"link-local in decimal", notify.Destinations{}, "2852039166", "", "is the address 169.254.169.254, which is link-local"},
		{"loopback, IPv4-mapped", notify.Destinations{}, "::ffff:127.0.0.1", "", "is loopback (IPv4-mapped 127.0.0.1)"},
		{"loopback, IPv4-mapped in hex", notify.Destinations{}, "::ffff:7f00:1", "", "which is loopback (IPv4-mapped 127.0.0.1)"},
		{"private, through NAT64", notify.Destinations{}, "64:ff9b::10.0.0.1", "", "which is private (NAT64 of 10.0.0.1)"},
		{"loopback, in full-width digits", notify.Destinations{}, "１２７.０.０.１", "", "is the address 127.0.0.1, which is loopback"},
		{"localhost", notify.Destinations{}, "localhost", "", "The url's host localhost names 127.0.0.1, which is loopback: webhooks may not reach it unless serve --webhook-allow opens it."},
		{"localhost, shouted, with a dot", notify.Destinations{}, "LOCALHOST.", "", "names 127.0.0.1, which is loopback"},
		{"a name under localhost", notify.Destinations{}, "api.localhost", "", "names 127.0.0.1, which is loopback"},
		{"localhost in full-width letters", notify.Destinations{}, "ｌｏｃａｌｈｏｓｔ", "", "names 127.0.0.1, which is loopback"},
		{"ip6-localhost", notify.Destinations{}, "ip6-localhost", "", "names ::1, which is loopback"},
		{"the cloud metadata name", notify.Destinations{}, "metadata.google.internal", "", "The url's host metadata.google.internal names 169.254.169.254, which is link-local"},
		{"a zone", notify.Destinations{}, "fe80::1%eth0", "", "The url's host fe80::1%eth0 carries an IPv6 zone"},
		{"a number that is no address", notify.Destinations{}, "999.1.1.1", "", "The url's host 999.1.1.1 looks like an IPv4 address but is not one."},
		{"five parts", notify.Destinations{}, "1.2.3.4.5", "", "looks like an IPv4 address but is not one"},
		{"too big for its place", notify.Destinations{}, "1.2.65536", "", "looks like an IPv4 address but is not one"},
		{"a bad octal part", notify.Destinations{}, "08.0.0.1", "", "looks like an IPv4 address but is not one"},
		{"a numeric top-level label", notify.Destinations{}, "example.123", "", "looks like an IPv4 address but is not one"},
		// --webhook-allow opens the range, in whatever spelling.
		{"opened: loopback", loopback, "127.0.0.1", "127.0.0.1", ""},
		{"opened: loopback in decimal, written as itself", loopback, "2130706433", "127.0.0.1", ""},
		{"opened: loopback, mapped", loopback, "::ffff:127.0.0.1", "::ffff:127.0.0.1", ""},
		{"opened: localhost", loopback, "localhost", "localhost", ""},
		{"not opened: IPv6 loopback", loopback, "::1", "", "is loopback"},
		{"not opened: metadata", loopback, "metadata.google.internal", "", "names 169.254.169.254"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.to.CheckHost(c.host)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("CheckHost(%q) = %q, %v; want a refusal saying %q", c.host, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("CheckHost(%q) = %q, %v; want %q", c.host, got, err, c.want)
			}
		})
	}
}
