package web

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Observe logs and measures every request once it is answered: one JSON
// log line with the request id, method, route template, status, duration
// and key id (never the key), and the Prometheus counters. A failed
// request is counted with the status the error handler will give it
// (ProblemOf, as the handler uses), and its error passed on to be answered.
func Observe(logger *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		elapsed := time.Since(start)
		status := c.Response().StatusCode()
		if err != nil {
			status = ProblemOf(answerOf(c, err)).Status
		}
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
			return err
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
		return err
	}
}
