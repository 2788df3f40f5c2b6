package handlers

import "github.com/gofiber/fiber/v2"

// shopRoutes registers the storefront's routes under /.
func (h *Handler) shopRoutes(app *fiber.App) {
}
