package handlers

import (
	"github.com/gofiber/fiber/v2"

	"petstore/web"
)

// shopRoutes registers the storefront's routes under / (SPEC §9). Each
// route gets the shop's chain: its error pages, the security headers
// (CSP 'self'), CSRF on unsafe methods, the per-IP limit of form posts
// (every POST, this one and any later, before it reads the database) and
// the shopper's session. The chain is attached per route, not with
// app.Use, so it never runs for paths the shop does not own.
func (h *Handler) shopRoutes(app *fiber.App) {
	limit := web.WebLimit(h.Limiter, h.Proxies, h.Logger)
	chain := func(handler fiber.Handler) []fiber.Handler {
		return []fiber.Handler{h.shopErrors, web.SecurityHeaders, web.CSRF(h.Sessions, shopSessionName), limit, h.shopSession, handler}
	}
	app.Get("/", chain(h.shopCatalog)...)
	app.Get("/pets/:id", chain(h.shopPet)...)
	app.Get("/cart", chain(h.shopCart)...)
	app.Post("/cart", chain(h.shopAddToCart)...)
	app.Post("/cart/lines/:petId", chain(h.shopUpdateLine)...)
	app.Post("/cart/lines/:petId/remove", chain(h.shopRemoveLine)...)
	app.Post("/checkout", chain(h.shopCheckout)...)
	app.Get("/orders", chain(h.shopOrders)...)
	app.Post("/orders/:id/cancel", chain(h.shopCancelOrder)...)
}
