package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/governance"
	"github.com/madebook/madebook/internal/notify"
	"github.com/madebook/madebook/internal/testkit"
)

const secret = "the-receivers-shared-secret"

// receiver is a webhook endpoint that checks every delivery's signature
// and timestamp, refuses the first failFirst tries of each delivery (or
// all of them while refusing), and counts by delivery id.
type receiver struct {
	t   *testing.T
	now func() time.Time

	mu        sync.Mutex
	failFirst int
	refusing  bool
	tries     map[string]int
	accepted  map[string]int
	bodies    map[string]notify.Payload
	// arrived gets each delivery id the first time it is accepted.
	arrived chan string
}

func newReceiver(t *testing.T, now func() time.Time, failFirst int) (*receiver, *httptest.Server) {
	r := &receiver{t: t, now: now, failFirst: failFirst, tries: map[string]int{}, accepted: map[string]int{},
		bodies: map[string]notify.Payload{}, arrived: make(chan string, 1000)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

// ServeHTTP verifies the delivery as a receiver should: the signature
// over timestamp "." body with the shared secret, and a timestamp within
// five minutes of its own clock.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		r.t.Errorf("read the body: %v", err)
		return
	}
	ts := req.Header.Get("X-Madebook-Timestamp")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(req.Header.Get("X-Madebook-Signature")), []byte(want)) {
		r.t.Errorf("delivery %s: bad signature %q", req.Header.Get("X-Madebook-Delivery"), req.Header.Get("X-Madebook-Signature"))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || r.now().Sub(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		r.t.Errorf("timestamp %q is not within 5 minutes of %s", ts, r.now())
		http.Error(w, "stale", http.StatusUnauthorized)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		r.t.Errorf("Content-Type %q", ct)
	}
	id := req.Header.Get("X-Madebook-Delivery")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries[id]++
	if r.refusing || r.tries[id] <= r.failFirst {
		http.Error(w, "not now", http.StatusServiceUnavailable)
		return
	}
	var p notify.Payload
	if err := json.Unmarshal(body, &p); err != nil {
		r.t.Errorf("delivery %s is not a payload: %v", id, err)
	}
	r.bodies[id] = p
	r.accepted[id]++
	if r.accepted[id] == 1 {
		r.arrived <- id
	}
}

// counts are the accepted count and the tries of each delivery.
func (r *receiver) counts() (accepted, tries map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, tr := map[string]int{}, map[string]int{}
	for k, v := range r.accepted {
		a[k] = v
	}
	for k, v := range r.tries {
		tr[k] = v
	}
	return a, tr
}

// env is a kit with an admin, an agent and its session, and an endpoint
// subscribed to everything at the receiver.
type env struct {
	*testkit.Kit
	admin, agent auth.Actor
	session      string
	hook         governance.Webhook
	sender       *notify.Sender
}

func newEnv(t *testing.T, url string) *env {
	k := testkit.New(t, testkit.WithLoopbackWebhooks) // the receiver is on 127.0.0.1
	admin, _ := k.Person(auth.Admin)
	agent, _ := k.Agent()
	e := &env{Kit: k, admin: admin, agent: agent, session: k.Session(agent, k.Mission(admin, false))}
	h, err := k.Gov.Webhooks.Create(context.Background(), admin, governance.WebhookInput{URL: url, Secret: secret, Events: notify.Events})
	if err != nil {
		t.Fatal(err)
	}
	e.hook = h
	e.sender = notify.NewSender(k.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), testkit.LoopbackWebhooks)
	e.sender.Now, e.sender.Jitter = k.Clock.Now, func() float64 { return 0.5 } // no jitter: a factor of 1
	return e
}

// gates opens n gates on the session: n notifications.
func (e *env) gates(t *testing.T, n int) {
	for i := range n {
		if _, err := e.Gov.Decisions.Open(context.Background(), e.agent, e.session, governance.DecisionInput{
			Title: fmt.Sprintf("Gate %d", i), Question: "Go on?"}); err != nil {
			t.Fatal(err)
		}
	}
}

// deliveries are the endpoint's deliveries, newest first.
func (e *env) deliveries(t *testing.T) []governance.WebhookDelivery {
	ws, err := e.Gov.Webhooks.List(context.Background(), e.admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.ID == e.hook.ID {
			return w.Deliveries
		}
	}
	t.Fatalf("endpoint %d is not listed", e.hook.ID)
	return nil
}

