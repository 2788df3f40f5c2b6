package api

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// StreamEvents streams the outbox as Server-Sent Events (SPEC §8) while the
// key that opened the stream is still a live staff key: revoked, or no
// longer staff, on any instance, and the stream ends (SPEC §3).
func (h *Handler) StreamEvents(c *fiber.Ctx) error {
	plain := strings.Clone(plainKey(c)) // Fiber reuses the header's bytes after the handler
	return h.Events.Serve(c, func(ctx context.Context) error {
		k, err := h.Store.Authenticate(ctx, plain)
		if err != nil {
			return err
		}
		if k.Role != db.RoleStaff {
			return db.Errorf(db.EForbidden, "This operation needs a staff key.")
		}
		return nil
	})
}
