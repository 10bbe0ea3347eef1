package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/madebook/madebook/db"
	"github.com/madebook/madebook/internal/activity"
	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/ids"
	"github.com/madebook/madebook/internal/input"
	"github.com/madebook/madebook/internal/notify"
)

// Limits of a webhook endpoint.
const (
	MaxWebhookURL    = 2000 // characters of the URL
	MinWebhookSecret = 16   // characters of the signing secret, at least
	MaxWebhookSecret = 200  // and at most
	// WebhookDeliveries is how many of an endpoint's newest notifications
	// List shows with it.
	WebhookDeliveries = 20
)

// WebhookService keeps the endpoints notifications are sent to (admins
// only); package notify writes and sends the notifications.
type WebhookService struct {
	core *core
	// hooks is where webhook endpoints may point, and the client test
	// notifications go through (Options.WebhookDestinations).
	hooks webhookClient
}

// WebhookInput is an endpoint an admin adds.
type WebhookInput struct {
	URL    string   `json:"url"`
	Secret string   `json:"secret"`
	Events []string `json:"events"`
}

// Validate checks the endpoint: an absolute http(s) URL whose host to
// allows (notify.Destinations.CheckHost: no loopback, private, link-local
// or other internal address, in any spelling, nor a name that stands
// for one, unless serve --webhook-allow opens it; an address spelled
// oddly is stored as its address), a secret of MinWebhookSecret to
// MaxWebhookSecret characters, and at least one known event (repeats
// count once). Errors: url_required, url_too_long, invalid_url,
// url_not_allowed, secret_required, secret_too_short, secret_too_long,
// events_required, unknown_event.
func (in WebhookInput) Validate(to notify.Destinations) (WebhookInput, error) {
	u, err := input.Required("url", in.URL, MaxWebhookURL)
	if err != nil {
		return in, err
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Hostname() == "" {
		return in, errs.E(errs.Invalid, "invalid_url", "The url must be an absolute http:// or https:// address, like https://hooks.example.com/madebook.").In("url")
	}
	if p.Fragment != "" {
		return in, errs.E(errs.Invalid, "invalid_url", "The url must not have a #fragment: it is never sent.").In("url")
	}
	host, err := to.CheckHost(p.Hostname())
	var he *notify.HostError
	switch {
	case errors.As(err, &he) && !he.Addr.IsValid():
		return in, errs.E(errs.Invalid, "invalid_url", "%s", he.Error()).In("url")
	case err != nil:
		return in, errs.E(errs.Invalid, "url_not_allowed", "%s", err.Error()).In("url")
	case host != p.Hostname():
		// The address as itself, so the sender dials what was checked.
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if port := p.Port(); port != "" {
			host += ":" + port
		}
		p.Host = host
		u = p.String()
	}
	if strings.TrimSpace(in.Secret) == "" {
		return in, errs.E(errs.Invalid, "secret_required", "The secret is required: deliveries are signed with it.").In("secret")
	}
	switch n := utf8.RuneCountInString(in.Secret); {
	case n < MinWebhookSecret:
		return in, errs.E(errs.Invalid, "secret_too_short", "The secret is %d characters; at least %d are needed.", n, MinWebhookSecret).In("secret")
	case n > MaxWebhookSecret:
		return in, errs.E(errs.Invalid, "secret_too_long", "The secret is %d characters; at most %d are allowed.", n, MaxWebhookSecret).In("secret")
	}
	if len(in.Events) == 0 {
		return in, errs.E(errs.Invalid, "events_required", "Name at least one event: %s.", strings.Join(notify.Events, ", ")).In("events")
	}
	var events []string
	for _, e := range in.Events {
		if !slices.Contains(notify.Events, e) {
			return in, errs.E(errs.Invalid, "unknown_event", "There is no event called %q: choose from %s.", e, strings.Join(notify.Events, ", ")).In("events")
		}
		if !slices.Contains(events, e) {
			events = append(events, e)
		}
	}
	slices.SortFunc(events, func(a, b string) int { return slices.Index(notify.Events, a) - slices.Index(notify.Events, b) })
	return WebhookInput{URL: u, Secret: in.Secret, Events: events}, nil
}

// Webhook is an endpoint as admins see it: never its secret, and its URL
// redacted (notify.RedactURL: userinfo and tokens in the path or query
// hidden; the sender alone reads the URL whole).
type Webhook struct {
	ID        int64     `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	// Deliveries are its newest notifications (List only).
	Deliveries []WebhookDelivery `json:"deliveries"`
	// RemovedAt is when it was removed (Remove only).
	RemovedAt *time.Time `json:"removed_at,omitempty"`
}

// WebhookDelivery is one notification to an endpoint and where its
// sending stands: delivered, given up, or waiting for its next attempt.
type WebhookDelivery struct {
	ID            int64      `json:"id"`
	Event         string     `json:"event"`
	Status        string     `json:"status"` // pending, delivered or given_up
	Attempts      int64      `json:"attempts"`
	LastStatus    int64      `json:"last_status,omitempty"` // the endpoint's last HTTP status
	LastError     string     `json:"last_error,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	DeliveredAt   *time.Time `json:"delivered_at,omitempty"`
	GaveUpAt      *time.Time `json:"gave_up_at,omitempty"`
}

// The states of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryGivenUp   = "given_up"
)

