package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// webhookAdmin adds an admin to the database at path and returns its
// token.
func webhookAdmin(t *testing.T, path string) string {
	t.Helper()
	mustCLI(t, "admin-password-1\n", "user", "add", "--email", "admin@example.com", "--role", "admin", "--db", path)
	return secretOf(t, mustCLI(t, "", "token", "create", "--email", "admin@example.com", "--db", path), tokenLine)
}

// status sends a JSON request and returns the status and the error code.
func (s *server) status(method, path, secret string, body string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := httpClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// serve refuses webhooks to internal addresses by default, and
// --webhook-allow (or MADEBOOK_WEBHOOK_ALLOW) opens the ranges it names:
// a receiver on 127.0.0.1 is refused, then reached, signed, and its
// answer's words are never shown, in the API or the log; a redirect is
// not followed, to an address opened or not.
func TestServeOpensWebhookRangesOnlyWhenTold(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-Madebook-Signature") == "" || r.Header.Get("X-Madebook-Delivery") == "" {
			http.Error(w, "unsigned", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/fail") {
			http.Error(w, "db password is hunter2", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(rcv.Close)
	const secret = "serve-webhook-signing-secret"
	body := func(url string) string {
		return `{"url":"` + url + `","secret":"` + secret + `","events":["attention.created"]}`
	}

	t.Run("closed by default", func(t *testing.T) {
		path := tempDB(t)
		admin := webhookAdmin(t, path)
		s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path)
		port := rcv.Listener.Addr().(*net.TCPAddr).Port
		for _, url := range []string{rcv.URL + "/in", fmt.Sprintf("http://localhost:%d/in", port),
			fmt.Sprintf("http://2130706433:%d/in", port), fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/in", port)} {
			if st, b := s.status(http.MethodPost, "/api/v1/webhooks", admin, body(url)); st != http.StatusUnprocessableEntity ||
				!strings.Contains(b, `"code":"url_not_allowed"`) || !strings.Contains(b, "--webhook-allow") {
				t.Errorf("%s: %d %s, want 422 url_not_allowed", url, st, b)
			}
		}
		if hits.Load() != 0 {
			t.Errorf("the receiver was reached %d times", hits.Load())
		}
	})

	t.Run("opened by the flag", func(t *testing.T) {
		path := tempDB(t)
		admin := webhookAdmin(t, path)
		s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--webhook-allow", "10.0.0.0/8", "--webhook-allow", "127.0.0.1/32")
		ok := s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{
			"url": "http://bob:pw@" + strings.TrimPrefix(rcv.URL, "http://") + "/services/T0/B0/slackSECRETtoken1a2b", "secret": secret,
			"events": []string{"attention.created"}})
		fail := s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{
			"url": rcv.URL + "/fail", "secret": secret, "events": []string{"attention.created"}})
		before := hits.Load()
		r := s.req(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/webhooks/%v/test", ok["id"]), admin, nil)
		if r["delivered"] != true || r["status"] != float64(200) || hits.Load() != before+1 ||
			r["url"] != "http://••••@"+strings.TrimPrefix(rcv.URL, "http://")+"/services/T0/B0/••••1a2b" {
			t.Errorf("the test to an opened receiver: %v", r)
		}
		r = s.req(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/webhooks/%v/test", fail["id"]), admin, nil)
		if r["delivered"] != false || r["status"] != float64(500) || r["result"] != "HTTP 500 from the endpoint" {
			t.Errorf("the test to a failing receiver: %v", r)
		}
		if st, b := s.status(http.MethodPost, "/api/v1/webhooks", admin, body("http://169.254.169.254/")); st != http.StatusUnprocessableEntity ||
			!strings.Contains(b, "url_not_allowed") {
			t.Errorf("the metadata address, not opened: %d %s", st, b)
		}
		_, list := s.status(http.MethodGet, "/api/v1/webhooks", admin, "")
		_, activity := s.status(http.MethodGet, "/api/v1/admin/activity?action=webhook", admin, "")
		for what, text := range map[string]string{"the list": list, "the activity": activity} {
			if strings.Contains(text, "slackSECRET") || strings.Contains(text, "pw@") || strings.Contains(text, "hunter2") {
				t.Errorf("%s shows a secret or the endpoint's words: %s", what, text)
			}
		}
		for _, l := range s.logLines() {
			if line := fmt.Sprint(l); strings.Contains(line, "slackSECRET") || strings.Contains(line, "pw@") || strings.Contains(line, "hunter2") {
				t.Errorf("the log shows a secret: %s", line)
			}
			if l["msg"] == "listening" && l["webhook_allow"] != "10.0.0.0/8,127.0.0.1/32" {
				t.Errorf("listening says webhook_allow %v", l["webhook_allow"])
			}
		}
	})

	t.Run("opened by the environment", func(t *testing.T) {
		path := tempDB(t)
		admin := webhookAdmin(t, path)
		s := startServe(t, envOf(map[string]string{"MADEBOOK_WEBHOOK_ALLOW": "10.0.0.0/8, 127.0.0.1"}), "--addr", "127.0.0.1:0", "--db", path)
		h := s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{
			"url": rcv.URL + "/in", "secret": secret, "events": []string{"attention.created"}})
		if r := s.req(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/webhooks/%v/test", h["id"]), admin, nil); r["delivered"] != true {
			t.Errorf("the test: %v", r)
		}
	})

	t.Run("a redirect is not followed", func(t *testing.T) {
		// The redirect's target listens on 127.0.0.2, which is not opened,
		// and on 127.0.0.1, which is: neither is reached.
		var followed atomic.Int32
		elsewhere, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Skipf("no 127.0.0.2 here: %v", err)
		}
		other := &httptest.Server{Listener: elsewhere, Config: &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			followed.Add(1)
		}), ReadHeaderTimeout: time.Second}}
		other.Start()
		t.Cleanup(other.Close)
		same := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
		t.Cleanup(same.Close)
		path := tempDB(t)
		admin := webhookAdmin(t, path)
		s := startServe(t, noEnv, "--addr", "127.0.0.1:0", "--db", path, "--webhook-allow", "127.0.0.1")
		for _, to := range []string{other.URL, same.URL} {
			redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, to+"/internal", http.StatusFound)
			}))
			t.Cleanup(redirecting.Close)
			h := s.req(http.StatusCreated, http.MethodPost, "/api/v1/webhooks", admin, map[string]any{
				"url": redirecting.URL, "secret": secret, "events": []string{"attention.created"}})
			r := s.req(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/webhooks/%v/test", h["id"]), admin, nil)
			if r["delivered"] != false || r["status"] != float64(302) || r["result"] != "HTTP 302 from the endpoint (redirects are not followed)" {
				t.Errorf("a redirect to %s: %v", to, r)
			}
		}
		if followed.Load() != 0 {
			t.Errorf("a redirect was followed %d times", followed.Load())
		}
	})

	t.Run("a value that is no address is a usage error", func(t *testing.T) {
		_, err := cli(t, noEnv, "", "serve", "--db", tempDB(t), "--webhook-allow", "hooks.internal")
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "hooks.internal") {
			t.Fatalf("got %v, want a usage error naming the value", err)
		}
	})
}
