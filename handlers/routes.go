package handlers

import (
	"net/url"
	"regexp"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/handlers/console"
	"petstore/handlers/shop"
	"petstore/web"
	"petstore/web/photo"
)

// Routes registers every route of the product. It is the only route
// table: the API's (handlers/api), the console's (handlers/console) and
// the storefront's (handlers/shop), each group with the renderer of its
// error answers.
func (h *Handler) Routes(app *fiber.App) {
	a, s, con := h.audiences()
	app.Get("/healthz", h.healthz)
	app.Get("/readyz", h.readyz)
	if h.Metrics != nil && !h.Config.MetricsElsewhere {
		app.Get("/metrics", h.Metrics.Handler())
	}

	// Pets' photos (SPEC §14) for anyone, like the static assets: no key,
	// no session, no rate limit. Shops' pages show them to every visitor,
	// whose browser keeps each for a year (immutable) and revalidates
	// with a query of the tag alone; the storefront's own pages, which read
	// the database too, are not limited either. Errors (404) on the plain
	// page, or the Error object for a client asking for JSON.
	media := &web.Surface{Errors: shop.RenderPlainError}
	for _, size := range []string{db.PhotoLarge, db.PhotoMedium, db.PhotoThumb} {
		app.Get("/media/photos/:photoId/"+size+".jpg", media.Mark, h.photoImage(size))
	}

	// The JSON API (SPEC §2-§8) under /api: the Error object for every
	// failure; a key, then the limit counted by key (or IP), no session.
	// The catalog and inventory GETs answer If-None-Match (a.Conditional)
	// after the limit has counted them.
	getPet := &web.Deprecated{
		Method: fiber.MethodGet, Path: regexp.MustCompile(`^/api/pets/([^/]+)/?$`),
		Since: h.Config.Deprecated, Sunset: h.Config.Sunset, Now: h.Now,
		Successor: func(id string) string { return "/api/pets?ids=" + url.QueryEscape(id) },
	}
	api := newGroup(app, "/api", nil, web.APIHeaders, getPet.Mark, web.APIKey(h.Store), a.Limit)
	api.add(fiber.MethodGet, "/openapi.json", web.RejectBadKey, a.OpenAPI)
	api.add(fiber.MethodGet, "/docs", web.RejectBadKey, a.Docs)
	api.add(fiber.MethodGet, "/rate-limit", web.RequireKey, a.RateLimitStatus)

	api.add(fiber.MethodGet, "/pets", web.RequireKey, a.Conditional, a.ListPets)
	api.add(fiber.MethodPost, "/pets", web.RequireStaff, a.Idempotent(), a.CreatePet)
	api.add(fiber.MethodGet, "/pets/:petId", getPet.Gone, web.RequireKey, a.Conditional, a.GetPet)
	api.add(fiber.MethodPut, "/pets/:petId", web.RequireStaff, a.UpdatePet)
	api.add(fiber.MethodDelete, "/pets/:petId", web.RequireStaff, a.DeletePet)
	// The photo upload's body is the image, up to 8 MiB rather than 64 KiB:
	// web.ReadBody reads it once the key, the role and the content type
	// have passed (web.BodyLimits).
	h.bodies.Allow(fiber.MethodPost, "/api/pets/:petId/photos", photo.DefaultLimits().MaxBytes)
	api.add(fiber.MethodPost, "/pets/:petId/photos", web.RequireStaff, a.PhotoType, web.ReadBody, a.Idempotent(), a.AddPhoto)
	api.add(fiber.MethodDelete, "/pets/:petId/photos/:photoId", web.RequireStaff, a.DeletePhoto)

	api.add(fiber.MethodGet, "/categories", web.RequireKey, a.Conditional, a.ListCategories)
	api.add(fiber.MethodPost, "/categories", web.RequireStaff, a.Idempotent(), a.CreateCategory)
	api.add(fiber.MethodGet, "/categories/:categoryId", web.RequireKey, a.Conditional, a.GetCategory)
	api.add(fiber.MethodPut, "/categories/:categoryId", web.RequireStaff, a.UpdateCategory)
	api.add(fiber.MethodDelete, "/categories/:categoryId", web.RequireStaff, a.DeleteCategory)

	api.add(fiber.MethodGet, "/store/orders", web.RequireKey, a.ListOrders)
	api.add(fiber.MethodPost, "/store/orders", web.RequireKey, a.Idempotent(), a.PlaceOrder)
	api.add(fiber.MethodGet, "/store/orders/:orderId", web.RequireKey, a.GetOrder)
	api.add(fiber.MethodPatch, "/store/orders/:orderId", web.RequireStaff, a.UpdateOrder)
	api.add(fiber.MethodDelete, "/store/orders/:orderId", web.RequireKey, a.CancelOrder)

	api.add(fiber.MethodGet, "/store/inventory", web.RequireKey, a.Conditional, a.ListInventory)
	api.add(fiber.MethodGet, "/store/inventory/:petId", web.RequireKey, a.Conditional, a.GetInventory)
	api.add(fiber.MethodPut, "/store/inventory/:petId", web.Stability("beta"), web.RequireStaff, a.SetInventory)

	api.add(fiber.MethodGet, "/keys", web.RequireStaff, a.ListKeys)
	api.add(fiber.MethodPost, "/keys", web.RequireStaff, a.Idempotent(), a.CreateKey)
	api.add(fiber.MethodPatch, "/keys/:keyId", web.RequireStaff, a.UpdateKey)
	api.add(fiber.MethodDelete, "/keys/:keyId", web.RequireStaff, a.RevokeKey)
	api.add(fiber.MethodDelete, "/keys/:keyId/ban", web.RequireStaff, a.LiftBan)
	api.add(fiber.MethodGet, "/keys/:keyId/usage", web.RequireStaff, a.KeyUsage)

	api.add(fiber.MethodGet, "/events", web.Stability("experimental"), web.RequireStaff, a.StreamEvents)
	api.Use(api.methodFallback("No such API route."))

	// The staff console (SPEC §10) under /staff: the console's error
	// page; the security headers, no caching and CSRF on every route, and
	// a signed-in staff user on all but the sign-in page. Sign-in posts
	// count against the per-IP form limit (web.WebLimit) before any
	// database lookup or bcrypt.
	staff := newGroup(app, "/staff", console.RenderError, web.SecurityHeaders, console.NoStore, web.CSRF(h.Sessions, console.SessionName))
	formLimit := web.WebLimit(h.Limiter, h.Proxies, h.Logger)
	staff.add(fiber.MethodGet, "/login", con.RequireDatabase, con.LoginPage)
	staff.add(fiber.MethodPost, "/login", formLimit, con.Login)

	auth := con.RequireStaff
	staff.add(fiber.MethodPost, "/logout", auth, con.Logout)
	staff.add(fiber.MethodGet, "/", auth, con.Dashboard)
	// The event stream of SPEC §8 behind the console's sign-in, for the
	// htmx SSE extension (the API's /api/events wants a staff API key).
	staff.add(fiber.MethodGet, "/events", auth, con.StreamEvents)

	staff.add(fiber.MethodGet, "/inventory", auth, con.Inventory)
	staff.add(fiber.MethodGet, "/inventory/:petId", auth, con.InventoryRow)
	staff.add(fiber.MethodPost, "/inventory/:petId", auth, con.SetInventory)

	staff.add(fiber.MethodGet, "/orders", auth, con.Orders)
	staff.add(fiber.MethodPost, "/orders/:orderId/complete", auth, con.CompleteOrder)
	staff.add(fiber.MethodPost, "/orders/:orderId/cancel", auth, con.CancelOrder)

	staff.add(fiber.MethodGet, "/catalog", auth, con.Catalog)
	staff.add(fiber.MethodGet, "/pets/new", auth, con.NewPet)
	staff.add(fiber.MethodPost, "/pets", auth, con.CreatePet)
	staff.add(fiber.MethodGet, "/pets/:petId/edit", auth, con.EditPet)
	staff.add(fiber.MethodPost, "/pets/:petId", auth, con.UpdatePet)
	staff.add(fiber.MethodPost, "/pets/:petId/delete", auth, con.DeletePet)
	// The photo upload takes several photos in one body, read part by
	// part after the sign-in check (web.UploadParts); CSRF reads a plain
	// form's token from its first part alone (web.CSRF).
	h.bodies.Allow(fiber.MethodPost, "/staff/pets/:petId/photos", con.UploadLimit())
	staff.add(fiber.MethodPost, "/pets/:petId/photos", auth, con.UploadPhotos)
	staff.add(fiber.MethodPost, "/pets/:petId/photos/order", auth, con.ReorderPhotos)
	staff.add(fiber.MethodPost, "/pets/:petId/photos/:photoId/delete", auth, con.DeletePhoto)
	staff.add(fiber.MethodGet, "/categories/new", auth, con.NewCategory)
	staff.add(fiber.MethodPost, "/categories", auth, con.CreateCategory)
	staff.add(fiber.MethodGet, "/categories/:categoryId/edit", auth, con.EditCategory)
	staff.add(fiber.MethodPost, "/categories/:categoryId", auth, con.UpdateCategory)
	staff.add(fiber.MethodPost, "/categories/:categoryId/delete", auth, con.DeleteCategory)

	staff.add(fiber.MethodGet, "/keys", auth, con.Keys)
	staff.add(fiber.MethodPost, "/keys", auth, con.IssueKey)
	staff.add(fiber.MethodGet, "/keys/:keyId", auth, con.EditKey)
	staff.add(fiber.MethodPost, "/keys/:keyId", auth, con.UpdateKey)
	staff.add(fiber.MethodPost, "/keys/:keyId/revoke", auth, con.RevokeKey)
	staff.add(fiber.MethodPost, "/keys/:keyId/lift-ban", auth, con.LiftBan)

	staff.add(fiber.MethodGet, "/usage", auth, con.Usage)

	// The storefront (SPEC §9) under /. Each route gets the shop's chain:
	// its error answers (shop.Handler.RenderError), the security headers
	// (CSP 'self'), CSRF on unsafe methods, the per-IP limit of form posts
	// (every POST, before it reads the database) and the shopper's
	// session. The chain is attached per route, not with app.Use, so it
	// never runs for paths the shop does not own.
	shopSurface := &web.Surface{Errors: s.RenderError}
	chain := func(handler fiber.Handler) []fiber.Handler {
		return []fiber.Handler{shopSurface.Mark, web.SecurityHeaders, web.CSRF(h.Sessions, shop.SessionName), formLimit, s.Session, handler}
	}
	app.Get("/", chain(s.Catalog)...)
	app.Get("/pets/:id", chain(s.Pet)...)
	app.Get("/cart", chain(s.Cart)...)
	app.Post("/cart", chain(s.AddToCart)...)
	app.Post("/cart/lines/:petId", chain(s.UpdateLine)...)
	app.Post("/cart/lines/:petId/remove", chain(s.RemoveLine)...)
	app.Post("/checkout", chain(s.Checkout)...)
	app.Get("/orders", chain(s.Orders)...)
	app.Post("/orders/:id/cancel", chain(s.CancelOrder)...)
	app.Get("/orders/confirmation/:checkoutId", chain(s.Confirmation)...)
	// Find an order by its number and email (SPEC §14): the checkouts a
	// session proved are kept in its cookie, and only those are shown and
	// cancelled through the lookup.
	app.Get("/orders/lookup", chain(s.Lookup)...)
	app.Post("/orders/lookup", chain(s.FindOrder)...)
	app.Get("/orders/lookup/:checkoutId", chain(s.LookupResult)...)
	app.Post("/orders/lookup/:checkoutId/orders/:id/cancel", chain(s.LookupCancel)...)

	// Any other path: 404, on the console's page under /staff, else on
	// the shop's plain one.
	elsewhere := &web.Surface{Errors: shop.RenderPlainError}
	app.Use(elsewhere.Default, func(c *fiber.Ctx) error {
		return db.Errorf(db.ENotFound, "There is no page at this address.")
	})
}