// Create adds an endpoint (admin). Errors: forbidden, those of
// WebhookInput.Validate.
func (s *WebhookService) Create(ctx context.Context, actor auth.Actor, in WebhookInput) (Webhook, error) {
	if err := actor.RequireAdmin("add a webhook endpoint"); err != nil {
		return Webhook{}, err
	}
	in, err := in.Validate(s.hooks.to)
	if err != nil {
		return Webhook{}, err
	}
	shown := notify.RedactURL(in.URL)
	var row db.Webhook
	err = s.core.write(ctx, func(q db.Querier) error {
		var err error
		row, err = q.CreateWebhook(ctx, db.CreateWebhookParams{Url: in.URL, Secret: in.Secret, Events: encodeList(in.Events),
			CreatedAt: db.FormatTime(s.core.now()), CreatedBy: sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}})
		if err != nil {
			return err
		}
		// The secret is handed over only to be redacted: the record says
		// that there is one.
		return s.core.did(ctx, q, actor, activity.WebhookCreate, webhookTarget(row.ID, shown), nil,
			activity.State{"url": shown, "events": in.Events, "secret": in.Secret})
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("add webhook: %w", err)
	}
	c := db.StoredRow("webhooks", row.ID)
	w := Webhook{ID: row.ID, URL: shown, Events: c.List("events", row.Events), CreatedAt: c.Time("created_at", row.CreatedAt),
		CreatedBy: actor.Email, Deliveries: []WebhookDelivery{}}
	if err := c.Err(); err != nil {
		return Webhook{}, fmt.Errorf("add webhook: %w", err)
	}
	return w, nil
}

