// Package metrics is Madebook's Prometheus metrics: how long each route
// takes (the brief's and the executor check's among them), what the
// Attention view holds by kind, what briefs hand over and hand over
// again, how webhook deliveries end, and how often a rate limit refuses.
// It serves them in the Prometheus text format at /metrics, to an admin
// token on the main listener or to anyone on a separate metrics listener
// (serve --metrics-addr).
package metrics

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds Madebook's collectors on a registry of its own.
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.HistogramVec
	deliveries  *prometheus.CounterVec
	webhooks    *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
}

// AttentionCounts reads how many Attention items wait, by kind, at scrape
// time.
type AttentionCounts func(context.Context) (map[string]int, error)

// New returns the metrics, with the Attention view read through counts
// at each scrape, plus the Go runtime's and the process's own.
func New(counts AttentionCounts) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "madebook_request_duration_seconds",
			Help: "How long Madebook took to answer, by route (the brief is route=\"/brief\", the executor check route=\"/api/v1/sessions/:id/tool-calls/check\") and method.",
			// From 100 µs (a cached brief) to 5 s.
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "madebook_deliveries_total",
			Help: "What briefs handed over to agents, by kind (resolution, plan.answer, remediation, permission.answer); redelivered=\"true\" when a lease ran out unacknowledged.",
		}, []string{"kind", "redelivered"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "madebook_webhook_deliveries_total",
			Help: "Attempts to deliver a webhook notification, by outcome: delivered (a 2xx), failed (retried later), given_up (a day of failures).",
		}, []string{"outcome"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "madebook_rate_limited_total",
			Help: "Requests a rate limit refused (429), by route.",
		}, []string{"route"}),
	}
	m.reg.MustRegister(m.requests, m.deliveries, m.webhooks, m.rateLimited,
		&attention{counts: counts, desc: prometheus.NewDesc("madebook_attention_items",
			"Items waiting on a person in the Attention view, by kind.", []string{"kind"}, nil)},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, outcome := range []string{"delivered", "failed", "given_up"} {
		m.webhooks.WithLabelValues(outcome)
	}
	return m
}

// Middleware times every request by its route, and counts the ones a
// rate limit refused. Requests no route matched share one label, so a
// scan of random paths cannot grow the metrics. It reads the status sent,
// so it goes outside the middleware that answers errors (the request
// log's HandleError).
func (m *Metrics) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			m.requests.WithLabelValues(route, c.Request().Method).Observe(time.Since(start).Seconds())
			if c.Response().Status == http.StatusTooManyRequests {
				m.rateLimited.WithLabelValues(route).Inc()
			}
			return err
		}
	}
}

// Events counts what committed timeline events say was handed over: a
// kind ending in .delivered or .redelivered.
func (m *Metrics) Events(kinds []string) {
	for _, k := range kinds {
		if what, ok := strings.CutSuffix(k, ".redelivered"); ok {
			m.deliveries.WithLabelValues(what, "true").Inc()
		} else if what, ok := strings.CutSuffix(k, ".delivered"); ok {
			m.deliveries.WithLabelValues(what, "false").Inc()
		}
	}
}

// WebhookOutcome counts how one webhook delivery attempt ended.
func (m *Metrics) WebhookOutcome(outcome string) { m.webhooks.WithLabelValues(outcome).Inc() }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// attention reads the Attention view's counts when scraped, so the gauge
// is never stale and costs nothing between scrapes.
type attention struct {
	counts AttentionCounts
	desc   *prometheus.Desc
}

func (a *attention) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

func (a *attention) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	byKind, err := a.counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(a.desc, err)
		return
	}
	for kind, n := range byKind {
		ch <- prometheus.MustNewConstMetric(a.desc, prometheus.GaugeValue, float64(n), kind)
	}
}
