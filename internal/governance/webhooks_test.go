package governance_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
)

const testSecret = "governance-test-signing-secret"

// The URL is stored whole (the sender needs it) and shown redacted
// everywhere else: the answer, the list, the admin activity. Only the
// webhooks table holds the secrets.
func TestAWebhookURLIsStoredWholeAndShownRedacted(t *testing.T) {
	w := newWorld(t)
	const whole = "https://bob:hunter2@hooks.slack.com/services/T0/B0/slackSECRETtoken1a2b"
	const shown = "https://••••@hooks.slack.com/services/T0/B0/••••1a2b"
	h := must(w.Gov.Webhooks.Create(t.Context(), w.admin, governance.WebhookInput{URL: whole, Secret: testSecret,
		Events: []string{notify.HardStop}}))(t)
	if h.URL != shown {
		t.Errorf("the answer shows %q, want %q", h.URL, shown)
	}
	if l := must(w.Gov.Webhooks.List(t.Context(), w.admin))(t); len(l) != 1 || l[0].URL != shown {
		t.Errorf("the list shows %+v", l)
	}
	var stored string
	if err := w.SQL().QueryRow(`SELECT url FROM webhooks WHERE id = ?`, h.ID).Scan(&stored); err != nil || stored != whole {
		t.Errorf("stored %q (%v), want the whole URL", stored, err)
	}
	for table, rows := range w.Dump() {
		for _, r := range rows {
			if table != "webhooks" && (strings.Contains(r, "hunter2") || strings.Contains(r, "slackSECRET")) {
				t.Errorf("table %s holds a secret of the URL: %s", table, r)
			}
		}
	}
	gone := must(w.Gov.Webhooks.Remove(t.Context(), w.admin, h.ID))(t)
	if gone.URL != shown {
		t.Errorf("the removal answers %q", gone.URL)
	}
	page := must(w.Gov.Activity.List(t.Context(), w.admin, activity.Page{Action: "webhook"}))(t)
	b, _ := json.Marshal(page)
	if len(page.Items) != 2 || strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "slackSECRET") ||
		!strings.Contains(string(b), shown) {
		t.Errorf("the activity shows %s", b)
	}
}

// An entry recorded before URLs were redacted holds one whole: it is
// shown redacted.
func TestAnOldActivityEntryIsShownRedacted(t *testing.T) {
	w := newWorld(t)
	const whole = "https://bob:hunter2@hooks.slack.com/services/T0/B0/slackSECRETtoken1a2b"
	// Written as the record's one writer wrote it then: the URL whole.
	if err := w.Store.Write(t.Context(), func(q db.Querier) error {
		return db.AppendActivity(t.Context(), q, db.NewActivity{At: "2026-01-01T00:00:00.000000Z", Actor: w.admin.Email,
			Action: "webhook.create", Target: "webhook 7 (" + whole + ")",
			AfterJSON: sql.NullString{String: `{"events":["hard_stop"],"secret":"(set)","url":"` + whole + `"}`, Valid: true}})
	}); err != nil {
		t.Fatal(err)
	}
	page := must(w.Gov.Activity.List(t.Context(), w.admin, activity.Page{Action: "webhook"}))(t)
	if len(page.Items) != 1 {
		t.Fatalf("%d entries", len(page.Items))
	}
	e := page.Items[0]
	if e.Target != "webhook 7 (https://••••@hooks.slack.com/services/T0/B0/••••1a2b)" ||
		string(e.After) != `{"events":["hard_stop"],"secret":"(set)","url":"https://••••@hooks.slack.com/services/T0/B0/••••1a2b"}` {
		t.Errorf("shown as %s %s", e.Target, e.After)
	}
}

// An address in an odd spelling that --webhook-allow opens is stored as
// the address it is, so the sender connects where the check looked.
func TestAnOddlySpelledAddressIsStoredAsItself(t *testing.T) {
	w := newWorld(t)
	w.AllowLoopbackWebhooks()
	for in, want := range map[string]string{
		"http://2130706433:8080/x":              "http://127.0.0.1:8080/x",
		"http://0x7f.1/x?token=abc":             "http://127.0.0.1/x?token=abc",
		"http://[0:0:0:0:0:ffff:7f00:1]:9/hook": "http://[::ffff:127.0.0.1]:9/hook",
		"http://127.0.0.1:8080/x":               "http://127.0.0.1:8080/x",
	} {
		h := must(w.Gov.Webhooks.Create(t.Context(), w.admin, governance.WebhookInput{URL: in, Secret: testSecret,
			Events: []string{notify.HardStop}}))(t)
		var stored string
		if err := w.SQL().QueryRow(`SELECT url FROM webhooks WHERE id = ?`, h.ID).Scan(&stored); err != nil || stored != want {
			t.Errorf("%s stored as %q (%v), want %q", in, stored, err, want)
		}
	}
	// What is not opened stays refused, and says how to open it.
	_, err := w.Gov.Webhooks.Create(t.Context(), w.admin, governance.WebhookInput{URL: "http://10.0.0.1/x", Secret: testSecret,
		Events: []string{notify.HardStop}})
	if e, ok := errs.As(err); !ok || e.Code != "url_not_allowed" || e.Field != "url" ||
		e.Message != "The url's host 10.0.0.1 is private: webhooks may not reach it unless serve --webhook-allow opens it." {
		t.Errorf("10.0.0.1: %v", err)
	}
}