func (e *env) runOnce(t *testing.T) int {
	n, err := e.sender.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBackoffDoublesFromFiveSecondsToAnHour(t *testing.T) {
	cases := []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0.5, 5 * time.Second},
		{2, 0.5, 10 * time.Second},
		{3, 0.5, 20 * time.Second},
		{6, 0.5, 160 * time.Second},
		{10, 0.5, 2560 * time.Second},
		{11, 0.5, time.Hour},
		{40, 0.5, time.Hour},
		{1, 0, 4 * time.Second},
		{1, 0.99, 5980 * time.Millisecond},
		{10, 0, 2048 * time.Second},
		{11, 0, 48 * time.Minute},
		{11, 0.99, time.Hour}, // jitter never takes it past the cap
	}
	for _, c := range cases {
		if got := notify.Backoff(c.attempt, c.jitter); got != c.want {
			t.Errorf("Backoff(%d, %v) = %s, want %s", c.attempt, c.jitter, got, c.want)
		}
	}
}

// Every notification arrives, signed, exactly once in the receiver's
// view, though the receiver refuses each twice first; the retries follow
// the backoff schedule and the console sees each attempt.
func TestEveryNotificationArrivesOnceThoughRefusedTwice(t *testing.T) {
	var e *env
	rcv, srv := newReceiver(t, func() time.Time { return e.Clock.Now() }, 2)
	e = newEnv(t, srv.URL)
	var mu sync.Mutex
	outcomes := map[string]int{}
	e.sender.Outcome = func(o string) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[o]++
	}
	e.gates(t, 3)
	start := e.Clock.Now()

	if n := e.runOnce(t); n != 3 {
		t.Fatalf("the first round sent %d, want 3", n)
	}
	for _, d := range e.deliveries(t) {
		if d.Status != governance.DeliveryPending || d.Attempts != 1 || d.LastStatus != 503 || d.LastError != "HTTP 503 from the endpoint" ||
			d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(start.Add(5*time.Second)) {
			t.Fatalf("after one refusal: %+v (next %v), want pending, retried at +5s", d, d.NextAttemptAt)
		}
	}
	// Nothing is due before its time.
	e.Clock.Advance(4 * time.Second)
	if n := e.runOnce(t); n != 0 {
		t.Fatalf("%d sent before they were due", n)
	}
	e.Clock.Advance(time.Second)
	if n := e.runOnce(t); n != 3 {
		t.Fatalf("the second round sent %d, want 3", n)
	}
	for _, d := range e.deliveries(t) {
		if d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(start.Add(15*time.Second)) {
			t.Fatalf("after two refusals: next %v, want +15s (5 s, then 10 s)", d.NextAttemptAt)
		}
	}
	e.Clock.Advance(10 * time.Second)
	if n := e.runOnce(t); n != 3 {
		t.Fatalf("the third round sent %d, want 3", n)
	}
	e.Clock.Advance(time.Hour)
	if n := e.runOnce(t); n != 0 {
		t.Fatalf("%d sent after all were delivered", n)
	}

	accepted, tries := rcv.counts()
	if len(accepted) != 3 {
		t.Fatalf("the receiver has %d notifications, want 3", len(accepted))
	}
	for id, n := range accepted {
		if n != 1 || tries[id] != 3 {
			t.Errorf("delivery %s accepted %d times in %d tries, want once in 3", id, n, tries[id])
		}
		if p := rcv.bodies[id]; p.Madebook.Event != notify.AttentionCreated || p.Madebook.Session != e.session || p.Text == "" {
			t.Errorf("delivery %s: %+v", id, p)
		}
	}
	for _, d := range e.deliveries(t) {
		if d.Status != governance.DeliveryDelivered || d.Attempts != 3 || d.LastStatus != 200 || d.LastError != "" || d.DeliveredAt == nil {
			t.Errorf("delivered: %+v", d)
		}
	}
	// Each attempt's outcome is told once it is recorded (the metrics).
	if outcomes["failed"] != 6 || outcomes["delivered"] != 3 || outcomes["given_up"] != 0 {
		t.Errorf("outcomes told: %v, want 6 failed and 3 delivered", outcomes)
	}
}

// A notification nobody accepts is retried on the schedule until a day
// has passed since it was written, tried one last time then, and given
// up, recorded; it is never tried again.
func TestANotificationIsGivenUpAfterADay(t *testing.T) {
	var e *env
	rcv, srv := newReceiver(t, func() time.Time { return e.Clock.Now() }, 0)
	rcv.refusing = true
	e = newEnv(t, srv.URL)
	e.gates(t, 1)
	start := e.Clock.Now()

	// The schedule: 5 s doubling to an hour, the last try at 24 h.
	want, elapsed := 1, time.Duration(0)
	for elapsed < notify.GiveUpAfter {
		elapsed = min(elapsed+notify.Backoff(want, 0.5), notify.GiveUpAfter)
		want++
	}
	tries := 0
	for range 100 {
		tries += e.runOnce(t)
		d := e.deliveries(t)[0]
		if d.Status == governance.DeliveryGivenUp {
			break
		}
		e.Clock.Advance(d.NextAttemptAt.Sub(e.Clock.Now()))
	}
	d := e.deliveries(t)[0]
	if d.Status != governance.DeliveryGivenUp || d.GaveUpAt == nil || !d.GaveUpAt.Equal(start.Add(24*time.Hour)) {
		t.Fatalf("after %d tries: %+v, want given up at +24h", tries, d)
	}
	if tries != want || d.Attempts != int64(want) || d.LastStatus != 503 || d.LastError != "HTTP 503 from the endpoint" {
		t.Errorf("%d tries, %d attempts recorded (%+v), want %d", tries, d.Attempts, d, want)
	}
	rcv.mu.Lock()
	rcv.refusing = false
	rcv.mu.Unlock()
	e.Clock.Advance(48 * time.Hour)
	if n := e.runOnce(t); n != 0 {
		t.Errorf("a given-up notification was tried again")
	}
}

