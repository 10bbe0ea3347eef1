package main

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// healthzFrom asks the server's /healthz with X-Forwarded-For xff and
// returns the address the request log recorded for it.
func healthzFrom(t *testing.T, s *server, xff string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+"/healthz?from="+xff, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", xff)
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	lines := waitForLog(t, s, func(string) bool {
		return slices.ContainsFunc(s.logLines(), func(l map[string]any) bool { return l["path"] == "/healthz" })
	})
	for _, l := range lines {
		if l["path"] == "/healthz" {
			remote, _ := l["remote"].(string)
			return remote
		}
	}
	t.Fatalf("no request line for /healthz: %v", lines)
	return ""
}

// serve --trusted-proxy (or MADEBOOK_TRUSTED_PROXIES) names the proxies
// whose X-Forwarded-For counts; without it the TCP peer is the client.
func TestServeTrustsOnlyTheProxiesItIsTold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string // the address logged for a forwarded request from loopback
	}{
		{name: "no proxy: the TCP peer", want: "127.0.0.1"},
		{name: "another proxy: the TCP peer", args: []string{"--trusted-proxy", "10.0.0.0/8"}, want: "127.0.0.1"},
		{name: "loopback trusted by the flag, repeated", args: []string{"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "127.0.0.1"}, want: "198.51.100.7"},
		{name: "loopback trusted by the environment", env: map[string]string{"MADEBOOK_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.0/8"}, want: "198.51.100.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--addr", "127.0.0.1:0", "--db", tempDB(t)}, tc.args...)
			s := startServe(t, envOf(tc.env), args...)
			if got := healthzFrom(t, s, "198.51.100.7"); got != tc.want {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("a value that is no address is a usage error", func(t *testing.T) {
		_, err := cli(t, noEnv, "", "serve", "--db", tempDB(t), "--trusted-proxy", "proxy.example.com")
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "proxy.example.com") {
			t.Fatalf("got %v, want a usage error naming the value", err)
		}
	})
}
