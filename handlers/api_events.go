package handlers

import "github.com/gofiber/fiber/v2"

// apiEvents streams the outbox as Server-Sent Events (SPEC §8).
func (h *Handler) apiEvents(c *fiber.Ctx) error {
	return h.Events.Serve(c)
}
