package queue

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metricsTimeout bounds the read a scrape makes.
const metricsTimeout = 2 * time.Second

var (
	jobsDesc = prometheus.NewDesc("petstore_jobs",
		"Background jobs (River) by queue and state, read from the database when scraped.", []string{"queue", "state"}, nil)
	lagDesc = prometheus.NewDesc("petstore_queue_lag_seconds",
		"How long each queue's oldest waiting (available) job has been due, 0 when none waits; read when scraped.", []string{"queue"}, nil)
	upDesc = prometheus.NewDesc("petstore_jobs_read_ok",
		"1 when the scrape read the jobs, 0 when the database did not answer (the jobs' series are then absent).", nil, nil)
)

// Collector exports the jobs of every queue by state (petstore_jobs, each
// of States, 0 included, for the registered queues) and each queue's lag,
// counted with one grouped read when scraped (Jobs).
func (q *Queue) Collector() prometheus.Collector { return collector{q} }

type collector struct{ q *Queue }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- lagDesc
	ch <- upDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsTimeout)
	defer cancel()
	qs, err := c.q.Jobs(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
	for _, qj := range qs {
		for _, s := range States {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(qj.Counts[s]), qj.Queue, s)
		}
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, qj.Lag.Seconds(), qj.Queue)
	}
}
