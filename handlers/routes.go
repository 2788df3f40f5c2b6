package handlers

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/handlers/api"
	"petstore/handlers/console"
	"petstore/handlers/shop"
	"petstore/web"
	"petstore/web/imports"
	"petstore/web/photo"
)

// HTTP methods, short, so each route fits one line.
const (
	get  = fiber.MethodGet
	post = fiber.MethodPost
	put  = fiber.MethodPut
	pat  = fiber.MethodPatch
	del  = fiber.MethodDelete
)

// routes registers every route of the product. It is the only route
// table, and each line is the whole description of its route: method,
// path, handler and options (who may call it, its body limit,
// deprecation, stability, rate-limit exemption, streaming). Each audience
// makes the route's chain from its line (api.Handler.Route,
// console.Handler.Route, shop.Handler.Route); the app core reads body
// limits and 405s from the same lines (web.Routes).
func (h *Handler) routes(app *fiber.App, r *web.Routes, a *api.Handler, s *shop.Handler, con *console.Handler) {
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
		r.Add(web.Route{Method: get, Path: "/media/photos/:photoId/" + size + ".jpg", Handlers: []fiber.Handler{media.Mark, h.photoImage(size)}})
	}

	// The JSON API (SPEC §2-§8) under /api: the Error object for every
	// failure; the key, then the limit counted by key (or IP), no session.
	var (
		anyone, customer, staff = api.For(api.Anyone), api.For(api.Customer), api.For(api.Staff)
		conditional, idempotent = api.Conditional(), api.Idempotent()
		// The photo upload's body is the image, up to 8 MiB rather than
		// 64 KiB, read once the key, the role and the content type passed.
		photoBody = api.Body(web.Body{Max: photo.DefaultLimits().MaxBytes})
		successor = api.Deprecated(func(c *fiber.Ctx) string { return "/api/pets?ids=" + url.QueryEscape(c.Params("petId")) })
	)
	for _, rt := range []web.Route{
		a.Route(get, "/openapi.json", a.OpenAPI, anyone),
		a.Route(get, "/docs", a.Docs, anyone),
		a.Route(get, "/rate-limit", a.RateLimitStatus, customer, api.NotCounted()),

		a.Route(get, "/pets", a.ListPets, customer, conditional),
		a.Route(post, "/pets", a.CreatePet, staff, idempotent),
		a.Route(get, "/pets/:petId", a.GetPet, customer, successor, conditional),
		a.Route(put, "/pets/:petId", a.UpdatePet, staff),
		a.Route(del, "/pets/:petId", a.DeletePet, staff),
		a.Route(post, "/pets/:petId/photos", a.AddPhoto, staff, api.Check(a.PhotoType), photoBody, idempotent),
		a.Route(del, "/pets/:petId/photos/:photoId", a.DeletePhoto, staff),
		// A catalog import (SPEC §18): the CSV body, up to 50 MiB, is read
		// as a stream by the handler once the key, the role and the content
		// type passed; a job writes it.
		a.Route(post, "/pets/import", a.ImportPets, staff, api.Check(a.ImportType), api.Body(web.Body{Max: imports.MaxBytes, Stream: true})),
		a.Route(get, "/imports/:importId", a.GetImport, staff),

		a.Route(get, "/categories", a.ListCategories, customer, conditional),
		a.Route(post, "/categories", a.CreateCategory, staff, idempotent),
		a.Route(get, "/categories/:categoryId", a.GetCategory, customer, conditional),
		a.Route(put, "/categories/:categoryId", a.UpdateCategory, staff),
		a.Route(del, "/categories/:categoryId", a.DeleteCategory, staff),

		a.Route(get, "/store/orders", a.ListOrders, customer),
		// Before /store/orders/:orderId, which would take "export" for an id.
		a.Route(get, "/store/orders/export", a.ExportOrders, staff, api.Streaming()),
		a.Route(post, "/store/orders", a.PlaceOrder, customer, idempotent),
		a.Route(get, "/store/orders/:orderId", a.GetOrder, customer),
		a.Route(pat, "/store/orders/:orderId", a.UpdateOrder, staff),
		a.Route(del, "/store/orders/:orderId", a.CancelOrder, customer),

		a.Route(get, "/store/inventory", a.ListInventory, customer, conditional),
		a.Route(get, "/store/inventory/:petId", a.GetInventory, customer, conditional),
		a.Route(put, "/store/inventory/:petId", a.SetInventory, staff, api.Stability("beta")),

		a.Route(get, "/keys", a.ListKeys, staff),
		a.Route(post, "/keys", a.CreateKey, staff, idempotent),
		a.Route(get, "/keys/:keyId", a.GetKey, staff),
		a.Route(pat, "/keys/:keyId", a.UpdateKey, staff),
		a.Route(del, "/keys/:keyId", a.RevokeKey, staff),
		a.Route(del, "/keys/:keyId/ban", a.LiftBan, staff),
		a.Route(get, "/keys/:keyId/usage", a.KeyUsage, staff),

		// The audit log (SPEC §16), newest first.
		a.Route(get, "/audit", a.ListAudit, staff),

		a.Route(get, "/events", a.StreamEvents, staff, api.Stability("experimental"), api.Streaming()),

		// Webhooks (SPEC §15): the secret is in the answers of create and
		// rotate only, which are never stored for an Idempotency-Key.
		a.Route(get, "/webhooks", a.ListWebhooks, staff),
		a.Route(post, "/webhooks", a.CreateWebhook, staff, idempotent),
		a.Route(get, "/webhooks/:webhookId", a.GetWebhook, staff),
		a.Route(pat, "/webhooks/:webhookId", a.UpdateWebhook, staff),
		a.Route(del, "/webhooks/:webhookId", a.DeleteWebhook, staff),
		a.Route(post, "/webhooks/:webhookId/rotate-secret", a.RotateWebhookSecret, staff, idempotent),
		a.Route(post, "/webhooks/:webhookId/test", a.TestWebhook, staff, idempotent),
		a.Route(get, "/webhooks/:webhookId/deliveries", a.ListWebhookDeliveries, staff),
		a.Route(post, "/webhooks/:webhookId/deliveries/:deliveryId/retry", a.RetryWebhookDelivery, staff, idempotent),
	} {
		r.Add(rt)
	}
	r.Fallback(api.Prefix, a.Fallback(r))

	// The staff console (SPEC §10) under /staff: the console's error page,
	// the security headers, no caching and CSRF on every route, and a
	// signed-in staff user on all but the sign-in page. Sign-in posts
	// count against the per-IP form limit before any database lookup or
	// bcrypt.
	//
	// Roles (SPEC §16): the admin option keeps a route to admins; a clerk
	// gets the console's 403 page. API keys, bans, webhooks, the team,
	// the audit log and the jobs are the admins'.
	//
	// A user with a one-time password, or without 2FA where the store
	// requires it (PETSTORE_STAFF_2FA), is sent to that step's page by
	// every route but the ones marked with the step.
	public, admin := console.Public(), console.Admin()
	passwordStep, twoFactorStep := console.Setup(console.StepPassword), console.Setup(console.StepTwoFactor)
	for _, rt := range []web.Route{
		con.Route(get, "/login", con.LoginPage, public, console.Check(con.RequireDatabase)),
		con.Route(post, "/login", con.Login, public, console.FormLimited()),
		// The second step of a two-factor sign-in: its guesses count like passwords.
		con.Route(get, "/login/code", con.CodePage, public),
		con.Route(post, "/login/code", con.CheckCode, public, console.FormLimited()),
		con.Route(post, "/logout", con.Logout, passwordStep, twoFactorStep),
		con.Route(get, "/", con.Dashboard),
		// The event stream of SPEC §8 behind the console's sign-in, for the
		// htmx SSE extension (the API's /api/events wants a staff API key).
		con.Route(get, "/events", con.StreamEvents, console.Streaming()),

		con.Route(get, "/inventory", con.Inventory),
		con.Route(get, "/inventory/:petId", con.InventoryRow),
		con.Route(post, "/inventory/:petId", con.SetInventory),

		con.Route(get, "/orders", con.Orders),
		// The orders export (SPEC §16): a CSV download, streamed.
		con.Route(get, "/orders/export", con.ExportOrders, console.Streaming()),
		con.Route(post, "/orders/:orderId/complete", con.CompleteOrder),
		con.Route(post, "/orders/:orderId/cancel", con.CancelOrder),

		con.Route(get, "/catalog", con.Catalog),
		con.Route(get, "/pets/new", con.NewPet),
		con.Route(post, "/pets", con.CreatePet),
		con.Route(get, "/pets/:petId/edit", con.EditPet),
		con.Route(post, "/pets/:petId", con.UpdatePet),
		con.Route(post, "/pets/:petId/delete", con.DeletePet),
		// The photo upload takes several photos in one body, read part by
		// part after the sign-in check (browser.UploadParts); CSRF reads a plain
		// form's token from its first part alone (browser.CSRF).
		con.Route(post, "/pets/:petId/photos", con.UploadPhotos, console.Body(web.Body{Max: con.UploadLimit(), Stream: true})),
		con.Route(post, "/pets/:petId/photos/order", con.ReorderPhotos),
		con.Route(post, "/pets/:petId/photos/:photoId/delete", con.DeletePhoto),
		con.Route(get, "/categories/new", con.NewCategory),
		con.Route(post, "/categories", con.CreateCategory),
		con.Route(get, "/categories/:categoryId/edit", con.EditCategory),
		con.Route(post, "/categories/:categoryId", con.UpdateCategory),
		con.Route(post, "/categories/:categoryId/delete", con.DeleteCategory),

		// A catalog import (SPEC §18): the file is read part by part after
		// the CSRF token, as photos are, and streamed into the import.
		con.Route(get, "/import", con.ImportForm),
		con.Route(post, "/import", con.StartImport, console.Body(web.Body{Max: con.ImportLimit(), Stream: true})),
		con.Route(get, "/imports/:importId", con.ImportStatus),

		con.Route(get, "/keys", con.Keys, admin),
		con.Route(post, "/keys", con.IssueKey, admin),
		con.Route(get, "/keys/:keyId", con.EditKey, admin),
		con.Route(post, "/keys/:keyId", con.UpdateKey, admin),
		con.Route(post, "/keys/:keyId/revoke", con.RevokeKey, admin),
		con.Route(post, "/keys/:keyId/lift-ban", con.LiftBan, admin),

		con.Route(get, "/usage", con.Usage),
		con.Route(get, "/audit", con.Audit, admin),

		// Email (SPEC §19): what the shop sent, or keeps without SMTP, and
		// the settings every email carries.
		con.Route(get, "/emails", con.EmailList, admin),
		con.Route(get, "/emails/:emailId", con.Email, admin),
		con.Route(get, "/emails/:emailId/html", con.EmailHTML, admin),
		con.Route(post, "/emails/:emailId/resend", con.ResendEmail, admin),
		con.Route(get, "/settings", con.Settings, admin),
		con.Route(post, "/settings", con.UpdateSettings, admin),

		// Jobs (SPEC §21): the queue's jobs by queue and state, the failed ones.
		con.Route(get, "/jobs", con.Jobs, admin),
		con.Route(post, "/jobs/:jobId/retry", con.RetryJob, admin),
		con.Route(post, "/jobs/:jobId/cancel", con.CancelJob, admin),

		// Webhooks (SPEC §15): a secret is shown in the answer that made it.
		con.Route(get, "/webhooks", con.Webhooks, admin),
		con.Route(post, "/webhooks", con.CreateWebhook, admin),
		con.Route(get, "/webhooks/:webhookId", con.Webhook, admin),
		con.Route(post, "/webhooks/:webhookId", con.UpdateWebhook, admin),
		con.Route(post, "/webhooks/:webhookId/toggle", con.ToggleWebhook, admin),
		con.Route(post, "/webhooks/:webhookId/rotate", con.RotateWebhookSecret, admin),
		con.Route(post, "/webhooks/:webhookId/test", con.TestWebhook, admin),
		con.Route(post, "/webhooks/:webhookId/delete", con.DeleteWebhook, admin),
		con.Route(post, "/webhooks/:webhookId/deliveries/:deliveryId/retry", con.RetryDelivery, admin),

		// The team (SPEC §16): one-time passwords are shown in the answer
		// that made them.
		con.Route(get, "/team", con.Team, admin),
		con.Route(post, "/team", con.AddStaff, admin),
		con.Route(post, "/team/:staffId/role", con.SetStaffRole, admin),
		con.Route(post, "/team/:staffId/password", con.ResetStaffPassword, admin),
		con.Route(post, "/team/:staffId/disable", con.DisableStaff, admin),
		con.Route(post, "/team/:staffId/enable", con.EnableStaff, admin),
		con.Route(post, "/team/:staffId/2fa-off", con.TurnOffStaffTwoFactor, admin),

		// Everyone's own account: the password (the forced change too) and 2FA.
		con.Route(get, "/account", con.Account, passwordStep),
		con.Route(post, "/account/password", con.ChangePassword, passwordStep),
		con.Route(post, "/account/email", con.SetEmailPrefs),
		con.Route(get, "/account/2fa", con.TwoFactorSetup, twoFactorStep),
		con.Route(post, "/account/2fa", con.TurnOnTwoFactor, twoFactorStep),
		con.Route(post, "/account/2fa/off", con.TurnOffTwoFactor),
	} {
		r.Add(rt)
	}
	r.Fallback(console.Prefix, con.Fallback())

	// The storefront (SPEC §9, §14) under /.
	for _, rt := range []web.Route{
		s.Route(get, "/", s.Catalog),
		s.Route(get, "/pets/:id", s.Pet),
		s.Route(get, "/cart", s.Cart),
		s.Route(post, "/cart", s.AddToCart),
		s.Route(post, "/cart/lines/:petId", s.UpdateLine),
		s.Route(post, "/cart/lines/:petId/remove", s.RemoveLine),
		s.Route(post, "/checkout", s.Checkout),
		s.Route(get, "/orders", s.Orders),
		s.Route(post, "/orders/:id/cancel", s.CancelOrder),
		s.Route(get, "/orders/confirmation/:checkoutId", s.Confirmation),
		// Find an order by its number and email (SPEC §14): the checkouts a
		// session proved are kept in its cookie, and only those are shown
		// and cancelled through the lookup.
		s.Route(get, "/orders/lookup", s.Lookup),
		s.Route(post, "/orders/lookup", s.FindOrder),
		s.Route(get, "/orders/lookup/:checkoutId", s.LookupResult),
		s.Route(post, "/orders/lookup/:checkoutId/orders/:id/cancel", s.LookupCancel),
	} {
		r.Add(rt)
	}

	// Any other path: 404 on the shop's plain page.
	elsewhere := &web.Surface{Errors: shop.RenderPlainError}
	app.Use(elsewhere.Default, func(c *fiber.Ctx) error {
		return db.Errorf(db.ENotFound, "There is no page at this address.")
	})
}
