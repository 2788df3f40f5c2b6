package handlers

import "github.com/gofiber/fiber/v2"

// consoleRoutes registers the staff console's routes under /staff.
func (h *Handler) consoleRoutes(app *fiber.App) {
}
