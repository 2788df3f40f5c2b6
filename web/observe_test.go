package web

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// requestLine is what a request's log line says.
type requestLine struct {
	Level  string
	Method string
	Route  string
	Status int
	KeyID  float64 // what the route's middleware added (LogAttrs); 0 when none
}

// TestObserve: every request is logged once, as it was answered, with
// its request id, method, route template (never the path a client sent:
// the labels stay bounded), status, duration and what the route's
// middleware added; a server failure at error level. Its metrics count it
// under the same route and status: a refusal by the route's chain under
// its route, a path no route takes as "unmatched", a failed request with
// the status the error handler gives it.
func TestObserve(t *testing.T) {
	logger, logs := jsonLogger()
	metrics := NewMetrics(nil)
	api := &Surface{Prefix: "/api"}
	// app.Test's peer (0.0.0.0) a trusted proxy: its X-Request-Id is the id.
	app := newTestApp(t, AppOptions{Logger: logger, Metrics: metrics, Proxies: trust(t, "0.0.0.0")}, func(r *Routes) {
		r.Add(route("GET", "/api/pets/:petId", api.Mark, func(c *fiber.Ctx) error {
			LogAttrs(c, slog.Int64("keyId", 9))
			return c.SendString("Rex")
		}))
		r.Add(route("GET", "/api/limited", api.Mark, func(*fiber.Ctx) error { return db.Errorf(db.ERateLimited, "Slow down.") }))
		r.Add(route("GET", "/boom", func(*fiber.Ctx) error { return errors.New("boom") }))
		r.Fallback("/api", []fiber.Handler{api.Mark, r.MethodFallback("No such API route.")})
	})
	for _, path := range []string{"/api/pets/1", "/api/pets/2", "/api/limited", "/api/nope", "/boom", "/nowhere"} {
		get(t, app, path, fiber.HeaderXRequestID, "req-"+strings.ReplaceAll(strings.Trim(path, "/"), "/", "-"))
	}

	var got []requestLine
	for _, r := range logs.records(t) {
		if r["msg"] != "request" {
			continue
		}
		line := requestLine{Level: r["level"].(string), Method: r["method"].(string), Route: r["route"].(string), Status: int(r["status"].(float64))}
		if k, ok := r["keyId"].(float64); ok {
			line.KeyID = k
		}
		if _, ok := r["durationMs"].(float64); !ok {
			t.Errorf("log line without durationMs: %v", r)
		}
		if id, _ := r["requestId"].(string); !strings.HasPrefix(id, "req-") {
			t.Errorf("log line with request id %q, want the request's: %v", id, r)
		}
		got = append(got, line)
	}
	want := []requestLine{
		{"INFO", "GET", "/api/pets/:petId", 200, 9},
		{"INFO", "GET", "/api/pets/:petId", 200, 9},
		{"INFO", "GET", "/api/limited", 429, 0},
		{"INFO", "GET", "unmatched", 404, 0},
		{"ERROR", "GET", "/boom", 500, 0},
		{"INFO", "GET", "unmatched", 404, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request log lines (-want +got):\n%s", diff)
	}

	scraped := scrape(t, metrics)
	for _, line := range []string{
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="200"} 2`,
		`petstore_http_requests_total{method="GET",route="/api/limited",status="429"} 1`,
		`petstore_http_requests_total{method="GET",route="/boom",status="500"} 1`,
		`petstore_http_requests_total{method="GET",route="unmatched",status="404"} 2`,
		`petstore_http_request_duration_seconds_count{method="GET",route="/api/pets/:petId"} 2`,
	} {
		if !strings.Contains(scraped, line+"\n") {
			t.Errorf("metrics lack %s", line)
		}
	}
	if strings.Contains(scraped, "/api/pets/1") || strings.Contains(scraped, "/nowhere") {
		t.Errorf("a path a client sent is a metric label:\n%s", scraped)
	}
}

// scrape reads the metrics as Prometheus would.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.HTTPHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("metrics: %d", rec.Code)
	}
	return rec.Body.String()
}
