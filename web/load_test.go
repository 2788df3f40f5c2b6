package web

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestLoadCountsRequestsNotStreams: a request counts in the Load while it
// is answered and not after; a route that answers with a stream leaves the
// count as soon as it is routed, so an open dashboard is not load.
func TestLoadCountsRequestsNotStreams(t *testing.T) {
	load := &Load{}
	app, routes := NewApp(AppOptions{Logger: slog.New(slog.DiscardHandler), Load: load})
	defer func() { _ = app.Shutdown() }()
	seen := map[string]int64{}
	probe := func(name string) fiber.Handler {
		return func(c *fiber.Ctx) error {
			seen[name] = load.InFlight()
			return c.SendStatus(fiber.StatusNoContent)
		}
	}
	routes.Add(Route{Method: "GET", Path: "/work", Handlers: []fiber.Handler{probe("work")}})
	routes.Add(Route{Method: "GET", Path: "/stream", Streaming: true, Handlers: []fiber.Handler{probe("stream")}})
	for _, path := range []string{"/work", "/stream"} {
		res, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if seen["work"] != 1 || seen["stream"] != 0 {
		t.Errorf("in flight while answering: %v, want work 1, stream 0", seen)
	}
	if n := load.InFlight(); n != 0 {
		t.Errorf("in flight after the answers: %d, want 0", n)
	}
	var none *Load
	if none.InFlight() != 0 {
		t.Error("a nil Load has requests in flight")
	}
}
