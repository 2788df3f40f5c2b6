package handlers

import (
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// Routes registers every route of the product. It is the only route table.
func (h *Handler) Routes(app *fiber.App) {
	app.Get("/healthz", h.healthz)
	app.Get("/readyz", h.readyz)
	if h.Metrics != nil {
		app.Get("/metrics", h.Metrics.Handler())
	}

	getPet := &web.Deprecated{
		Method: fiber.MethodGet, Path: regexp.MustCompile(`^/api/pets/([^/]+)/?$`),
		Since: h.Config.Deprecated, Sunset: h.Config.Sunset, Now: h.Now,
		Successor: func(id string) string { return "/api/pets?ids=" + url.QueryEscape(id) },
	}
	api := &apiRouter{Router: app.Group("/api", web.APIHeaders, getPet.Mark, web.APIKey(h.Store), h.rateLimiter().Handler)}
	api.add(fiber.MethodGet, "/openapi.json", web.RejectBadKey, h.apiOpenAPI)
	api.add(fiber.MethodGet, "/docs", web.RejectBadKey, h.apiDocs)
	api.add(fiber.MethodGet, "/rate-limit", web.RequireKey, h.apiRateLimit)

	api.add(fiber.MethodGet, "/pets", web.RequireKey, h.apiListPets)
	api.add(fiber.MethodPost, "/pets", web.RequireStaff, h.idempotent(), h.apiCreatePet)
	api.add(fiber.MethodGet, "/pets/:petId", getPet.Gone, web.RequireKey, h.apiGetPet)
	api.add(fiber.MethodPut, "/pets/:petId", web.RequireStaff, h.apiUpdatePet)
	api.add(fiber.MethodDelete, "/pets/:petId", web.RequireStaff, h.apiDeletePet)

	api.add(fiber.MethodGet, "/categories", web.RequireKey, h.apiListCategories)
	api.add(fiber.MethodPost, "/categories", web.RequireStaff, h.idempotent(), h.apiCreateCategory)
	api.add(fiber.MethodGet, "/categories/:categoryId", web.RequireKey, h.apiGetCategory)
	api.add(fiber.MethodPut, "/categories/:categoryId", web.RequireStaff, h.apiUpdateCategory)
	api.add(fiber.MethodDelete, "/categories/:categoryId", web.RequireStaff, h.apiDeleteCategory)

	api.add(fiber.MethodGet, "/store/orders", web.RequireKey, h.apiListOrders)
	api.add(fiber.MethodPost, "/store/orders", web.RequireKey, h.idempotent(), h.apiPlaceOrder)
	api.add(fiber.MethodGet, "/store/orders/:orderId", web.RequireKey, h.apiGetOrder)
	api.add(fiber.MethodPatch, "/store/orders/:orderId", web.RequireStaff, h.apiUpdateOrder)
	api.add(fiber.MethodDelete, "/store/orders/:orderId", web.RequireKey, h.apiCancelOrder)

	api.add(fiber.MethodGet, "/store/inventory", web.RequireKey, h.apiListInventory)
	api.add(fiber.MethodGet, "/store/inventory/:petId", web.RequireKey, h.apiGetInventory)
	api.add(fiber.MethodPut, "/store/inventory/:petId", web.Stability("beta"), web.RequireStaff, h.apiSetInventory)

	api.add(fiber.MethodGet, "/keys", web.RequireStaff, h.apiListKeys)
	api.add(fiber.MethodPost, "/keys", web.RequireStaff, h.idempotent(), h.apiCreateKey)
	api.add(fiber.MethodPatch, "/keys/:keyId", web.RequireStaff, h.apiUpdateKey)
	api.add(fiber.MethodDelete, "/keys/:keyId", web.RequireStaff, h.apiRevokeKey)
	api.add(fiber.MethodDelete, "/keys/:keyId/ban", web.RequireStaff, h.apiLiftBan)
	api.add(fiber.MethodGet, "/keys/:keyId/usage", web.RequireStaff, h.apiKeyUsage)

	api.add(fiber.MethodGet, "/events", web.Stability("experimental"), web.RequireStaff, h.apiEvents)
	api.Use(api.fallback)

	h.consoleRoutes(app) // routes_console.go: /staff
	h.shopRoutes(app)    // routes_shop.go: /
	app.Use(func(c *fiber.Ctx) error {
		return db.Errorf(db.ENotFound, "There is no page at this address.")
	})
}

func (h *Handler) idempotent() fiber.Handler { return web.Idempotency(h.Store, h.Logger) }

// apiRouter remembers the API's paths and methods, so an unmatched request
// can tell 405 (with Allow) from 404: Fiber v2 does not.
type apiRouter struct {
	fiber.Router
	routes []apiRoute
}

type apiRoute struct {
	method string
	re     *regexp.Regexp
}

var paramSegment = regexp.MustCompile(`:[A-Za-z]+`)

func (r *apiRouter) add(method, path string, hs ...fiber.Handler) {
	r.Add(method, path, hs...)
	if method == fiber.MethodGet {
		r.Add(fiber.MethodHead, path, hs...) // as fiber.Router.Get does
	}
	pattern := "^/api" + paramSegment.ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "/?$"
	r.routes = append(r.routes, apiRoute{method: method, re: regexp.MustCompile(pattern)})
}

// fallback answers every /api request no route took: 405 with Allow when
// the path exists under another method, else 404.
func (r *apiRouter) fallback(c *fiber.Ctx) error {
	seen := map[string]bool{}
	for _, rt := range r.routes {
		if rt.re.MatchString(c.Path()) {
			seen[rt.method] = true
			if rt.method == fiber.MethodGet {
				seen[fiber.MethodHead] = true
			}
		}
	}
	if len(seen) == 0 {
		return db.Errorf(db.ENotFound, "No such API route.")
	}
	allow := make([]string, 0, len(seen))
	for m := range seen {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
	return db.Errorf(db.EMethodNotAllowed, "%s is not allowed here; allowed: %s.", c.Method(), strings.Join(allow, ", "))
}
