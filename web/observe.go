package web

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Observe logs and measures every request once it is answered: one JSON
// log line with the request id, method, route template, status, duration
// and what the route's middleware added (LogAttrs: the API's key id, never
// the key), at error level for a 5xx (a warning for a Busy refusal), and
// the Prometheus counters. A failed
// request is counted with the status the error handler will give it
// (ProblemFor, as the handler answers it), and its error passed on to be answered.
func Observe(logger *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		elapsed := time.Since(start)
		status := c.Response().StatusCode()
		if err != nil {
			status = ProblemFor(c, err).Status
		}
		route := routeTemplate(c)
		// Fiber's strings point into buffers it reuses: copy what outlives the request.
		method := strings.Clone(c.Method())
		if m != nil {
			m.observe(route, method, status, elapsed.Seconds())
		}
		level := logLevel(status, err)
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
		if extra, ok := c.Locals(logAttrsLocal{}).([]slog.Attr); ok {
			attrs = append(attrs, extra...)
		}
		logger.LogAttrs(c.UserContext(), level, "request", attrs...)
		return err
	}
}

type logAttrsLocal struct{}

// LogAttrs adds attrs to the request's log line (Observe): what a route's
// middleware learnt about the request that the log should name.
func LogAttrs(c *fiber.Ctx, attrs ...slog.Attr) {
	extra, _ := c.Locals(logAttrsLocal{}).([]slog.Attr)
	c.Locals(logAttrsLocal{}, append(extra, attrs...))
}
