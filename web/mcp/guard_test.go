package mcp

import (
	"bufio"
	"strings"
	"testing"
)

func TestParseOrigin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"https://madebook.example.com", "https://madebook.example.com"},
		{"HTTPS://Madebook.Example.com:443/", "https://madebook.example.com"},
		{"http://127.0.0.1:80", "http://127.0.0.1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"https://ide.example.com:80", "https://ide.example.com:80"},
		{"http://[::1]:9000", "http://[::1]:9000"},
		{"http://[::1]:80", "http://[::1]"},
		{"vscode-webview://abc123", "vscode-webview://abc123"},
		{" https://a.example ", "https://a.example"},
	} {
		t.Run(c.in+" is "+c.want, func(t *testing.T) {
			got, err := ParseOrigin(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseOrigin(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	for _, bad := range []string{"", "null", "madebook.example.com", "https://", "https://a.example/mcp",
		"https://a.example?x=1", "https://a.example#top", "https://user@a.example", "mailto:a@example.com", "https://a.example?"} {
		t.Run(bad+" is not an origin", func(t *testing.T) {
			if got, err := ParseOrigin(bad); err == nil {
				t.Fatalf("ParseOrigin(%q) = %q, want an error", bad, got)
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.0.0.1:49152": true, "127.9.9.9:1": true,
		"[::1]": true, "[::1]:8080": true, "::1": true,
		"evil.example.com": false, "evil.example.com:8080": false, "localhost.evil.example": false, "10.0.0.1:8080": false,
		"0.0.0.0:8080": false, "[::]:8080": false, "": false, "127.0.0.1.nip.io": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestGuardAllowsOwnPublicAndListedOriginsOnly(t *testing.T) {
	t.Parallel()
	g, err := newGuard("https://madebook.example.com", []string{"https://ide.example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		origin, scheme, host string
		want                 bool
	}{
		{"http://127.0.0.1:8080", "http", "127.0.0.1:8080", true},
		{"http://localhost:8080", "http", "localhost:8080", true},
		{"https://madebook.example.com", "http", "127.0.0.1:8080", true},
		{"https://madebook.example.com", "https", "madebook.example.com:443", true},
		{"https://ide.example.com:8443", "http", "127.0.0.1:8080", true},
		{"https://ide.example.com", "http", "127.0.0.1:8080", false},
		{"http://madebook.example.com", "http", "127.0.0.1:8080", false},
		{"http://evil.example", "http", "127.0.0.1:8080", false},
		{"http://evil.example", "http", "evil.example", true}, // its own origin: the Host check is what stops rebinding
		{"null", "http", "127.0.0.1:8080", false},
		{"", "http", "127.0.0.1:8080", false},
		{"https://127.0.0.1:8080", "http", "127.0.0.1:8080", false},
	} {
		if got := g.originAllowed(c.origin, c.scheme, c.host); got != c.want {
			t.Errorf("Origin %q on %s://%s: allowed %v, want %v", c.origin, c.scheme, c.host, got, c.want)
		}
	}
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost": true, "madebook.example.com": true, "Madebook.Example.com:443": true,
		"madebook.example.com:8443": false, "ide.example.com:8443": false, "evil.example.com": false,
	} {
		if got := g.hostAllowed(host); got != want {
			t.Errorf("Host %q on loopback: allowed %v, want %v", host, got, want)
		}
	}
}

func TestNewGuardRefusesWhatIsNoOrigin(t *testing.T) {
	t.Parallel()
	if _, err := newGuard("", []string{"ide.example.com"}); err == nil || !strings.Contains(err.Error(), "ide.example.com") {
		t.Errorf("an origin without a scheme: %v", err)
	}
	if _, err := newGuard("madebook.example.com", nil); err == nil {
		t.Error("a public URL without a scheme was taken")
	}
}

func TestFirstByteSkipsWhiteSpaceOnly(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]byte{`[{}]`: '[', " \t\r\n [": '[', `{"jsonrpc":"2.0"}`: '{', "\n{": '{', "x": 'x'} {
		r := bufio.NewReader(strings.NewReader(in))
		b, err := firstByte(r)
		if err != nil || b != want {
			t.Errorf("firstByte(%q) = %q, %v; want %q", in, b, err, want)
		}
		rest, _ := r.ReadString(0)
		if rest != strings.TrimLeft(in, " \t\r\n") {
			t.Errorf("after firstByte(%q) the body reads %q", in, rest)
		}
	}
	if _, err := firstByte(bufio.NewReader(strings.NewReader(" \n"))); err == nil {
		t.Error("a body of white space has a first byte")
	}
}
