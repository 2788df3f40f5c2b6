package web

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Observe logs and measures every request once it is answered: one JSON
// log line with the request id, method, route template, status, duration
// and key id (never the key), and the Prometheus counters. Errors are
// rendered here, by the app's error handler, so both see the final status.
func Observe(logger *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		if err := c.Next(); err != nil {
			if herr := c.App().Config().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		elapsed := time.Since(start)
		status := c.Response().StatusCode()
		route := routeTemplate(c)
		// Fiber's strings point into buffers it reuses: copy what outlives the request.
		method := strings.Clone(c.Method())
		if m != nil {
			m.observe(route, method, status, elapsed.Seconds())
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		if !logger.Enabled(c.UserContext(), level) {
			return nil
		}
		attrs := []slog.Attr{
			slog.String("requestId", RequestID(c)),
			slog.String("method", method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("durationMs", float64(elapsed.Microseconds())/1000),
		}
		if k := CurrentKey(c); k != nil {
			attrs = append(attrs, slog.Int64("keyId", k.ID))
		}
		logger.LogAttrs(c.UserContext(), level, "request", attrs...)
		return nil
	}
}

// routeTemplate is the matched route's pattern ("/api/pets/:petId"), so
// metrics stay bounded whatever paths clients send; requests no route
// took share one label.
func routeTemplate(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || r.Path == "/" && c.Path() != "/" || r.Path == "/api" && c.Path() != "/api" {
		return "unmatched"
	}
	return r.Path
}
