package handlers

import (
	"github.com/gofiber/fiber/v2"

	"petstore/web"
)

// consoleRoutes registers the staff console's routes under /staff (SPEC
// §10). Every route has the security headers, no caching and CSRF
// protection; all but the sign-in page need a signed-in staff user.
func (h *Handler) consoleRoutes(app *fiber.App) {
	con := app.Group("/staff", web.SecurityHeaders, consoleNoStore, web.CSRF(h.Sessions, consoleSessionName))
	con.Get("/login", h.requireDatabase, h.consoleLoginPage)
	// Sign-in posts count against the per-IP form limit (web.WebLimit)
	// before any database lookup or bcrypt.
	con.Post("/login", web.WebLimit(h.Limiter, h.Proxies, h.Logger), h.consoleLogin)

	auth := h.requireStaff
	con.Post("/logout", auth, h.consoleLogout)
	con.Get("/", auth, h.consoleDashboard)
	// The event stream of SPEC §8 behind the console's sign-in, for the
	// htmx SSE extension (the API's /api/events wants a staff API key).
	con.Get("/events", auth, h.consoleEvents)

	con.Get("/inventory", auth, h.consoleInventory)
	con.Get("/inventory/:petId", auth, h.consoleInventoryRow)
	con.Post("/inventory/:petId", auth, h.consoleSetInventory)

	con.Get("/orders", auth, h.consoleOrders)
	con.Post("/orders/:orderId/complete", auth, h.consoleCompleteOrder)
	con.Post("/orders/:orderId/cancel", auth, h.consoleCancelOrder)

	con.Get("/catalog", auth, h.consoleCatalog)
	con.Get("/pets/new", auth, h.consoleNewPet)
	con.Post("/pets", auth, h.consoleCreatePet)
	con.Get("/pets/:petId/edit", auth, h.consoleEditPet)
	con.Post("/pets/:petId", auth, h.consoleUpdatePet)
	con.Post("/pets/:petId/delete", auth, h.consoleDeletePet)
	con.Get("/categories/new", auth, h.consoleNewCategory)
	con.Post("/categories", auth, h.consoleCreateCategory)
	con.Get("/categories/:categoryId/edit", auth, h.consoleEditCategory)
	con.Post("/categories/:categoryId", auth, h.consoleUpdateCategory)
	con.Post("/categories/:categoryId/delete", auth, h.consoleDeleteCategory)

	con.Get("/keys", auth, h.consoleKeys)
	con.Post("/keys", auth, h.consoleIssueKey)
	con.Get("/keys/:keyId", auth, h.consoleEditKey)
	con.Post("/keys/:keyId", auth, h.consoleUpdateKey)
	con.Post("/keys/:keyId/revoke", auth, h.consoleRevokeKey)
	con.Post("/keys/:keyId/lift-ban", auth, h.consoleLiftBan)

	con.Get("/usage", auth, h.consoleUsage)
}