// testReceiver is an endpoint that checks the signature and keeps what
// it got.
type testReceiver struct {
	mu      sync.Mutex
	status  int
	got     []notify.Payload
	headers []http.Header
}

func (r *testReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(req.Header.Get(notify.HeaderTimestamp) + "." + string(body)))
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Header.Get(notify.HeaderSignature) != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var p notify.Payload
	_ = json.Unmarshal(body, &p)
	r.got, r.headers = append(r.got, p), append(r.headers, req.Header.Clone())
	if r.status != 0 {
		http.Error(w, "db password is hunter2", r.status)
	}
}

// A test notification is sent now, signed as every delivery is, through
// the same destination check; the answer and the admin activity say what
// the endpoint answered, never what it said; nothing goes to the outbox.
func TestATestNotification(t *testing.T) {
	w := newWorld(t)
	w.AllowLoopbackWebhooks()
	rcv := &testReceiver{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	h := must(w.Gov.Webhooks.Create(t.Context(), w.admin, governance.WebhookInput{URL: srv.URL + "/services/T0/B0/slackSECRETtoken1a2b",
		Secret: testSecret, Events: []string{notify.HardStop}}))(t)
	shown := srv.URL + "/services/T0/B0/••••1a2b"

	for _, actor := range []auth.Actor{w.lead, w.viewer, w.agent} {
		refused(t, w.Kit, errs.Forbidden, "forbidden", func() error {
			_, err := w.Gov.Webhooks.Test(t.Context(), actor, h.ID)
			return err
		})
	}
	refused(t, w.Kit, errs.NotFound, "webhook_not_found", func() error {
		_, err := w.Gov.Webhooks.Test(t.Context(), w.admin, h.ID+100)
		return err
	})
	if len(rcv.got) != 0 {
		t.Fatalf("a refused test reached the endpoint")
	}

	cases := []struct {
		name      string
		status    int // the receiver's; 0 answers 200
		closed    bool
		delivered bool
		result    string
		answered  int
	}{
		{"the endpoint takes it", 0, false, true, "delivered", 200},
		{"the endpoint fails", http.StatusInternalServerError, false, false, "HTTP 500 from the endpoint", 500},
		{"the endpoint's address is closed", 0, true, false, "address not allowed: 127.0.0.1 is loopback", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rcv.mu.Lock()
			rcv.status = c.status
			before := len(rcv.got)
			rcv.mu.Unlock()
			if c.closed {
				w.Configure(func(o *governance.Options) { o.WebhookDestinations = notify.Destinations{} })
				t.Cleanup(w.AllowLoopbackWebhooks)
			}
			w.Clock.Advance(1e9)
			r := must(w.Gov.Webhooks.Test(t.Context(), w.admin, h.ID))(t)
			if r.ID != h.ID || r.URL != shown || r.Delivered != c.delivered || r.Status != c.answered || r.Result != c.result ||
				!strings.HasPrefix(r.Delivery, "test_") || !r.SentAt.Equal(w.Clock.Now()) {
				t.Errorf("answered %+v", r)
			}
			rcv.mu.Lock()
			got := rcv.got[before:]
			headers := rcv.headers[before:]
			rcv.mu.Unlock()
			if c.closed {
				if len(got) != 0 {
					t.Errorf("the closed address was reached")
				}
			} else if len(got) != 1 || got[0].Madebook.Event != notify.TestEvent || !strings.Contains(got[0].Text, w.admin.Email) ||
				headers[0].Get(notify.HeaderDelivery) != r.Delivery || headers[0].Get("User-Agent") != "Madebook-Webhook/1" {
				t.Errorf("the endpoint got %+v %v", got, headers)
			}
			e := newest(t, w)
			after := state(t, e.After)
			if e.Action != "webhook.test" || e.Target != "webhook "+strconv.FormatInt(h.ID, 10)+" ("+shown+")" || state(t, e.Before) != nil ||
				after["result"] != c.result || after["delivered"] != c.delivered || after["url"] != shown {
				t.Errorf("recorded %s %q %s", e.Action, e.Target, e.After)
			}
			if (c.answered == 0) != (after["status"] == nil) || (c.answered != 0 && after["status"] != float64(c.answered)) {
				t.Errorf("recorded the status %v, want %d", after["status"], c.answered)
			}
			if strings.Contains(string(e.After), "hunter2") || strings.Contains(string(e.After), "slackSECRET") {
				t.Errorf("the record quotes a secret: %s", e.After)
			}
		})
	}
	if n := len(outbox(t, w.Kit)); n != 0 {
		t.Errorf("a test wrote %d notifications to the outbox", n)
	}
}
