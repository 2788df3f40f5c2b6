package web

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// TestBusyIsAWarning: a refusal of work the server sheds while busy (a
// full line of uploads) is the 503 any other is, with Retry-After and its
// own message, but both its log lines are warnings; a 503 of a failure
// stays an error.
func TestBusyIsAWarning(t *testing.T) {
	logger, logs := jsonLogger()
	app := newTestApp(t, AppOptions{Logger: logger}, func(r *Routes) {
		r.Add(route("GET", "/busy", func(*fiber.Ctx) error { return Busy("Too many photos are waiting; try again shortly.") }))
		r.Add(route("GET", "/down", func(*fiber.Ctx) error { return db.Errorf(db.EUnavailable, "Down.") }))
	})
	for path, want := range map[string]string{"/busy": "WARN", "/down": "ERROR"} {
		a := get(t, app, path)
		p := a.problem(t)
		if a.Status != http.StatusServiceUnavailable || p.Code != db.EUnavailable || a.Header.Get(fiber.HeaderRetryAfter) == "" {
			t.Errorf("%s: %d %+v (Retry-After %q), want 503 unavailable with Retry-After", path, a.Status, p, a.Header.Get(fiber.HeaderRetryAfter))
		}
		if path == "/busy" && p.Message != "Too many photos are waiting; try again shortly." {
			t.Errorf("%s: message %q, want Busy's", path, p.Message)
		}
		n := 0
		for _, r := range logs.records(t) {
			if r["requestId"] != p.RequestID {
				continue
			}
			n++
			if r["level"] != want {
				t.Errorf("%s: logged %q at %v, want %s", path, r["msg"], r["level"], want)
			}
		}
		if n != 2 {
			t.Errorf("%s: %d log lines, want 2 (the failure and the request)", path, n)
		}
	}
}
