package api

import (
	"github.com/gofiber/fiber/v2"

	"petstore/views"
	"petstore/web"
)

// OpenAPI is GET /api/openapi.json, the document with the sunset in force.
func (h *Handler) OpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Type("json")
	return c.Send(h.doc)
}

// Docs is GET /api/docs, Swagger UI over the document.
func (h *Handler) Docs(c *fiber.Ctx) error {
	// Swagger UI needs data: images for its icons; everything else is same-origin.
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'")
	c.Set("X-Content-Type-Options", "nosniff")
	return web.Render(c, views.APIDocs())
}
