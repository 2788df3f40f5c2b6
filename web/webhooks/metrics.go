package webhooks

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"petstore/db"
)

// Metrics are the deliveries' Prometheus collectors (SPEC §15): attempts
// by what they made of their delivery, attempt latency, and the deliveries
// pending, counted in the database when scraped. A nil *Metrics counts
// nothing.
type Metrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
	pending  prometheus.GaugeFunc
}

// NewMetrics makes the collectors; pending reads store.
func NewMetrics(store *db.Store) *Metrics {
	return &Metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt scheduled), failed (no attempt left, or the endpoint answered 410).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "petstore_webhook_attempt_duration_seconds", Help: "Webhook delivery attempt latency, dial to answer read.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		pending: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "petstore_webhook_deliveries_pending", Help: "Webhook deliveries waiting for an attempt (read from the database when scraped; -1 when it does not answer).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := store.CountPendingWebhookDeliveries(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}),
	}
}

// Collectors are what to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.outcomes, m.latency, m.pending}
}

// attempted counts one attempt that left its delivery in status.
func (m *Metrics) attempted(status string, d time.Duration) {
	if m == nil {
		return
	}
	outcome := status
	if status == db.DeliveryPending {
		outcome = "retrying"
	}
	m.outcomes.WithLabelValues(outcome).Inc()
	m.latency.Observe(d.Seconds())
}