// List lists the endpoints (admin), oldest first, each with its
// WebhookDeliveries newest notifications. Errors: forbidden.
func (s *WebhookService) List(ctx context.Context, actor auth.Actor) ([]Webhook, error) {
	if err := actor.RequireAdmin("list webhook endpoints"); err != nil {
		return nil, err
	}
	var out []Webhook
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		rows, err := q.ListWebhooks(ctx)
		if err != nil {
			return err
		}
		out = make([]Webhook, 0, len(rows))
		for _, r := range rows {
			c := db.StoredRow("webhooks", r.ID)
			w := Webhook{ID: r.ID, URL: notify.RedactURL(r.Url), Events: c.List("events", r.Events), CreatedAt: c.Time("created_at", r.CreatedAt),
				CreatedBy: r.CreatedByEmail, Deliveries: []WebhookDelivery{}}
			if err := c.Err(); err != nil {
				return err
			}
			ds, err := q.ListWebhookDeliveries(ctx, db.ListWebhookDeliveriesParams{WebhookID: r.ID, Lim: WebhookDeliveries})
			if err != nil {
				return err
			}
			for _, d := range ds {
				v, err := deliveryFrom(d)
				if err != nil {
					return err
				}
				w.Deliveries = append(w.Deliveries, v)
			}
			out = append(out, w)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// webhookTarget names an endpoint in the admin activity, by its URL as
// shown (redacted).
func webhookTarget(id int64, shown string) string { return fmt.Sprintf("webhook %d (%s)", id, shown) }

// deliveryFrom converts an outbox row; an error names the row.
func deliveryFrom(d db.ListWebhookDeliveriesRow) (WebhookDelivery, error) {
	c := db.StoredRow("outbox", d.ID)
	v := WebhookDelivery{ID: d.ID, Event: d.Event, Status: DeliveryPending, Attempts: d.Attempts, LastStatus: d.LastStatus.Int64,
		LastError: d.LastError.String, CreatedAt: c.Time("created_at", d.CreatedAt), DeliveredAt: c.TimePtr("delivered_at", d.DeliveredAt),
		GaveUpAt: c.TimePtr("gave_up_at", d.GaveUpAt)}
	switch {
	case v.DeliveredAt != nil:
		v.Status = DeliveryDelivered
	case v.GaveUpAt != nil:
		v.Status = DeliveryGivenUp
	default:
		next := c.Time("next_attempt_at", d.NextAttemptAt)
		v.NextAttemptAt = &next
	}
	if err := c.Err(); err != nil {
		return WebhookDelivery{}, err
	}
	return v, nil
}

// Remove removes an endpoint (admin) and returns it: nothing more is
// sent to it, and what it was still owed is given up; its history stays.
// Errors: forbidden, webhook_not_found.
func (s *WebhookService) Remove(ctx context.Context, actor auth.Actor, id int64) (Webhook, error) {
	if err := actor.RequireAdmin("remove a webhook endpoint"); err != nil {
		return Webhook{}, err
	}
	now := s.core.now()
	removed := sql.NullString{String: db.FormatTime(now), Valid: true}
	var row db.GetWebhookRow
	err := s.core.write(ctx, func(q db.Querier) error {
		var err error
		row, err = q.GetWebhook(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "webhook_not_found", "No webhook endpoint has the id %d.", id)
		} else if err != nil {
			return err
		}
		if _, err := q.RemoveWebhook(ctx, db.RemoveWebhookParams{RemovedAt: removed, ID: id}); err != nil {
			return err
		}
		if err := q.AbandonWebhookOutbox(ctx, db.AbandonWebhookOutboxParams{GaveUpAt: removed, WebhookID: id}); err != nil {
			return err
		}
		shown := notify.RedactURL(row.Url)
		before := activity.State{"url": shown, "events": db.StoredRow("webhooks", row.ID).List("events", row.Events)}
		return s.core.did(ctx, q, actor, activity.WebhookDelete, webhookTarget(row.ID, shown), before, nil)
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("remove webhook %d: %w", id, err)
	}
	c := db.StoredRow("webhooks", row.ID)
	w := Webhook{ID: row.ID, URL: notify.RedactURL(row.Url), Events: c.List("events", row.Events), CreatedAt: c.Time("created_at", row.CreatedAt),
		CreatedBy: row.CreatedByEmail, Deliveries: []WebhookDelivery{}, RemovedAt: &now}
	if err := c.Err(); err != nil {
		return Webhook{}, fmt.Errorf("remove webhook %d: %w", id, err)
	}
	return w, nil
}

// WebhookTest is what a test notification to an endpoint got: the HTTP
// status, and a fixed phrase for what went wrong (never what the
// endpoint said).
type WebhookTest struct {
	// ID is the endpoint's; URL its URL as shown (redacted).
	ID  int64  `json:"id"`
	URL string `json:"url"`
	// Delivered says the endpoint answered 2xx.
	Delivered bool `json:"delivered"`
	// Status is the endpoint's HTTP status; 0 (left out) when it did not
	// answer.
	Status int `json:"status,omitempty"`
	// Result is "delivered", or what went wrong: "HTTP 500 from the
	// endpoint", "connection refused", "timed out", "address not
	// allowed: 10.0.0.1 is private", ….
	Result string `json:"result"`
	// Delivery is the X-Madebook-Delivery header the test carried
	// ("test_…", never an outbox id).
	Delivery string    `json:"delivery"`
	SentAt   time.Time `json:"sent_at"`
}

// Test sends one test notification (notify.TestEvent) to an endpoint now,
// signed and sent as every delivery is (through the same destination
// check), and says what happened; it is recorded in the admin activity
// (webhook.test), whatever the endpoint answered. Nothing is written to
// the outbox: a test is never retried. Errors: forbidden,
// webhook_not_found.
func (s *WebhookService) Test(ctx context.Context, actor auth.Actor, id int64) (WebhookTest, error) {
	if err := actor.RequireAdmin("send a test notification"); err != nil {
		return WebhookTest{}, err
	}
	var target db.GetWebhookTargetRow
	err := s.core.store.Read(ctx, func(q db.Querier) error {
		if _, err := q.GetWebhook(ctx, id); errors.Is(err, sql.ErrNoRows) {
			return errs.E(errs.NotFound, "webhook_not_found", "No webhook endpoint has the id %d.", id)
		} else if err != nil {
			return err
		}
		var err error
		target, err = q.GetWebhookTarget(ctx, id)
		return err
	})
	if err != nil {
		return WebhookTest{}, fmt.Errorf("test webhook %d: %w", id, err)
	}
	now := s.core.now()
	body, err := s.core.notes.TestBody(actor.Email, db.FormatTime(now))
	if err != nil {
		return WebhookTest{}, fmt.Errorf("test webhook %d: %w", id, err)
	}
	t := WebhookTest{ID: id, URL: notify.RedactURL(target.Url), Delivery: ids.New("test_"), SentAt: now}
	// The request is sent outside any transaction: it may take the whole
	// timeout.
	t.Status, t.Result = notify.Deliver(ctx, s.hooks.client, now, notify.DefaultTimeout,
		notify.Delivery{URL: target.Url, Secret: target.Secret, ID: t.Delivery, Body: []byte(body)})
	if t.Delivered = t.Result == ""; t.Delivered {
		t.Result = "delivered"
	}
	after := activity.State{"url": t.URL, "delivered": t.Delivered, "result": t.Result}
	if t.Status != 0 {
		after["status"] = t.Status
	}
	// Recorded even when the caller has gone: the test was sent.
	wctx := context.WithoutCancel(ctx)
	err = s.core.write(wctx, func(q db.Querier) error {
		return s.core.did(wctx, q, actor, activity.WebhookTest, webhookTarget(id, t.URL), nil, after)
	})
	if err != nil {
		return WebhookTest{}, fmt.Errorf("test webhook %d: %w", id, err)
	}
	return t, nil
}

// webhookClient is where webhooks may point and the client deliveries
// go through, checking it.
type webhookClient struct {
	to     notify.Destinations
	client notify.Doer
}
