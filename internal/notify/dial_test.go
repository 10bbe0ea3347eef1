package notify_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/testkit"
)

// fakeDNS is a DNS server on loopback that answers every A question with
// one address, as a name an attacker controls may (DNS rebinding), and
// every other question (every question, when answer is the zero Addr)
// with none, which a resolver reads as "no such host".
func fakeDNS(t *testing.T, answer netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if q.Type == dnsmessage.TypeA && answer.IsValid() {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0},
					dnsmessage.AResource{A: answer.As4()})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// counting is a receiver that answers 200 and counts what it got.
func counting(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

// deliver posts a small notification to url through to's client.
func deliver(to notify.Destinations, url string) (int, string) {
	return notify.Deliver(context.Background(), to.Client(), time.Now(), 5*time.Second,
		notify.Delivery{URL: url, Secret: secret, ID: "1", Body: []byte(`{"text":"hi"}`)})
}

// The guard is on the connection: a receiver on 127.0.0.1 is refused by
// default, however its address is reached, and reached once 127.0.0.1
// is opened.
func TestTheGuardChecksTheAddressConnectedTo(t *testing.T) {
	srv, got := counting(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	rebind := "http://rebind.madebook.test:" + strconv.Itoa(port) + "/hook"
	toLoopback := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	cases := []struct {
		name   string
		to     notify.Destinations
		url    string
		status int
		result string
	}{
		{"an address on loopback, by default", notify.Destinations{}, srv.URL, 0, "address not allowed: 127.0.0.1 is loopback"},
		{"a name that resolves to loopback, by default", notify.Destinations{Resolver: toLoopback}, rebind, 0,
			"address not allowed: 127.0.0.1 is loopback"},
		{"localhost, by default", notify.Destinations{}, "http://localhost:" + strconv.Itoa(port) + "/", 0,
			"address not allowed: ADDR is loopback"},
		{"loopback in decimal, by default", notify.Destinations{}, "http://2130706433:" + strconv.Itoa(port) + "/", 0, ""},
		{"another loopback address opened", notify.Destinations{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}},
			srv.URL, 0, "address not allowed: 127.0.0.1 is loopback"},
		{"an address on loopback, opened", testkit.LoopbackWebhooks, srv.URL, 200, ""},
		{"a name that resolves to loopback, opened", notify.Destinations{Allow: testkit.LoopbackWebhooks.Allow, Resolver: toLoopback},
			rebind, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := got.Load()
			status, result := deliver(c.to, c.url)
			if c.result == "" && c.status == 0 {
				// However a resolver reads it, the decimal form never
				// connects to 127.0.0.1 unopened.
				if status != 0 || got.Load() != before {
					t.Errorf("%s: %d %q, and the receiver got %d", c.url, status, result, got.Load()-before)
				}
				return
			}
			if a, b, ok := strings.Cut(c.result, "ADDR"); ok && strings.HasPrefix(result, a) && strings.HasSuffix(result, b) {
				result = c.result // localhost may resolve to ::1 first: the refusal names the first tried
			}
			if status != c.status || result != c.result {
				t.Errorf("deliver(%s) = %d %q, want %d %q", c.url, status, result, c.status, c.result)
			}
			want := before
			if c.status == 200 {
				want++
			}
			if got.Load() != want {
				t.Errorf("the receiver got %d requests, want %d", got.Load()-before, want-before)
			}
		})
	}
}

// A redirect is the answer, never followed: not to a private address,
// not anywhere.
func TestARedirectIsNotFollowed(t *testing.T) {
	target, got := counting(t)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/internal", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	toMetadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	t.Cleanup(toMetadata.Close)
	for _, c := range []struct {
		url    string
		status int
		result string
	}{
		{redirecting.URL, 307, "HTTP 307 from the endpoint (redirects are not followed)"},
		{toMetadata.URL, 302, "HTTP 302 from the endpoint (redirects are not followed)"},
	} {
		if status, result := deliver(testkit.LoopbackWebhooks, c.url); status != c.status || result != c.result {
			t.Errorf("deliver(%s) = %d %q, want %d %q", c.url, status, result, c.status, c.result)
		}
	}
	if got.Load() != 0 {
		t.Errorf("the redirect was followed: its target got %d requests", got.Load())
	}
}

// What went wrong is a fixed phrase: never the endpoint's body, its
// status line's words, or the URL (which may hold secrets).
func TestAFailureIsAFixedPhrase(t *testing.T) {
	leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "db password is hunter2", http.StatusInternalServerError)
	}))
	t.Cleanup(leaky.Close)
	// A status line whose words are the endpoint's own.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				if _, err := http.ReadRequest(r); err != nil {
					return
				}
				_, _ = c.Write([]byte("HTTP/1.1 502 the db password is hunter2\r\nContent-Length: 7\r\n\r\nhunter2"))
			}()
		}
	}()
	notHTTP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { notHTTP.Close() })
	go func() {
		for {
			c, err := notHTTP.Accept()
			if err != nil {
				return
			}
			// It answers the request's head, not before it: a banner sent
			// before the request reaches the client as an unsolicited
			// response on an idle connection, another failure.
			_, _ = bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.2 hunter2\r\n"))
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/services/T0/B0/hunter2hunter2hunter2"
	closed.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client hang up
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close)

	// A resolver that knows no name (it answers no address).
	nowhere := notify.Destinations{Allow: testkit.LoopbackWebhooks.Allow, Resolver: fakeDNS(t, netip.Addr{})}
	cases := []struct {
		name, url string
		timeout   time.Duration
		status    int
		result    string
	}{
		{"a 500 with a body", leaky.URL, time.Second, 500, "HTTP 500 from the endpoint"},
		{"a status line of its own", "http://" + ln.Addr().String(), time.Second, 502, "HTTP 502 from the endpoint"},
		{"an answer that is not HTTP", "http://" + notHTTP.Addr().String(), time.Second, 0, "the answer is not HTTP"},
		{"nobody listening", refused, time.Second, 0, "connection refused"},
		{"no answer in time", slow.URL, 100 * time.Millisecond, 0, "timed out"},
		{"a closed address in the URL", "http://user:hunter2@10.0.0.1/x", time.Second, 0, "address not allowed: 10.0.0.1 is private"},
		{"a name that does not resolve", "http://hunter2.example.test/x", 5 * time.Second, 0, "host name not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, result := notify.Deliver(context.Background(), nowhere.Client(), time.Now(), c.timeout,
				notify.Delivery{URL: c.url, Secret: secret, ID: "1", Body: []byte(`{}`)})
			if status != c.status || result != c.result {
				t.Errorf("deliver(%s) = %d %q, want %d %q", c.url, status, result, c.status, c.result)
			}
			if strings.Contains(result, "hunter2") {
				t.Errorf("the failure quotes a secret: %q", result)
			}
		})
	}
	// Failure maps what the standard library says to the same phrases.
	for _, c := range []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, "timed out"},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, "host name not found"},
		{&net.DNSError{Err: "server misbehaving", Name: "x"}, "host name lookup failed"},
		{errors.New(`Post "https://hooks.slack.com/services/T0/B0/SECRET": something new`), "request failed"},
	} {
		if got := notify.Failure(c.err); got != c.want {
			t.Errorf("Failure(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
