package handlers

import (
	"github.com/gofiber/fiber/v2"

	"petstore/views"
	"petstore/web"
	"petstore/web/openapi"
)

func (h *Handler) apiOpenAPI(c *fiber.Ctx) error {
	h.docOnce.Do(func() { h.doc, h.docErr = openapi.DocumentWithSunset(h.Config.Sunset) })
	if h.docErr != nil {
		return h.docErr
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Type("json")
	return c.Send(h.doc)
}

func (h *Handler) apiDocs(c *fiber.Ctx) error {
	// Swagger UI needs data: images for its icons; everything else is same-origin.
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'")
	c.Set("X-Content-Type-Options", "nosniff")
	return web.Render(c, views.APIDocs(), nil)
}