// Two senders on one database (two replicas) never send one notification
// twice: each claims rows with an UPDATE the other cannot also win.
func TestTwoSendersSendEachNotificationOnce(t *testing.T) {
	var e *env
	rcv, srv := newReceiver(t, func() time.Time { return e.Clock.Now() }, 0)
	e = newEnv(t, srv.URL)
	e.gates(t, 40)
	other := *e.sender
	e.sender.Batch, other.Batch = 3, 3
	var wg sync.WaitGroup
	sent := make([]int, 2)
	for i, s := range []*notify.Sender{e.sender, &other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.RunOnce(context.Background())
			if err != nil {
				t.Error(err)
			}
			sent[i] = n
		}()
	}
	wg.Wait()
	accepted, tries := rcv.counts()
	if len(accepted) != 40 || sent[0]+sent[1] != 40 {
		t.Fatalf("%d arrived, %v sent, want 40", len(accepted), sent)
	}
	for id := range accepted {
		if accepted[id] != 1 || tries[id] != 1 {
			t.Errorf("delivery %s sent %d times", id, tries[id])
		}
	}
}

// An endpoint that does not answer within the timeout is a failed
// attempt, retried later.
func TestASlowEndpointIsAFailedAttempt(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	e := newEnv(t, slow.URL)
	e.sender.Timeout = 50 * time.Millisecond
	e.gates(t, 1)
	e.runOnce(t)
	d := e.deliveries(t)[0]
	if d.Status != governance.DeliveryPending || d.Attempts != 1 || d.LastStatus != 0 || d.LastError != "timed out" {
		t.Errorf("after a timeout: %+v", d)
	}
}

// Run sends a notification as soon as its cause commits, without waiting
// for its poll, and stops when its context ends.
func TestRunSendsWhenACauseCommits(t *testing.T) {
	var e *env
	rcv, srv := newReceiver(t, func() time.Time { return e.Clock.Now() }, 0)
	e = newEnv(t, srv.URL)
	e.sender.Poll = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.sender.Run(ctx) }()
	e.gates(t, 1)
	select {
	case <-rcv.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the notification did not arrive: Run did not wake on the commit")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop when its context ended")
	}
}

// Sign agrees with openssl, as the README shows a receiver checking it:
// printf '1700000000.{"text":"hi"}' | openssl dgst -sha256 -hmac 'the-receivers-shared-secret'
func TestSignAgreesWithOpenSSL(t *testing.T) {
	const want = "8a2dc63c8f195c6949ca3a09d840d819643f7475f062c5fbdb047bc50337fa32"
	if got := notify.Sign(secret, 1700000000, []byte(`{"text":"hi"}`)); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

// A name that resolves to a closed address passes when the endpoint is
// added (it is a name), and is refused when the delivery connects: a
// failed attempt with a fixed phrase, retried on the schedule, and the
// receiver behind that address is never reached.
func TestANameThatResolvesToAClosedAddressIsAFailedAttempt(t *testing.T) {
	var e *env
	rcv, srv := newReceiver(t, func() time.Time { return e.Clock.Now() }, 0)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	e = newEnv(t, "http://rebind.madebook.test:"+strconv.Itoa(port)+"/hook")
	e.sender.Client = notify.Destinations{Resolver: fakeDNS(t, netip.MustParseAddr("127.0.0.1"))}.Client()
	e.gates(t, 1)
	start := e.Clock.Now()
	if n := e.runOnce(t); n != 1 {
		t.Fatalf("sent %d, want 1", n)
	}
	d := e.deliveries(t)[0]
	if d.Status != governance.DeliveryPending || d.Attempts != 1 || d.LastStatus != 0 ||
		d.LastError != "address not allowed: 127.0.0.1 is loopback" || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(start.Add(5*time.Second)) {
		t.Errorf("after the refused connection: %+v", d)
	}
	if _, tries := rcv.counts(); len(tries) != 0 {
		t.Errorf("the receiver behind the closed address got %v", tries)
	}
}
