package email

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"petstore/db"
)

// Metrics are the emails' Prometheus collectors (SPEC §19): emails by
// kind and outcome, send latency, and the emails queued, counted in the
// database when scraped. A nil *Metrics counts nothing.
type Metrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
	queued   prometheus.GaugeFunc
}

// NewMetrics makes the collectors; queued reads store.
func NewMetrics(store *db.Store) *Metrics {
	return &Metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_emails_total",
			Help: "Email attempts by kind and outcome: sent, retrying (a temporary failure, another attempt scheduled), failed (permanent, or no attempt left), kept (no SMTP server: kept in the database).",
		}, []string{"kind", "outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "petstore_email_send_duration_seconds", Help: "Email send latency: dial to the server's answer to the message.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20},
		}),
		queued: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "petstore_emails_queued", Help: "Emails waiting to be sent (read from the database when scraped; -1 when it does not answer).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := store.CountEmails(ctx, db.EmailQueued)
			if err != nil {
				return -1
			}
			return float64(n)
		}),
	}
}

// Collectors are what to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.outcomes, m.latency, m.queued}
}

// attempted counts one attempt that left its email in status.
func (m *Metrics) attempted(kind, status string, d time.Duration) {
	if m == nil {
		return
	}
	outcome := status
	if status == db.EmailQueued {
		outcome = "retrying"
	}
	m.outcomes.WithLabelValues(kind, outcome).Inc()
	m.latency.Observe(d.Seconds())
}

// unrendered counts an email that could not be rendered (failed unsent).
func (m *Metrics) unrendered(kind string) {
	if m != nil {
		m.outcomes.WithLabelValues(kind, db.EmailFailed).Inc()
	}
}

// kept counts an email kept in the database.
func (m *Metrics) kept(kind string) {
	if m != nil {
		m.outcomes.WithLabelValues(kind, db.EmailKept).Inc()
	}
}
