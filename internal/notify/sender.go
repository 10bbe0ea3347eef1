package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/madebook/madebook/db"
)

// The headers every delivery carries.
const (
	// HeaderTimestamp is when the delivery was sent, in unix seconds.
	HeaderTimestamp = "X-Madebook-Timestamp"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256, keyed with the
	// endpoint's secret, of the timestamp, a dot and the body.
	HeaderSignature = "X-Madebook-Signature"
	// HeaderDelivery names the notification; a retry carries the same
	// value, so a receiver can drop one it already has.
	HeaderDelivery = "X-Madebook-Delivery"
)

// Retry schedule: a failed delivery is tried again after FirstRetry,
// doubling each time up to MaxRetry (each wait jittered by ±20%), until
// GiveUpAfter from when the notification was written; then it is given
// up, and the give-up is recorded.
const (
	FirstRetry  = 5 * time.Second
	MaxRetry    = time.Hour
	GiveUpAfter = 24 * time.Hour
)

// Sign is the signature of a delivery: the hex HMAC-SHA256, keyed with
// the endpoint's secret, of the unix timestamp, a dot and the body. The
// header carries it as "sha256=" + Sign(...).
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Backoff is how long to wait after the attempt-th failed attempt (1 is
// the first): FirstRetry doubling to at most MaxRetry, scaled by
// 0.8+0.4×jitter (jitter in [0,1)) and never above MaxRetry.
func Backoff(attempt int, jitter float64) time.Duration {
	d := FirstRetry
	for i := 1; i < attempt && d < MaxRetry; i++ {
		d *= 2
	}
	d = min(d, MaxRetry)
	d = time.Duration(float64(d) * (0.8 + 0.4*jitter))
	return min(d, MaxRetry)
}

// Doer sends an HTTP request: *http.Client, or a test's.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Sender delivers the outbox. Every field but Store has a default
// (NewSender); tests replace the clock and the jitter. Client must be a
// Destinations' (or check addresses as it does).
// Several senders, in one process or in several sharing the database,
// may run at once: each claims rows with an UPDATE that moves them out of
// the others' reach for Lease, so a row is sent by one sender at a time.
type Sender struct {
	Store  db.Transactor
	Client Doer
	Now    func() time.Time
	// Jitter returns a number in [0,1) (Backoff's jitter).
	Jitter func() float64
	Logger *slog.Logger
	// Timeout bounds one delivery; Lease, how long a claimed row is out of
	// every other sender's reach, must be longer.
	Timeout, Lease time.Duration
	// Batch is the most rows one claim takes; Parallel, the most sent at
	// once.
	Batch, Parallel int
	// Poll is the longest the sender sleeps: it also wakes on every
	// commit of this process, but another process's rows are only seen
	// by looking.
	Poll time.Duration
	// Outcome, when set, is told how each recorded attempt ended:
	// delivered, failed (to be retried) or given_up (for metrics).
	Outcome func(outcome string)
}

// outcome tells Outcome how an attempt ended, once it is recorded.
func (s *Sender) outcome(o string, err error) error {
	if err == nil && s.Outcome != nil {
		s.Outcome(o)
	}
	return err
}

// NewSender returns a sender over store that delivers to the
// destinations to allows (through to.Client: checked as each connection
// is made), with the defaults: a DefaultTimeout, a 30 s lease, 32 rows a
// claim, 8 at once, a look every 2 s.
func NewSender(store db.Transactor, logger *slog.Logger, to Destinations) *Sender {
	return &Sender{Store: store, Logger: logger, Now: time.Now, Jitter: rand.Float64, Client: to.Client(),
		Timeout: DefaultTimeout, Lease: 30 * time.Second, Batch: 32, Parallel: 8, Poll: 2 * time.Second}
}

// Run sends what is due until ctx is done, waking when a write commits,
// when the next row falls due, or every Poll at the latest. A delivery
// under way when ctx ends is abandoned; its row is due again when its
// lease runs out.
func (s *Sender) Run(ctx context.Context) {
	wake, stop := s.Store.Subscribe()
	defer stop()
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.Logger.Error("webhook outbox", "error", err)
		}
		wait := s.Poll
		if next, err := s.nextDue(ctx); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(s.Now()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// nextDue is when the earliest row still to send is due; zero when none.
func (s *Sender) nextDue(ctx context.Context) (time.Time, error) {
	v, err := s.Store.Reader().NextOutboxDue(ctx)
	if err != nil || v == "" {
		return time.Time{}, err
	}
	return db.ParseTime(v)
}

// RunOnce claims the rows due now and sends them, and returns how many it
// sent (whatever the outcome). It writes nothing when nothing is due.
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		now := s.Now().UTC()
		next, err := s.nextDue(ctx)
		if err != nil {
			return total, fmt.Errorf("next due: %w", err)
		}
		if next.IsZero() || next.After(now) {
			return total, nil
		}
		var rows []db.ClaimOutboxRow
		err = s.Store.Write(ctx, func(q db.Querier) error {
			var err error
			rows, err = q.ClaimOutbox(ctx, db.ClaimOutboxParams{LeaseUntil: db.FormatTime(now.Add(s.Lease)),
				Now: db.FormatTime(now), Lim: int64(s.Batch)})
			return err
		})
		if err != nil {
			return total, fmt.Errorf("claim: %w", err)
		}
		if len(rows) == 0 {
			return total, nil // another sender claimed them
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errd error
		)
		slots := make(chan struct{}, max(s.Parallel, 1))
		for _, r := range rows {
			if ctx.Err() != nil {
				break
			}
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				if err := s.send(ctx, r); err != nil {
					mu.Lock()
					errd = errors.Join(errd, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		total += len(rows)
		if errd != nil || ctx.Err() != nil {
			return total, errors.Join(errd, ctx.Err())
		}
	}
}

// send makes one attempt at a claimed row and records its outcome.
func (s *Sender) send(ctx context.Context, r db.ClaimOutboxRow) error {
	target, err := s.Store.Reader().GetWebhookTarget(ctx, r.WebhookID)
	if err != nil {
		return fmt.Errorf("outbox %d: load endpoint %d: %w", r.ID, r.WebhookID, err)
	}
	if target.RemovedAt.Valid {
		return s.record(ctx, r, s.Now(), 0, "endpoint removed", true)
	}
	status, failure := s.post(ctx, target.Url, target.Secret, r)
	now := s.Now()
	if failure != "" && ctx.Err() != nil {
		return nil // shutting down: the lease brings the row back
	}
	if failure == "" { // recorded even while shutting down: the write outlives ctx
		return s.outcome("delivered", s.Store.Write(ctx, func(q db.Querier) error {
			_, err := q.MarkOutboxDelivered(ctx, db.MarkOutboxDeliveredParams{DeliveredAt: sql.NullString{String: db.FormatTime(now), Valid: true},
				Status: sql.NullInt64{Int64: int64(status), Valid: true}, ID: r.ID})
			return err
		}))
	}
	created, err := db.ParseTime(r.CreatedAt)
	if err != nil {
		return fmt.Errorf("outbox %d: %w", r.ID, err)
	}
	giveUp := !now.Before(created.Add(GiveUpAfter))
	return s.record(ctx, r, now, status, failure, giveUp)
}

// record stores a failed attempt: when to try again, or that it is given
// up. A sender whose claim was overtaken (its lease ran out and another
// sender claimed the row) records nothing.
func (s *Sender) record(ctx context.Context, r db.ClaimOutboxRow, now time.Time, status int, failure string, giveUp bool) error {
	st := sql.NullInt64{Int64: int64(status), Valid: status != 0}
	o := "failed"
	if giveUp {
		o = "given_up"
	}
	return s.outcome(o, s.Store.Write(ctx, func(q db.Querier) error {
		if giveUp {
			_, err := q.GiveUpOutbox(ctx, db.GiveUpOutboxParams{Status: st, Error: nullString(failure),
				GaveUpAt: sql.NullString{String: db.FormatTime(now), Valid: true}, ID: r.ID, Attempts: r.Attempts})
			if err == nil {
				s.Logger.Warn("webhook notification given up", "outbox", r.ID, "endpoint", r.WebhookID, "attempts", r.Attempts, "error", failure)
			}
			return err
		}
		created, err := db.ParseTime(r.CreatedAt)
		if err != nil {
			return err
		}
		next := now.Add(Backoff(int(r.Attempts), s.Jitter()))
		if last := created.Add(GiveUpAfter); next.After(last) {
			next = last // the last try is when the day is up
		}
		_, err = q.MarkOutboxFailed(ctx, db.MarkOutboxFailedParams{Status: st, Error: nullString(failure),
			NextAttemptAt: db.FormatTime(next), ID: r.ID, Attempts: r.Attempts})
		return err
	}))
}

// post sends the row's payload, signed, and returns the HTTP status (0
// when there was no answer) and what went wrong ("" for a 2xx).
func (s *Sender) post(ctx context.Context, url, secret string, r db.ClaimOutboxRow) (int, string) {
	return Deliver(ctx, s.Client, s.Now(), s.Timeout, Delivery{URL: url, Secret: secret,
		ID: strconv.FormatInt(r.ID, 10), Body: []byte(r.Payload)})
}

// Delivery is one POST of a notification to an endpoint.
type Delivery struct {
	URL, Secret string
	// ID is the X-Madebook-Delivery header: the outbox row's id, the
	// same on every retry.
	ID   string
	Body []byte
}

// DefaultTimeout bounds one delivery, from the connection to the answer.
const DefaultTimeout = 10 * time.Second

// Deliver POSTs d through client (Destinations.Client), signed at now
// with d.Secret, within timeout, and returns the endpoint's HTTP status
// (0 when there was no answer) and what went wrong: "" for a 2xx, else
// a fixed phrase (Failure) that never holds what the endpoint said, nor
// the URL.
func Deliver(ctx context.Context, client Doer, now time.Time, timeout time.Duration, d Delivery) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, "invalid URL"
	}
	ts := now.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Madebook-Webhook/1")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, "sha256="+Sign(d.Secret, ts, d.Body))
	req.Header.Set(HeaderDelivery, d.ID)
	resp, err := client.Do(req)
	if err != nil {
		return 0, Failure(err)
	}
	defer resp.Body.Close()
	// Read a little of the answer, so the connection can be reused; what
	// it says is never kept: an admin must not read internal services
	// through Madebook.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, StatusFailure(resp.StatusCode)
}

// StatusFailure is what an endpoint's HTTP status says went wrong: ""
// for a 2xx, else "HTTP 500 from the endpoint" (a redirect says it was
// not followed). The status line's words are the endpoint's and are not
// kept.
func StatusFailure(code int) string {
	switch {
	case code >= 200 && code < 300:
		return ""
	case code >= 300 && code < 400:
		return fmt.Sprintf("HTTP %d from the endpoint (redirects are not followed)", code)
	}
	return fmt.Sprintf("HTTP %d from the endpoint", code)
}

// Failure is the fixed phrase for a delivery that got no answer: "address
// not allowed: 10.0.0.1 is private", "timed out", "connection refused",
// and so on. It never quotes the error, which may hold the URL (and its
// secrets) or what the endpoint sent.
func Failure(err error) string {
	var (
		addr *AddrError
		dns  *net.DNSError
		cert *tls.CertificateVerificationError
		ne   net.Error
	)
	switch {
	case errors.As(err, &addr):
		return addr.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "host name not found"
		}
		return "host name lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.As(err, &cert):
		return "TLS certificate not valid"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed without an answer"
	case strings.Contains(err.Error(), "tls:"):
		return "TLS handshake failed"
	case strings.Contains(err.Error(), "malformed HTTP"):
		return "the answer is not HTTP"
	}
	return "request failed"
}
