package handlers

import (
	"github.com/gofiber/fiber/v2"
)

// healthz answers while the process is alive.
func (h *Handler) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 when the database is reachable, else 503. The rate
// limiter's shared store is reported but never fails it: without Redis the
// limiter counts in process.
func (h *Handler) readyz(c *fiber.Ctx) error {
	body := fiber.Map{"status": "ok", "database": "up"}
	switch {
	case h.Shared == nil:
		body["redis"] = "not configured"
	case h.Shared.Healthy():
		body["redis"] = "up"
	default:
		body["redis"] = "down: counting in process"
	}
	if err := h.Store.Ping(c.UserContext()); err != nil {
		h.Logger.Warn("readiness: database unreachable", "err", err)
		body["status"], body["database"] = "unavailable", "down"
		c.Set(fiber.HeaderRetryAfter, "5")
		return c.Status(fiber.StatusServiceUnavailable).JSON(body)
	}
	return c.JSON(body)
}
