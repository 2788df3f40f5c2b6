package web

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestMetrics: what the parts of the app count reaches the scrape, on
// the instance's own registry (two instances in one process do not
// collide), in the Prometheus text format, also through the app
// (Metrics.Handler).
func TestMetrics(t *testing.T) {
	m, other := NewMetrics(nil), NewMetrics(nil)
	m.RateLimit("allowed")
	m.RateLimit("allowed")
	m.RateLimit("limited")
	m.BanStarted()
	m.OrdersPlaced(3)
	m.RedisFallback()
	up := true
	m.WatchRedis(func() bool { return up })
	m.WatchOrderBatches(func() (int64, int64) { return 2, 5 })
	m.WatchTxRetries([]string{"40P01", "sqlite_busy"}, func() map[string]int64 { return map[string]int64{"40P01": 4} })
	other.OrdersPlaced(100)

	scraped := scrape(t, m)
	for _, line := range []string{
		`petstore_ratelimit_decisions_total{outcome="allowed"} 2`,
		`petstore_ratelimit_decisions_total{outcome="limited"} 1`,
		`petstore_bans_started_total 1`,
		`petstore_orders_placed_total 3`,
		`petstore_ratelimit_redis_fallbacks_total 1`,
		`petstore_ratelimit_redis_up 1`,
		`petstore_order_batches_total 2`,
		`petstore_order_batched_total 5`,
		`petstore_db_tx_retries_total{code="40P01"} 4`,
		`petstore_db_tx_retries_total{code="sqlite_busy"} 0`,
	} {
		t.Run(line, func(t *testing.T) {
			if !strings.Contains(scraped, line+"\n") {
				t.Errorf("metrics lack %q", line)
			}
		})
	}
	if !strings.Contains(scraped, "\ngo_goroutines ") {
		t.Error("metrics lack the Go runtime's")
	}
	if got := scrape(t, other); !strings.Contains(got, "petstore_orders_placed_total 100\n") {
		t.Errorf("another instance's orders are not its own")
	}
	t.Run("read at scrape time", func(t *testing.T) {
		up = false
		if scraped := scrape(t, m); !strings.Contains(scraped, "petstore_ratelimit_redis_up 0\n") {
			t.Errorf("with Redis down the gauge is not 0")
		}
	})
	t.Run("served by the app", func(t *testing.T) {
		app := newTestApp(t, AppOptions{}, func(r *Routes) { r.Add(route("GET", "/metrics", m.Handler())) })
		a := get(t, app, "/metrics")
		if a.Status != 200 || !strings.Contains(string(a.Body), "petstore_orders_placed_total 3\n") ||
			!strings.HasPrefix(a.Header.Get(fiber.HeaderContentType), "text/plain") {
			t.Errorf("GET /metrics: %d %s, %d bytes", a.Status, a.Header.Get(fiber.HeaderContentType), len(a.Body))
		}
	})
}
