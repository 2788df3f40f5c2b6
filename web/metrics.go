package web

import (
	"database/sql"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the Prometheus instrumentation of one instance, on its own
// registry so that several instances in one test process do not collide.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	rateLimit *prometheus.CounterVec
	bans      prometheus.Counter
	orders    prometheus.Counter
	fallbacks prometheus.Counter
}

// NewMetrics registers the collectors: requests by route template and
// status, latency, rate-limit decisions, bans, orders, Redis fail-open,
// the database pool and the Go runtime.
func NewMetrics(db *sql.DB) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_http_requests_total", Help: "HTTP requests by route template, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "petstore_http_request_duration_seconds", Help: "HTTP request latency by route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		rateLimit: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_ratelimit_decisions_total", Help: "Rate-limit decisions: allowed, limited, banned, error.",
		}, []string{"outcome"}),
		bans: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_bans_started_total", Help: "Bans started by this instance.",
		}),
		orders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_orders_placed_total", Help: "Orders placed (API and storefront).",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_ratelimit_redis_fallbacks_total", Help: "Decisions counted in process because Redis (REDIS_URL) failed.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.rateLimit, m.bans, m.orders, m.fallbacks,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if db != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(db, "petstore"))
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() fiber.Handler {
	return adaptor.HTTPHandler(m.HTTPHandler())
}

// HTTPHandler is Handler for a net/http listener (PETSTORE_METRICS_ADDR).
func (m *Metrics) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Register adds collectors of another part (the webhook deliveries') to
// this instance's registry.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// RateLimit counts one limiter outcome.
func (m *Metrics) RateLimit(outcome string) { m.rateLimit.WithLabelValues(outcome).Inc() }

// BanStarted counts a ban this instance started.
func (m *Metrics) BanStarted() { m.bans.Inc() }

// OrdersPlaced counts placed orders.
func (m *Metrics) OrdersPlaced(n int) { m.orders.Add(float64(n)) }

// RedisFallback counts a decision made in process because Redis failed.
func (m *Metrics) RedisFallback() { m.fallbacks.Inc() }

// WatchRedis exports whether the shared counters answer, read at scrape time.
func (m *Metrics) WatchRedis(healthy func() bool) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "petstore_ratelimit_redis_up", Help: "1 while the shared Redis counters answer, 0 while counting in process.",
	}, func() float64 {
		if healthy() {
			return 1
		}
		return 0
	}))
}

// WatchOrderBatches exports the group commit of orders, read at scrape
// time from stats: the batches placed and the orders they held (their
// ratio is the mean batch).
func (m *Metrics) WatchOrderBatches(stats func() (batches, orders int64)) {
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "petstore_order_batches_total", Help: "Transactions that placed a batch of API orders (group commit).",
		}, func() float64 { b, _ := stats(); return float64(b) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "petstore_order_batched_total", Help: "API orders submitted to those batches, placed or refused.",
		}, func() float64 { _, o := stats(); return float64(o) }),
	)
}

// WatchTxRetries exports the store's retries of transactions after a
// transient conflict, by code (db.Store.TxRetries): "40001", "40P01",
// "sqlite_busy", "sqlite_locked".
func (m *Metrics) WatchTxRetries(codes []string, retries func() map[string]int64) {
	for _, code := range codes {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "petstore_db_tx_retries_total",
			Help:        "Store transactions run again after a transient conflict (serialization failure, deadlock, SQLite busy), by code.",
			ConstLabels: prometheus.Labels{"code": code},
		}, func() float64 { return float64(retries()[code]) }))
	}
}

// observe records one finished request.
func (m *Metrics) observe(route, method string, status int, seconds float64) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(seconds)
}
